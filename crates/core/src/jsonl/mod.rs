//! Reads a JSON Lines change file of a dataset: one JSON object per line,
//! fields by column name, each line into a typed row or a reject with its
//! line number, raw text and reason. A field the spec does not declare
//! refuses the whole file, unless the dataset sets `extra_fields = "ignore"`.
//!
//! Values follow the column's type: a JSON string is parsed by the same rules
//! as CSV text; a JSON number is read from its text as written (never through
//! a binary float, so a decimal stays exact); `true` and `false` fill boolean
//! columns; `null` and a missing field are null.

use crate::contract::HeaderMismatch;
use crate::fields::{parse_decimal, parse_double, parse_integer, shown};
use crate::parsed::{ParsedFile, Reject};
use crate::record::RejectReason;
use crate::sink::{Scalar, Sink};
use crate::spec::{Column, ColumnType, Dataset, DeleteWhen, ExtraFields, Preset};
use scan::{Kind, Object, Raw};
use std::borrow::Cow;
use std::collections::HashSet;

/// A UTF-8 byte-order mark, skipped at the start of a file.
pub(crate) const BOM: &[u8] = b"\xEF\xBB\xBF";

/// How many undeclared field names a refusal's problem lists.
const NAMES_SHOWN: usize = 5;

/// Reads `bytes` as a JSON Lines file of `dataset`.
///
/// Lines end with LF (a CR before it is dropped); a UTF-8 BOM opens the file
/// or not; blank lines (spaces, tabs) are skipped and not counted as
/// records, but do count as lines. An empty file is a file of no records.
/// A line holding a field that is neither a column nor the `delete_when`
/// column refuses the whole file, unless the dataset's `extra_fields` is
/// `ignore`.
pub fn read_jsonl(dataset: &Dataset, bytes: &[u8]) -> Result<ParsedFile, HeaderMismatch> {
    read_jsonl_into(dataset, bytes)
}

/// [`read_jsonl`] into any [`Sink`] (each span of the file into one of its own).
pub fn read_jsonl_into<S: Sink + Send>(
    dataset: &Dataset,
    bytes: &[u8],
) -> Result<ParsedFile<S>, HeaderMismatch> {
    read_in_spans(
        dataset,
        bytes,
        crate::chunks::parallelism(),
        crate::chunks::MIN_SPAN,
    )
}

/// [`read_jsonl`] on up to `parts` cores, spans of at least `min_span` bytes:
/// the spans' rows and rejects in order, or the first refusal by line.
pub(crate) fn read_in_spans<S: Sink + Send>(
    dataset: &Dataset,
    bytes: &[u8],
    parts: usize,
    min_span: usize,
) -> Result<ParsedFile<S>, HeaderMismatch> {
    let body = bytes.strip_prefix(BOM).unwrap_or(bytes);
    let spans = crate::chunks::line_spans(body, 0, parts, min_span);
    let lf = |b: &[u8]| b.iter().filter(|&&b| b == b'\n').count() as u64;
    let first = crate::chunks::first_lines(body, &spans, lf);
    let parse = |k: usize| read_lines(dataset, &body[spans[k].0..spans[k].1], first[k]);
    crate::chunks::joined(crate::chunks::in_parallel(spans.len(), parse), dataset)
}

/// The lines of `body`, the first being line `first` of the file.
fn read_lines<S: Sink>(
    dataset: &Dataset,
    body: &[u8],
    first: u64,
) -> Result<ParsedFile<S>, HeaderMismatch> {
    let mut parsed: ParsedFile<S> = ParsedFile::empty(dataset);
    let mut schemas = debezium::Schemas::default();
    // A span ends after a line feed: the empty piece after it is blank.
    for (index, line) in body.split(|&b| b == b'\n').enumerate() {
        let line = line.strip_suffix(b"\r").unwrap_or(line);
        if line.iter().all(|b| matches!(b, b' ' | b'\t' | b'\r')) {
            continue;
        }
        let number = first + index as u64;
        let changes = &mut parsed.changes;
        match read_line(dataset, number, line, changes, &mut schemas) {
            Ok(()) => {}
            Err(Failure::Refused(refusal)) => return Err(refusal),
            Err(Failure::Rejected { key, reason }) => {
                changes.drop_record();
                parsed.rejects.push(Reject {
                    line: number,
                    raw: String::from_utf8_lossy(line).into_owned(),
                    key,
                    reason,
                });
            }
        }
    }
    Ok(parsed)
}

/// Why a line gave no row.
enum Failure {
    /// The whole file is refused.
    Refused(HeaderMismatch),
    /// The line is a reject.
    Rejected {
        key: Option<String>,
        reason: RejectReason,
    },
}

/// One line's object: every field as written, in order, duplicates included.
type Fields<'a> = Vec<(Cow<'a, str>, Raw<'a>)>;

/// Parses one non-blank line (without its line end) and appends its row to `out`.
fn read_line<S: Sink>(
    dataset: &Dataset,
    number: u64,
    line: &[u8],
    out: &mut S,
    schemas: &mut debezium::Schemas,
) -> Result<(), Failure> {
    let Ok(text) = std::str::from_utf8(line) else {
        // The key is still worth finding, from the text as the reject shows it.
        let lossy = String::from_utf8_lossy(line);
        let key = parse_object(&lossy)
            .ok()
            .and_then(|fields| key_text(dataset, &fields));
        return Err(Failure::Rejected {
            key,
            reason: RejectReason::NotUtf8,
        });
    };
    let debezium = dataset.preset == Some(Preset::Debezium);
    if debezium && text.trim() == "null" {
        // A Kafka tombstone, which follows a delete: no change of its own.
        return Ok(());
    }
    let rejected = |reason| Failure::Rejected { key: None, reason };
    let fields = parse_object(text).map_err(rejected)?;
    let (fields, delete, hints) = match debezium {
        false => (fields, None, None),
        true => match debezium::event(dataset, fields, schemas).map_err(rejected)? {
            None => return Ok(()),
            Some((event, hints)) => (event.fields, Some(event.delete), Some(hints)),
        },
    };
    let slots = place(dataset, number, &fields)?;
    let read = Read {
        slots: &slots,
        delete,
        hints,
        line: number,
    };
    convert(dataset, read, out).map_err(|reason| Failure::Rejected {
        key: key_text(dataset, &fields),
        reason,
    })
}

/// A line's placed fields and what its preset said of them.
struct Read<'s, 'a> {
    slots: &'s [Option<Raw<'a>>],
    /// The event's delete flag, when a preset reads it.
    delete: Option<bool>,
    /// How each declared column's value is decoded, when a preset says.
    hints: Option<&'s [debezium::Hint]>,
    line: u64,
}

/// Parses a line's text as one JSON object; the error is a reject's reason.
fn parse_object(text: &str) -> Result<Fields<'_>, RejectReason> {
    serde_json::from_str::<Object<'_>>(text)
        .map(|object| object.0)
        .map_err(|e| {
            // The position's line is always 1: a syntax error tells its column
            // alone, a value of another type (seen at its start) none.
            let full = e.to_string();
            let at = format!(" at line {} column {}", e.line(), e.column());
            let detail = full.strip_suffix(&at).unwrap_or(&full).to_string();
            match e.classify() {
                serde_json::error::Category::Data => RejectReason::NotJsonObject { detail },
                _ => RejectReason::NotJson {
                    column: (detail.len() < full.len()).then(|| e.column()),
                    detail,
                },
            }
        })
}

/// Each field's slot: a column's index, or the delete column's after them.
/// A field the spec does not declare refuses the file or is dropped; a name
/// written twice is a reject.
fn place<'a>(
    dataset: &Dataset,
    number: u64,
    fields: &Fields<'a>,
) -> Result<Vec<Option<Raw<'a>>>, Failure> {
    let delete = dataset.delete_when.as_ref().map(|d| d.column.as_str());
    let declared = dataset.declared();
    let mut slots = vec![None; dataset.width()];
    let mut twice: Option<&str> = None;
    let mut extras: Vec<&str> = Vec::new();
    for (name, raw) in fields {
        let slot = declared
            .iter()
            .position(|c| c.name == *name)
            .or_else(|| (delete == Some(name.as_ref())).then_some(dataset.columns.len()));
        match slot {
            Some(s) => {
                if slots[s].replace(*raw).is_some() {
                    twice = twice.or(Some(name.as_ref()));
                }
            }
            None => extras.push(name.as_ref()),
        }
    }
    if !extras.is_empty() && dataset.extra_fields == ExtraFields::Refuse {
        return Err(Failure::Refused(refusal(dataset, number, fields, &extras)));
    }
    if twice.is_none() && extras.len() > 1 {
        let mut seen = HashSet::with_capacity(extras.len());
        twice = extras.iter().copied().find(|name| !seen.insert(*name));
    }
    match twice {
        Some(name) => Err(Failure::Rejected {
            key: key_text(dataset, fields),
            reason: RejectReason::FieldTwice {
                name: name.to_string(),
            },
        }),
        None => Ok(slots),
    }
}

/// The refusal of a file whose line `number` has fields the spec does not declare.
fn refusal(dataset: &Dataset, number: u64, fields: &Fields<'_>, extras: &[&str]) -> HeaderMismatch {
    let mut seen = HashSet::new();
    let unique: Vec<&str> = extras.iter().copied().filter(|n| seen.insert(*n)).collect();
    let mut names: Vec<String> = unique.iter().take(NAMES_SHOWN).map(|n| shown(n)).collect();
    if unique.len() > NAMES_SHOWN {
        names.push(format!("and {} more", unique.len() - NAMES_SHOWN));
    }
    let problem = format!(
        "line {number} has field(s) {} that the spec does not declare: declare them, or set \
         extra_fields = \"ignore\" to drop them",
        names.join(", ")
    );
    let found = fields.iter().map(|(name, _)| name.to_string()).collect();
    HeaderMismatch::new(dataset, found, problem)
}

/// Appends the row of a line's placed fields to `out`: every column, then
/// the delete flag when the dataset has `delete_when`. A delete reads its key
/// and sequence alone; its other columns are null and not looked at.
fn convert<S: Sink>(
    dataset: &Dataset,
    read: Read<'_, '_>,
    out: &mut S,
) -> Result<(), RejectReason> {
    let slots = read.slots;
    let flag = slots.get(dataset.columns.len()).copied().flatten();
    let delete = match read.delete {
        Some(d) => Some(d),
        None => dataset
            .delete_when
            .as_ref()
            .map(|d| is_delete(d, flag))
            .transpose()?,
    };
    for (i, column) in dataset.declared().iter().enumerate() {
        if delete == Some(true) && !dataset.is_key_or_sequence(i) {
            out.field(Scalar::Null);
            continue;
        }
        let raw = slots.get(i).copied().flatten();
        out.field(match read.hints.and_then(|h| h.get(i)) {
            Some(&hint) => debezium::value(column, raw, hint)?,
            None => value(column, raw)?,
        });
    }
    crate::spec::fill_generated(dataset.generated_columns(), read.line, out);
    out.end(delete, read.line);
    Ok(())
}

/// Whether the delete column's field marks a delete: a string by its text, a
/// number or boolean as written; null or missing is not a delete.
fn is_delete(delete: &DeleteWhen, raw: Option<Raw<'_>>) -> Result<bool, RejectReason> {
    let Some(raw) = raw else {
        return Ok(false);
    };
    let text = raw.get();
    match Kind::of(text) {
        Kind::Null => Ok(false),
        Kind::String => Ok(delete.matches(&unescape(&delete.column, text)?)),
        Kind::Number | Kind::Boolean => Ok(delete.matches(text)),
        kind @ (Kind::Object | Kind::Array) => Err(RejectReason::Column {
            name: delete.column.clone(),
            detail: format!("is a JSON {kind}, expected a string, number or boolean"),
        }),
    }
}

/// A field's value as `column`'s type; `None` is a missing field.
fn value<'a>(column: &Column, raw: Option<Raw<'a>>) -> Result<Scalar<'a>, RejectReason> {
    let failed = |detail: String| RejectReason::Column {
        name: column.name.clone(),
        detail,
    };
    let Some(raw) = raw else {
        return match column.nullable {
            true => Ok(Scalar::Null),
            false => Err(failed("is missing".to_string())),
        };
    };
    let text = raw.get();
    let kind = Kind::of(text);
    let parsed = match (kind, column.ty) {
        (Kind::Null, _) if column.nullable => return Ok(Scalar::Null),
        (Kind::Null, _) => Err("is null".to_string()),
        (Kind::String, _) => {
            return column
                .parse_text(unescape(&column.name, text)?)
                .map_err(failed)
        }
        (Kind::Number, ColumnType::Int) => parse_integer(text, 32).map(Scalar::Int),
        (Kind::Number, ColumnType::Bigint) => parse_integer(text, 64).map(Scalar::Int),
        (Kind::Number, ColumnType::Double) => parse_double(text).map(Scalar::Double),
        (Kind::Number, ColumnType::Decimal { precision, scale }) => {
            parse_decimal(text, precision, scale).map(Scalar::Decimal)
        }
        (Kind::Boolean, ColumnType::Boolean) => Ok(Scalar::Bool(text == "true")),
        (kind, ty) => Err(format!(
            "is a JSON {kind}, expected {} ({ty} column)",
            accepted(ty)
        )),
    };
    parsed.map_err(failed)
}

/// The JSON values a column of type `ty` takes, in words.
fn accepted(ty: ColumnType) -> &'static str {
    match ty {
        ColumnType::String | ColumnType::Date | ColumnType::Timestamp => "a string",
        ColumnType::Boolean => "true, false or a string",
        ColumnType::Int | ColumnType::Bigint | ColumnType::Double | ColumnType::Decimal { .. } => {
            "a number or a string"
        }
    }
}

/// The text of a JSON string (`text` with its quotes), escapes resolved.
fn unescape<'a>(name: &str, text: &'a str) -> Result<Cow<'a, str>, RejectReason> {
    if !text.contains('\\') {
        if let Some(inner) = text.get(1..text.len().saturating_sub(1)) {
            return Ok(Cow::Borrowed(inner));
        }
    }
    serde_json::from_str::<String>(text)
        .map(Cow::Owned)
        .map_err(|e| RejectReason::Column {
            name: name.to_string(),
            detail: format!("is not a valid JSON string: {e}"),
        })
}

/// The key's field texts of a rejected line, joined by commas; `None` when
/// all are missing, null or empty.
fn key_text(dataset: &Dataset, fields: &Fields<'_>) -> Option<String> {
    let texts: Vec<Cow<'_, str>> = dataset
        .keys
        .iter()
        .map(|&k| {
            let name = &dataset.columns[k].name;
            match fields.iter().find(|(n, _)| n == name) {
                None => Cow::Borrowed(""),
                Some((_, raw)) => match Kind::of(raw.get()) {
                    Kind::Null => Cow::Borrowed(""),
                    Kind::String => unescape(name, raw.get()).unwrap_or(Cow::Borrowed(raw.get())),
                    _ => Cow::Borrowed(raw.get()),
                },
            }
        })
        .collect();
    texts.iter().any(|t| !t.is_empty()).then(|| texts.join(","))
}

mod debezium;
mod scan;

#[cfg(test)]
mod tests;
