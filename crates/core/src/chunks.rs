//! Cutting a CSV body into spans of whole records, so that the cores parse
//! them side by side and the rows come out exactly as one pass gives them.
//!
//! A span ends after a line feed. That is a record's end unless it lies inside
//! a quoted field, so a body with any quote character is left whole: only a
//! file without quotes is cut (safe whatever the quoting, and the common case
//! for generated change files).

use crate::parsed::ParsedFile;
use crate::sink::Sink;

/// The smallest span worth a core of its own: shorter bodies are parsed in one pass.
pub const MIN_SPAN: usize = 4 << 20;

/// The cores to parse on.
pub fn parallelism() -> usize {
    std::thread::available_parallelism().map_or(1, |n| n.get())
}

/// The line of each span's first record: one past the line ends (as `ends`
/// counts them) before it.
pub fn first_lines(body: &[u8], spans: &[(usize, usize)], ends: impl Fn(&[u8]) -> u64) -> Vec<u64> {
    let mut line = 1;
    let mut from = 0;
    spans
        .iter()
        .map(|&(start, _)| {
            line += ends(&body[from..start]);
            from = start;
            line
        })
        .collect()
}

/// The files parsed from consecutive spans as one: rows and rejects in span
/// order, or the first span's error.
pub fn joined<S: Sink, E>(
    parts: Vec<Result<ParsedFile<S>, E>>,
    dataset: &crate::spec::Dataset,
) -> Result<ParsedFile<S>, E> {
    let mut parsed: ParsedFile<S> = ParsedFile::empty(dataset);
    for part in parts {
        let part = part?;
        parsed.changes.append(part.changes);
        parsed.rejects.extend(part.rejects);
    }
    Ok(parsed)
}

/// `parse(k)` for every span `k` of `0..n`, each on a thread of its own
/// (span 0 on the caller's), in span order.
pub fn in_parallel<T: Send>(n: usize, parse: impl Fn(usize) -> T + Sync) -> Vec<T> {
    if n <= 1 {
        return (0..n).map(&parse).collect();
    }
    let parse = &parse;
    std::thread::scope(|scope| {
        let workers: Vec<_> = (1..n).map(|k| scope.spawn(move || parse(k))).collect();
        let mut parts = vec![parse(0)];
        parts.extend(
            workers
                .into_iter()
                .map(|w| w.join().unwrap_or_else(|p| std::panic::resume_unwind(p))),
        );
        parts
    })
}

/// `body[start..]` cut into at most `parts` spans (byte ranges of `body`) of
/// whole records, in order; one span when it is short or holds a quote.
pub fn spans(body: &[u8], start: usize, parts: usize, min_span: usize) -> Vec<(usize, usize)> {
    let start = start.min(body.len());
    match body[start..].contains(&b'"') {
        true => vec![(start, body.len())],
        false => line_spans(body, start, parts, min_span),
    }
}

/// `body[start..]` cut after line feeds into at most `parts` spans of at
/// least `min_span` bytes (JSON Lines: a line feed always ends a record).
pub fn line_spans(body: &[u8], start: usize, parts: usize, min_span: usize) -> Vec<(usize, usize)> {
    let min_span = min_span.max(1);
    let start = start.min(body.len());
    let len = body.len() - start;
    if parts <= 1 || len < min_span * 2 {
        return vec![(start, body.len())];
    }
    let parts = parts.min(len / min_span);
    let mut spans = Vec::with_capacity(parts);
    let mut from = start;
    for k in 1..parts {
        let target = (start + len / parts * k).max(from);
        let Some(lf) = body[target..].iter().position(|&b| b == b'\n') else {
            break;
        };
        let to = target + lf + 1;
        spans.push((from, to));
        from = to;
    }
    spans.push((from, body.len()));
    spans
}

#[cfg(test)]
mod tests {
    use super::*;

    fn body(lines: usize) -> Vec<u8> {
        (0..lines)
            .flat_map(|i| format!("{i},abcdefghijklmnopqrstuvwxyz\n").into_bytes())
            .collect()
    }

    #[test]
    fn spans_cover_the_body_and_end_after_line_feeds() {
        let b = body(800_000);
        let spans = spans(&b, 10, 4, MIN_SPAN);
        assert!(spans.len() > 1, "{spans:?}");
        assert_eq!(spans[0].0, 10);
        assert_eq!(spans.last().unwrap().1, b.len());
        for w in spans.windows(2) {
            assert_eq!(w[0].1, w[1].0);
            assert_eq!(b[w[0].1 - 1], b'\n');
        }
    }

    #[test]
    fn a_short_body_or_one_with_a_quote_is_one_span() {
        assert_eq!(spans(b"1,a\n2,b\n", 0, 4, MIN_SPAN), vec![(0, 8)]);
        let mut b = body(800_000);
        b.extend_from_slice(b"9,\"quoted\nfield\"\n");
        assert_eq!(spans(&b, 0, 4, MIN_SPAN).len(), 1);
        assert_eq!(spans(&body(800_000), 0, 1, MIN_SPAN).len(), 1);
    }

    use proptest::prelude::*;

    /// Lines of an orders file: rows, rejects, blank lines, CRLF and CR ends.
    fn line() -> impl Strategy<Value = String> {
        prop::sample::select(vec![
            "1001,C01,placed,25.50,EUR,2026-10-01T09:15:00,2026-10-01T09:15:00\n",
            "1002,C02,paid,x,EUR,2026-10-01T09:15:00,2026-10-01T09:15:00\n",
            "1003,C03,paid,1.00,EUR,,2026-10-02T09:15:00\r\n",
            "\n",
            "\r\n",
            "1004,C04,paid,1.00\n",
            "1005,C05,shipped,2.00,USD,,2026-10-03T00:00:00\r",
        ])
        .prop_map(str::to_string)
    }

    proptest! {
        /// Parsed in spans on several cores, a file gives the rows and rejects
        /// (with their line numbers) of one pass.
        #[test]
        fn spans_parse_as_one_pass(lines in prop::collection::vec(line(), 0..60), parts in 2usize..5) {
            let d = crate::spec::Dataset::orders();
            let body = format!(
                "order_id,customer_id,status,amount,currency,ordered_at,updated_at\n{}",
                lines.concat()
            );
            let one = crate::reader::read_in_spans::<crate::Rows>(&d, body.as_bytes(), 1, MIN_SPAN).unwrap();
            let many = crate::reader::read_in_spans::<crate::Rows>(&d, body.as_bytes(), parts, 16).unwrap();
            prop_assert_eq!(one, many);
        }
    }

    /// Lines of a JSON Lines file: rows, rejects, blank lines, CRLF, and a
    /// line with an undeclared field (which refuses the whole file).
    fn json_line() -> impl Strategy<Value = String> {
        prop::sample::select(vec![
            "{\"id\":1,\"name\":\"a\"}\n",
            "{\"id\":\"x\",\"name\":\"b\"}\n",
            "{\"id\":2}\r\n",
            "\n",
            "  \r\n",
            "not json\n",
            "{\"id\":3,\"extra\":1}\n",
        ])
        .prop_map(str::to_string)
    }

    proptest! {
        /// The same for JSON Lines, where the first refusal by line wins.
        #[test]
        fn json_spans_parse_as_one_pass(lines in prop::collection::vec(json_line(), 0..40), parts in 2usize..5) {
            let spec = crate::spec::Spec::parse(
                "[[dataset]]\nname = \"t\"\nformat = \"jsonl\"\nkeys = [\"id\"]\n\
                 [[dataset.columns]]\nname = \"id\"\ntype = \"int\"\n\
                 [[dataset.columns]]\nname = \"name\"\ntype = \"string\"\n",
                "t.toml",
            )
            .unwrap();
            let d = &spec.datasets[0];
            let body = lines.concat();
            let one = crate::jsonl::read_in_spans::<crate::Rows>(d, body.as_bytes(), 1, MIN_SPAN);
            let many = crate::jsonl::read_in_spans::<crate::Rows>(d, body.as_bytes(), parts, 8);
            prop_assert_eq!(format!("{one:?}"), format!("{many:?}"));
        }
    }
}
