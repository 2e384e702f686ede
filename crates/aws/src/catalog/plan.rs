//! What a Glue table should become, from the table as Glue holds it and the
//! Delta table as it is: created, updated (columns only ever added), left
//! alone, or refused when Glue's table of that name is another table.

use deltaload_lake::{CatalogColumn, CatalogTable};
use std::collections::BTreeMap;

/// Parquet as Athena's `CREATE EXTERNAL TABLE ... TBLPROPERTIES
/// ('table_type'='DELTA')` writes it: input format, output format, SerDe.
pub const INPUT_FORMAT: &str = "org.apache.hadoop.hive.ql.io.parquet.MapredParquetInputFormat";
/// See [`INPUT_FORMAT`].
pub const OUTPUT_FORMAT: &str = "org.apache.hadoop.hive.ql.io.parquet.MapredParquetOutputFormat";
/// See [`INPUT_FORMAT`].
pub const SERDE: &str = "org.apache.hadoop.hive.ql.io.parquet.serde.ParquetHiveSerDe";
/// The table type of every table registered.
pub const EXTERNAL_TABLE: &str = "EXTERNAL_TABLE";

/// The table parameters that make a Glue table a Delta table to Athena and Spark.
pub fn delta_parameters() -> [(&'static str, &'static str); 2] {
    [
        ("table_type", "DELTA"),
        ("spark.sql.sources.provider", "delta"),
    ]
}

/// A column as Glue holds it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct GlueColumn {
    /// Its name.
    pub name: String,
    /// Its Hive type name.
    pub type_name: String,
    /// A comment someone gave it, kept.
    pub comment: Option<String>,
}

impl From<&CatalogColumn> for GlueColumn {
    fn from(c: &CatalogColumn) -> Self {
        Self {
            name: c.name.clone(),
            type_name: c.type_name.clone(),
            comment: None,
        }
    }
}

/// A table as Glue holds it (the parts deltaload reads and writes).
#[derive(Debug, Clone, PartialEq, Default)]
pub struct GlueTable {
    /// Its name.
    pub name: String,
    /// `EXTERNAL_TABLE` for deltaload's tables.
    pub table_type: Option<String>,
    /// The storage descriptor's location.
    pub location: Option<String>,
    /// The storage descriptor's input format.
    pub input_format: Option<String>,
    /// Its output format.
    pub output_format: Option<String>,
    /// Its SerDe.
    pub serde: Option<String>,
    /// The SerDe's parameters (`path`).
    pub serde_parameters: BTreeMap<String, String>,
    /// The columns that are not partition keys.
    pub columns: Vec<GlueColumn>,
    /// The partition keys.
    pub partition_keys: Vec<GlueColumn>,
    /// The table's parameters.
    pub parameters: BTreeMap<String, String>,
    /// Its description, kept.
    pub description: Option<String>,
    /// The version Glue gave what was read (`None` for a table to create).
    pub version_id: Option<String>,
    /// The table as Glue returned it, for what an update must carry over
    /// that deltaload does not model (owner, retention, view texts, the
    /// storage descriptor's and columns' parameters, buckets, ...):
    /// `UpdateTable` replaces the whole table.
    pub kept: Option<Box<aws_sdk_glue::types::Table>>,
}

/// What to do to Glue for one table.
#[derive(Debug, Clone, PartialEq)]
pub enum Plan {
    /// Create it.
    Create(GlueTable),
    /// Replace it, if it is still at the version read.
    Update(GlueTable),
    /// It is as it should be.
    Nothing,
    /// Glue's table of that name is at another location: another lake's,
    /// or a table someone else made. Left alone.
    Elsewhere {
        /// Where Glue's table points.
        location: String,
    },
}

/// The Glue table a new registration of `wanted` makes.
pub fn new_table(wanted: &CatalogTable) -> GlueTable {
    GlueTable {
        name: wanted.name.clone(),
        columns: wanted.columns.iter().map(GlueColumn::from).collect(),
        partition_keys: wanted.partition_keys.iter().map(GlueColumn::from).collect(),
        ..shaped(GlueTable::default(), wanted)
    }
}

/// `table` with deltaload's type, location, storage formats and parameters.
fn shaped(mut table: GlueTable, wanted: &CatalogTable) -> GlueTable {
    table.table_type = Some(EXTERNAL_TABLE.into());
    table.location = Some(wanted.location.clone());
    table.input_format = Some(INPUT_FORMAT.into());
    table.output_format = Some(OUTPUT_FORMAT.into());
    table.serde = Some(SERDE.into());
    (table.serde_parameters).insert("path".into(), wanted.location.clone());
    (table.serde_parameters).insert("serialization.format".into(), "1".into());
    for (k, v) in delta_parameters() {
        table.parameters.insert(k.into(), v.into());
    }
    table
}

/// What to do so that Glue's `existing` table describes `wanted`: created
/// when missing; else its columns are Glue's, in Glue's order, with the
/// table's new ones added at the end (none dropped, none retyped), its
/// comments, description and other parameters kept.
pub fn plan(wanted: &CatalogTable, existing: Option<&GlueTable>) -> Plan {
    let Some(existing) = existing else {
        return Plan::Create(new_table(wanted));
    };
    match &existing.location {
        Some(at) if same_location(at, &wanted.location) => {}
        Some(at) => {
            return Plan::Elsewhere {
                location: at.clone(),
            }
        }
        // No location and not an external table: a view, or a table of
        // another kind by that name, left alone.
        None if existing
            .table_type
            .as_deref()
            .is_some_and(|t| t != EXTERNAL_TABLE) =>
        {
            return Plan::Elsewhere {
                location: format!(
                    "no location (a {})",
                    existing.table_type.as_deref().unwrap_or_default()
                ),
            }
        }
        // No location: a placeholder, which the registration completes.
        None => {}
    }
    let mut next = shaped(existing.clone(), wanted);
    let known = |name: &str, t: &GlueTable| {
        (t.columns.iter().chain(&t.partition_keys)).any(|c| c.name.eq_ignore_ascii_case(name))
    };
    // Partition keys a registration left out (one made without them).
    if next.partition_keys.is_empty()
        && !wanted.partition_keys.iter().any(|c| known(&c.name, &next))
    {
        next.partition_keys = wanted.partition_keys.iter().map(GlueColumn::from).collect();
    }
    for column in &wanted.columns {
        if !known(&column.name, &next) {
            next.columns.push(column.into());
        }
    }
    match next == *existing {
        true => Plan::Nothing,
        false => Plan::Update(next),
    }
}

/// Whether two S3 locations name the same folder (a trailing slash aside).
fn same_location(a: &str, b: &str) -> bool {
    a.trim_end_matches('/') == b.trim_end_matches('/')
}
