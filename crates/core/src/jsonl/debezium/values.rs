//! Values in Debezium's encodings: decimals as base64 of the unscaled
//! integer (at the schema's scale, or a variable scale), dates as days since
//! the epoch, timestamps as milliseconds, microseconds or nanoseconds.

use super::super::{unescape, value as plain, Kind, Raw};
use super::{Hint, Logical};
use crate::fields::{parse_decimal, parse_integer, shown};
use crate::record::RejectReason;
use crate::sink::Scalar;
use crate::spec::{Column, ColumnType};
use serde::Deserialize;

/// A field's value as `column`'s type, Debezium's encodings decoded: a
/// number in a `date` column is days since the epoch; in a `timestamp`
/// column, microseconds (milliseconds or nanoseconds when the schema says
/// so); a string in a `decimal` column is base64 of the unscaled integer
/// when the schema says so or, without a schema, when it reads as base64 and
/// has no `.`; `{"scale", "value"}` is a variable-scale decimal.
pub(in crate::jsonl) fn value<'a>(
    column: &Column,
    raw: Option<Raw<'a>>,
    hint: Hint,
) -> Result<Scalar<'a>, RejectReason> {
    let Some(text) = raw.map(|r| r.get()) else {
        return plain(column, raw);
    };
    let failed = |detail: String| RejectReason::Column {
        name: column.name.clone(),
        detail,
    };
    let decoded = match (Kind::of(text), column.ty) {
        (Kind::Number, ColumnType::Date) => days(text),
        (Kind::Number, ColumnType::Timestamp) => instant(text, hint),
        (Kind::String, ColumnType::Decimal { precision, scale }) => {
            let inner = unescape(&column.name, text)?;
            let scale_of = match hint {
                Hint::Logical(Logical::Decimal(s)) => Some(s),
                Hint::Declared if !inner.contains('.') && base64(&inner).is_some() => {
                    Some(u32::from(scale))
                }
                _ => None,
            };
            match scale_of {
                Some(s) => unscaled(&inner, s).and_then(|t| decimal(&t, precision, scale)),
                None => return plain(column, raw),
            }
        }
        (Kind::Object, ColumnType::Decimal { precision, scale }) => {
            variable(text).and_then(|t| decimal(&t, precision, scale))
        }
        _ => return plain(column, raw),
    };
    decoded.map_err(failed)
}

fn decimal(text: &str, precision: u8, scale: u8) -> Result<Scalar<'static>, String> {
    parse_decimal(text, precision, scale).map(Scalar::Decimal)
}

fn days(text: &str) -> Result<Scalar<'static>, String> {
    let n = parse_integer(text, 32)?;
    crate::time::epoch_days(n, text).map(Scalar::Date)
}

fn instant(text: &str, hint: Hint) -> Result<Scalar<'static>, String> {
    let n = parse_integer(text, 64)?;
    let micros = match hint {
        Hint::Logical(Logical::Millis) => n.checked_mul(1000),
        Hint::Logical(Logical::Nanos) => Some(n.div_euclid(1000)),
        _ => Some(n),
    };
    crate::time::epoch_micros(micros, text).map(Scalar::Timestamp)
}

/// The decimal text of base64 `text` (an unscaled big-endian two's
/// complement integer) at `scale`.
pub(super) fn unscaled(text: &str, scale: u32) -> Result<String, String> {
    if scale > 38 {
        return Err(format!(
            "has scale {scale}, more than a decimal's 38 digits"
        ));
    }
    let bytes = base64(text).ok_or_else(|| format!("{} is not base64", shown(text)))?;
    if bytes.is_empty() || bytes.len() > 16 {
        return Err(format!(
            "{} holds {} bytes, expected 1 to 16 (a decimal of up to 38 digits)",
            shown(text),
            bytes.len()
        ));
    }
    let negative = bytes[0] & 0x80 != 0;
    let mut value: i128 = if negative { -1 } else { 0 };
    for b in bytes {
        value = (value << 8) | i128::from(b);
    }
    Ok(scaled_text(value, scale))
}

/// `12345` at scale 2 as `123.45`.
fn scaled_text(value: i128, scale: u32) -> String {
    let digits = value.unsigned_abs().to_string();
    let sign = if value < 0 { "-" } else { "" };
    let scale = scale as usize;
    if scale == 0 {
        return format!("{sign}{digits}");
    }
    let padded = format!("{digits:0>width$}", width = scale + 1);
    let (int, frac) = padded.split_at(padded.len() - scale);
    format!("{sign}{int}.{frac}")
}

/// `io.debezium.data.VariableScaleDecimal`: `{"scale": 2, "value": "MDk="}`.
pub(super) fn variable(text: &str) -> Result<String, String> {
    #[derive(Deserialize)]
    struct Variable {
        scale: u32,
        value: String,
    }
    let v: Variable = serde_json::from_str(text).map_err(|_| {
        "is a JSON object that is not a variable-scale decimal {\"scale\", \"value\"}".to_string()
    })?;
    unscaled(&v.value, v.scale)
}

/// Standard base64 with padding, as Kafka Connect's JsonConverter writes bytes.
pub(super) fn base64(text: &str) -> Option<Vec<u8>> {
    let bytes = text.as_bytes();
    if bytes.is_empty() || !bytes.len().is_multiple_of(4) {
        return None;
    }
    let sextet = |c: u8| match c {
        b'A'..=b'Z' => Some(c - b'A'),
        b'a'..=b'z' => Some(c - b'a' + 26),
        b'0'..=b'9' => Some(c - b'0' + 52),
        b'+' => Some(62),
        b'/' => Some(63),
        _ => None,
    };
    let pad = bytes.iter().rev().take_while(|&&c| c == b'=').count();
    if pad > 2 {
        return None;
    }
    let mut out = Vec::with_capacity(bytes.len() / 4 * 3);
    let mut acc: u32 = 0;
    for (i, &c) in bytes[..bytes.len() - pad].iter().enumerate() {
        acc = (acc << 6) | u32::from(sextet(c)?);
        if i % 4 == 3 {
            out.extend_from_slice(&acc.to_be_bytes()[1..]);
            acc = 0;
        }
    }
    match pad {
        1 => out.extend_from_slice(&(acc << 6).to_be_bytes()[1..3]),
        2 => out.push((acc << 12).to_be_bytes()[1]),
        _ => {}
    }
    Some(out)
}
