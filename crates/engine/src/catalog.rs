//! What a data catalog (the AWS Glue Data Catalog) holds of a Delta table: its
//! name, location, columns in the table's order with Athena/Hive type names,
//! and its partition columns apart, all names lower-cased as Glue keeps them.
//!
//! Pure: the Arrow schema and the partition columns come in, the catalog's
//! description or the reason the catalog cannot hold the table comes out. The
//! same rules refuse a dataset at `spec check` and a table at registration.

use crate::tables::TableName;
use arrow_schema::{DataType, Schema};
use deltaload_core::Dataset;
use std::sync::Arc;

/// The longest name Glue holds (a table's, a column's), in characters.
pub const MAX_NAME: usize = 255;

/// A column as the catalog holds it.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct CatalogColumn {
    /// Lower-cased.
    pub name: String,
    /// Athena/Hive type name: `bigint`, `string`, `decimal(10,2)`, ...
    pub type_name: String,
}

/// A Delta table as the catalog holds it.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct CatalogTable {
    /// The table's name in the catalog: its folder under the lake root, lower-cased.
    pub name: String,
    /// The table's URL (`s3://bucket/lake/orders/`), with a trailing slash.
    pub location: String,
    /// The columns that are not partition columns, in the table's order.
    pub columns: Vec<CatalogColumn>,
    /// The partition columns, in the table's partitioning order.
    pub partition_keys: Vec<CatalogColumn>,
}

/// Why the catalog cannot hold a table.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum CatalogRefusal {
    /// A name the catalog cannot hold.
    #[error("table {table}: {what} {name:?} {reason}")]
    Name {
        /// The table (its folder name).
        table: String,
        /// `table name` or `column`.
        what: &'static str,
        /// The name.
        name: String,
        /// Why, and what to do.
        reason: String,
    },
    /// Two columns whose names are the same once lower-cased.
    #[error("table {table}: columns {first:?} and {second:?} are one name to Glue, which lower-cases names: rename one")]
    SameName {
        /// The table.
        table: String,
        /// The first column.
        first: String,
        /// The second.
        second: String,
    },
    /// A column type with no Athena/Hive type.
    #[error("table {table}: column {column:?} is of type {data_type}, which Glue's Hive types cannot describe")]
    Type {
        /// The table.
        table: String,
        /// The column.
        column: String,
        /// Its Arrow type.
        data_type: String,
    },
}

/// Why the catalog cannot hold `name` as a table's or a column's name, if it cannot.
pub fn name_problem(name: &str) -> Option<String> {
    let length = name.chars().count();
    if length == 0 || length > MAX_NAME {
        return Some(format!(
            "is {length} characters long: Glue holds names of 1 to {MAX_NAME}"
        ));
    }
    // Glue's names are single-line strings: no control character but tab.
    let bad = name
        .chars()
        .find(|&c| (c.is_control() && c != '\t') || c == '\u{FFFE}' || c == '\u{FFFF}');
    bad.map(|c| {
        format!("holds {c:?}, and Glue's names are single-line strings: rename it in the spec")
    })
}

/// The catalog's description of table `folder` at `location` with `schema`,
/// partitioned by `partitions` (column names as the table holds them).
pub fn catalog_table(
    folder: &str,
    location: &str,
    schema: &Schema,
    partitions: &[String],
) -> Result<CatalogTable, CatalogRefusal> {
    let refused = |what, name: &str, reason| CatalogRefusal::Name {
        table: folder.to_string(),
        what,
        name: name.to_string(),
        reason,
    };
    if let Some(reason) = name_problem(folder) {
        return Err(refused("table name", folder, reason));
    }
    let mut seen: Vec<(String, &str)> = Vec::new();
    let (mut columns, mut partition_keys) = (Vec::new(), Vec::new());
    for field in schema.fields() {
        let name = field.name();
        if let Some(reason) = name_problem(name) {
            return Err(refused("column", name, reason));
        }
        let lower = name.to_lowercase();
        if let Some((_, first)) = seen.iter().find(|(l, _)| *l == lower) {
            return Err(CatalogRefusal::SameName {
                table: folder.to_string(),
                first: first.to_string(),
                second: name.to_string(),
            });
        }
        seen.push((lower.clone(), name));
        let type_name = hive_type(field.data_type()).ok_or_else(|| CatalogRefusal::Type {
            table: folder.to_string(),
            column: name.to_string(),
            data_type: field.data_type().to_string(),
        })?;
        let column = CatalogColumn {
            name: lower,
            type_name,
        };
        match partitions.iter().any(|p| p == name) {
            true => partition_keys.push(column),
            false => columns.push(column),
        }
    }
    // The partitioning's order, which may differ from the schema's.
    partition_keys.sort_by_key(|c| (partitions.iter()).position(|p| p.to_lowercase() == c.name));
    Ok(CatalogTable {
        name: folder.to_lowercase(),
        location: format!("{}/", location.trim_end_matches('/')),
        columns,
        partition_keys,
    })
}

/// The Athena/Hive type name of an Arrow type as Delta writes it, if it has one.
pub fn hive_type(data_type: &DataType) -> Option<String> {
    Some(match data_type {
        DataType::Boolean => "boolean".into(),
        DataType::Int8 => "tinyint".into(),
        DataType::Int16 => "smallint".into(),
        DataType::Int32 => "int".into(),
        DataType::Int64 => "bigint".into(),
        DataType::Float32 => "float".into(),
        DataType::Float64 => "double".into(),
        DataType::Utf8 | DataType::LargeUtf8 | DataType::Utf8View => "string".into(),
        DataType::Binary | DataType::LargeBinary | DataType::BinaryView => "binary".into(),
        DataType::Date32 | DataType::Date64 => "date".into(),
        // Delta's timestamp and timestamp_ntz: Athena reads both as timestamp.
        DataType::Timestamp(_, _) => "timestamp".into(),
        DataType::Decimal128(p, s) | DataType::Decimal256(p, s) => format!("decimal({p},{s})"),
        DataType::List(f) | DataType::LargeList(f) | DataType::ListView(f) => {
            format!("array<{}>", hive_type(f.data_type())?)
        }
        DataType::Struct(fields) => {
            let fields = fields.iter().map(|f| {
                // A field name that would break the type string has no Hive type.
                let plain = !f.name().contains([':', ',', '<', '>', '`']);
                plain
                    .then(|| hive_type(f.data_type()))
                    .flatten()
                    .map(|t| format!("{}:{t}", f.name().to_lowercase()))
            });
            format!("struct<{}>", fields.collect::<Option<Vec<_>>>()?.join(","))
        }
        DataType::Map(entries, _) => match entries.data_type() {
            DataType::Struct(kv) if kv.len() == 2 => format!(
                "map<{},{}>",
                hive_type(kv[0].data_type())?,
                hive_type(kv[1].data_type())?
            ),
            _ => return None,
        },
        _ => return None,
    })
}

/// Why the catalog could not hold each table of `datasets` that it could
/// not (the tables deltaload makes: their schemas as the spec declares them).
pub fn refusals(datasets: &[Arc<Dataset>]) -> Vec<CatalogRefusal> {
    TableName::all(datasets)
        .iter()
        .filter_map(|t| {
            let partitions = t.partition_columns();
            let location = format!("lake/{}", t.as_str());
            catalog_table(&t.as_str(), &location, &t.schema(), &partitions).err()
        })
        .collect()
}

#[cfg(test)]
#[path = "catalog_tests.rs"]
mod tests;
