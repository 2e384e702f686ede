//! Debezium's change events in columnar files (`preset = "debezium"` with
//! `format = "avro"` or `"parquet"`), as the Kafka Connect S3 sink writes
//! them with its AvroFormat and ParquetFormat: the Envelope (`before` and
//! `after` records, `op`, `source`, …) or the flat row of the
//! `ExtractNewRecordState` transform (the columns, and `__op`, `__deleted`
//! and other `__` fields). A record batch of either shape is made flat: the
//! row's columns (`after`'s, `before`'s for a delete) and the operation as
//! the preset's delete column ([`DEBEZIUM_OP`]), with the same rules as the
//! JSON Lines shapes: `r`, `c`, `u` upsert, `d` deletes, anything else (a
//! truncate `t`, a message `m`) is rejected, as is an event without the
//! side it needs.

use arrow_array::cast::AsArray;
use arrow_array::{Array, ArrayRef, BooleanArray, RecordBatch, StringArray, StructArray};
use arrow_schema::{DataType, Field, Schema};
use deltaload_core::fields::shown;
use deltaload_core::spec::DEBEZIUM_OP;
use deltaload_core::{Dataset, RejectReason};
use std::sync::Arc;

/// A batch made flat, and per row why it is rejected before any column is
/// read (an operation deltaload does not apply, a side missing; none when
/// empty), and the values with no meaning in their type.
pub(crate) struct Flat {
    pub batch: RecordBatch,
    pub problems: Vec<Option<RejectReason>>,
    pub bad: Vec<crate::connect::Bad>,
}

/// `batch` (of a columnar file of `dataset`) made flat when the dataset is
/// Debezium's, its annotated columns converted ([`crate::connect`]).
pub(crate) fn shaped(dataset: &Dataset, batch: RecordBatch) -> Result<Flat, String> {
    let flat = match dataset.preset == Some(deltaload_core::spec::Preset::Debezium) {
        true => flatten(&batch)?,
        false => Flat {
            batch,
            problems: Vec::new(),
            bad: Vec::new(),
        },
    };
    let (batch, bad) = crate::connect::normalize(flat.batch)?;
    Ok(Flat {
        batch,
        problems: flat.problems,
        bad,
    })
}

/// Whether `schema` is the Envelope's: an `op` and a `before` or `after`
/// record (as in JSON Lines, whatever columns the dataset declares).
fn is_envelope(schema: &Schema) -> bool {
    let record = |name: &str| {
        (schema.field_with_name(name)).is_ok_and(|f| matches!(f.data_type(), DataType::Struct(_)))
    };
    schema.field_with_name("op").is_ok() && (record("after") || record("before"))
}

/// `batch` (of a Debezium dataset's file) made flat.
fn flatten(batch: &RecordBatch) -> Result<Flat, String> {
    match is_envelope(&batch.schema()) {
        true => envelope(batch),
        false => flat_row(batch),
    }
}

/// A column of `batch` as UTF-8 text (a dictionary or view cast).
fn text_column(batch: &RecordBatch, name: &str) -> Result<Option<StringArray>, String> {
    let Some(array) = batch.column_by_name(name) else {
        return Ok(None);
    };
    let cast = arrow_cast::cast(array, &DataType::Utf8)
        .map_err(|e| format!("column {name:?} is {}, not text: {e}", array.data_type()))?;
    Ok(Some(cast.as_string::<i32>().clone()))
}

/// Whether operation `op` deletes; why it is none deltaload applies.
fn operation(name: &str, op: Option<&str>) -> Result<bool, RejectReason> {
    match op {
        Some("r" | "c" | "u") => Ok(false),
        Some("d") => Ok(true),
        other => Err(RejectReason::Column {
            name: name.to_string(),
            detail: match other {
                None => "is null, expected \"r\", \"c\", \"u\" or \"d\"".to_string(),
                Some(op) => format!(
                    "is {}, an operation deltaload does not apply: expected r, c, u \
                     (upserts) or d (a delete)",
                    shown(op)
                ),
            },
        }),
    }
}

/// The Envelope's rows: `after`, or `before` for a delete.
fn envelope(batch: &RecordBatch) -> Result<Flat, String> {
    let op = text_column(batch, "op")?.ok_or("no op column")?;
    let side = |name: &str| -> Option<&StructArray> {
        batch.column_by_name(name).and_then(|a| a.as_struct_opt())
    };
    let (before, after) = (side("before"), side("after"));
    let n = batch.num_rows();
    let mut deletes = Vec::with_capacity(n);
    let mut problems = Vec::with_capacity(n);
    for row in 0..n {
        let op = op.is_valid(row).then(|| op.value(row));
        let problem = match operation("op", op) {
            Err(reason) => Some(reason),
            Ok(true) if !before.is_some_and(|b| b.is_valid(row)) => Some(missing(true)),
            Ok(false) if !after.is_some_and(|a| a.is_valid(row)) => Some(missing(false)),
            Ok(_) => None,
        };
        deletes.push(op == Some("d"));
        problems.push(problem);
    }
    let deletes = BooleanArray::from(deletes);
    let mut fields: Vec<Arc<Field>> = Vec::new();
    let mut arrays: Vec<ArrayRef> = Vec::new();
    for s in [after, before].into_iter().flatten() {
        for field in s.fields() {
            if fields.iter().all(|f| f.name() != field.name()) {
                arrays.push(chosen(&deletes, before, after, field.name())?);
                fields.push(Arc::new(field.as_ref().clone().with_nullable(true)));
            }
        }
    }
    fields.push(Arc::new(Field::new(DEBEZIUM_OP, DataType::Utf8, true)));
    arrays.push(Arc::new(op));
    let schema = Arc::new(Schema::new(fields));
    let batch = RecordBatch::try_new(schema, arrays).map_err(|e| e.to_string())?;
    Ok(Flat {
        batch,
        problems,
        bad: Vec::new(),
    })
}

/// Field `name` of each row's side: `before`'s for a delete, `after`'s
/// otherwise (null where that side has no such field).
fn chosen(
    deletes: &BooleanArray,
    before: Option<&StructArray>,
    after: Option<&StructArray>,
    name: &str,
) -> Result<ArrayRef, String> {
    let failed = |e: arrow_schema::ArrowError| format!("field {name:?} of before and after: {e}");
    // A field of a null record is null (arrow keeps a value there).
    let of = |s: Option<&StructArray>| -> Result<Option<ArrayRef>, String> {
        let Some((s, column)) = s.and_then(|s| Some((s, s.column_by_name(name)?))) else {
            return Ok(None);
        };
        match s.nulls() {
            Some(valid) if valid.null_count() > 0 => {
                let absent = BooleanArray::new(!valid.inner(), None);
                Ok(Some(
                    arrow_select::nullif::nullif(column, &absent).map_err(failed)?,
                ))
            }
            _ => Ok(Some(column.clone())),
        }
    };
    match (of(before)?, of(after)?) {
        (Some(b), Some(a)) if b.data_type() == a.data_type() => {
            arrow_select::zip::zip(deletes, &b, &a).map_err(failed)
        }
        (Some(b), Some(a)) => Err(format!(
            "field {name:?} is {} in before and {} in after",
            b.data_type(),
            a.data_type()
        )),
        (Some(b), None) => {
            let upserts: BooleanArray = deletes.iter().map(|d| d.map(|d| !d)).collect();
            arrow_select::nullif::nullif(&b, &upserts).map_err(failed)
        }
        (None, Some(a)) => arrow_select::nullif::nullif(&a, deletes).map_err(failed),
        (None, None) => Err(format!("field {name:?} is in neither before nor after")),
    }
}

fn missing(delete: bool) -> RejectReason {
    RejectReason::NotDebezium {
        detail: match delete {
            true => "a delete (op \"d\") without before: its key is not known (give the source \
                     table a primary key or REPLICA IDENTITY)"
                .to_string(),
            false => "an event of op \"c\", \"r\" or \"u\" without after".to_string(),
        },
    }
}

/// A flat row of `ExtractNewRecordState`: its `__` fields are the
/// transform's (`__op` and `__deleted` are read into the operation), the
/// others the columns.
fn flat_row(batch: &RecordBatch) -> Result<Flat, String> {
    let schema = batch.schema();
    let n = batch.num_rows();
    let op = text_column(batch, DEBEZIUM_OP)?;
    let deleted = text_column(batch, "__deleted")?;
    let mut ops: Vec<Option<&str>> = Vec::with_capacity(n);
    let mut problems = Vec::with_capacity(n);
    for row in 0..n {
        let at = |a: &Option<StringArray>| -> Option<Option<String>> {
            a.as_ref()
                .map(|a| a.is_valid(row).then(|| a.value(row).to_string()))
        };
        // As in JSON Lines: the operation first, then the deleted flag.
        let op = match at(&op) {
            None => Ok(false),
            Some(text) => operation(DEBEZIUM_OP, text.as_deref()),
        };
        let deleted = op.and_then(|op| match at(&deleted).flatten().as_deref() {
            None | Some("false") => Ok(op),
            Some("true") => Ok(true),
            Some(other) => Err(RejectReason::Column {
                name: "__deleted".to_string(),
                detail: format!("is {}, expected \"true\" or \"false\"", shown(other)),
            }),
        });
        let (op, problem) = match deleted {
            Ok(true) => ("d", None),
            Ok(false) => ("c", None),
            Err(reason) => ("c", Some(reason)),
        };
        ops.push(Some(op));
        problems.push(problem);
    }
    let mut fields = Vec::new();
    let mut arrays = Vec::new();
    for (field, array) in schema.fields().iter().zip(batch.columns()) {
        if !field.name().starts_with("__") {
            fields.push(field.clone());
            arrays.push(array.clone());
        }
    }
    fields.push(Arc::new(Field::new(DEBEZIUM_OP, DataType::Utf8, true)));
    arrays.push(Arc::new(StringArray::from(ops)));
    let batch = RecordBatch::try_new(Arc::new(Schema::new(fields)), arrays);
    let batch = batch.map_err(|e| e.to_string())?;
    Ok(Flat {
        batch,
        problems,
        bad: Vec::new(),
    })
}
