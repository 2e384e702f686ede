//! A block's records decoded into Arrow by arrow-avro, one block at a time:
//! each (already checked and expanded) is handed to arrow-avro's reader as a
//! container of its own, uncompressed, whose one batch must hold exactly the
//! block's records. The container's framing is read by
//! [`deltaload_core::avro_container`], so a damaged file is refused there,
//! and arrow-avro never sees a block it could misread for lack of a check.

use arrow_array::RecordBatch;
use arrow_avro::codec::Tz;
use arrow_avro::reader::ReaderBuilder;
use arrow_schema::SchemaRef;
use deltaload_core::avro_container::{put_long, Header, MAGIC};
use std::io::Read;

/// The decoder of a file's blocks: its header as an uncompressed container.
pub(super) struct Blocks {
    head: Vec<u8>,
    sync: [u8; 16],
}

impl Blocks {
    /// The decoder of the blocks of the file whose header is `header`.
    pub fn new(header: &Header) -> Self {
        let mut head = MAGIC.to_vec();
        let entries: Vec<(&str, &[u8])> = (header.metadata.iter())
            .filter(|(k, _)| k != "avro.codec" && k != "avro.schema")
            .map(|(k, v)| (k.as_str(), v.as_slice()))
            .collect();
        let schema = header
            .get("avro.schema")
            .map(split_names)
            .unwrap_or_default();
        let entries: Vec<(&str, &[u8])> = (entries.into_iter())
            .chain([
                ("avro.codec", &b"null"[..]),
                ("avro.schema", schema.as_slice()),
            ])
            .collect();
        put_long(&mut head, entries.len() as i64);
        for (k, v) in entries {
            put_long(&mut head, k.len() as i64);
            head.extend_from_slice(k.as_bytes());
            put_long(&mut head, v.len() as i64);
            head.extend_from_slice(v);
        }
        put_long(&mut head, 0);
        head.extend_from_slice(&header.sync);
        Self {
            head,
            sync: header.sync,
        }
    }

    /// The Arrow schema of the file's records (arrow-avro's mapping of
    /// its writer schema); why not, when arrow-avro cannot read the schema.
    pub fn schema(&self) -> Result<SchemaRef, String> {
        let reader = builder(1).build(self.head.as_slice());
        reader.map(|r| r.schema()).map_err(|e| e.to_string())
    }

    /// The `count` records of a block whose expanded bytes are `data`.
    pub fn decode(&self, count: usize, data: &[u8]) -> Result<RecordBatch, String> {
        let mut frame = Vec::with_capacity(20);
        put_long(&mut frame, count as i64);
        put_long(&mut frame, data.len() as i64);
        let stream = (self.head.as_slice())
            .chain(frame.as_slice())
            .chain(data)
            .chain(&self.sync[..]);
        let mut reader = builder(count).build(stream).map_err(|e| e.to_string())?;
        let batch = match reader.next() {
            Some(batch) => batch.map_err(|e| e.to_string())?,
            None => return Err(format!("a block of {count} records holds none")),
        };
        match batch.num_rows() == count {
            true => Ok(batch),
            false => Err(format!(
                "a block states {count} records and holds {}",
                batch.num_rows()
            )),
        }
    }
}

/// Schema `text` with each full name written as a name (`a.b.C`) split
/// into its namespace and name (`{"namespace": "a.b", "name": "C"}`), as
/// the specification allows both: arrow-avro 59 finds a type named in
/// full (as fastavro writes them) under its namespace and name, not under
/// its full name, and so cannot resolve a later reference to it. Text that
/// is not JSON is left as it is (arrow-avro refuses it).
fn split_names(text: &[u8]) -> Vec<u8> {
    fn split(value: &mut serde_json::Value) {
        match value {
            serde_json::Value::Array(items) => items.iter_mut().for_each(split),
            serde_json::Value::Object(map) => {
                let named = matches!(
                    map.get("type").and_then(|t| t.as_str()),
                    Some("record" | "enum" | "fixed" | "error")
                );
                let full = map.get("name").and_then(|n| n.as_str()).map(str::to_string);
                if let Some((namespace, name)) = full.as_deref().and_then(|n| n.rsplit_once('.')) {
                    if named {
                        map.insert("namespace".into(), namespace.into());
                        map.insert("name".into(), name.into());
                    }
                }
                map.values_mut().for_each(split);
            }
            _ => {}
        }
    }
    let Ok(mut value) = serde_json::from_slice::<serde_json::Value>(text) else {
        return text.to_vec();
    };
    split(&mut value);
    serde_json::to_vec(&value).unwrap_or_else(|_| text.to_vec())
}

fn builder(batch_size: usize) -> ReaderBuilder {
    ReaderBuilder::new()
        .with_batch_size(batch_size)
        .with_tz(Tz::Utc)
}
