//! A rejected row as it was in the file: a JSON object of the columns the
//! spec reads, in the file's order. Numbers, strings, booleans and nulls as
//! JSON; decimals as strings of their exact text; dates and timestamps as
//! ISO-8601 strings (`Z` on a timestamp in UTC, none on a local one).

use arrow_array::cast::AsArray;
use arrow_array::types::*;
use arrow_array::{Array, RecordBatch};
use arrow_schema::{DataType, TimeUnit};
use chrono::DateTime;
use serde_json::{Number, Value as Json};

#[cfg(test)]
thread_local! {
    /// Rows shown as JSON on this thread: a test's proof of which rows were.
    pub(super) static ROWS_SHOWN: std::cell::Cell<usize> = const { std::cell::Cell::new(0) };
}

/// Row `i` of `batch` as a JSON object text, columns in the batch's order.
pub(crate) fn row_json(batch: &RecordBatch, i: usize) -> String {
    #[cfg(test)]
    ROWS_SHOWN.with(|shown| shown.set(shown.get() + 1));
    let mut out = String::from("{");
    for (n, (field, array)) in batch
        .schema()
        .fields()
        .iter()
        .zip(batch.columns())
        .enumerate()
    {
        if n > 0 {
            out.push(',');
        }
        out.push_str(&Json::String(field.name().clone()).to_string());
        out.push(':');
        out.push_str(&json(array.as_ref(), i).to_string());
    }
    out.push('}');
    out
}

/// The texts of row `i` in the key's `arrays`, joined by commas; `None` when all are null.
pub(crate) fn key_text(arrays: &[&dyn Array], i: usize) -> Option<String> {
    let values: Vec<Json> = arrays.iter().map(|a| json(*a, i)).collect();
    if values.iter().all(Json::is_null) {
        return None;
    }
    let texts: Vec<String> = values
        .into_iter()
        .map(|v| match v {
            Json::Null => String::new(),
            Json::String(s) => s,
            other => other.to_string(),
        })
        .collect();
    Some(texts.join(","))
}

/// The value at row `i` as JSON (null beyond the array's end).
pub(super) fn json(array: &dyn Array, i: usize) -> Json {
    if i >= array.len() || array.is_null(i) {
        return Json::Null;
    }
    if let Some(dict) = array.as_any_dictionary_opt() {
        return integer_at(dict.keys(), i)
            .and_then(|k| usize::try_from(k).ok())
            .map_or(Json::Null, |k| json(dict.values().as_ref(), k));
    }
    if let Some(v) = integer_at(array, i) {
        return i64::try_from(v)
            .map(Number::from)
            .or_else(|_| u64::try_from(v).map(Number::from))
            .map_or_else(|_| Json::String(v.to_string()), Json::Number);
    }
    let text = |s: String| Json::String(s);
    if let Some(record) = array.as_struct_opt() {
        let fields = record.fields().iter().zip(record.columns());
        let object = fields.map(|(f, a)| (f.name().clone(), json(a.as_ref(), i)));
        return Json::Object(object.collect());
    }
    if let Some(bytes) = bytes_at(array, i) {
        return text(base64(bytes));
    }
    match array.data_type() {
        DataType::Utf8 => array
            .as_string_opt::<i32>()
            .map_or(Json::Null, |a| text(a.value(i).into())),
        DataType::LargeUtf8 => array
            .as_string_opt::<i64>()
            .map_or(Json::Null, |a| text(a.value(i).into())),
        DataType::Utf8View => array
            .as_string_view_opt()
            .map_or(Json::Null, |a| text(a.value(i).into())),
        DataType::Boolean => array
            .as_boolean_opt()
            .map_or(Json::Null, |a| Json::Bool(a.value(i))),
        DataType::Float16 => float(
            array
                .as_primitive_opt::<Float16Type>()
                .map(|a| a.value(i).into()),
        ),
        DataType::Float32 => float(
            array
                .as_primitive_opt::<Float32Type>()
                .map(|a| a.value(i).into()),
        ),
        DataType::Float64 => float(array.as_primitive_opt::<Float64Type>().map(|a| a.value(i))),
        DataType::Date32 => at::<Date32Type>(array, i).map_or(Json::Null, |d| text(date_text(d))),
        DataType::Date64 => at::<Date64Type>(array, i).map_or(Json::Null, |ms| {
            text(instant_text(ms, TimeUnit::Millisecond, true))
        }),
        DataType::Timestamp(unit, zone) => timestamp_at(array, i, *unit)
            .map_or(Json::Null, |v| text(instant_text(v, *unit, zone.is_some()))),
        _ => decimal_at(array, i).map_or_else(|| text(format!("<{}>", array.data_type())), text),
    }
}

/// The bytes at row `i` of a binary array of any kind.
fn bytes_at(array: &dyn Array, i: usize) -> Option<&[u8]> {
    match array.data_type() {
        DataType::Binary => array.as_binary_opt::<i32>().map(|a| a.value(i)),
        DataType::LargeBinary => array.as_binary_opt::<i64>().map(|a| a.value(i)),
        DataType::BinaryView => array.as_binary_view_opt().map(|a| a.value(i)),
        DataType::FixedSizeBinary(_) => array.as_fixed_size_binary_opt().map(|a| a.value(i)),
        _ => None,
    }
}

/// Standard base64 with padding, as Kafka Connect's JSON shows bytes.
fn base64(bytes: &[u8]) -> String {
    const ALPHABET: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    let mut out = String::with_capacity(bytes.len().div_ceil(3) * 4);
    for chunk in bytes.chunks(3) {
        let n = chunk
            .iter()
            .enumerate()
            .fold(0u32, |n, (k, &b)| n | u32::from(b) << (16 - 8 * k));
        for k in 0..4 {
            match k <= chunk.len() {
                true => out.push(ALPHABET[(n >> (18 - 6 * k) & 63) as usize] as char),
                false => out.push('='),
            }
        }
    }
    out
}

fn at<T: arrow_array::ArrowPrimitiveType>(array: &dyn Array, i: usize) -> Option<T::Native> {
    array.as_primitive_opt::<T>().map(|a| a.value(i))
}

fn float(v: Option<f64>) -> Json {
    match v {
        Some(v) => Number::from_f64(v).map_or_else(|| Json::String(v.to_string()), Json::Number),
        None => Json::Null,
    }
}

/// The integer at row `i` of an array of any integer type.
pub(super) fn integer_at(array: &dyn Array, i: usize) -> Option<i128> {
    Some(match array.data_type() {
        DataType::Int8 => at::<Int8Type>(array, i)?.into(),
        DataType::Int16 => at::<Int16Type>(array, i)?.into(),
        DataType::Int32 => at::<Int32Type>(array, i)?.into(),
        DataType::Int64 => at::<Int64Type>(array, i)?.into(),
        DataType::UInt8 => at::<UInt8Type>(array, i)?.into(),
        DataType::UInt16 => at::<UInt16Type>(array, i)?.into(),
        DataType::UInt32 => at::<UInt32Type>(array, i)?.into(),
        DataType::UInt64 => at::<UInt64Type>(array, i)?.into(),
        _ => return None,
    })
}

fn timestamp_at(array: &dyn Array, i: usize, unit: TimeUnit) -> Option<i64> {
    match unit {
        TimeUnit::Second => at::<TimestampSecondType>(array, i),
        TimeUnit::Millisecond => at::<TimestampMillisecondType>(array, i),
        TimeUnit::Microsecond => at::<TimestampMicrosecondType>(array, i),
        TimeUnit::Nanosecond => at::<TimestampNanosecondType>(array, i),
    }
}

/// The exact text of the decimal at row `i`.
fn decimal_at(array: &dyn Array, i: usize) -> Option<String> {
    let (digits, scale) = match *array.data_type() {
        DataType::Decimal32(_, s) => (at::<Decimal32Type>(array, i)?.to_string(), s),
        DataType::Decimal64(_, s) => (at::<Decimal64Type>(array, i)?.to_string(), s),
        DataType::Decimal128(_, s) => (at::<Decimal128Type>(array, i)?.to_string(), s),
        DataType::Decimal256(_, s) => (at::<Decimal256Type>(array, i)?.to_string(), s),
        _ => return None,
    };
    Some(decimal_text(&digits, scale))
}

/// An integer's text (`-` and digits) read at `scale`: `("-1234", 2)` is
/// `-12.34`, `("5", -2)` is `500`.
pub(crate) fn decimal_text(digits: &str, scale: i8) -> String {
    let (sign, digits) = match digits.strip_prefix('-') {
        Some(d) => ("-", d),
        None => ("", digits),
    };
    let Ok(scale) = usize::try_from(scale) else {
        let zeros = usize::from(scale.unsigned_abs());
        return format!("{sign}{digits}{}", "0".repeat(zeros));
    };
    if scale == 0 {
        return format!("{sign}{digits}");
    }
    let padded = format!("{digits:0>width$}", width = scale + 1);
    let (int, frac) = padded.split_at(padded.len() - scale);
    format!("{sign}{int}.{frac}")
}

/// Days since 1970-01-01 as `YYYY-MM-DD` (the count itself when out of range).
pub(super) fn date_text(days: i32) -> String {
    DateTime::from_timestamp(i64::from(days) * 86_400, 0)
        .map_or_else(|| days.to_string(), |t| t.format("%Y-%m-%d").to_string())
}

/// A count of `unit` since the epoch as ISO-8601, with `Z` when `utc`; the
/// count with its unit when out of range.
pub(super) fn instant_text(v: i64, unit: TimeUnit, utc: bool) -> String {
    let (secs, nanos, per) = match unit {
        TimeUnit::Second => (v, 0, "s"),
        TimeUnit::Millisecond => (v.div_euclid(1_000), v.rem_euclid(1_000) * 1_000_000, "ms"),
        TimeUnit::Microsecond => (
            v.div_euclid(1_000_000),
            v.rem_euclid(1_000_000) * 1_000,
            "us",
        ),
        TimeUnit::Nanosecond => (
            v.div_euclid(1_000_000_000),
            v.rem_euclid(1_000_000_000),
            "ns",
        ),
    };
    let zone = if utc { "Z" } else { "" };
    u32::try_from(nanos)
        .ok()
        .and_then(|n| DateTime::from_timestamp(secs, n))
        .map_or_else(
            || format!("{v} {per} since the epoch"),
            |t| format!("{}{zone}", t.format("%Y-%m-%dT%H:%M:%S%.f")),
        )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn decimal_texts_are_exact() {
        assert_eq!(decimal_text("-1234", 2), "-12.34");
        assert_eq!(decimal_text("5", 3), "0.005");
        assert_eq!(decimal_text("-5", 3), "-0.005");
        assert_eq!(decimal_text("5", -2), "500");
        assert_eq!(decimal_text("120", 0), "120");
        assert_eq!(decimal_text("0", 2), "0.00");
    }

    #[test]
    fn bytes_show_as_base64_and_records_as_objects() {
        assert_eq!(base64(b""), "");
        assert_eq!(base64(b"f"), "Zg==");
        assert_eq!(base64(b"fo"), "Zm8=");
        assert_eq!(base64(b"foo"), "Zm9v");
        assert_eq!(base64(&[0xff, 0xfe, 0x00, 0x01]), "//4AAQ==");
        let inner: arrow_array::ArrayRef =
            std::sync::Arc::new(arrow_array::Int64Array::from(vec![7]));
        let field = std::sync::Arc::new(arrow_schema::Field::new("id", DataType::Int64, true));
        let record = arrow_array::StructArray::from(vec![(field, inner)]);
        assert_eq!(json(&record, 0).to_string(), r#"{"id":7}"#);
    }

    #[test]
    fn instants_and_dates() {
        assert_eq!(date_text(0), "1970-01-01");
        assert_eq!(date_text(-1), "1969-12-31");
        assert_eq!(
            instant_text(1_790_846_100_000_001, TimeUnit::Microsecond, true),
            "2026-10-01T09:15:00.000001Z"
        );
        assert_eq!(
            instant_text(-1, TimeUnit::Nanosecond, false),
            "1969-12-31T23:59:59.999999999"
        );
        assert_eq!(
            instant_text(i64::MAX, TimeUnit::Second, true),
            format!("{} s since the epoch", i64::MAX)
        );
    }
}
