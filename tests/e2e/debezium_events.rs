//! Lines as Debezium and the Kafka Connect S3 sink write them, for the
//! generated folders of `debezium.rs`: a source table's row, and the shape
//! and encodings the connector's and the sink's options give its events.

use serde_json::{json, Value};
pub(crate) const TOPIC: &str = "dbserver1.public.people";

/// A row of the source table.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Row {
    pub(crate) id: i64,
    pub(crate) name: Option<&'static str>,
    /// Cents.
    pub(crate) balance: Option<i64>,
    /// Days since 1970-01-01.
    pub(crate) born: Option<i32>,
    /// Milliseconds since the epoch; does not order the changes.
    pub(crate) seen_ms: i64,
}

impl Row {
    /// The row as the table shows it.
    pub(crate) fn shown(&self) -> Vec<String> {
        let null = || "NULL".to_string();
        let balance = self.balance.map_or_else(null, |c| {
            let sign = if c < 0 { "-" } else { "" };
            format!("{sign}{}.{:02}", c.abs() / 100, c.abs() % 100)
        });
        // Day 719,163 of the common era is 1970-01-01.
        let born = self.born.map_or_else(null, |d| {
            chrono::NaiveDate::from_num_days_from_ce_opt(719_163 + d)
                .unwrap()
                .to_string()
        });
        let seen = chrono::DateTime::from_timestamp_millis(self.seen_ms)
            .unwrap()
            .to_rfc3339_opts(chrono::SecondsFormat::AutoSi, true);
        vec![
            self.id.to_string(),
            self.name.map_or_else(null, str::to_string),
            balance,
            born,
            seen,
        ]
    }
}

/// How the connector and the sink are configured: the line's shape and the
/// encodings Debezium's options choose.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Shape {
    /// The JsonConverter's `schemas.enable`.
    pub(crate) schema: bool,
    /// `ExtractNewRecordState` with `add.fields=op,lsn` and
    /// `delete.tombstone.handling.mode=rewrite`.
    pub(crate) flat: bool,
    /// `decimal.handling.mode`: 0 precise (base64), 1 string, 2 double.
    pub(crate) decimals: u8,
    /// `time.precision.mode` gives milliseconds (`Timestamp`) instead of
    /// microseconds (`MicroTimestamp`); only told by a schema.
    pub(crate) millis: bool,
    /// PostgreSQL's `REPLICA IDENTITY FULL`: `before` holds the whole row,
    /// else the key alone.
    pub(crate) full_before: bool,
    /// The sink writes tombstones (`behavior.on.null.values=write`).
    pub(crate) tombstones: bool,
}

impl Shape {
    pub(crate) fn value(&self, row: &Row) -> Value {
        let balance = row.balance.map(|c| match self.decimals {
            0 => json!(base64_of(c)),
            1 => json!(decimal_text(c)),
            _ => serde_json::from_str::<Value>(&decimal_text(c)).unwrap(),
        });
        let seen = match self.millis {
            true => row.seen_ms,
            false => row.seen_ms * 1000,
        };
        json!({"id": row.id, "name": row.name, "balance": balance, "born": row.born, "seen": seen})
    }

    pub(crate) fn key(&self, row: &Row) -> Value {
        match self.full_before {
            true => self.value(row),
            false => json!({"id": row.id}),
        }
    }

    pub(crate) fn row_schema(&self, field: Option<&str>) -> Value {
        let balance = match self.decimals {
            0 => {
                json!({"type": "bytes", "optional": true, "name": "org.apache.kafka.connect.data.Decimal", "version": 1, "parameters": {"scale": "2", "connect.decimal.precision": "12"}, "field": "balance"})
            }
            1 => json!({"type": "string", "optional": true, "field": "balance"}),
            _ => json!({"type": "double", "optional": true, "field": "balance"}),
        };
        let seen = match self.millis {
            true => "io.debezium.time.Timestamp",
            false => "io.debezium.time.MicroTimestamp",
        };
        let mut fields = vec![
            json!({"type": "int64", "optional": false, "field": "id"}),
            json!({"type": "string", "optional": true, "field": "name"}),
            balance,
            json!({"type": "int32", "optional": true, "name": "io.debezium.time.Date", "version": 1, "field": "born"}),
            json!({"type": "int64", "optional": false, "name": seen, "version": 1, "field": "seen"}),
        ];
        if self.flat {
            fields.push(json!({"type": "string", "optional": true, "field": "__op"}));
            fields.push(json!({"type": "int64", "optional": true, "field": "__lsn"}));
            fields.push(json!({"type": "string", "optional": true, "field": "__deleted"}));
        }
        let mut schema = json!({"type": "struct", "fields": fields, "optional": true, "name": format!("{TOPIC}.Value")});
        if let Some(f) = field {
            schema["field"] = json!(f);
        }
        schema
    }

    /// The line of a change at log position `lsn`.
    pub(crate) fn line(&self, change: &Change, lsn: i64) -> String {
        let (op, row) = (change.op, &change.row);
        let (payload, schema) = if self.flat {
            let mut value = match op {
                "d" => self.key(row),
                _ => self.value(row),
            };
            value["__op"] = json!(op);
            value["__lsn"] = json!(lsn);
            value["__deleted"] = json!(if op == "d" { "true" } else { "false" });
            (value, self.row_schema(None))
        } else {
            let before = match op {
                "d" | "u" => self.key(row),
                _ => Value::Null,
            };
            let after = match op {
                "d" => Value::Null,
                _ => self.value(row),
            };
            let source = json!({"version": "2.7.0.Final", "connector": "postgresql", "name": "dbserver1", "ts_ms": 1796120100000i64, "snapshot": if op == "r" { "true" } else { "false" }, "db": "postgres", "schema": "public", "table": "people", "txId": 556, "lsn": lsn, "xmin": null});
            let payload = json!({"before": before, "after": after, "source": source, "op": op, "ts_ms": 1796120100200i64, "transaction": null});
            let schema = json!({"type": "struct", "fields": [self.row_schema(Some("before")), self.row_schema(Some("after")), {"type": "struct", "fields": [], "optional": false, "name": "io.debezium.connector.postgresql.Source", "field": "source"}, {"type": "string", "optional": false, "field": "op"}, {"type": "int64", "optional": true, "field": "ts_ms"}], "optional": false, "name": format!("{TOPIC}.Envelope")});
            (payload, schema)
        };
        match self.schema {
            true => json!({"schema": schema, "payload": payload}).to_string(),
            false => payload.to_string(),
        }
    }
}

/// `c` cents as `-12.34`.
pub(crate) fn decimal_text(c: i64) -> String {
    let sign = if c < 0 { "-" } else { "" };
    format!("{sign}{}.{:02}", c.abs() / 100, c.abs() % 100)
}

/// The unscaled value as Kafka Connect's Decimal writes it: the shortest
/// big-endian two's complement bytes, base64 with padding.
pub(crate) fn base64_of(c: i64) -> String {
    let bytes = c.to_be_bytes();
    let mut start = 0;
    while start < 7 {
        let (b, next) = (bytes[start], bytes[start + 1]);
        let redundant = (b == 0 && next & 0x80 == 0) || (b == 0xFF && next & 0x80 != 0);
        if !redundant {
            break;
        }
        start += 1;
    }
    let alphabet = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    let mut out = String::new();
    for chunk in bytes[start..].chunks(3) {
        let n =
            chunk.iter().fold(0u32, |acc, &b| acc << 8 | u32::from(b)) << (8 * (3 - chunk.len()));
        for k in 0..4 {
            match k <= chunk.len() {
                true => out.push(alphabet[(n >> (18 - 6 * k) & 63) as usize] as char),
                false => out.push('='),
            }
        }
    }
    out
}

/// A change as Debezium reports it.
#[derive(Debug, Clone)]
pub(crate) struct Change {
    pub(crate) op: &'static str,
    /// The row after it; for a delete, the row before.
    pub(crate) row: Row,
}
