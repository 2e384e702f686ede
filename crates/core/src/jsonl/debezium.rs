//! Debezium's change events (`preset = "debezium"`), in the three shapes the
//! Kafka Connect S3 sink writes them one per line: `{"schema", "payload"}`
//! (the JsonConverter with schemas), the payload alone (without schemas),
//! and the flat row of the `ExtractNewRecordState` transform (`__op`,
//! `__deleted` and other `__` fields beside the columns).
//!
//! An event gives the row to read (`after`; `before` for a delete, which
//! holds the key) and whether it deletes. Values keep Debezium's encodings,
//! told by the schema's logical type names when the line has a schema, by
//! the declared column type when it has none: see [`value`].

use super::{parse_object, unescape, value as plain, Fields, Kind, Raw};
use crate::fields::{parse_decimal, parse_integer, shown};
use crate::record::RejectReason;
use crate::sink::Scalar;
use crate::spec::{Column, ColumnType, Dataset};
use serde::Deserialize;

/// A line's change: the row's fields and whether it deletes the row's key.
pub(super) struct Event<'a> {
    /// The columns' fields (those a delete's `before` holds, for a delete).
    pub fields: Fields<'a>,
    /// Whether the event deletes.
    pub delete: bool,
}

/// How a column's JSON values are decoded: by the line's schema, or, when
/// the line has none, by the column's declared type.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Hint {
    /// The line has no schema.
    Declared,
    /// The schema's logical type of the column's field.
    Logical(Logical),
}

/// The Debezium and Kafka Connect logical types that change how a value reads.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Logical {
    /// No logical type that matters (or the field is not in the schema).
    Plain,
    /// `org.apache.kafka.connect.data.Decimal`: base64 of the unscaled
    /// big-endian integer, with the schema's scale.
    Decimal(u32),
    /// `io.debezium.time.Timestamp`, `org.apache.kafka.connect.data.Timestamp`:
    /// milliseconds since the epoch.
    Millis,
    /// `io.debezium.time.NanoTimestamp`: nanoseconds since the epoch.
    Nanos,
}

/// The logical types of the last schema seen, by declared column: a sink's
/// file repeats one schema on every line, so it is read once.
#[derive(Default)]
pub(super) struct Schemas {
    text: String,
    hints: Vec<Hint>,
}

impl Schemas {
    /// The hint of each declared column under the schema written as `text`.
    fn hints(&mut self, dataset: &Dataset, text: &str) -> Result<&[Hint], RejectReason> {
        if self.text != text || self.hints.is_empty() {
            let node: Node = serde_json::from_str(text).map_err(|e| RejectReason::NotDebezium {
                detail: format!("its schema is not a Kafka Connect schema: {e}"),
            })?;
            // An envelope's row schema is its `after` field's; a flat row's is the schema.
            let row = node
                .fields
                .iter()
                .find(|f| f.field.as_deref() == Some("after"))
                .unwrap_or(&node);
            self.hints = dataset
                .declared()
                .iter()
                .map(|c| {
                    let field = row
                        .fields
                        .iter()
                        .find(|f| f.field.as_ref() == Some(&c.name));
                    Hint::Logical(field.map_or(Logical::Plain, Node::logical))
                })
                .collect();
            self.text = text.to_string();
        }
        Ok(&self.hints)
    }
}

/// A Kafka Connect schema, as the JsonConverter writes it (what is read of it).
#[derive(Deserialize)]
struct Node {
    #[serde(default)]
    field: Option<String>,
    #[serde(default)]
    name: Option<String>,
    #[serde(default)]
    fields: Vec<Node>,
    #[serde(default)]
    parameters: Option<serde_json::Map<String, serde_json::Value>>,
}

impl Node {
    fn logical(&self) -> Logical {
        match self.name.as_deref() {
            Some("org.apache.kafka.connect.data.Decimal") => {
                let scale = self.parameters.as_ref().and_then(|p| p.get("scale"));
                let scale = match scale {
                    Some(serde_json::Value::String(s)) => s.parse().ok(),
                    Some(serde_json::Value::Number(n)) => n.as_u64().map(|n| n as u32),
                    _ => None,
                };
                Logical::Decimal(scale.unwrap_or(0))
            }
            Some("io.debezium.time.Timestamp" | "org.apache.kafka.connect.data.Timestamp") => {
                Logical::Millis
            }
            Some("io.debezium.time.NanoTimestamp") => Logical::Nanos,
            _ => Logical::Plain,
        }
    }
}

/// The event of a line's top-level `fields`, with each declared column's
/// hint; `None` for a Kafka tombstone (a null payload), which is no change.
pub(super) fn event<'a>(
    dataset: &Dataset,
    top: Fields<'a>,
    schemas: &mut Schemas,
) -> Result<Option<(Event<'a>, Vec<Hint>)>, RejectReason> {
    let declared = || vec![Hint::Declared; dataset.declared().len()];
    let wrapped = top.len() == 2;
    let (body, hints) = match (wrapped, find(&top, "schema"), find(&top, "payload")) {
        (true, Some(schema), Some(payload)) => {
            let hints = match Kind::of(schema.get()) {
                Kind::Object => schemas.hints(dataset, schema.get())?.to_vec(),
                _ => declared(),
            };
            if Kind::of(payload.get()) == Kind::Null {
                return Ok(None);
            }
            (object(payload, "payload")?, hints)
        }
        _ => (top, declared()),
    };
    let envelope = find(&body, "op").is_some()
        && (find(&body, "after").is_some() || find(&body, "before").is_some());
    let event = match envelope {
        true => from_envelope(&body)?,
        false => flat(body)?,
    };
    Ok(Some((event, hints)))
}

/// `after` of a create, read or update; `before` of a delete.
fn from_envelope<'a>(body: &Fields<'a>) -> Result<Event<'a>, RejectReason> {
    let op = operation(find(body, "op"), "op")?;
    let side = if op { "before" } else { "after" };
    let row = match find(body, side) {
        Some(raw) if Kind::of(raw.get()) == Kind::Object => object(raw, side)?,
        _ if op => {
            return Err(RejectReason::NotDebezium {
                detail: "a delete (op \"d\") without before: its key is not known (give the \
                         source table a primary key or REPLICA IDENTITY)"
                    .to_string(),
            })
        }
        _ => {
            return Err(RejectReason::NotDebezium {
                detail: "an event of op \"c\", \"r\" or \"u\" without after".to_string(),
            })
        }
    };
    Ok(Event {
        fields: row,
        delete: op,
    })
}

/// A flat row of `ExtractNewRecordState`: its `__` fields are the
/// transform's (`__op` and `__deleted` are read), the others the columns.
fn flat(body: Fields<'_>) -> Result<Event<'_>, RejectReason> {
    let op = match find(&body, "__op") {
        Some(raw) => operation(Some(raw), "__op")?,
        None => false,
    };
    let deleted = match find(&body, "__deleted").map(|r| r.get()) {
        None | Some("null" | "false" | "\"false\"") => false,
        Some("true" | "\"true\"") => true,
        Some(other) => {
            return Err(RejectReason::Column {
                name: "__deleted".to_string(),
                detail: format!("is {}, expected \"true\" or \"false\"", shown(other)),
            })
        }
    };
    let fields = body
        .into_iter()
        .filter(|(name, _)| !name.starts_with("__"))
        .collect();
    Ok(Event {
        fields,
        delete: op || deleted,
    })
}

/// Whether the operation field `raw` deletes: `r`, `c`, `u` upsert, `d`
/// deletes; a truncate (`t`), a message (`m`) and anything else are rejected.
fn operation(raw: Option<Raw<'_>>, name: &str) -> Result<bool, RejectReason> {
    let failed = |detail: String| RejectReason::Column {
        name: name.to_string(),
        detail,
    };
    let text = raw.map_or("null", |r| r.get());
    if Kind::of(text) != Kind::String {
        return Err(failed(format!(
            "is {}, expected \"r\", \"c\", \"u\" or \"d\"",
            shown(text)
        )));
    }
    match unescape(name, text)?.as_ref() {
        "r" | "c" | "u" => Ok(false),
        "d" => Ok(true),
        other => Err(failed(format!(
            "is {}, an operation deltaload does not apply: expected r, c, u (upserts) or d \
             (a delete)",
            shown(other)
        ))),
    }
}

/// The value of `name` in `fields`, the first when written twice.
fn find<'a>(fields: &Fields<'a>, name: &str) -> Option<Raw<'a>> {
    fields.iter().find(|(n, _)| n == name).map(|(_, raw)| *raw)
}

/// A nested object's fields.
fn object<'a>(raw: Raw<'a>, name: &str) -> Result<Fields<'a>, RejectReason> {
    parse_object(raw.get()).map_err(|_| RejectReason::NotDebezium {
        detail: format!(
            "{name} is a JSON {}, expected an object",
            Kind::of(raw.get())
        ),
    })
}

/// A field's value as `column`'s type, Debezium's encodings decoded: a
/// number in a `date` column is days since the epoch; in a `timestamp`
/// column, microseconds (milliseconds or nanoseconds when the schema says
/// so); a string in a `decimal` column is base64 of the unscaled integer
/// when the schema says so or, without a schema, when it reads as base64 and
/// has no `.`; `{"scale", "value"}` is a variable-scale decimal.
pub(super) fn value<'a>(
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

/// The earliest and latest days a table holds: 0001-01-01 and 9999-12-31.
const DAYS: std::ops::RangeInclusive<i64> = -719_162..=2_932_896;

fn days(text: &str) -> Result<Scalar<'static>, String> {
    let n = parse_integer(text, 32)?;
    match DAYS.contains(&n) {
        true => Ok(Scalar::Date(n as i32)),
        false => Err(format!(
            "{text} days since 1970-01-01 is not a date of years 1 to 9999"
        )),
    }
}

fn instant(text: &str, hint: Hint) -> Result<Scalar<'static>, String> {
    let n = parse_integer(text, 64)?;
    let micros = match hint {
        Hint::Logical(Logical::Millis) => n.checked_mul(1000),
        Hint::Logical(Logical::Nanos) => Some(n.div_euclid(1000)),
        _ => Some(n),
    };
    let range = DAYS.start() * 86_400_000_000..=(DAYS.end() + 1) * 86_400_000_000 - 1;
    match micros {
        Some(m) if range.contains(&m) => Ok(Scalar::Timestamp(m)),
        _ => Err(format!(
            "{text} is not a time of years 1 to 9999 since the epoch"
        )),
    }
}

/// The decimal text of base64 `text` (an unscaled big-endian two's
/// complement integer) at `scale`.
fn unscaled(text: &str, scale: u32) -> Result<String, String> {
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
fn variable(text: &str) -> Result<String, String> {
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
fn base64(text: &str) -> Option<Vec<u8>> {
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

#[cfg(test)]
#[path = "debezium_tests.rs"]
mod tests;
