//! Presets: datasets whose files a CDC tool writes (`preset = "aws_dms"`,
//! `preset = "debezium"`).
//! The preset supplies what the tool's layout implies: where deletes are
//! said, how a header is told, and the order of the changes, which comes
//! from the file names and the lines (two columns deltaload fills itself,
//! [`FEED_FILE`] and [`FEED_LINE`], kept in the table as a sequence is).

use super::column::{Column, ColumnType};
use super::formats::{DeleteWhen, Format};
use super::parse::{RawDataset, Source, SpecError};
use toml::Spanned;

/// The column holding a change's file's place in the feed: text that sorts
/// as the tool's files are ordered.
pub const FEED_FILE: &str = "_feed_file";

/// The column holding a change's line in its file (its row in a Parquet
/// file), from 1.
pub const FEED_LINE: &str = "_feed_line";

/// The column of AWS DMS's operation (`I`, `U`, `D`), present in change
/// files and absent from full-load files by default.
pub const DMS_OP: &str = "Op";

/// The delete column of a Debezium dataset: the event's operation (`op`,
/// or `__op` of a flat row), which deltaload reads itself.
pub const DEBEZIUM_OP: &str = "__op";

/// A CDC tool whose files a dataset reads as the tool writes them.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Preset {
    /// AWS DMS's S3 target: CSV or Parquet, full-load files (`LOAD…`)
    /// without an `Op` column, change files (`yyyyMMdd-HHmmss…`) with one.
    AwsDms,
    /// Debezium's change events as the Kafka Connect S3 sink writes them:
    /// JSON Lines, Avro or Parquet, files named
    /// `<topic>+<partition>+<start offset>.<json|avro|parquet>`.
    Debezium,
}

impl Preset {
    /// The name the spec file writes.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::AwsDms => "aws_dms",
            Self::Debezium => "debezium",
        }
    }

    /// The preset the spec file names `name`, if any.
    pub(super) fn named(name: &str) -> Option<Self> {
        [Self::AwsDms, Self::Debezium]
            .into_iter()
            .find(|p| p.as_str() == name)
    }

    /// The text of [`FEED_FILE`] for a file at `location` (a path or an
    /// object key): its place in the tool's order, or why its name is not
    /// one the tool writes.
    pub fn file_rank(self, location: &str) -> Result<String, String> {
        let base = location.rsplit('/').next().unwrap_or(location);
        let stem = base.split('.').next().unwrap_or(base);
        match self {
            Self::Debezium => offset_rank(base).ok_or_else(|| {
                format!(
                    "file name {base:?} is not one the Kafka Connect S3 sink writes: expected \
                     <topic>+<partition>+<start offset>.json (or .avro, .parquet), such as \
                     dbserver1.inventory.customers+0+0000000042.json; the preset orders a \
                     table's changes by the offsets, so it loads no other file: rename the \
                     file or give the dataset a sequence_by column"
                )
            }),
            Self::AwsDms => dms_rank(stem).ok_or_else(|| {
                format!(
                    "file name {base:?} is not one AWS DMS writes: expected LOAD00000001.csv \
                     (full load, an 8-digit hexadecimal counter) or 20261201-101500123.csv \
                     (changes, the date and time); the preset orders a table's changes by \
                     these names, so it loads no other file: rename the file or give the \
                     dataset a sequence_by column"
                )
            }),
        }
    }
}

/// A sink file's start offset, 20 digits: `topic+0+0000000042.json.gz` gives
/// `00000000000000000042` (topics hold no `+`). The sink pads it to any
/// width (`filename.offset.zero.pad.width`, 10 by default); a Kafka offset
/// has at most 19 digits.
fn offset_rank(base: &str) -> Option<String> {
    let mut parts = base.rsplitn(3, '+');
    let (last, partition) = (parts.next()?, parts.next()?);
    let topic = parts.next()?;
    let offset = last.split('.').next()?;
    let digits = |s: &str| !s.is_empty() && s.bytes().all(|b| b.is_ascii_digit());
    let value = offset.trim_start_matches('0');
    let fits = !topic.is_empty() && digits(partition) && digits(offset) && value.len() <= 19;
    fits.then(|| format!("{value:0>20}"))
}

/// `0 LOAD0000000A` for a full-load file (every one before any change
/// file), `1 20261201-101500123000` for a change file (its time's digits
/// padded to 12, so that names of 9 and 10 digits compare).
fn dms_rank(stem: &str) -> Option<String> {
    if let Some(counter) = stem.strip_prefix("LOAD") {
        let hex = counter.len() == 8 && counter.bytes().all(|b| b.is_ascii_hexdigit());
        return hex.then(|| format!("0 LOAD{}", counter.to_ascii_uppercase()));
    }
    let (date, time) = stem.split_once('-')?;
    let digits = |s: &str| s.bytes().all(|b| b.is_ascii_digit());
    let fits = date.len() == 8 && (6..=12).contains(&time.len()) && digits(date) && digits(time);
    fits.then(|| format!("1 {date}-{time:0<12}"))
}

/// What a preset sets of a dataset.
pub(super) struct Implied {
    pub preset: Option<Preset>,
    pub delete_when: Option<DeleteWhen>,
    /// Columns appended after the declared ones, filled by deltaload.
    pub generated: Vec<Column>,
}

/// The preset of `d`, checked against what else it declares.
pub(super) fn implied(
    src: &Source<'_>,
    d: &RawDataset,
    columns: &[Column],
    format: Format,
) -> Result<Implied, SpecError> {
    let Some(raw) = &d.preset else {
        return Ok(Implied {
            preset: None,
            delete_when: None,
            generated: Vec::new(),
        });
    };
    let Some(preset) = Preset::named(raw.get_ref()) else {
        return Err(src.error(
            Some(raw.span()),
            format!(
                "preset {:?} is not one deltaload knows: use \"aws_dms\" or \"debezium\"",
                raw.get_ref()
            ),
        ));
    };
    refused(src, d, preset, columns, format)?;
    let generated = match d.sequence_by {
        Some(_) => Vec::new(),
        None => vec![
            generated_column(FEED_FILE, ColumnType::String),
            generated_column(FEED_LINE, ColumnType::Bigint),
        ],
    };
    let words = |w: &[&str]| w.iter().map(|s| s.to_string()).collect();
    let delete_when = match preset {
        Preset::AwsDms => DeleteWhen {
            column: DMS_OP.to_string(),
            values: words(&["D"]),
            upserts: words(&["I", "U"]),
        },
        Preset::Debezium => DeleteWhen {
            column: DEBEZIUM_OP.to_string(),
            values: words(&["d"]),
            upserts: words(&["r", "c", "u"]),
        },
    };
    Ok(Implied {
        preset: Some(preset),
        delete_when: Some(delete_when),
        generated,
    })
}

/// Why `d` contradicts its preset, if it does.
fn refused(
    src: &Source<'_>,
    d: &RawDataset,
    preset: Preset,
    columns: &[Column],
    format: Format,
) -> Result<(), SpecError> {
    let name = d.name.get_ref();
    let refuse = |span: Option<std::ops::Range<usize>>, message: String| {
        Err(src.error(
            span,
            format!(
                "dataset {name:?} has preset = \"{}\": {message}",
                preset.as_str()
            ),
        ))
    };
    if let Some(why) = format_refused(preset, format) {
        return refuse(d.format.as_ref().map(Spanned::span), why.into());
    }
    if let Some((span, why)) = option_refused(d, preset) {
        return refuse(span, why.into());
    }
    if let Some(why) = column_refused(preset, columns) {
        return refuse(None, why);
    }
    Ok(())
}

/// Why the preset's tool never writes files of `format`, if it does not.
fn format_refused(preset: Preset, format: Format) -> Option<&'static str> {
    match (preset, format) {
        (Preset::AwsDms, Format::Jsonl) => {
            Some("AWS DMS writes CSV or Parquet files: set format = \"csv\" or \"parquet\"")
        }
        (Preset::AwsDms, Format::Avro) => {
            Some("AWS DMS writes CSV or Parquet files: set format = \"csv\" or \"parquet\"")
        }
        (Preset::Debezium, Format::Csv) => Some(
            "the S3 sink writes Debezium's events as JSON Lines (JsonFormat), Avro \
             (AvroFormat) or Parquet (ParquetFormat): set format = \"jsonl\", \"avro\" or \
             \"parquet\", or remove format (JSON Lines)",
        ),
        _ => None,
    }
}

/// An option the preset decides itself, set in the spec: where, and why.
fn option_refused(
    d: &RawDataset,
    preset: Preset,
) -> Option<(Option<std::ops::Range<usize>>, &'static str)> {
    if let Some(raw) = &d.delete_when {
        return Some((
            Some(raw.span()),
            "the preset says which changes are deletes: remove delete_when",
        ));
    }
    if preset == Preset::AwsDms && d.csv.as_ref().and_then(|c| c.get_ref().header).is_some() {
        return Some((
            d.csv.as_ref().map(Spanned::span),
            "a file's header row is found by its names (AddColumnName = true) and a file \
             without one is read by position: remove header",
        ));
    }
    let partial = d.update_columns.as_ref().or(d.except_columns.as_ref())?;
    Some((
        Some(partial.span()),
        "its deletes make an update set every column (a key deleted and inserted again \
         would keep the deleted row's other columns in some load orders): remove \
         update_columns and except_columns",
    ))
}

/// Why a declared column cannot be, if one is named as a field the preset uses.
fn column_refused(preset: Preset, columns: &[Column]) -> Option<String> {
    let taken = [DMS_OP, FEED_FILE, FEED_LINE];
    let clash = |c: &&Column| match preset {
        Preset::AwsDms => taken.iter().any(|t| t.eq_ignore_ascii_case(&c.name)),
        Preset::Debezium => c.name.starts_with("__") || c.name == FEED_FILE || c.name == FEED_LINE,
    };
    let c = columns.iter().find(clash)?;
    let names = match preset {
        Preset::AwsDms => taken.join(", "),
        Preset::Debezium => format!("__ fields are the transform's; {FEED_FILE}, {FEED_LINE}"),
    };
    Some(format!(
        "column {:?} is a name the preset uses ({names}): rename the column",
        c.name
    ))
}

fn generated_column(name: &str, ty: ColumnType) -> Column {
    Column {
        name: name.to_string(),
        ty,
        nullable: false,
        format: None,
        timezone: None,
    }
}

#[cfg(test)]
#[path = "preset_tests.rs"]
mod tests;
