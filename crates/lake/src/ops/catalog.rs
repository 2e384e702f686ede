//! What a data catalog holds of the lake's tables, read from each table as
//! it is (its real schema and partitioning, not the spec's), for the Glue
//! sync after loads and for `catalog sync`, which finds the tables by listing.

use crate::table::error::LakeError;
use crate::table::location::LakeRoot;
use crate::table::sets::Tables;
use deltalake::{DeltaTable, DeltaTableBuilder, DeltaTableError};
use deltaload_engine::catalog::{catalog_table, CatalogRefusal, CatalogTable};
use deltaload_engine::tables::TableName;

/// A table as the catalog would hold it, or why it cannot.
pub type Described = Result<CatalogTable, CatalogRefusal>;

/// The catalog's description of `table`, named `folder`.
fn describe(folder: &str, table: &DeltaTable) -> Result<Described, LakeError> {
    let url = table.table_url().clone();
    let state = table
        .snapshot()
        .map_err(LakeError::delta(folder, &url))?
        .snapshot();
    let schema = state.arrow_schema();
    let partitions = state.metadata().partition_columns();
    Ok(catalog_table(folder, url.as_str(), &schema, partitions))
}

impl Tables {
    /// Every table of the lake, by its folder name, as the catalog would hold it.
    pub(crate) fn described(&mut self) -> Vec<(String, Result<Described, LakeError>)> {
        let datasets: Vec<_> = self.sets.iter().map(|s| s.dataset.clone()).collect();
        (TableName::all(&datasets).into_iter())
            .filter_map(|name| {
                let folder = name.as_str();
                let table = self.table_mut(&name)?;
                Some((folder.clone(), describe(&folder, table)))
            })
            .collect()
    }
}

/// Every Delta table in a folder directly under `root` (found by listing;
/// a folder with no Delta log is passed over), by folder name, in name
/// order, as the catalog would hold it.
pub async fn tables_under(
    root: &LakeRoot,
) -> Result<Vec<(String, Result<Described, LakeError>)>, LakeError> {
    crate::table::open::register_object_stores();
    let at_root = |e: DeltaTableError| LakeError::Location {
        location: root.to_string(),
        reason: e.to_string(),
    };
    let store = DeltaTableBuilder::from_url(root.url.clone())
        .and_then(|b| {
            b.with_storage_options(root.storage_options.clone())
                .build_storage()
        })
        .map_err(at_root)?
        .object_store(None);
    let listed = store.list_with_delimiter(None).await;
    let listed = listed.map_err(|e| at_root(DeltaTableError::ObjectStore { source: e }))?;
    let mut folders: Vec<String> = (listed.common_prefixes.iter())
        .filter_map(|p| p.filename().map(str::to_string))
        .collect();
    folders.sort();
    let mut found = Vec::new();
    for folder in folders {
        if let Some(described) = open_described(root, &folder).await {
            found.push((folder, described));
        }
    }
    Ok(found)
}

/// Table `folder` under `root` described, or `None` when it holds no table.
async fn open_described(root: &LakeRoot, folder: &str) -> Option<Result<Described, LakeError>> {
    let url = match root.url.join(&format!("{folder}/")) {
        Ok(url) => url,
        Err(e) => {
            return Some(Err(LakeError::Location {
                location: format!("{root}/{folder}"),
                reason: e.to_string(),
            }))
        }
    };
    let built = DeltaTableBuilder::from_url(url.clone())
        .and_then(|b| b.with_storage_options(root.storage_options.clone()).build());
    let mut table = match built {
        Ok(table) => table,
        Err(e) => return Some(Err(LakeError::delta(folder, &url)(e))),
    };
    match table.load().await {
        Ok(()) => Some(describe(folder, &table)),
        Err(DeltaTableError::NotATable(_)) => None,
        Err(e) => Some(Err(LakeError::delta(folder, &url)(e))),
    }
}
