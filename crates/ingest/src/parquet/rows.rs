//! One record batch's rows: its columns converted, then each row assembled
//! into a change of `width()` values or a reject with its row number, the row
//! as JSON, its key and the first reason in declared column order.

use super::convert::{cells, delete_flags, operation_problems, Skip};
use super::raw::{key_text, row_json};
use super::schema::Plan;
use super::Given;
use arrow_array::{Array, ArrayRef, RecordBatch};
use deltaload_core::{Column, Dataset, ParsedFile, Reject, RejectReason, Scalar, Sink, Value};

/// Appends the rows of `batch` (whose first row is row `before + 1` of the
/// file) to `parsed`. An error is a batch unlike the planned schema.
pub(super) fn read_batch<S: Sink>(
    dataset: &Dataset,
    plan: &Plan,
    batch: &RecordBatch,
    (before, given): (u64, &Given<'_>),
    parsed: &mut ParsedFile<S>,
) -> Result<(), String> {
    let column = |at: usize| -> Result<&ArrayRef, String> {
        batch
            .columns()
            .get(at)
            .ok_or_else(|| format!("a row group has {} columns", batch.num_columns()))
    };
    let (deletes, mut problems) = match (&dataset.delete_when, plan.delete) {
        (Some(d), Some(at)) => {
            let ops = column(at)?.as_ref();
            (Some(delete_flags(d, ops)?), operation_problems(d, ops))
        }
        _ => (None, vec![None; batch.num_rows()]),
    };
    let declared = dataset.declared();
    // A delete needs its key and sequence alone: the other columns are not read.
    let needed: Vec<bool> = (0..declared.len())
        .map(|i| dataset.is_key_or_sequence(i))
        .collect();
    let mut converted = Vec::with_capacity(declared.len());
    for (i, c) in declared.iter().enumerate() {
        let at = *plan.columns.get(i).ok_or("a column was not planned")?;
        let skip = Skip(if needed[i] { None } else { deletes.as_deref() });
        converted.push(cells(c, column(at)?.as_ref(), skip)?.into_iter());
    }
    let keys: Vec<&dyn Array> = plan.key_arrays(dataset, batch);
    for (row, problem) in problems.iter_mut().enumerate() {
        let delete = deletes
            .as_ref()
            .map(|d| d.get(row).copied().unwrap_or(false));
        let values = &mut parsed.changes;
        let mut reason = given.problem(row).or_else(|| {
            problem.take().map(|detail| RejectReason::Column {
                name: (dataset.delete_when.as_ref()).map_or_else(String::new, |d| d.column.clone()),
                detail,
            })
        });
        for ((column, cells), &needed) in declared.iter().zip(&mut converted).zip(&needed) {
            let cell = cells.next().unwrap_or(Ok(Value::Null));
            if reason.is_none() {
                let skipped = delete == Some(true) && !needed;
                reason = take_cell(values, column, cell, skipped).err();
            }
        }
        let Some(reason) = reason else {
            let line = before + row as u64 + 1;
            deltaload_core::spec::fill_generated(dataset.generated_columns(), line, values);
            values.end(delete, line);
            continue;
        };
        values.drop_record();
        parsed.rejects.push(Reject {
            line: before + row as u64 + 1,
            raw: row_json(given.shown(batch), row),
            key: key_text(&keys, row),
            reason,
        });
    }
    Ok(())
}

/// A row's cell added to its record (null for a column a delete does not
/// read, `skipped`), or why the row is a reject.
fn take_cell<S: Sink>(
    values: &mut S,
    column: &Column,
    cell: Result<Value, String>,
    skipped: bool,
) -> Result<(), RejectReason> {
    let refused = |detail: String| RejectReason::Column {
        name: column.name.clone(),
        detail,
    };
    match cell {
        _ if skipped => values.field(Scalar::Null),
        Ok(Value::Null) if !column.nullable => return Err(refused("is null".to_string())),
        Ok(v) => values.field(Scalar::from(&v)),
        Err(detail) => return Err(refused(detail)),
    }
    Ok(())
}
