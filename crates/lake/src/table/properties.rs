//! A table's properties: read one, set one (a metadata commit), and the
//! names of the Delta properties the writers turn on.

use crate::table::error::LakeError;
use deltalake::DeltaTable;
use deltaload_core::{Dataset, Snapshot};
use deltaload_engine::snapshot::marks::{Marks, MARKS_PROPERTY};

/// Delta's property turning on the change data feed.
pub(crate) const CHANGE_DATA_FEED: &str = "delta.enableChangeDataFeed";

/// The value of one of the table's properties, when it has it.
pub(crate) fn property(
    table: &DeltaTable,
    label: &str,
    key: &str,
) -> Result<Option<String>, LakeError> {
    let snapshot = table
        .snapshot()
        .map_err(LakeError::delta(label, table.table_url()))?;
    Ok(snapshot.metadata().configuration().get(key).cloned())
}

/// Sets one of the table's properties (a metadata commit).
pub(crate) async fn set_property(
    table: &mut DeltaTable,
    label: &str,
    key: &str,
    value: &str,
) -> Result<(), LakeError> {
    set_properties(table, label, vec![(key.to_string(), value.to_string())]).await
}

/// Sets some of the table's properties in one metadata commit.
pub(crate) async fn set_properties(
    table: &mut DeltaTable,
    label: &str,
    properties: Vec<(String, String)>,
) -> Result<(), LakeError> {
    let url = table.table_url().clone();
    // deltaload's own properties (`io.deltaload.*`) are not Delta's.
    let delta = properties.iter().any(|(k, _)| k.starts_with("delta."));
    *table = table
        .clone()
        .set_tbl_properties()
        .with_properties(properties.into_iter().collect())
        .with_raise_if_not_exists(delta)
        .await
        .map_err(LakeError::delta(label, &url))?;
    Ok(())
}

/// The marks of `table`, a snapshot dataset's: refused when taken by
/// another order or scope than the spec's.
pub(crate) fn marks_of(
    table: &DeltaTable,
    dataset: &Dataset,
    snapshot: &Snapshot,
) -> Result<Marks, LakeError> {
    let order = snapshot.order_name(&dataset.columns);
    let scope: Vec<String> = (snapshot.scope.iter())
        .map(|&i| dataset.columns[i].name.clone())
        .collect();
    let text = property(table, &dataset.name, MARKS_PROPERTY)?;
    Marks::read(text.as_deref(), &order, &scope).map_err(|detail| LakeError::Invariant {
        table: dataset.name.clone(),
        detail,
    })
}

/// Whether a snapshot dataset's table can load its spec's snapshots (the
/// same order and scope as those it loaded), checked when the lake opens so
/// that a changed spec stops the command before any file is claimed.
pub(crate) fn check_marks(table: &DeltaTable, dataset: &Dataset) -> Result<(), LakeError> {
    match &dataset.snapshot {
        Some(snapshot) => marks_of(table, dataset, snapshot).map(|_| ()),
        None => Ok(()),
    }
}
