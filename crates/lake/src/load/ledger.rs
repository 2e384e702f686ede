//! The ledger table: its rows (see [`deltaload_flow::ledger`]) read and written
//! in Delta.

use crate::table::arrow_rows;
use crate::table::error::LakeError;
use crate::table::refresh;
use crate::table::{longs_of, strings_of};
use crate::write::replace::{replace_rows, select_rows, Selection};
use deltalake::arrow::datatypes::DataType;
use deltalake::datafusion::prelude::SessionContext;
use deltalake::DeltaTable;
use deltaload_engine::tables::TableName;
use deltaload_flow::{FileKey, LedgerRow, LedgerStatus, Recorded};
use std::collections::HashMap;

/// The ledger's rows for these file versions, by location and content id
/// (`ledger` refreshed first).
pub(crate) async fn recorded(
    ledger: &mut DeltaTable,
    ctx: &SessionContext,
    keys: &[FileKey],
) -> Result<HashMap<FileKey, Recorded>, LakeError> {
    refresh(ledger, &TableName::Ledger).await?;
    let columns = [
        "location",
        "content_id",
        "status",
        "reason",
        "orders_version",
    ];
    let selection = Selection::is_in("location", keys.iter().map(|k| k.location.as_str()));
    let name = TableName::Ledger;
    let batches = select_rows(ctx, ledger, &name, &columns, &selection).await?;
    let mut seen = HashMap::new();
    for batch in &batches {
        let locations = strings_of(batch.column(0))?;
        let contents = strings_of(batch.column(1))?;
        let statuses = strings_of(batch.column(2))?;
        let reasons = strings_of(batch.column(3))?;
        let versions = longs_of(batch.column(4), &DataType::Int64)?;
        let rows = locations.into_iter().zip(contents).zip(statuses);
        for (((location, content), status), (reason, version)) in
            rows.zip(reasons.into_iter().zip(versions))
        {
            let (Some(location), Some(content)) = (location, content) else {
                continue;
            };
            let key = FileKey {
                location,
                content_id: content,
            };
            if !keys.contains(&key) {
                continue;
            }
            let status = LedgerStatus::parse(status.as_deref(), &key.location, &key.content_id)?;
            seen.insert(
                key,
                Recorded {
                    status,
                    reason,
                    orders_version: version.map(|v| v as u64),
                },
            );
        }
    }
    Ok(seen)
}

/// Records file versions in `ledger` in one commit, replacing any earlier
/// row for each (one row per version). Nothing is written for no entries.
pub(crate) async fn record(
    ledger: &mut DeltaTable,
    entries: &[LedgerRow],
) -> Result<(), LakeError> {
    if entries.is_empty() {
        return Ok(());
    }
    let batch = arrow_rows::ledger(entries)?;
    let versions = entries
        .iter()
        .map(|e| (e.location.as_str(), e.content_id.as_str()));
    let selection = Selection::file_versions(versions);
    let (written, _) = replace_rows(ledger, &TableName::Ledger, vec![batch], selection).await?;
    *ledger = written;
    Ok(())
}
