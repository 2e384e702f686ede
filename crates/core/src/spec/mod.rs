//! Datasets: what a feed's files hold and how they change a table. A spec
//! file declares them (see [`Spec::parse`]); `orders` is the built-in one.
//!
//! The files form layers, each importing only from those below it: `parse`
//! (the raw TOML), `formats` and `column` at the bottom; `resolve` (names
//! of columns to indexes); the rules of the options (`feed`, `updates`,
//! `snapshot`, `history`, `preset`, `tables`, `rules`); `dataset` (the checked [`Dataset`] and
//! [`Spec`]); `check` (the raw spec checked into them); and this module on
//! top, with what needs a whole dataset, its parser or a [`Sink`].

mod check;
mod column;
pub(crate) mod dataset;
mod expect;
mod feed;
mod formats;
mod history;
mod parse;
mod preset;
mod resolve;
mod rules;
mod snapshot;
mod tables;
mod updates;

use crate::sink::{Scalar, Sink};
use std::sync::Arc;

pub use column::{Column, ColumnType, LINEAGE_COLUMNS};
pub use dataset::{Dataset, Spec};
pub use formats::{CsvFormat, DeleteWhen, Encoding, ExtraFields, Format, HeaderMode};
pub use history::{History, END_AT, START_AT};
pub use parse::SpecError;
pub use preset::{Preset, DEBEZIUM_OP, DMS_OP, FEED_FILE, FEED_LINE};
pub use rules::{OnFail, Rule, RuleKind};
pub use snapshot::{key_date, key_dates, Snapshot, SnapshotOrder};
pub use tables::RESERVED_NAMES;

/// The built-in dataset, written as a spec: what `spec example` prints and
/// what every command uses when no spec is given.
pub const ORDERS_SPEC: &str = include_str!("orders.toml");

impl Dataset {
    /// The built-in `orders` dataset.
    pub fn orders() -> Arc<Dataset> {
        match Spec::parse(ORDERS_SPEC, "built-in orders spec") {
            Ok(mut spec) => Arc::new(spec.datasets.remove(0).as_ref().clone()),
            // The text is a constant, parsed by a unit test: this cannot happen.
            Err(e) => unreachable!("the built-in orders spec does not parse: {e}"),
        }
    }
}

impl Spec {
    /// The spec of a deployment with no spec file: `orders` alone.
    pub fn builtin() -> Self {
        Self {
            datasets: vec![Dataset::orders()],
            others: Vec::new(),
        }
    }
}

/// What the preset of `dataset` implies, in lines for a person (`spec check`).
pub fn describe_preset(dataset: &Dataset) -> Vec<String> {
    let Some(preset) = dataset.preset else {
        return Vec::new();
    };
    let files = match preset {
        Preset::AwsDms => {
            "every full-load file (LOAD00000001 ...) before every change file \
             (20261201-101500123 ...), change files by name"
        }
        Preset::Debezium => {
            "files by the start offset in their names (<topic>+<partition>+<offset>.json, \
             .avro, .parquet)"
        }
    };
    let order = match dataset.generated {
        0 => format!(
            "by sequence_by ({}), as declared",
            dataset.names(&dataset.sequence_by).join(", ")
        ),
        _ => format!(
            "{files}, records by line (a record's number in an Avro or Parquet file); each row keeps its change's place in {FEED_FILE} and \
             {FEED_LINE}, and a file named otherwise is refused"
        ),
    };
    let mut lines = match preset {
        Preset::AwsDms => vec![
            format!("preset aws_dms: files as AWS DMS's S3 target writes them"),
            format!("  order: {order}"),
            format!(
                "  {DMS_OP}: I and U upsert, D deletes, any other text is rejected; a file \
                 without {DMS_OP} (a full load) upserts"
            ),
        ],
        Preset::Debezium => {
            let columnar = matches!(dataset.format, Format::Avro | Format::Parquet);
            let (records, values) = match columnar {
                false => (
                    "  lines: {\"schema\", \"payload\"}, the payload alone, or a flat row \
                     (ExtractNewRecordState: __op, __deleted; other __ fields are ignored); a \
                     null line (a tombstone) is skipped",
                    "  values: logical types by the line's schema, else by the declared type (a \
                     number is days in a date column, microseconds in a timestamp column; a \
                     decimal is base64 unless it has a '.')",
                ),
                true => (
                    "  records: the Envelope (before, after, op) or a flat row \
                     (ExtractNewRecordState: __op, __deleted; other __ fields are ignored), \
                     as the AvroConverter writes them",
                    "  values: by their types and Kafka Connect's annotations (connect.name) \
                     in the file's Avro schema",
                ),
            };
            vec![
                "preset debezium: Debezium's change events as the Kafka Connect S3 sink writes \
                 them"
                    .to_string(),
                format!("  order: {order}"),
                records.to_string(),
                "  op: r, c and u upsert the row in after, d deletes the key in before; t and m \
                 are rejected"
                    .to_string(),
                values.to_string(),
            ]
        }
    };
    if dataset.format == Format::Csv {
        lines.push(format!(
            "  csv: no header row, fields by position (the declared columns, {DMS_OP} \
             before them or not), or a header row of the declared names in any order \
             (AddColumnName = true); null_if {:?}",
            dataset.csv.null_if
        ));
    }
    lines
}

/// Gives `out` the generated columns' fields of a record on `line`: the
/// file's rank is filled once per file, after reading (null here).
pub fn fill_generated<S: Sink>(generated: &[Column], line: u64, out: &mut S) {
    for column in generated {
        match column.name.as_str() {
            FEED_LINE => out.field(Scalar::Int(line as i64)),
            _ => out.field(Scalar::Null),
        }
    }
}

#[cfg(test)]
mod tests;
