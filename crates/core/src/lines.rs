//! Records found again by the line they start on: the raw text a reject
//! keeps, for a record that parsed and is rejected after its reading (it
//! breaks a rule of its table). A CSV record may run over several lines (a
//! quoted line end); a JSON Lines record is its line. Lines are counted as
//! the readers count them: from 1, the header included.

use crate::spec::{Dataset, Format};
use std::collections::HashMap;

/// The raw text of the records of `bytes` (a whole file of `dataset`, or
/// the text a reader was given) that start on `lines`, in the order asked;
/// `None` for a line the text does not have, and for Parquet and Avro (whose
/// rows have no text: the caller renders them).
pub fn raw_records(dataset: &Dataset, bytes: &[u8], lines: &[u64]) -> Vec<Option<String>> {
    match dataset.format {
        Format::Csv => match crate::encoding::decode(dataset, bytes) {
            Ok(body) => {
                let at = starts(&body, lines, true);
                let record = |line: &u64| at.get(line).map(|&s| csv_record(dataset, &body, s));
                lines.iter().map(record).collect()
            }
            Err(_) => vec![None; lines.len()],
        },
        Format::Jsonl => {
            let body = bytes.strip_prefix(crate::jsonl::BOM).unwrap_or(bytes);
            let at = starts(body, lines, false);
            let line = |line: &u64| at.get(line).map(|&s| jsonl_line(body, s));
            lines.iter().map(line).collect()
        }
        Format::Parquet | Format::Avro => vec![None; lines.len()],
    }
}

/// Where each of `lines` starts in `body`: a line ends at LF, CRLF, and
/// (with `cr`, as the CSV reader has it) a lone CR.
fn starts(body: &[u8], lines: &[u64], cr: bool) -> HashMap<u64, usize> {
    let mut wanted = lines.to_vec();
    wanted.sort_unstable();
    wanted.dedup();
    let mut wanted = wanted.into_iter().peekable();
    let mut found = HashMap::new();
    let (mut line, mut at) = (1u64, 0usize);
    loop {
        while let Some(&w) = wanted.peek() {
            if w > line {
                break;
            }
            if w == line {
                found.insert(w, at);
            }
            wanted.next();
        }
        if wanted.peek().is_none() {
            return found;
        }
        let rest = &body[at.min(body.len())..];
        let Some(end) = rest.iter().position(|&b| b == b'\n' || (cr && b == b'\r')) else {
            return found;
        };
        let crlf = rest[end] == b'\r' && rest.get(end + 1) == Some(&b'\n');
        at += end + if crlf { 2 } else { 1 };
        line += 1;
    }
}

/// The CSV record starting at byte `start` of `body`, without its line end.
fn csv_record(dataset: &Dataset, body: &[u8], start: usize) -> String {
    let mut reader = crate::reader::csv_reader(dataset, &body[start..]);
    let mut record = csv::ByteRecord::new();
    let end = match reader.read_byte_record(&mut record) {
        Ok(_) => start + reader.position().byte() as usize,
        Err(_) => body.len(),
    };
    crate::reader::raw_text(body, start, end)
}

/// The JSON Lines line starting at byte `start` of `body`, without its line end.
fn jsonl_line(body: &[u8], start: usize) -> String {
    let rest = &body[start..];
    let line = rest.split(|&b| b == b'\n').next().unwrap_or(rest);
    let line = line.strip_suffix(b"\r").unwrap_or(line);
    String::from_utf8_lossy(line).into_owned()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sink::Sink;
    use crate::spec::Spec;

    /// Every record that parses, found again by its line, is its text.
    fn every_record_found(dataset: &Dataset, text: &str, expected: &[&str]) {
        let parsed: crate::ParsedFile<Lines> = match dataset.format {
            Format::Csv => crate::read_file_into(dataset, text.as_bytes()),
            _ => crate::read_jsonl_into(dataset, text.as_bytes()),
        }
        .expect("reads");
        let found = raw_records(dataset, text.as_bytes(), &parsed.changes.0);
        let found: Vec<&str> = found.iter().map(|r| r.as_deref().unwrap_or("?")).collect();
        assert_eq!(found, expected);
    }

    /// A sink that keeps each record's line only.
    #[derive(Default)]
    struct Lines(Vec<u64>);

    impl Sink for Lines {
        fn empty(_: &Dataset) -> Self {
            Self::default()
        }
        fn field(&mut self, _: crate::Scalar<'_>) {}
        fn end(&mut self, _: Option<bool>, line: u64) {
            self.0.push(line);
        }
        fn drop_record(&mut self) {}
        fn len(&self) -> usize {
            self.0.len()
        }
        fn append(&mut self, mut later: Self) {
            self.0.append(&mut later.0);
        }
    }

    #[test]
    fn csv_records_over_lines_blank_lines_and_line_ends() {
        let d = Dataset::orders();
        let h = "order_id,customer_id,status,amount,currency,ordered_at,updated_at";
        let t = "2026-10-01T00:00:00Z,2026-10-01T00:00:00Z";
        let text = format!(
            "\u{feff}{h}\r\n1,c,\"new\nline\",1.00,EUR,{t}\r\n\r\nbad,c,new,1,EUR,x,y\r\
             2,c,new,2.00,EUR,{t}\n3,c,new,3.00,EUR,{t}"
        );
        let one = format!("1,c,\"new\nline\",1.00,EUR,{t}");
        let two = format!("2,c,new,2.00,EUR,{t}");
        let three = format!("3,c,new,3.00,EUR,{t}");
        every_record_found(&d, &text, &[&one, &two, &three]);
    }

    #[test]
    fn jsonl_lines_with_blank_ones_and_crlf() {
        let spec = "[[dataset]]\nname = \"t\"\nformat = \"jsonl\"\nkeys = [\"id\"]\n\
                    sequence_by = [\"v\"]\ncolumns = [{ name = \"id\", type = \"bigint\" }, \
                    { name = \"v\", type = \"bigint\" }]\n";
        let spec = Spec::parse(spec, "test").expect("parses");
        let text = "{\"id\":1,\"v\":1}\r\n\n{\"id\":\"x\"}\n{\"id\":2,\"v\":2}";
        every_record_found(
            &spec.datasets[0],
            text,
            &["{\"id\":1,\"v\":1}", "{\"id\":2,\"v\":2}"],
        );
    }

    #[test]
    fn a_line_the_text_lacks_is_none() {
        let d = Dataset::orders();
        assert_eq!(
            raw_records(&d, b"a\nb", &[2, 3, 1]),
            [Some("b".into()), None, Some("a".into())]
        );
    }
}
