//! The file's schema checked against the dataset before any row is read:
//! every declared column (and the delete column) present once, flat, and of
//! a type its column holds without loss. The outcome is a refusal naming the
//! column and both types, or a [`Plan`] of which file column feeds which.

use arrow_schema::{DataType, Schema};
use deltaload_core::spec::ExtraFields;
use deltaload_core::{ColumnType, Dataset, HeaderMismatch};
use std::fmt::Write;

/// Which of the file's top-level columns are read, and what each feeds.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct Plan {
    /// The file's top-level columns to decode, ascending.
    pub read: Vec<usize>,
    /// Per declared column, its index among the decoded columns.
    pub columns: Vec<usize>,
    /// The delete column's index among the decoded columns.
    pub delete: Option<usize>,
}

impl Plan {
    /// The dataset's key columns among a decoded `batch`'s columns.
    pub fn key_arrays<'a>(
        &self,
        dataset: &Dataset,
        batch: &'a arrow_array::RecordBatch,
    ) -> Vec<&'a dyn arrow_array::Array> {
        (dataset.keys.iter())
            .filter_map(|&k| self.columns.get(k))
            .filter_map(|&at| batch.columns().get(at))
            .map(|a| a.as_ref())
            .collect()
    }
}

/// Checks `schema` (the file's, as Arrow types) against `dataset`.
pub(super) fn plan(dataset: &Dataset, schema: &Schema) -> Result<Plan, HeaderMismatch> {
    let found: Vec<String> = schema.fields().iter().map(|f| f.name().clone()).collect();
    let refuse = |problem: String| refusal(dataset, found.clone(), problem);
    let delete = dataset.delete_when.as_ref().map(|d| d.column.as_str());
    let declared: Vec<&str> = dataset.declared().iter().map(|c| c.name.as_str()).collect();
    let wanted: Vec<&str> = declared.iter().copied().chain(delete).collect();
    if let Some(name) = wanted
        .iter()
        .find(|w| found.iter().filter(|f| f == w).count() > 1)
    {
        return Err(refuse(format!(
            "column {name:?} appears more than once in the file"
        )));
    }
    let missing: Vec<&str> = declared
        .iter()
        .copied()
        .filter(|w| !found.iter().any(|f| f == w))
        .collect();
    if !missing.is_empty() {
        return Err(refuse(format!(
            "the file has no column(s) {} that the spec declares",
            quoted(&missing)
        )));
    }
    // An AWS DMS full-load file has no Op: every row upserts.
    let optional = dataset.preset.is_some();
    if let Some(d) = delete.filter(|d| !optional && !found.iter().any(|f| f == d)) {
        return Err(refuse(format!(
            "the file has no column {d:?}, which delete_when reads to tell deletes"
        )));
    }
    let extra: Vec<&str> = found
        .iter()
        .map(String::as_str)
        .filter(|f| !wanted.contains(f))
        .collect();
    if !extra.is_empty() && dataset.extra_fields == ExtraFields::Refuse {
        return Err(refuse(format!(
            "the file has column(s) {} that the spec does not declare: declare them, or set \
             extra_fields = \"ignore\" to drop them",
            quoted(&extra)
        )));
    }
    check_types(dataset, schema).map_err(refuse)?;
    let read: Vec<usize> = (0..found.len())
        .filter(|&i| wanted.contains(&found[i].as_str()))
        .collect();
    let among = |name: &str| read.iter().position(|&i| found[i] == name);
    Ok(Plan {
        columns: declared.into_iter().filter_map(among).collect(),
        delete: delete.and_then(among),
        read,
    })
}

/// A refusal of the file: `found` its columns, `expected` the dataset's and
/// the delete column.
pub(crate) fn refusal(dataset: &Dataset, found: Vec<String>, problem: String) -> HeaderMismatch {
    HeaderMismatch::new(dataset, found, problem)
}

fn quoted(names: &[&str]) -> String {
    let mut out = String::new();
    for (i, n) in names.iter().enumerate() {
        let _ = write!(out, "{}{n:?}", if i == 0 { "" } else { ", " });
    }
    out
}

/// Each declared column's file type, then the delete column's.
fn check_types(dataset: &Dataset, schema: &Schema) -> Result<(), String> {
    for column in dataset.declared() {
        let Ok(field) = schema.field_with_name(&column.name) else {
            continue;
        };
        let dt = field.data_type();
        if dt.is_nested() {
            return Err(format!(
                "column {:?} is a nested {dt}: only flat columns load",
                column.name
            ));
        }
        if !lossless(column.ty, dt) {
            return Err(format!(
                "column {:?} is {dt} in the file and {} in the spec, which cannot hold it without loss",
                column.name, column.ty
            ));
        }
    }
    let Some(d) = &dataset.delete_when else {
        return Ok(());
    };
    match schema.field_with_name(&d.column).map(|f| f.data_type()) {
        Ok(dt) if !d.upserts.is_empty() && !is_text(dt) => Err(format!(
            "column {:?} is {dt} in the file: it holds the operation ({}) as text",
            d.column,
            d.upserts
                .iter()
                .chain(&d.values)
                .cloned()
                .collect::<Vec<_>>()
                .join(", ")
        )),
        Ok(dt) if !deletable(dt) => Err(format!(
            "delete column {:?} is {dt} in the file: delete_when reads a string, integer or \
             boolean column",
            d.column
        )),
        _ => Ok(()),
    }
}

/// Text: UTF-8 strings of any offset width, views, or a dictionary of them.
pub(super) fn is_text(dt: &DataType) -> bool {
    match dt {
        DataType::Utf8 | DataType::LargeUtf8 | DataType::Utf8View => true,
        DataType::Dictionary(_, values) => {
            matches!(
                **values,
                DataType::Utf8 | DataType::LargeUtf8 | DataType::Utf8View
            )
        }
        _ => false,
    }
}

/// How many decimal digits the largest value of an integer type has.
pub(super) fn integer_digits(dt: &DataType) -> Option<u8> {
    Some(match dt {
        DataType::Int8 | DataType::UInt8 => 3,
        DataType::Int16 | DataType::UInt16 => 5,
        DataType::Int32 | DataType::UInt32 => 10,
        DataType::Int64 => 19,
        DataType::UInt64 => 20,
        _ => return None,
    })
}

/// Whether every value of file type `dt` converts to `ty` without loss (text
/// always does: each value is then parsed, and one that fails is a reject).
pub(super) fn lossless(ty: ColumnType, dt: &DataType) -> bool {
    use DataType as D;
    if is_text(dt) {
        return true;
    }
    match (ty, dt) {
        (ColumnType::Boolean, D::Boolean) => true,
        (ColumnType::Int, D::Int8 | D::Int16 | D::Int32 | D::UInt8 | D::UInt16) => true,
        (
            ColumnType::Bigint,
            D::Int8 | D::Int16 | D::Int32 | D::Int64 | D::UInt8 | D::UInt16 | D::UInt32,
        ) => true,
        (
            ColumnType::Double,
            D::Float16
            | D::Float32
            | D::Float64
            | D::Int8
            | D::Int16
            | D::Int32
            | D::UInt8
            | D::UInt16
            | D::UInt32,
        ) => true,
        (
            ColumnType::Decimal { precision, scale },
            D::Decimal32(p, s) | D::Decimal64(p, s) | D::Decimal128(p, s) | D::Decimal256(p, s),
        ) => {
            let (p, s, precision, scale) = (
                i32::from(*p),
                i32::from(*s),
                i32::from(precision),
                i32::from(scale),
            );
            s <= scale && p - s <= precision - scale
        }
        (ColumnType::Decimal { precision, scale }, _) => {
            integer_digits(dt).is_some_and(|d| d <= precision.saturating_sub(scale))
        }
        (ColumnType::Date, D::Date32 | D::Date64) => true,
        (ColumnType::Timestamp, D::Timestamp(..) | D::Date32 | D::Date64) => true,
        _ => false,
    }
}

/// Whether the delete column's type has a text `delete_when` compares.
pub(super) fn deletable(dt: &DataType) -> bool {
    is_text(dt) || dt == &DataType::Boolean || integer_digits(dt).is_some()
}
