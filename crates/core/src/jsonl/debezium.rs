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

use super::{parse_object, unescape, Fields, Kind, Raw};
use crate::fields::shown;
use crate::record::RejectReason;
use crate::spec::Dataset;
use serde::Deserialize;

mod values;

pub(super) use values::value;
#[cfg(test)]
use values::{base64, unscaled, variable};

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
/// file repeats one schema on every line, so it is read once. Also the
/// hints of a line without a schema, made once.
#[derive(Default)]
pub(super) struct Schemas {
    text: String,
    hints: Vec<Hint>,
    declared: Vec<Hint>,
}

impl Schemas {
    /// [`Hint::Declared`] for each declared column.
    fn declared(&mut self, dataset: &Dataset) -> &[Hint] {
        let n = dataset.declared().len();
        if self.declared.len() != n {
            self.declared = vec![Hint::Declared; n];
        }
        &self.declared
    }

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
pub(super) fn event<'a, 's>(
    dataset: &Dataset,
    top: Fields<'a>,
    schemas: &'s mut Schemas,
) -> Result<Option<(Event<'a>, &'s [Hint])>, RejectReason> {
    let wrapped = top.len() == 2;
    let (body, with_schema) = match (wrapped, find(&top, "schema"), find(&top, "payload")) {
        (true, Some(schema), Some(payload)) => {
            let with_schema = Kind::of(schema.get()) == Kind::Object;
            if with_schema {
                schemas.hints(dataset, schema.get())?;
            }
            if Kind::of(payload.get()) == Kind::Null {
                return Ok(None);
            }
            (object(payload, "payload")?, with_schema)
        }
        _ => (top, false),
    };
    // A message event (op "m") has neither before nor after: its `source`
    // still makes it an envelope, unless flat rows declare those columns.
    let declared = |name: &str| dataset.columns.iter().any(|c| c.name == name);
    let sourced = find(&body, "source").is_some() && !declared("op") && !declared("source");
    let envelope = find(&body, "op").is_some()
        && (find(&body, "after").is_some() || find(&body, "before").is_some() || sourced);
    let event = match envelope {
        true => from_envelope(&body)?,
        false => flat(body)?,
    };
    let hints = match with_schema {
        true => &schemas.hints[..],
        false => schemas.declared(dataset),
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

#[cfg(test)]
#[path = "debezium_tests.rs"]
mod tests;
