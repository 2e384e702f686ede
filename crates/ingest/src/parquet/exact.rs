//! A record batch whose declared columns already hold their columns' Arrow
//! types (a file written with the dataset's own types: the common case) taken
//! as it is, a column at a time: no value converted, only the nulls of
//! columns that may not hold one found, deletes' other columns nulled, and
//! the rejected rows filtered out. Any other batch goes the rows' way
//! (`rows`), value by value, which decides every conversion and its reason.

use super::raw::{key_text, row_json};
use super::schema::Plan;
use super::Given;
use arrow_array::cast::AsArray;
use arrow_array::types::{Decimal128Type, Float64Type};
use arrow_array::{Array, ArrayRef, BooleanArray, Int64Array, RecordBatch};
use arrow_schema::{DataType, SchemaRef};
use deltaload_core::spec::FEED_LINE;
use deltaload_core::{Dataset, Reject, RejectReason};
use std::sync::Arc;

/// `batch` (whose first row is row `before + 1` of the file) as changes of
/// `schema` (the dataset's columns, then the delete flag) and its rejects;
/// `None` when a column needs converting.
pub(super) fn exact_batch(
    dataset: &Dataset,
    plan: &Plan,
    batch: &RecordBatch,
    (before, given): (u64, &Given<'_>),
    schema: &SchemaRef,
) -> Result<Option<(RecordBatch, Vec<Reject>)>, String> {
    let mut arrays: Vec<ArrayRef> = Vec::with_capacity(dataset.columns.len() + 1);
    for (i, &at) in plan.columns.iter().enumerate() {
        let array = batch.column(at);
        match taken_as_is(array, schema.field(i).data_type()) {
            Some(a) => arrays.push(a),
            None => return Ok(None),
        }
    }
    let n = batch.num_rows();
    arrays.extend(generated(dataset, before, n));
    let (deletes, mut reason) = match (&dataset.delete_when, plan.delete) {
        (Some(d), Some(at)) => {
            let ops = batch.column(at).as_ref();
            let problems = super::convert::operation_problems(d, ops);
            let reason = problems.into_iter().map(|p| {
                p.map(|detail| RejectReason::Column {
                    name: d.column.clone(),
                    detail,
                })
            });
            (super::convert::delete_flags(d, ops)?, reason.collect())
        }
        _ => (vec![false; n], vec![None; n]),
    };
    given.first(&mut reason);
    let deletes = BooleanArray::from(deletes);
    refuse_nulls(dataset, &arrays, &deletes, &mut reason);
    if deletes.true_count() > 0 {
        for (i, array) in arrays.iter_mut().enumerate() {
            if !dataset.is_key_or_sequence(i) {
                *array = arrow_select::nullif::nullif(array.as_ref(), &deletes)
                    .map_err(|e| e.to_string())?;
            }
        }
    }
    arrays.push(Arc::new(deletes));
    let changes = RecordBatch::try_new(schema.clone(), arrays).map_err(|e| e.to_string())?;
    let keep = BooleanArray::from(reason.iter().map(Option::is_none).collect::<Vec<_>>());
    let rejects = rejects(dataset, plan, (batch, given.shown(batch)), before, reason);
    if rejects.is_empty() {
        return Ok(Some((changes, rejects)));
    }
    let kept =
        arrow_select::filter::filter_record_batch(&changes, &keep).map_err(|e| e.to_string())?;
    Ok(Some((kept, rejects)))
}

/// Gives each row without a reason yet the first column, in declared order,
/// that holds a null it may not (a column a delete does not read excepted).
fn refuse_nulls(
    dataset: &Dataset,
    arrays: &[ArrayRef],
    deletes: &BooleanArray,
    reason: &mut [Option<RejectReason>],
) {
    for (i, column) in dataset.declared().iter().enumerate() {
        let array = &arrays[i];
        if column.nullable || array.null_count() == 0 {
            continue;
        }
        for (row, r) in reason.iter_mut().enumerate() {
            let skipped = deletes.value(row) && !dataset.is_key_or_sequence(i);
            if r.is_none() && array.is_null(row) && !skipped {
                *r = Some(RejectReason::Column {
                    name: column.name.clone(),
                    detail: "is null".to_string(),
                });
            }
        }
    }
}

/// The generated columns of `n` rows from row `before + 1`: each row's
/// number in [`FEED_LINE`], and a null [`FEED_FILE`] (filled once the
/// file's name is known).
///
/// [`FEED_FILE`]: deltaload_core::spec::FEED_FILE
fn generated(dataset: &Dataset, before: u64, n: usize) -> Vec<ArrayRef> {
    let rows = (before as i64 + 1)..(before as i64 + 1 + n as i64);
    dataset
        .generated_columns()
        .iter()
        .map(|c| -> ArrayRef {
            match c.name.as_str() {
                FEED_LINE => Arc::new(Int64Array::from_iter_values(rows.clone())),
                _ => arrow_array::new_null_array(&DataType::Utf8, n),
            }
        })
        .collect()
}

/// `array` as a column of type `to`, when it holds exactly that type and
/// every value is one a conversion would keep as it is.
fn taken_as_is(array: &ArrayRef, to: &DataType) -> Option<ArrayRef> {
    if array.data_type() != to {
        return None;
    }
    match to {
        // A double must be finite, and -0.0 is stored as 0.0.
        DataType::Float64 => {
            let values = array.as_primitive::<Float64Type>();
            if values.iter().flatten().any(|v| !v.is_finite()) {
                return None;
            }
            Some(Arc::new(values.unary::<_, Float64Type>(|v| v + 0.0)))
        }
        // A decimal must fit its precision.
        DataType::Decimal128(precision, _) => {
            let values = array.as_primitive::<Decimal128Type>();
            values
                .validate_decimal_precision(*precision)
                .ok()
                .map(|_| array.clone())
        }
        _ => Some(array.clone()),
    }
}

/// The rows with a reason, as rejects: their row number, the row as JSON,
/// their key and the reason.
fn rejects(
    dataset: &Dataset,
    plan: &Plan,
    (batch, shown): (&RecordBatch, &RecordBatch),
    before: u64,
    reason: Vec<Option<RejectReason>>,
) -> Vec<Reject> {
    let keys: Vec<&dyn Array> = plan.key_arrays(dataset, batch);
    reason
        .into_iter()
        .enumerate()
        .filter_map(|(row, r)| {
            // The reason first: a row kept is never shown.
            let reason = r?;
            Some(Reject {
                line: before + row as u64 + 1,
                raw: row_json(shown, row),
                key: key_text(&keys, row),
                reason,
            })
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use arrow_array::{Decimal128Array, StringArray, TimestampMicrosecondArray};
    use arrow_schema::{Field, Schema};
    use deltaload_core::Dataset;

    /// `n` orders of the dataset's own types; order `null_at` has no key.
    fn orders(n: usize, null_at: usize) -> RecordBatch {
        let text = |s: &str| -> ArrayRef { Arc::new(StringArray::from(vec![s; n])) };
        let time = || -> ArrayRef {
            let at = (0..n as i64).map(|i| 1_790_000_000_000_000 + i);
            Arc::new(TimestampMicrosecondArray::from_iter_values(at).with_timezone("UTC"))
        };
        let keys = (0..n as i64).map(|i| (i as usize != null_at).then_some(i));
        let amounts = Decimal128Array::from(vec![2550i128; n]).with_precision_and_scale(10, 2);
        let columns: Vec<ArrayRef> = vec![
            Arc::new(Int64Array::from_iter(keys)),
            text("C01"),
            text("placed"),
            Arc::new(amounts.unwrap()),
            text("EUR"),
            time(),
            time(),
        ];
        let names = ["order_id", "customer_id", "status", "amount", "currency"];
        let names = names.iter().chain(&["ordered_at", "updated_at"]);
        let fields: Vec<Field> = (names.zip(&columns))
            .map(|(name, c)| Field::new(*name, c.data_type().clone(), true))
            .collect();
        RecordBatch::try_new(Arc::new(Schema::new(fields)), columns).unwrap()
    }

    #[test]
    fn only_a_rejected_row_is_shown_as_json() {
        let dataset = Dataset::orders();
        let batch = orders(1000, 7);
        let plan = crate::parquet::schema::plan(&dataset, &batch.schema()).unwrap();
        let mut fields: Vec<Field> = (batch.schema().fields().iter())
            .map(|f| f.as_ref().clone())
            .collect();
        fields.push(Field::new("deleted", DataType::Boolean, false));
        let schema = Arc::new(Schema::new(fields));
        crate::parquet::raw::ROWS_SHOWN.with(|shown| shown.set(0));
        let given = Given::default();
        let taken = exact_batch(&dataset, &plan, &batch, (100, &given), &schema).unwrap();
        let (changes, rejects) = taken.expect("the batch holds the dataset's types");
        assert_eq!(changes.num_rows(), 999);
        assert_eq!(rejects.len(), 1);
        assert_eq!(rejects[0].line, 108);
        assert!(
            rejects[0].raw.contains("\"order_id\":null"),
            "{}",
            rejects[0].raw
        );
        // The JSON text of a row is made for a reject only, not for the
        // 999 rows kept (it once was, for every row: most of a file's read).
        assert_eq!(
            crate::parquet::raw::ROWS_SHOWN.with(std::cell::Cell::get),
            1
        );
    }
}
