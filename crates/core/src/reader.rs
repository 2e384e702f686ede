//! Reads a whole change file of a dataset: the text decoded, the header
//! checked first, then every record into a typed row or a reject with its
//! line number, raw text and reason.

use crate::contract::{check_header, HeaderMismatch};
use crate::layout::Layout;
pub use crate::parsed::{ParsedFile, Reject};
use crate::record::{parse_into, RejectReason};
use crate::sink::Sink;
use crate::spec::{Dataset, HeaderMode, Preset};
use std::borrow::Cow;

/// Reads `bytes` as an RFC 4180 CSV file of `dataset`.
///
/// The text is decoded from the dataset's encoding; a UTF-8 BOM and CRLF or
/// lone CR line ends are accepted; blank lines are skipped and not counted as
/// records, but do count as lines. A header that is not the contract refuses
/// the whole file, with a hint when another encoding or delimiter would match.
pub fn read_file(dataset: &Dataset, bytes: &[u8]) -> Result<ParsedFile, HeaderMismatch> {
    read_file_into(dataset, bytes)
}

/// [`read_file`] into any [`Sink`] (each span of the file into one of its own).
pub fn read_file_into<S: Sink + Send>(
    dataset: &Dataset,
    bytes: &[u8],
) -> Result<ParsedFile<S>, HeaderMismatch> {
    let body = crate::encoding::decode(dataset, bytes)?;
    read_decoded(dataset, &body).map_err(|mut refused| {
        if let Some(hint) = crate::encoding::hint(dataset, bytes) {
            refused.problem = hint;
        }
        refused
    })
}

fn read_decoded<S: Sink + Send>(
    dataset: &Dataset,
    body: &[u8],
) -> Result<ParsedFile<S>, HeaderMismatch> {
    read_in_spans(
        dataset,
        body,
        crate::chunks::parallelism(),
        crate::chunks::MIN_SPAN,
    )
}

/// [`read_decoded`] on up to `parts` cores, spans of at least `min_span` bytes.
pub(crate) fn read_in_spans<S: Sink + Send>(
    dataset: &Dataset,
    body: &[u8],
    parts: usize,
    min_span: usize,
) -> Result<ParsedFile<S>, HeaderMismatch> {
    let (at, start) = match layout(dataset, body)? {
        Some(found) => found,
        None => return Ok(ParsedFile::empty(dataset)),
    };
    // After the header's line end and any blank lines (so the lines before
    // a span never end in half a CRLF).
    let start = start + leading_line_ends(&body[start.min(body.len())..]);
    let spans = crate::chunks::spans(body, start, parts, min_span);
    let lines = crate::chunks::first_lines(body, &spans, line_ends);
    let parse = |k: usize| {
        let (from, to) = spans[k];
        Ok(read_records(dataset, &body[from..to], &at, lines[k]))
    };
    crate::chunks::joined(crate::chunks::in_parallel(spans.len(), parse), dataset)
}

/// Where the fields of `body`'s records go, and the byte after its header;
/// `None` for a file of no records whose dataset allows that.
fn layout(dataset: &Dataset, body: &[u8]) -> Result<Option<(Layout, usize)>, HeaderMismatch> {
    if dataset.preset == Some(Preset::AwsDms) {
        return Ok(Some(match first_record(dataset, body)? {
            Some((names, end)) => match crate::layout::dms_header(dataset, &names)? {
                Some(by_name) => (by_name, end),
                None => (Layout::dms(dataset), 0),
            },
            None => (Layout::dms(dataset), 0),
        }));
    }
    Ok(Some(match dataset.csv.header {
        HeaderMode::None => (Layout::Fixed(check_header(dataset, Some(&[]))?), 0),
        _ => match first_record(dataset, body)? {
            Some((names, end)) => (Layout::Fixed(check_header(dataset, Some(&names))?), end),
            None => {
                check_header(dataset, None)?;
                return Ok(None);
            }
        },
    }))
}

/// The first record's fields (the header) and the byte where the next begins;
/// `None` for a file without records. Refused when a quoted field of it is
/// left open: it would run to the end of the file.
fn first_record(
    dataset: &Dataset,
    body: &[u8],
) -> Result<Option<(Vec<String>, usize)>, HeaderMismatch> {
    let mut reader = csv_reader(dataset, body);
    let mut record = csv::ByteRecord::new();
    match reader.read_byte_record(&mut record) {
        Ok(true) => {
            let end = reader.position().byte() as usize;
            let quotes =
                crate::quotes::problem(&body[..end.min(body.len())], dataset.csv.field_delimiter);
            if quotes == Some(crate::quotes::OPEN) {
                let problem = "the first record has a quoted field that is not closed, so it runs \
                               to the end of the file";
                return Err(
                    HeaderMismatch::new(dataset, Vec::new(), problem.to_string())
                        .with_remedy("close the quote and upload the file again"),
                );
            }
            let names = record
                .iter()
                .map(|f| String::from_utf8_lossy(f).into_owned())
                .collect();
            Ok(Some((names, end)))
        }
        _ => Ok(None),
    }
}

pub(crate) fn csv_reader<'a>(dataset: &Dataset, body: &'a [u8]) -> csv::Reader<&'a [u8]> {
    csv::ReaderBuilder::new()
        .has_headers(false)
        .flexible(true)
        .delimiter(dataset.csv.field_delimiter)
        .from_reader(body)
}

/// The records of `body` (whole records, after the header), the first on
/// line `line` of the file, fields at positions `at`.
fn read_records<S: Sink>(
    dataset: &Dataset,
    body: &[u8],
    layout: &Layout,
    mut line: u64,
) -> ParsedFile<S> {
    let mut reader = csv_reader(dataset, body);
    let mut record = csv::ByteRecord::new();
    let mut parsed: ParsedFile<S> = ParsedFile::empty(dataset);
    // Line numbers counted here: csv's own do not count the blank lines it skips.
    let mut counted = 0usize;
    loop {
        let start = reader.position().byte() as usize;
        match reader.read_byte_record(&mut record) {
            Ok(false) => break,
            Ok(true) => {}
            Err(e) => {
                // csv reading from memory only fails on I/O, which cannot happen here;
                // keep the rest of the file as one reject rather than drop it.
                let raw = String::from_utf8_lossy(&body[start.min(body.len())..]);
                let raw = raw.trim_end_matches(['\r', '\n']).to_string();
                parsed.rejects.push(unreadable(line, raw, e.to_string()));
                break;
            }
        }
        let end = reader.position().byte() as usize;
        let first = start + leading_line_ends(&body[start.min(body.len())..end.min(body.len())]);
        line += line_ends(&body[counted.min(first)..first.min(body.len())]);
        counted = first.max(counted);
        let quotes =
            crate::quotes::problem(&body[first.min(end)..end], dataset.csv.field_delimiter);
        if let Some(detail) = quotes {
            parsed.rejects.push(unreadable(
                line,
                raw_text(body, first, end),
                detail.to_string(),
            ));
            continue;
        }
        let changes = &mut parsed.changes;
        let placed = layout.place(record.len());
        // Where a rejected record's key is found, its field count wrong or not.
        let at = placed.as_ref().map_or(layout.any(), |at| *at);
        let parse = |at: &[usize]| {
            decode(&record).and_then(|fields| parse_into(dataset, &fields, at, line, changes))
        };
        match placed.and_then(parse) {
            Ok(()) => {}
            Err(reason) => {
                changes.drop_record();
                parsed.rejects.push(Reject {
                    line,
                    raw: raw_text(body, first, end),
                    key: key_text(dataset, &record, at),
                    reason,
                })
            }
        }
    }
    parsed
}

/// A record the CSV reader could not read as one, on `line`.
fn unreadable(line: u64, raw: String, detail: String) -> Reject {
    Reject {
        line,
        raw,
        key: None,
        reason: RejectReason::UnreadableCsv { detail },
    }
}

/// The key's field texts of a rejected record, joined by commas; `None` when all are empty.
fn key_text(dataset: &Dataset, record: &csv::ByteRecord, at: &[usize]) -> Option<String> {
    let texts: Vec<Cow<'_, str>> = dataset
        .keys
        .iter()
        .map(|&k| {
            record
                .get(at[k])
                .map_or(Cow::Borrowed(""), String::from_utf8_lossy)
        })
        .collect();
    texts.iter().any(|t| !t.is_empty()).then(|| texts.join(","))
}

fn decode(record: &csv::ByteRecord) -> Result<Vec<&str>, RejectReason> {
    record
        .iter()
        .map(|f| std::str::from_utf8(f).map_err(|_| RejectReason::NotUtf8))
        .collect()
}

/// How many line ends `slice` holds: LF, CRLF and a lone CR each end one line, as
/// they end a record for the CSV reader.
pub(crate) fn line_ends(slice: &[u8]) -> u64 {
    let mut bytes = slice.iter().peekable();
    let mut ends = 0;
    while let Some(b) = bytes.next() {
        match b {
            b'\n' => ends += 1,
            b'\r' if bytes.peek() != Some(&&b'\n') => ends += 1,
            _ => {}
        }
    }
    ends
}

/// How many bytes of blank lines open `slice`.
fn leading_line_ends(slice: &[u8]) -> usize {
    slice
        .iter()
        .position(|b| !matches!(b, b'\r' | b'\n'))
        .unwrap_or(slice.len())
}

/// The record's bytes (from its first byte) without its line end.
pub(crate) fn raw_text(body: &[u8], first: usize, end: usize) -> String {
    let slice = &body[first.min(body.len())..end.min(body.len())];
    let last = slice
        .iter()
        .rposition(|b| !matches!(b, b'\r' | b'\n'))
        .map_or(0, |i| i + 1);
    String::from_utf8_lossy(&slice[..last]).into_owned()
}

#[cfg(test)]
#[path = "reader_tests.rs"]
mod tests;
