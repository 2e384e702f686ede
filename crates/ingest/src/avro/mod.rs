//! Avro object container files of a dataset (`format = "avro"`), read into
//! the same [`ParsedFile`] as Parquet files: fields found by name, each
//! block's records decoded into Arrow, then converted column by column as a
//! Parquet file's are (the same type check before any record, the same
//! conversions, rejects with their record number and the record as JSON).
//!
//! - [`deltaload_core::avro_container`]: the framing (header, blocks, sync
//!   markers), read without trusting a stated length.
//! - `codec`: a block expanded by the file's codec, within a bound.
//! - `decode`: a block's records decoded by arrow-avro.
//!
//! Unions of `null` and one type are nullable columns; Avro's logical types
//! come as arrow-avro maps them (`decimal` of bytes or fixed, `date`,
//! `timestamp-*`, `local-timestamp-*`, `uuid`), and Kafka Connect's and
//! Debezium's annotations are read by `connect`. A Debezium
//! dataset's events are made flat by `debezium`.

mod codec;
mod decode;

use crate::parquet::{read_shaped, schema::refusal, ParquetSink};
use codec::{Codec, MAX_BLOCK_BYTES, MAX_BLOCK_RECORDS, MAX_EXPANSION};
use deltaload_core::avro_container::{self, Header};
use deltaload_core::{Dataset, HeaderMismatch, ParsedFile};

/// Reads `bytes` as an Avro object container file of `dataset`, a block
/// at a time. A file that is not a readable container, or whose records
/// do not hold the dataset's columns without loss, is refused before any
/// record is read (or, for damage found in a later block, once it is found).
pub fn read_avro_into<S: ParquetSink>(
    dataset: &Dataset,
    bytes: &[u8],
) -> Result<ParsedFile<S>, HeaderMismatch> {
    let unreadable = |found: &[String], e: String| {
        refusal(
            dataset,
            found.to_vec(),
            format!("not a readable Avro file: {e}"),
        )
    };
    let header = avro_container::header(bytes).map_err(|e| unreadable(&[], e.to_string()))?;
    let codec = Codec::named(header.codec()).map_err(|e| unreadable(&[], e))?;
    record_schema(&header).map_err(|e| unreadable(&[], e))?;
    let blocks = decode::Blocks::new(&header);
    let schema = (blocks.schema()).map_err(|e| {
        unreadable(
            &[],
            format!("its schema (avro.schema) is not readable: {e}"),
        )
    })?;
    let found: Vec<String> = schema.fields().iter().map(|f| f.name().clone()).collect();
    let mut room = (bytes.len() as u64)
        .saturating_mul(MAX_EXPANSION)
        .saturating_add(MAX_BLOCK_BYTES);
    let batches = avro_container::blocks(bytes, &header)
        .filter(|b| !matches!(b, Ok(b) if b.count == 0))
        .map(move |block| {
            let block = block.map_err(|e| e.to_string())?;
            let at = block.at;
            let mut read = || -> Result<_, String> {
                if block.count > MAX_BLOCK_RECORDS {
                    return Err(format!(
                        "it states {} records, more than the {MAX_BLOCK_RECORDS} a block may \
                         hold (a damaged block, or one written with a very large sync interval)",
                        block.count
                    ));
                }
                if room == 0 {
                    return Err(format!(
                        "the file's blocks expand to more than {MAX_EXPANSION} times its size \
                         (a decompression bomb, or a damaged file)"
                    ));
                }
                let data = codec.expand(block.data, MAX_BLOCK_BYTES.min(room))?;
                room -= data.len() as u64;
                if block.count > data.len() as u64 {
                    return Err(format!(
                        "it states {} records in {} bytes (a record takes a byte at least)",
                        block.count,
                        data.len()
                    ));
                }
                blocks.decode(block.count as usize, &data)
            };
            read().map_err(|e| format!("the block at byte {at}: {e}"))
        })
        .map(|b| b.map_err(|e| format!("not a readable Avro file: {e}")));
    let read = std::panic::AssertUnwindSafe(|| read_shaped(dataset, schema, batches, &found));
    std::panic::catch_unwind(read).unwrap_or_else(|_| {
        Err(unreadable(
            &found,
            "the Avro decoder failed on it (damaged, or written in a way it does not support)"
                .to_string(),
        ))
    })
}

/// Why the header's schema is not a record's, if it is not.
fn record_schema(header: &Header) -> Result<(), String> {
    let Some(text) = header.get("avro.schema") else {
        return Err("its header has no schema (avro.schema)".to_string());
    };
    let schema: serde_json::Value = serde_json::from_slice(text)
        .map_err(|e| format!("its schema (avro.schema) is not JSON: {e}"))?;
    match schema.get("type").and_then(|t| t.as_str()) {
        Some("record") => Ok(()),
        _ => Err(
            "its schema (avro.schema) is not a record: deltaload reads records, a field per column"
                .to_string(),
        ),
    }
}

#[cfg(test)]
mod tests;
