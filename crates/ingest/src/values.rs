//! Typed values as Arrow arrays, and back: one function per direction, one
//! arm per column type.

use crate::arrow_type;
use crate::error::DataError;
use arrow_array::cast::AsArray;
use arrow_array::types::{
    Date32Type, Decimal128Type, Float64Type, Int32Type, Int64Type, TimestampMicrosecondType,
};
use arrow_array::{
    Array, ArrayRef, BooleanArray, Date32Array, Decimal128Array, Float64Array, Int32Array,
    Int64Array, StringArray, TimestampMicrosecondArray,
};
use arrow_cast::cast;
use deltaload_core::{ColumnType, Value};
use std::sync::Arc;

/// The values of one column (all of `ty`, or null) as an array of its Arrow type.
pub fn array<'a>(ty: ColumnType, values: impl Iterator<Item = &'a Value>) -> ArrayRef {
    match ty {
        ColumnType::String => Arc::new(StringArray::from_iter(values.map(|v| match v {
            Value::Text(s) => Some(s.as_str()),
            _ => None,
        }))),
        ColumnType::Boolean => Arc::new(BooleanArray::from_iter(values.map(|v| match v {
            Value::Bool(b) => Some(*b),
            _ => None,
        }))),
        ColumnType::Int => Arc::new(Int32Array::from_iter(values.map(|v| match v {
            Value::Int(i) => i32::try_from(*i).ok(),
            _ => None,
        }))),
        ColumnType::Bigint => Arc::new(Int64Array::from_iter(values.map(|v| match v {
            Value::Int(i) => Some(*i),
            _ => None,
        }))),
        ColumnType::Double => Arc::new(Float64Array::from_iter(values.map(|v| match v {
            Value::Double(d) => Some(*d),
            _ => None,
        }))),
        ColumnType::Decimal { .. } => Arc::new(
            Decimal128Array::from_iter(values.map(|v| match v {
                Value::Decimal(d) => Some(d.get()),
                _ => None,
            }))
            .with_data_type(arrow_type(ty)),
        ),
        ColumnType::Date => Arc::new(Date32Array::from_iter(values.map(|v| match v {
            Value::Date(d) => Some(*d),
            _ => None,
        }))),
        ColumnType::Timestamp => Arc::new(
            TimestampMicrosecondArray::from_iter(values.map(|v| match v {
                Value::Timestamp(t) => Some(*t),
                _ => None,
            }))
            .with_timezone("UTC"),
        ),
    }
}

/// An array read back as values of `ty` (cast first: another engine may have
/// written a wider or narrower type). `table` names the table in errors.
pub fn read(column: &ArrayRef, ty: ColumnType, table: &str) -> Result<Vec<Value>, DataError> {
    let to = arrow_type(ty);
    let cast_to = cast(column, &to).map_err(DataError::arrow(table))?;
    let a = cast_to.as_ref();
    let unexpected = || DataError::Invariant {
        table: table.to_string(),
        detail: format!("expected {to}, found {}", column.data_type()),
    };
    let (n, valid) = (a.len(), |i: usize| a.is_valid(i));
    let wrap = |i: usize, v: Value| if valid(i) { v } else { Value::Null };
    Ok(match ty {
        ColumnType::String => {
            let s = a.as_string_opt::<i32>().ok_or_else(unexpected)?;
            (0..n)
                .map(|i| wrap(i, Value::Text(s.value(i).to_string())))
                .collect()
        }
        ColumnType::Boolean => {
            let b = a.as_boolean_opt().ok_or_else(unexpected)?;
            (0..n).map(|i| wrap(i, Value::Bool(b.value(i)))).collect()
        }
        ColumnType::Int => {
            let p = a.as_primitive_opt::<Int32Type>().ok_or_else(unexpected)?;
            (0..n)
                .map(|i| wrap(i, Value::Int(i64::from(p.value(i)))))
                .collect()
        }
        ColumnType::Bigint => {
            let p = a.as_primitive_opt::<Int64Type>().ok_or_else(unexpected)?;
            (0..n).map(|i| wrap(i, Value::Int(p.value(i)))).collect()
        }
        ColumnType::Double => {
            let p = a.as_primitive_opt::<Float64Type>().ok_or_else(unexpected)?;
            (0..n).map(|i| wrap(i, Value::Double(p.value(i)))).collect()
        }
        ColumnType::Decimal { .. } => {
            let p = a
                .as_primitive_opt::<Decimal128Type>()
                .ok_or_else(unexpected)?;
            (0..n)
                .map(|i| wrap(i, Value::Decimal(p.value(i).into())))
                .collect()
        }
        ColumnType::Date => {
            let p = a.as_primitive_opt::<Date32Type>().ok_or_else(unexpected)?;
            (0..n).map(|i| wrap(i, Value::Date(p.value(i)))).collect()
        }
        ColumnType::Timestamp => {
            let p = a
                .as_primitive_opt::<TimestampMicrosecondType>()
                .ok_or_else(unexpected)?;
            (0..n)
                .map(|i| wrap(i, Value::Timestamp(p.value(i))))
                .collect()
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_type_round_trips_with_nulls() {
        let cases = [
            (ColumnType::String, Value::Text("é".into())),
            (ColumnType::Boolean, Value::Bool(true)),
            (ColumnType::Int, Value::Int(-7)),
            (ColumnType::Bigint, Value::Int(i64::MAX)),
            (ColumnType::Double, Value::Double(1.5)),
            (
                ColumnType::Decimal {
                    precision: 38,
                    scale: 4,
                },
                Value::Decimal((-12_345).into()),
            ),
            (ColumnType::Date, Value::Date(-3)),
            (
                ColumnType::Timestamp,
                Value::Timestamp(1_790_846_100_000_000),
            ),
        ];
        for (ty, value) in cases {
            let values = [value.clone(), Value::Null];
            let a = array(ty, values.iter());
            assert_eq!(a.data_type(), &arrow_type(ty));
            assert_eq!(read(&a, ty, "t").unwrap(), values, "{ty}");
        }
    }
}
