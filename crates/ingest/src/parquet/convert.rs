//! A record batch's arrays converted to values, one column at a time: each
//! array is downcast once, then its values converted in a loop. A value that
//! does not convert is a [`Cell`] error (the row is rejected), never a panic.

use super::raw::{date_text, decimal_text, instant_text};
use super::schema::{is_text, lossless};
use arrow_array::cast::AsArray;
use arrow_array::types::*;
use arrow_array::{Array, ArrowPrimitiveType, StringArrayType};
use arrow_schema::{DataType, TimeUnit};
use chrono::{DateTime, LocalResult, TimeZone, Utc};
use deltaload_core::fields::shown;
use deltaload_core::{Column, ColumnType, Value};
use std::fmt::Display;

/// One field converted: its value (`Value::Null` for a null), or why it does
/// not convert, without the column's name.
pub(super) type Cell = Result<Value, String>;

const MICROS_PER_DAY: i64 = 86_400_000_000;
const MILLIS_PER_DAY: i64 = 86_400_000;

/// Rows whose value is not read (deletes, for the columns a delete does not need).
#[derive(Debug, Clone, Copy, Default)]
pub(super) struct Skip<'a>(pub Option<&'a [bool]>);

impl Skip<'_> {
    fn at(self, i: usize) -> bool {
        self.0.and_then(|s| s.get(i)).copied().unwrap_or(false)
    }

    /// `f` of the value at row `i`; null when it is null or skipped.
    fn cell<T>(self, i: usize, v: Option<T>, f: impl FnOnce(T) -> Cell) -> Cell {
        match v {
            Some(v) if !self.at(i) => f(v),
            _ => Ok(Value::Null),
        }
    }
}

/// The cells of `array` as values of `column`. An error is an array of a
/// type the schema check did not accept, which refuses the file.
pub(super) fn cells(
    column: &Column,
    array: &dyn Array,
    skip: Skip<'_>,
) -> Result<Vec<Cell>, String> {
    let dt = array.data_type();
    let unplanned = || {
        format!(
            "column {:?} is {dt} in a row group, not the type its schema declares",
            column.name
        )
    };
    if !lossless(column.ty, dt) {
        return Err(unplanned());
    }
    if let Some(dict) = array.as_any_dictionary_opt() {
        let values = cells(column, dict.values().as_ref(), Skip(None))?;
        return dictionary(array, dict.keys(), &values, skip).ok_or_else(unplanned);
    }
    let out = match column.ty {
        _ if is_text(dt) => texts(array, |i, s| skip.cell(i, s, |s| column.parse(s))),
        ColumnType::Boolean => prim_bool(array, |i, b| skip.cell(i, b, |b| Ok(Value::Bool(b)))),
        ColumnType::Int | ColumnType::Bigint => ints(array, |i, v| {
            skip.cell(i, v, |v| {
                i64::try_from(v)
                    .map(Value::Int)
                    .map_err(|_| format!("{v} does not fit a 64-bit integer"))
            })
        }),
        // Integers of 32 bits or fewer (the schema check): exact as doubles.
        ColumnType::Double => floats(array, |i, v| skip.cell(i, v, finite))
            .or_else(|| ints(array, |i, v| skip.cell(i, v, |v| finite(v as f64)))),
        ColumnType::Decimal { precision, scale } => {
            let fit = |v: Option<i128>, from: i8| fit_decimal(v, from, precision, scale);
            decimals(array, |i, v, from| skip.cell(i, v, |v| fit(v, from)))
                .or_else(|| ints(array, |i, v| skip.cell(i, v, |v| fit(Some(v), 0))))
        }
        ColumnType::Date => dates(array, skip),
        ColumnType::Timestamp => timestamps(column, array, skip),
        // Strings are text only, read above.
        ColumnType::String => None,
    };
    out.ok_or_else(unplanned)
}

/// Per row of a dictionary array, the cell of the value its key points at.
fn dictionary(
    array: &dyn Array,
    keys: &dyn Array,
    values: &[Cell],
    skip: Skip<'_>,
) -> Option<Vec<Cell>> {
    ints(keys, |i, key| {
        if array.is_null(i) {
            return Ok(Value::Null);
        }
        skip.cell(i, key, |k| {
            usize::try_from(k)
                .ok()
                .and_then(|k| values.get(k))
                .cloned()
                .unwrap_or_else(|| Err(format!("has dictionary index {k}, which has no value")))
        })
    })
}

/// Whether each row's delete column marks a delete: its text (an integer in
/// decimal, a boolean as `true`/`false`) among `delete_when`'s values; a null never.
pub(super) fn delete_flags(
    delete_when: &deltaload_core::spec::DeleteWhen,
    array: &dyn Array,
) -> Result<Vec<bool>, String> {
    let flags = if let Some(dict) = array.as_any_dictionary_opt() {
        let values = delete_flags(delete_when, dict.values().as_ref())?;
        ints(dict.keys(), |i, k| {
            !array.is_null(i)
                && k.and_then(|k| usize::try_from(k).ok())
                    .and_then(|k| values.get(k))
                    .copied()
                    .unwrap_or(false)
        })
    } else {
        texts(array, |_, s| s.is_some_and(|s| delete_when.matches(s)))
            .or_else(|| {
                ints(array, |_, v| {
                    v.is_some_and(|v| delete_when.matches(&v.to_string()))
                })
            })
            .or_else(|| {
                prim_bool(array, |_, b| {
                    b.is_some_and(|b| delete_when.matches(if b { "true" } else { "false" }))
                })
            })
    };
    flags.ok_or_else(|| format!("the delete column is {} in a row group", array.data_type()))
}

/// Per row, why its operation is none of `delete_when`'s (a preset's, which
/// lists its upserts): `None` for a row that is fine, or when any text is.
pub(super) fn operation_problems(
    delete_when: &deltaload_core::spec::DeleteWhen,
    array: &dyn Array,
) -> Vec<Option<String>> {
    if delete_when.upserts.is_empty() {
        return vec![None; array.len()];
    }
    let check = |s: Option<&str>| delete_when.classify(s.unwrap_or_default()).err();
    if let Some(dict) = array.as_any_dictionary_opt() {
        let values = operation_problems(delete_when, dict.values().as_ref());
        let null = check(None);
        return ints(dict.keys(), |i, k| {
            match k.and_then(|k| usize::try_from(k).ok()) {
                Some(k) if array.is_valid(i) => values.get(k).cloned().flatten(),
                _ => null.clone(),
            }
        })
        .unwrap_or_default();
    }
    texts(array, |_, s| check(s)).unwrap_or_else(|| vec![check(None); array.len()])
}

/// `f(row, text)` over a UTF-8 array of any kind; `None` for another type.
fn texts<R>(array: &dyn Array, f: impl FnMut(usize, Option<&str>) -> R) -> Option<Vec<R>> {
    fn each<'a, A: StringArrayType<'a>, R>(
        a: A,
        mut f: impl FnMut(usize, Option<&'a str>) -> R,
    ) -> Vec<R> {
        (0..a.len())
            .map(|i| f(i, a.is_valid(i).then(|| a.value(i))))
            .collect()
    }
    if let Some(a) = array.as_string_opt::<i32>() {
        Some(each(a, f))
    } else if let Some(a) = array.as_string_opt::<i64>() {
        Some(each(a, f))
    } else {
        array.as_string_view_opt().map(|a| each(a, f))
    }
}

/// `f(row, value)` over a primitive array of type `T`; `None` for another type.
fn prim<T: ArrowPrimitiveType, R>(
    array: &dyn Array,
    mut f: impl FnMut(usize, Option<T::Native>) -> R,
) -> Option<Vec<R>> {
    let a = array.as_primitive_opt::<T>()?;
    Some(
        (0..a.len())
            .map(|i| f(i, a.is_valid(i).then(|| a.value(i))))
            .collect(),
    )
}

fn prim_bool<R>(array: &dyn Array, mut f: impl FnMut(usize, Option<bool>) -> R) -> Option<Vec<R>> {
    let a = array.as_boolean_opt()?;
    Some(
        (0..a.len())
            .map(|i| f(i, a.is_valid(i).then(|| a.value(i))))
            .collect(),
    )
}

/// `f(row, value)` over an array of any integer type, widened to `i128`.
fn ints<R>(array: &dyn Array, mut f: impl FnMut(usize, Option<i128>) -> R) -> Option<Vec<R>> {
    let mut g = |i: usize, v: Option<i128>| f(i, v);
    match array.data_type() {
        DataType::Int8 => prim::<Int8Type, _>(array, |i, v| g(i, v.map(i128::from))),
        DataType::Int16 => prim::<Int16Type, _>(array, |i, v| g(i, v.map(i128::from))),
        DataType::Int32 => prim::<Int32Type, _>(array, |i, v| g(i, v.map(i128::from))),
        DataType::Int64 => prim::<Int64Type, _>(array, |i, v| g(i, v.map(i128::from))),
        DataType::UInt8 => prim::<UInt8Type, _>(array, |i, v| g(i, v.map(i128::from))),
        DataType::UInt16 => prim::<UInt16Type, _>(array, |i, v| g(i, v.map(i128::from))),
        DataType::UInt32 => prim::<UInt32Type, _>(array, |i, v| g(i, v.map(i128::from))),
        DataType::UInt64 => prim::<UInt64Type, _>(array, |i, v| g(i, v.map(i128::from))),
        _ => None,
    }
}

/// `f(row, value)` over an array of any float type, widened to `f64`.
fn floats<R>(array: &dyn Array, mut f: impl FnMut(usize, Option<f64>) -> R) -> Option<Vec<R>> {
    match array.data_type() {
        DataType::Float16 => prim::<Float16Type, _>(array, |i, v| f(i, v.map(f64::from))),
        DataType::Float32 => prim::<Float32Type, _>(array, |i, v| f(i, v.map(f64::from))),
        DataType::Float64 => prim::<Float64Type, _>(array, f),
        _ => None,
    }
}

/// `f(row, units, scale)` over an array of any decimal type; a 256-bit value
/// beyond 128 bits is `Some(None)`.
fn decimals<R>(
    array: &dyn Array,
    mut f: impl FnMut(usize, Option<Option<i128>>, i8) -> R,
) -> Option<Vec<R>> {
    match *array.data_type() {
        DataType::Decimal32(_, s) => {
            prim::<Decimal32Type, _>(array, |i, v| f(i, v.map(|v| Some(v.into())), s))
        }
        DataType::Decimal64(_, s) => {
            prim::<Decimal64Type, _>(array, |i, v| f(i, v.map(|v| Some(v.into())), s))
        }
        DataType::Decimal128(_, s) => prim::<Decimal128Type, _>(array, |i, v| f(i, v.map(Some), s)),
        DataType::Decimal256(_, s) => {
            prim::<Decimal256Type, _>(array, |i, v| f(i, v.map(|v| v.to_i128()), s))
        }
        _ => None,
    }
}

/// A float as a double: finite only, -0 stored as 0 (as the CSV reader does).
fn finite(v: f64) -> Cell {
    if v.is_finite() {
        Ok(Value::Double(v + 0.0))
    } else {
        Err(format!("{v} is not a finite number"))
    }
}

/// `units` at scale `from` as a `decimal(precision, scale)`, exactly or not at all.
fn fit_decimal(units: Option<i128>, from: i8, precision: u8, scale: u8) -> Cell {
    let doesnt_fit = || match units {
        Some(u) => format!(
            "{} does not fit DECIMAL({precision},{scale})",
            shown(&decimal_text(&u.to_string(), from))
        ),
        None => format!("does not fit DECIMAL({precision},{scale})"),
    };
    let up = i32::from(scale) - i32::from(from);
    let factor = u32::try_from(up).ok().and_then(|up| 10i128.checked_pow(up));
    let limit = 10i128.checked_pow(u32::from(precision));
    match (units, factor, limit) {
        (Some(u), Some(factor), Some(limit)) => match u.checked_mul(factor) {
            Some(v) if v.checked_abs().is_some_and(|a| a < limit) => Ok(Value::Decimal(v.into())),
            _ => Err(doesnt_fit()),
        },
        _ => Err(doesnt_fit()),
    }
}

fn dates(array: &dyn Array, skip: Skip<'_>) -> Option<Vec<Cell>> {
    match array.data_type() {
        DataType::Date32 => {
            prim::<Date32Type, _>(array, |i, v| skip.cell(i, v, |d| Ok(Value::Date(d))))
        }
        DataType::Date64 => prim::<Date64Type, _>(array, |i, v| {
            skip.cell(i, v, |ms| {
                let text = || shown(&instant_text(ms, TimeUnit::Millisecond, true));
                if ms % MILLIS_PER_DAY != 0 {
                    return Err(format!("{} is not a whole day", text()));
                }
                i32::try_from(ms / MILLIS_PER_DAY)
                    .map(Value::Date)
                    .map_err(|_| format!("{} is out of range", text()))
            })
        }),
        _ => None,
    }
}

fn timestamps(column: &Column, array: &dyn Array, skip: Skip<'_>) -> Option<Vec<Cell>> {
    let (unit, zone) = match array.data_type() {
        DataType::Date32 => {
            return prim::<Date32Type, _>(array, |i, v| {
                skip.cell(i, v, |d| {
                    let out = || format!("{} is out of range", shown(&date_text(d)));
                    let micros = i64::from(d).checked_mul(MICROS_PER_DAY).ok_or_else(out)?;
                    Ok(Value::Timestamp(micros))
                })
            })
        }
        DataType::Date64 => (TimeUnit::Millisecond, None),
        // Without a zone the file's times are local: in the column's zone, if any.
        DataType::Timestamp(unit, None) => (*unit, column.timezone),
        DataType::Timestamp(unit, Some(_)) => (*unit, None),
        _ => return None,
    };
    // Shown as in the file: `Z` on an instant, none on a wall-clock time.
    let utc = !matches!(array.data_type(), DataType::Timestamp(_, None));
    let convert = move |v: i64| -> Cell {
        let text = || shown(&instant_text(v, unit, utc));
        let micros = match unit {
            TimeUnit::Second => v.checked_mul(1_000_000),
            TimeUnit::Millisecond => v.checked_mul(1_000),
            TimeUnit::Microsecond => Some(v),
            TimeUnit::Nanosecond if v % 1_000 != 0 => {
                return Err(format!(
                    "{} has nanoseconds: a timestamp holds whole microseconds",
                    text()
                ))
            }
            TimeUnit::Nanosecond => Some(v / 1_000),
        };
        let micros = micros.ok_or_else(|| format!("{} is out of range", text()))?;
        match zone {
            None => Ok(Value::Timestamp(micros)),
            Some(tz) => local(micros, &tz),
        }
    };
    match unit {
        _ if matches!(array.data_type(), DataType::Date64) => {
            prim::<Date64Type, _>(array, |i, v| skip.cell(i, v, convert))
        }
        TimeUnit::Second => prim::<TimestampSecondType, _>(array, |i, v| skip.cell(i, v, convert)),
        TimeUnit::Millisecond => {
            prim::<TimestampMillisecondType, _>(array, |i, v| skip.cell(i, v, convert))
        }
        TimeUnit::Microsecond => {
            prim::<TimestampMicrosecondType, _>(array, |i, v| skip.cell(i, v, convert))
        }
        TimeUnit::Nanosecond => {
            prim::<TimestampNanosecondType, _>(array, |i, v| skip.cell(i, v, convert))
        }
    }
}

/// A wall-clock time of `zone` (microseconds as if UTC) as UTC microseconds;
/// a time a daylight-saving change skips or repeats is refused, as in CSV files.
fn local<Z: TimeZone + Display>(micros: i64, zone: &Z) -> Cell {
    let text = || shown(&instant_text(micros, TimeUnit::Microsecond, false));
    let Some(wall) = DateTime::from_timestamp_micros(micros).map(|t| t.naive_utc()) else {
        return Err(format!("{} is out of range", text()));
    };
    match zone.from_local_datetime(&wall) {
        LocalResult::Single(t) => Ok(Value::Timestamp(t.with_timezone(&Utc).timestamp_micros())),
        LocalResult::Ambiguous(..) => Err(format!(
            "{} happens twice in {zone} (a daylight-saving change): write it as a UTC timestamp",
            text()
        )),
        LocalResult::None => Err(format!(
            "{} does not exist in {zone} (skipped by a daylight-saving change)",
            text()
        )),
    }
}
