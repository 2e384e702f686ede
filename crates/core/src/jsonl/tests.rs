//! Tests of the JSON Lines reader; the shared dataset and line builders.

use super::*;
use crate::spec::Spec;
use crate::value::Value;
use std::sync::Arc;

/// A composite key, a two-column sequence, deletes, and a column of every type.
const INVENTORY: &str = r#"
[[dataset]]
name = "inventory"
format = "jsonl"
keys = ["warehouse", "sku"]
sequence_by = ["event_time", "seq"]
delete_when = { column = "op", in = ["d", "delete"] }
columns = [
    { name = "warehouse", type = "string" },
    { name = "sku", type = "string" },
    { name = "event_time", type = "timestamp", timezone = "Europe/Berlin" },
    { name = "seq", type = "bigint" },
    { name = "qty", type = "int" },
    { name = "price", type = "decimal(10,2)" },
    { name = "active", type = "boolean" },
    { name = "weight", type = "double" },
    { name = "shipped", type = "date", format = "%d.%m.%Y" },
]
"#;

fn dataset(text: &str) -> Arc<Dataset> {
    Spec::parse(text, "t.toml").unwrap().datasets.remove(0)
}

fn inventory() -> Arc<Dataset> {
    dataset(INVENTORY)
}

fn without_deletes() -> Arc<Dataset> {
    dataset(&INVENTORY.replace(
        "delete_when = { column = \"op\", in = [\"d\", \"delete\"] }\n",
        "",
    ))
}

fn ignoring_extras() -> Arc<Dataset> {
    dataset(&INVENTORY.replace(
        "format = \"jsonl\"\n",
        "format = \"jsonl\"\nextra_fields = \"ignore\"\n",
    ))
}

/// A valid line's fields, as raw JSON.
const BASE: [(&str, &str); 9] = [
    ("warehouse", r#""W1""#),
    ("sku", r#""A""#),
    ("event_time", r#""2026-10-01T09:15:00""#),
    ("seq", "1"),
    ("qty", "5"),
    ("price", "12.50"),
    ("active", "true"),
    ("weight", "1.5"),
    ("shipped", r#""02.10.2026""#),
];

/// The base line with `changes`: a field set to a raw JSON text (appended
/// when new), or removed with `None`.
fn object(changes: &[(&str, Option<&str>)]) -> String {
    let mut fields: Vec<(String, String)> = BASE
        .iter()
        .map(|(n, v)| (n.to_string(), v.to_string()))
        .collect();
    for (name, raw) in changes {
        let at = fields.iter().position(|(n, _)| n == name);
        match (at, raw) {
            (Some(i), Some(raw)) => fields[i].1 = raw.to_string(),
            (Some(i), None) => {
                fields.remove(i);
            }
            (None, Some(raw)) => fields.push((name.to_string(), raw.to_string())),
            (None, None) => {}
        }
    }
    let inner: Vec<String> = fields.iter().map(|(n, v)| format!("{n:?}:{v}")).collect();
    format!("{{{}}}", inner.join(","))
}

fn read(d: &Dataset, text: &str) -> ParsedFile {
    read_jsonl(d, text.as_bytes()).unwrap()
}

/// One line read: its row, or its reject's reason.
fn one(d: &Dataset, line: &str) -> Result<Vec<Value>, String> {
    let parsed = read(d, line);
    assert_eq!(parsed.records(), 1, "{line}");
    match parsed.rejects.first() {
        Some(r) => Err(r.reason.to_string()),
        None => Ok(parsed.changes.row(0).to_vec()),
    }
}

/// The value of column `name` in the base line with `name` set to `raw`.
fn field(name: &str, raw: &str) -> Result<Value, String> {
    let d = inventory();
    let i = d.column_index(name).unwrap();
    one(&d, &object(&[(name, Some(raw))])).map(|row| row[i].clone())
}

fn text(s: &str) -> Value {
    Value::Text(s.to_string())
}

mod lines;
mod rejects;
mod values;
