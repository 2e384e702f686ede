//! One record batch's rows: its columns converted, then each row assembled
//! into a change of `width()` values or a reject with its row number, the row
//! as JSON, its key and the first reason in declared column order.

use crate::convert::{cells, delete_flags, Skip};
use crate::raw::{key_text, row_json};
use crate::schema::Plan;
use arrow_array::{Array, ArrayRef, RecordBatch};
use deltaload_core::{Dataset, ParsedFile, Reject, RejectReason, Scalar, Sink, Value};

/// Appends the rows of `batch` (whose first row is row `before + 1` of the
/// file) to `parsed`. An error is a batch unlike the planned schema.
pub(crate) fn read_batch<S: Sink>(
    dataset: &Dataset,
    plan: &Plan,
    batch: &RecordBatch,
    before: u64,
    parsed: &mut ParsedFile<S>,
) -> Result<(), String> {
    let column = |at: usize| -> Result<&ArrayRef, String> {
        batch
            .columns()
            .get(at)
            .ok_or_else(|| format!("a row group has {} columns", batch.num_columns()))
    };
    let deletes = match (&dataset.delete_when, plan.delete) {
        (Some(d), Some(at)) => Some(delete_flags(d, column(at)?.as_ref())?),
        _ => None,
    };
    // A delete needs its key and sequence alone: the other columns are not read.
    let needed: Vec<bool> = (0..dataset.columns.len())
        .map(|i| dataset.keys.contains(&i) || dataset.sequence_by.contains(&i))
        .collect();
    let mut converted = Vec::with_capacity(dataset.columns.len());
    for (i, c) in dataset.columns.iter().enumerate() {
        let at = *plan.columns.get(i).ok_or("a column was not planned")?;
        let skip = Skip(if needed[i] { None } else { deletes.as_deref() });
        converted.push(cells(c, column(at)?.as_ref(), skip)?.into_iter());
    }
    let keys: Vec<&dyn Array> = plan.key_arrays(dataset, batch);
    for row in 0..batch.num_rows() {
        let delete = deletes
            .as_ref()
            .map(|d| d.get(row).copied().unwrap_or(false));
        let values = &mut parsed.changes;
        let mut reason = None;
        for ((column, cells), &needed) in dataset.columns.iter().zip(&mut converted).zip(&needed) {
            let cell = cells.next().unwrap_or(Ok(Value::Null));
            match cell {
                _ if reason.is_some() => {}
                _ if delete == Some(true) && !needed => values.field(Scalar::Null),
                Ok(Value::Null) if !column.nullable => {
                    reason = Some(RejectReason::Column {
                        name: column.name.clone(),
                        detail: "is null".to_string(),
                    })
                }
                Ok(v) => values.field(Scalar::from(&v)),
                Err(detail) => {
                    reason = Some(RejectReason::Column {
                        name: column.name.clone(),
                        detail,
                    })
                }
            }
        }
        let Some(reason) = reason else {
            values.end(delete);
            continue;
        };
        values.drop_record();
        parsed.rejects.push(Reject {
            line: before + row as u64 + 1,
            raw: row_json(batch, row),
            key: key_text(&keys, row),
            reason,
        });
    }
    Ok(())
}
