//! A change file cut into pieces of whole records, so that a file larger than
//! memory is read a piece at a time: the file's header followed by one piece
//! reads exactly as those records read in the whole file, their line numbers
//! shifted by the lines before the piece ([`line_ends`]).
//!
//! A cut never falls inside a record (a quoted CSV field may hold line
//! ends: the cut follows the CSV reader's own record ends), and never between
//! the CR and LF of a line end, so counting line ends piece by piece adds up
//! to counting them over the whole file.

use crate::contract::HeaderMismatch;
use crate::spec::{Dataset, Format, HeaderMode, Preset};

/// The end of the file's header in `window` (the file's first bytes): the byte
/// after the header record and the line ends after it. `Some(0)` without a
/// header (JSON Lines, or CSV with `header = "none"`); `None` when the window
/// holds no whole header yet (`eof`: the window is the whole file).
pub fn header_end(dataset: &Dataset, window: &[u8], eof: bool) -> Option<usize> {
    match (dataset.format, dataset.csv.header) {
        (Format::Csv, HeaderMode::None) | (Format::Jsonl, _) | (Format::Parquet, _) => Some(0),
        (Format::Avro, _) => crate::avro_container::header_end(window, eof),
        (Format::Csv, _) => {
            let mut reader = crate::reader::csv_reader(dataset, window);
            let mut record = csv::ByteRecord::new();
            match reader.read_byte_record(&mut record) {
                Ok(true) => match reader.position().byte() as usize {
                    // A header running to the window's end may go on after it.
                    end if end >= window.len() && !eof => None,
                    // An AWS DMS file's first record is a header or a row.
                    _ if !is_header(dataset, &record) => Some(0),
                    end => settle(window, end, eof),
                },
                _ => eof.then_some(window.len()),
            }
        }
    }
}

/// Whether a CSV file's first `record` is its header: always, but for an
/// AWS DMS dataset, where it is a header when it names the columns.
fn is_header(dataset: &Dataset, record: &csv::ByteRecord) -> bool {
    if dataset.preset != Some(Preset::AwsDms) {
        return true;
    }
    let names: Vec<String> = record
        .iter()
        .map(|f| String::from_utf8_lossy(f).into_owned())
        .collect();
    // A header that names the columns wrongly is refused when the file is read.
    !matches!(crate::layout::dms_header(dataset, &names), Ok(None))
}

/// The end of the last whole record of `window`, which starts at a record of
/// the file, past the line ends after it; `None` when the window holds no whole
/// record (a longer window is needed). At the end of the file (`eof`) the whole
/// window is one piece.
pub fn piece_end(dataset: &Dataset, window: &[u8], eof: bool) -> Option<usize> {
    if eof {
        return Some(window.len());
    }
    match dataset.format {
        Format::Csv => {
            let mut reader = crate::reader::csv_reader(dataset, window);
            let mut record = csv::ByteRecord::new();
            let mut last = None;
            while let Ok(true) = reader.read_byte_record(&mut record) {
                let end = reader.position().byte() as usize;
                // A record running to the window's end may go on after it.
                if end >= window.len() {
                    break;
                }
                last = Some(end);
            }
            last.and_then(|end| settle(window, end, false))
        }
        Format::Avro => crate::avro_container::piece_end(window, eof),
        Format::Jsonl | Format::Parquet => window
            .iter()
            .rposition(|&b| b == b'\n')
            .map(|i| i + 1)
            .filter(|&end| end > 0),
    }
}

/// `end` moved past the line ends that follow it (blank lines belong to no
/// record), but never between a CR and the LF that may follow the window.
fn settle(window: &[u8], end: usize, eof: bool) -> Option<usize> {
    let mut end = end.min(window.len());
    while end < window.len() && matches!(window[end], b'\r' | b'\n') {
        end += 1;
    }
    if !eof && end == window.len() && window.last() == Some(&b'\r') {
        end -= 1;
    }
    (end > 0 || eof).then_some(end)
}

/// The text to read for a piece: the file's header (`head`, up to
/// [`header_end`]) and the piece. A text header ending in a lone CR is given
/// an LF, so that it cannot join a piece's opening LF into one line end; an
/// Avro header (which ends in its random sync marker) is taken as it is.
pub fn with_header(head: &[u8], piece: &[u8]) -> Vec<u8> {
    let mut text = Vec::with_capacity(head.len() + 1 + piece.len());
    text.extend_from_slice(head);
    let avro = head.starts_with(&crate::avro_container::MAGIC);
    if head.last() == Some(&b'\r') && !avro {
        text.push(b'\n');
    }
    text.extend_from_slice(piece);
    text
}

/// How many lines `bytes` ends, as the dataset's reader numbers lines: CSV
/// counts LF, CRLF and a lone CR; JSON Lines counts LF; an Avro file's
/// "lines" are its records (the header holds none).
pub fn line_ends(dataset: &Dataset, bytes: &[u8]) -> u64 {
    match dataset.format {
        Format::Csv => crate::reader::line_ends(bytes),
        Format::Jsonl | Format::Parquet => bytes.iter().filter(|&&b| b == b'\n').count() as u64,
        Format::Avro => crate::avro_container::records(bytes),
    }
}

/// Whether a file of `dataset` can be read in pieces: CSV in UTF-8, JSON
/// Lines, and Avro (its blocks; a Parquet file, or text in another
/// encoding, is read whole).
pub fn readable_in_pieces(dataset: &Dataset) -> bool {
    match dataset.format {
        Format::Csv => dataset.csv.encoding == crate::spec::Encoding::Utf8,
        Format::Jsonl | Format::Avro => true,
        Format::Parquet => false,
    }
}

/// `refused` (of a piece of a file) with its line number as in the whole
/// file: `lines` more than the piece's.
pub fn shifted(mut refused: HeaderMismatch, lines: u64) -> HeaderMismatch {
    let number = refused
        .problem
        .strip_prefix("line ")
        .and_then(|rest| rest.split_once(' '))
        .and_then(|(n, rest)| Some((n.parse::<u64>().ok()?, rest.to_string())));
    if let Some((n, rest)) = number {
        refused.problem = format!("line {} {rest}", n + lines);
    }
    refused
}

/// `refused` (of a piece of an Avro file, read after the file's header of
/// `head` bytes) with each byte it names (`byte N`) as in the whole file,
/// the piece starting at byte `start` of the file.
pub fn shifted_bytes(mut refused: HeaderMismatch, head: u64, start: u64) -> HeaderMismatch {
    let mut out = String::with_capacity(refused.problem.len());
    let mut rest = refused.problem.as_str();
    while let Some(i) = rest.find("byte ") {
        let (before, after) = rest.split_at(i + "byte ".len());
        out.push_str(before);
        let digits = after.bytes().take_while(u8::is_ascii_digit).count();
        match after[..digits].parse::<u64>() {
            Ok(n) if n >= head => out.push_str(&(n - head + start).to_string()),
            _ => out.push_str(&after[..digits]),
        }
        rest = &after[digits..];
    }
    out.push_str(rest);
    refused.problem = out;
    refused
}

#[cfg(test)]
#[path = "pieces_tests.rs"]
mod tests;
