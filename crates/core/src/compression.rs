//! Gzip-compressed change files (`.csv.gz`), recognised by their content.

use std::io::Read;

/// The two bytes every gzip stream starts with; no CSV text can.
const GZIP_MAGIC: [u8; 2] = [0x1f, 0x8b];

/// Why a compressed file could not be expanded.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum Unreadable {
    #[error("gzip content expands beyond the limit of {limit} bytes; raise the object size limit or split the file")]
    /// It expands beyond `limit` bytes.
    TooLarge {
        /// The most bytes it may expand to.
        limit: u64,
    },
    #[error("gzip content is damaged ({0}); upload the file again")]
    /// It does not decode as gzip (the decoder's words).
    Damaged(String),
}

/// Whether `bytes` is gzip-compressed.
pub fn is_gzip(bytes: &[u8]) -> bool {
    bytes.starts_with(&GZIP_MAGIC)
}

/// The content, expanded when it is gzip (several concatenated members too),
/// never beyond `limit` bytes; plain content is returned as it is.
pub fn expand(bytes: Vec<u8>, limit: u64) -> Result<Vec<u8>, Unreadable> {
    if !is_gzip(&bytes) {
        return Ok(bytes);
    }
    let mut out = Vec::new();
    flate2::read::MultiGzDecoder::new(bytes.as_slice())
        .take(limit.saturating_add(1))
        .read_to_end(&mut out)
        .map_err(|e| Unreadable::Damaged(e.to_string()))?;
    if out.len() as u64 > limit {
        return Err(Unreadable::TooLarge { limit });
    }
    Ok(out)
}

/// Expands gzip `input` into `out` a block at a time, never beyond `limit`
/// bytes, and flushes it; returns the bytes written, or why the content
/// cannot be expanded. Writing `out` failing is the outer error: the content
/// is not at fault, and the same expansion may succeed later.
pub fn expand_into(
    input: impl Read,
    out: &mut impl std::io::Write,
    limit: u64,
) -> std::io::Result<Result<u64, Unreadable>> {
    let mut decoder = flate2::read::MultiGzDecoder::new(input).take(limit.saturating_add(1));
    let mut block = vec![0u8; 1 << 16];
    let mut written = 0u64;
    loop {
        let n = match decoder.read(&mut block) {
            Ok(0) => break,
            Ok(n) => n,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
            Err(e) => return Ok(Err(Unreadable::Damaged(e.to_string()))),
        };
        written += n as u64;
        if written > limit {
            return Ok(Err(Unreadable::TooLarge { limit }));
        }
        out.write_all(&block[..n])?;
    }
    out.flush()?;
    Ok(Ok(written))
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Write;

    fn gzip(text: &[u8]) -> Vec<u8> {
        let mut encoder = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
        encoder.write_all(text).unwrap();
        encoder.finish().unwrap()
    }

    #[test]
    fn plain_content_passes_and_gzip_expands() {
        let text = b"order_id,customer_id\n1,C\n".to_vec();
        assert_eq!(expand(text.clone(), 100).unwrap(), text);
        assert_eq!(expand(gzip(&text), 100).unwrap(), text);
        let mut two = gzip(b"a\n");
        two.extend(gzip(b"b\n"));
        assert_eq!(expand(two, 100).unwrap(), b"a\nb\n");
    }

    #[test]
    fn expanding_into_a_writer_keeps_the_limit() {
        let text = b"order_id\n1\n".repeat(1000);
        let mut out = Vec::new();
        let expanded = expand_into(gzip(&text).as_slice(), &mut out, 20_000).unwrap();
        assert_eq!(expanded, Ok(11_000));
        assert_eq!(out, text);
        let too_large = expand_into(gzip(&text).as_slice(), &mut Vec::new(), 10_000).unwrap();
        assert_eq!(too_large, Err(Unreadable::TooLarge { limit: 10_000 }));
        let mut full = std::io::Cursor::new([0u8; 100]);
        assert!(
            expand_into(gzip(&text).as_slice(), &mut full, 20_000).is_err(),
            "a full disk is not damaged content"
        );
    }

    #[test]
    fn bombs_and_damage_are_refused() {
        let big = gzip(&vec![b'x'; 10_000]);
        assert!(big.len() < 200);
        assert_eq!(
            expand(big, 1_000),
            Err(Unreadable::TooLarge { limit: 1_000 })
        );
        let mut cut = gzip(b"order_id\n1\n");
        cut.truncate(12);
        assert!(matches!(expand(cut, 100), Err(Unreadable::Damaged(_))));
    }
}
