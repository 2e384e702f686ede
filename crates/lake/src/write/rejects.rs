//! The per-file side tables a load replaces: a dataset's rejects and `reconciliation`.

use crate::table::arrow_rows::{self, ExpectationRow, ReconciliationRow};
use crate::table::error::LakeError;
use crate::table::refresh;
use crate::write::replace::{replace_rows, Selection};
use crate::write::Writer;
use deltalake::DeltaTable;
use deltaload_core::Reject;
use deltaload_engine::tables::TableName;

/// The rejects of one file version.
pub(crate) struct FileRejects<'a> {
    pub location: &'a str,
    pub content_id: &'a str,
    pub rejects: &'a [Reject],
}

impl Writer<'_> {
    /// Reloads the dataset's tables a load writes to their latest versions.
    pub(crate) async fn refresh_writes(&mut self) -> Result<(), LakeError> {
        let set = &mut *self.set;
        refresh(&mut set.target, &TableName::Target(set.dataset.clone())).await?;
        refresh(&mut set.rejected, &TableName::Rejected(set.dataset.clone())).await?;
        if let Some(tombstones) = &mut set.tombstones {
            refresh(tombstones, &TableName::Tombstones(set.dataset.clone())).await?;
        }
        if let Some(history) = &mut set.history {
            history.refresh(&set.dataset).await?;
        }
        Ok(())
    }

    /// Replaces these files' rejects in the dataset's rejected table, in one
    /// commit (none is made when there is nothing to replace or delete).
    /// Returns the table's version afterwards.
    pub(crate) async fn replace_rejects(
        &mut self,
        files: &[FileRejects<'_>],
        loaded_at: i64,
    ) -> Result<Option<u64>, LakeError> {
        let set = &mut *self.set;
        let name = TableName::Rejected(set.dataset.clone());
        let selection = Selection::is_in("source_file", files.iter().map(|f| f.location));
        let rows = files
            .iter()
            .filter(|f| !f.rejects.is_empty())
            .map(|f| {
                arrow_rows::rejects(&set.dataset, f.rejects, f.location, f.content_id, loaded_at)
            })
            .collect::<Result<Vec<_>, _>>()?;
        let (rejected, _) = replace_rows(&set.rejected, &name, rows, selection).await?;
        set.rejected = rejected;
        Ok(set.rejected.version())
    }
}

/// Replaces the reconciliation rows of these file versions, in one commit.
/// Replaces the `expectations` rows of the file versions of `files`
/// (location, content) with `rows`: none left for a file whose dataset
/// now declares none.
pub(crate) async fn replace_expectations(
    expectations: &mut DeltaTable,
    files: &[(&str, &str)],
    rows: &[ExpectationRow<'_>],
    loaded_at: i64,
) -> Result<(), LakeError> {
    if files.is_empty() {
        return Ok(());
    }
    let batch = arrow_rows::expectations(rows, loaded_at)?;
    let selection = Selection::file_versions(files.iter().copied());
    let name = TableName::Expectations;
    let (table, _) = replace_rows(expectations, &name, vec![batch], selection).await?;
    *expectations = table;
    Ok(())
}

pub(crate) async fn replace_reconciliation(
    reconciliation: &mut DeltaTable,
    rows: &[ReconciliationRow<'_>],
    orders_version: Option<u64>,
    loaded_at: i64,
) -> Result<(), LakeError> {
    if rows.is_empty() {
        return Ok(());
    }
    let batch = arrow_rows::reconciliation(rows, orders_version, loaded_at)?;
    let selection = Selection::file_versions(rows.iter().map(|r| (r.location, r.content_id)));
    let name = TableName::Reconciliation;
    let (table, _) = replace_rows(reconciliation, &name, vec![batch], selection).await?;
    *reconciliation = table;
    Ok(())
}
