//! Columns of an Avro record (or of a Parquet file written from one) given
//! the types their annotations say: Kafka Connect's and Debezium's
//! `connect.name` (dates as days, timestamps as milliseconds, microseconds
//! or nanoseconds since the epoch, decimals as unscaled bytes) and Avro's
//! `uuid`, as arrow-avro leaves them in each field's metadata (a JSON
//! value, a string quoted). A decimal wider than a table's 38 digits
//! becomes its exact text, so that each value that does not fit its
//! column is a reject, not the whole file refused. Every other column is
//! left as it is.

mod parquet_schema;

use crate::parquet::raw::decimal_text;
use arrow_array::cast::AsArray;
use arrow_array::types::{Int32Type, Int64Type};
use arrow_array::{Array, ArrayRef, Date32Array, RecordBatch, StringArray};
use arrow_buffer::i256;
use arrow_schema::{DataType, Field, Schema};
use deltaload_core::time::{epoch_days, epoch_micros};
pub(crate) use parquet_schema::{annotated, with_schema};
use std::sync::Arc;

/// The annotation of a field that changes how its values read.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Meaning {
    /// `io.debezium.time.Date`: days since the epoch.
    Days,
    /// `io.debezium.time.Timestamp`, Connect's `Timestamp` on a `long`.
    Millis,
    /// `io.debezium.time.MicroTimestamp`.
    Micros,
    /// `io.debezium.time.NanoTimestamp` (microseconds kept, as in JSON Lines).
    Nanos,
    /// Connect's `Decimal` on bytes without Avro's `decimal`: the scale.
    Unscaled(u32),
    /// Avro's `uuid` on 16 fixed bytes.
    Uuid,
}

/// The metadata value `key` of `field`, a JSON string unquoted.
fn annotation(field: &Field, key: &str) -> Option<String> {
    let raw = field.metadata().get(key)?;
    Some(serde_json::from_str::<String>(raw).unwrap_or_else(|_| raw.clone()))
}

fn meaning(field: &Field) -> Option<Meaning> {
    let name = annotation(field, "connect.name");
    Some(match (name.as_deref(), field.data_type()) {
        (Some("io.debezium.time.Date"), DataType::Int32) => Meaning::Days,
        (
            Some("io.debezium.time.Timestamp" | "org.apache.kafka.connect.data.Timestamp"),
            DataType::Int64,
        ) => Meaning::Millis,
        (Some("io.debezium.time.MicroTimestamp"), DataType::Int64) => Meaning::Micros,
        (Some("io.debezium.time.NanoTimestamp"), DataType::Int64) => Meaning::Nanos,
        // A scale that is no number of 0 to 38 leaves the bytes as they are
        // (which no decimal column takes: the file is refused).
        (Some("org.apache.kafka.connect.data.Decimal"), DataType::Binary) => {
            Meaning::Unscaled(scale(field)?)
        }
        (_, DataType::FixedSizeBinary(16))
            if annotation(field, "logicalType").as_deref() == Some("uuid") =>
        {
            Meaning::Uuid
        }
        _ => return None,
    })
}

/// A Connect decimal's scale: `connect.parameters`' `scale` (a string),
/// 0 when it has none (as Connect reads it); `None` when it is no number of
/// 0 to 38 (a table's decimals hold 38 digits).
fn scale(field: &Field) -> Option<u32> {
    let Some(raw) = field.metadata().get("connect.parameters") else {
        return Some(0);
    };
    let params: serde_json::Value = serde_json::from_str(raw).ok()?;
    let scale = match params.get("scale") {
        None => Some(0),
        Some(serde_json::Value::String(s)) => s.parse().ok(),
        Some(serde_json::Value::Number(n)) => n.as_u64().and_then(|n| u32::try_from(n).ok()),
        Some(_) => None,
    };
    scale.filter(|&s| s <= 38)
}

/// A value that has no meaning in its type: its row, its column, why.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Bad {
    pub row: usize,
    pub column: String,
    pub detail: String,
}

/// `batch` with each annotated column (and each decimal of more than 38
/// digits) converted, the others as they are; and the values that have no
/// meaning in their type (a Debezium date or time outside years 1 to 9999,
/// a Connect decimal of no bytes or of more than 32), null in the batch.
/// Whether such a value rejects its record is the reader's decision: only
/// a column the dataset reads rejects it.
pub(crate) fn normalize(batch: RecordBatch) -> Result<(RecordBatch, Vec<Bad>), String> {
    let schema = batch.schema();
    let mut bad_values = Vec::new();
    let mut changed = false;
    let mut fields = Vec::with_capacity(schema.fields().len());
    let mut arrays = Vec::with_capacity(fields.capacity());
    for (field, array) in schema.fields().iter().zip(batch.columns()) {
        let Some((array, bad)) = column(field, array) else {
            fields.push(field.clone());
            arrays.push(array.clone());
            continue;
        };
        changed = true;
        bad_values.extend(bad.into_iter().map(|(row, detail)| Bad {
            row,
            column: field.name().clone(),
            detail,
        }));
        let f = Field::new(field.name(), array.data_type().clone(), true);
        fields.push(Arc::new(f.with_metadata(field.metadata().clone())));
        arrays.push(array);
    }
    if !changed {
        return Ok((batch, bad_values));
    }
    let schema = Arc::new(Schema::new(fields));
    let batch = RecordBatch::try_new(schema, arrays).map_err(|e| e.to_string())?;
    Ok((batch, bad_values))
}

/// `array` converted, when its field says so, and the rows whose value
/// has no meaning (null in the array converted), with why.
fn column(field: &Field, array: &ArrayRef) -> Option<(ArrayRef, Vec<(usize, String)>)> {
    let mut bad = Vec::new();
    if let DataType::Decimal256(_, scale) = array.data_type() {
        let values = array.as_primitive::<arrow_array::types::Decimal256Type>();
        let text = values
            .iter()
            .map(|v| v.map(|v| decimal_text(&v.to_string(), *scale)));
        return Some((Arc::new(text.collect::<StringArray>()), bad));
    }
    let converted: ArrayRef = match meaning(field)? {
        Meaning::Days => {
            let days = array.as_primitive::<Int32Type>().iter().enumerate();
            let out = days.map(|(row, d)| {
                let d = i64::from(d?);
                kept(&mut bad, row, epoch_days(d, &d.to_string()))
            });
            Arc::new(out.collect::<Date32Array>())
        }
        Meaning::Millis => times(array, &mut bad, |ms| ms.checked_mul(1000)),
        Meaning::Micros => times(array, &mut bad, Some),
        Meaning::Nanos => times(array, &mut bad, |ns| Some(ns.div_euclid(1000))),
        Meaning::Unscaled(scale) => {
            let bytes = array.as_binary::<i32>().iter().enumerate();
            let text = bytes.map(|(row, b)| {
                let b = b?;
                kept(&mut bad, row, unscaled(b, scale))
            });
            Arc::new(text.collect::<StringArray>())
        }
        Meaning::Uuid => {
            let fixed = array.as_fixed_size_binary();
            let text = fixed.iter().map(|b| {
                b.and_then(|b| uuid::Uuid::from_slice(b).ok())
                    .map(|u| u.hyphenated().to_string())
            });
            Arc::new(text.collect::<StringArray>())
        }
    };
    Some((converted, bad))
}

/// The value of `checked` (`None` for a value no table holds, whose row
/// and why go to `bad`).
fn kept<T>(bad: &mut Vec<(usize, String)>, row: usize, checked: Result<T, String>) -> Option<T> {
    checked.map_err(|why| bad.push((row, why))).ok()
}

/// `array`'s integers, made microseconds by `to_micros`, as times in UTC;
/// those no table holds null, their rows and why in `bad`.
fn times(
    array: &ArrayRef,
    bad: &mut Vec<(usize, String)>,
    to_micros: fn(i64) -> Option<i64>,
) -> ArrayRef {
    let values = array.as_primitive::<Int64Type>().iter().enumerate();
    let out = values.map(|(row, v)| {
        let v = v?;
        kept(bad, row, epoch_micros(to_micros(v), &v.to_string()))
    });
    let out: arrow_array::TimestampMicrosecondArray = out.collect();
    Arc::new(out.with_timezone("UTC"))
}

/// Big-endian two's-complement `bytes` at `scale` (at most 38) as decimal
/// text; why not, for no bytes or more than 32.
fn unscaled(bytes: &[u8], scale: u32) -> Result<String, String> {
    let Some(&first) = bytes.first().filter(|_| bytes.len() <= 32) else {
        return Err(format!(
            "holds {} bytes, expected 1 to 32 (an unscaled decimal)",
            bytes.len()
        ));
    };
    let mut wide = [if first & 0x80 != 0 { 0xff } else { 0 }; 32];
    wide[32 - bytes.len()..].copy_from_slice(bytes);
    Ok(decimal_text(
        &i256::from_be_bytes(wide).to_string(),
        scale as i8,
    ))
}

#[cfg(test)]
mod tests {
    use super::*;
    use arrow_array::{BinaryArray, Int64Array};
    use std::collections::HashMap;

    fn annotated(name: &str, dt: DataType, connect: &str) -> Field {
        let md = HashMap::from([("connect.name".to_string(), format!("\"{connect}\""))]);
        Field::new(name, dt, true).with_metadata(md)
    }

    #[test]
    fn debezium_times_and_unscaled_decimals_read_as_their_types() {
        let micros: ArrayRef = Arc::new(Int64Array::from(vec![Some(1_500_000), None]));
        let f = annotated("t", DataType::Int64, "io.debezium.time.MicroTimestamp");
        let (out, _) = column(&f, &micros).unwrap();
        assert_eq!(
            out.data_type(),
            &DataType::Timestamp(arrow_schema::TimeUnit::Microsecond, Some("UTC".into()))
        );
        assert!(out.is_null(1));
        let nanos: ArrayRef = Arc::new(Int64Array::from(vec![-1_500]));
        let f = annotated("t", DataType::Int64, "io.debezium.time.NanoTimestamp");
        let (out, _) = column(&f, &nanos).unwrap();
        let us = out.as_primitive::<arrow_array::types::TimestampMicrosecondType>();
        assert_eq!(us.value(0), -2);
        let md = HashMap::from([
            (
                "connect.name".into(),
                "\"org.apache.kafka.connect.data.Decimal\"".into(),
            ),
            ("connect.parameters".into(), r#"{"scale":"2"}"#.into()),
        ]);
        let f = Field::new("p", DataType::Binary, true).with_metadata(md);
        let b: ArrayRef = Arc::new(BinaryArray::from(vec![&[0x30, 0x39][..], &[0xff, 0xfe]]));
        let (out, _) = column(&f, &b).unwrap();
        let texts: Vec<_> = out.as_string::<i32>().iter().flatten().collect();
        assert_eq!(texts, ["123.45", "-0.02"]);
        // Values no table holds are rejects, their place null.
        let far: ArrayRef = Arc::new(Int64Array::from(vec![i64::MAX, 0]));
        let f = annotated("t", DataType::Int64, "io.debezium.time.Timestamp");
        let (out, bad) = column(&f, &far).unwrap();
        assert_eq!(bad.len(), 1);
        assert!(
            bad[0].1.contains("is not a time of years 1 to 9999"),
            "{bad:?}"
        );
        assert!(out.is_null(0) && out.is_valid(1));
        let f = Field::new("p", DataType::Binary, true).with_metadata(HashMap::from([(
            "connect.name".into(),
            "\"org.apache.kafka.connect.data.Decimal\"".into(),
        )]));
        let empty: ArrayRef = Arc::new(BinaryArray::from(vec![&[][..], &[7]]));
        let (out, bad) = column(&f, &empty).unwrap();
        assert_eq!(
            bad,
            [(
                0,
                "holds 0 bytes, expected 1 to 32 (an unscaled decimal)".to_string()
            )]
        );
        assert_eq!(out.as_string::<i32>().value(1), "7");
        // A column without an annotation is left alone.
        assert!(column(&Field::new("n", DataType::Int64, true), &micros).is_none());
    }
}
