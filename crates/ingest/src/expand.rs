//! Gzip content expanded within the room memory has, else onto disk: how
//! the CLI's files and S3's objects are read.

/// Gzip content expanded: in memory, or in a file of its own.
#[derive(Debug)]
pub enum Expanded {
    /// Held in memory.
    Memory(Vec<u8>),
    /// In a file of its own, removed with its last handle.
    Disk(crate::source::OnDisk),
}

/// Gzip content that could not be opened, or not be expanded onto disk (the
/// content is not at fault: the same expansion may succeed later).
#[derive(Debug, thiserror::Error)]
pub enum ExpandError {
    /// Opening the content failed.
    #[error("opening the content: {0}")]
    Open(#[source] std::io::Error),
    /// Writing the expansion failed.
    #[error("expanding into {} (check its free space): {source}", dir.display())]
    Disk {
        /// The directory written.
        dir: std::path::PathBuf,
        /// The I/O error.
        #[source]
        source: std::io::Error,
    },
}

/// Gzip content (`open` gives it from its start, once or twice) expanded in
/// memory when it expands to at most `room` bytes and `keep` accepts its
/// expanded size, else into a file of its own under `spill_dir`; never
/// beyond `limit` bytes. `Ok(Err(_))`: the content is damaged, or expands
/// beyond `limit`. The CLI's files and S3's objects both read gzip through it.
pub fn expand_gzip<R: std::io::Read>(
    open: impl Fn() -> std::io::Result<R>,
    (room, limit): (u64, u64),
    spill_dir: &std::path::Path,
    keep: impl FnOnce(u64) -> bool,
) -> Result<Result<Expanded, deltaload_core::compression::Unreadable>, ExpandError> {
    use deltaload_core::compression::{expand_into, Unreadable};
    let whole = limit.min(room);
    let mut expanded = Vec::new();
    let input = open().map_err(ExpandError::Open)?;
    // Writing to memory never fails: an error is the input's.
    match expand_into(input, &mut expanded, whole).map_err(ExpandError::Open)? {
        Ok(n) if keep(n) || whole >= limit => Ok(Ok(Expanded::Memory(expanded))),
        Ok(_) | Err(Unreadable::TooLarge { .. }) if whole < limit => {
            drop(expanded);
            let input = open().map_err(ExpandError::Open)?;
            let disk = |source| ExpandError::Disk {
                dir: spill_dir.to_path_buf(),
                source,
            };
            Ok(crate::source::OnDisk::expanded(input, spill_dir, limit)
                .map_err(disk)?
                .map(Expanded::Disk))
        }
        Ok(_) => Ok(Ok(Expanded::Memory(expanded))),
        Err(why) => Ok(Err(why)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use deltaload_core::compression::Unreadable;
    use std::io::Write;

    fn gzip(text: &[u8]) -> Vec<u8> {
        let mut e = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
        e.write_all(text).unwrap();
        e.finish().unwrap()
    }

    #[test]
    fn gzip_expands_in_memory_when_it_fits_and_is_kept_else_onto_disk() {
        let dir = tempfile::tempdir().unwrap();
        let text = b"a,b\n1,2\n".repeat(100);
        let packed = gzip(&text);
        let open = || Ok(packed.as_slice());
        let got = expand_gzip(open, (10_000, 1 << 20), dir.path(), |n| n == 800).unwrap();
        assert!(
            matches!(got, Ok(Expanded::Memory(ref b)) if b == &text),
            "{got:?}"
        );
        for (room, keep) in [(100, true), (10_000, false)] {
            let got = expand_gzip(open, (room, 1 << 20), dir.path(), |_| keep).unwrap();
            let Ok(Expanded::Disk(on_disk)) = got else {
                panic!("room {room}, kept {keep}: {got:?}")
            };
            assert_eq!(std::fs::read(&on_disk.path).unwrap(), text);
        }
    }

    #[test]
    fn damaged_or_too_large_gzip_is_unreadable_and_a_failed_open_is_not() {
        let dir = tempfile::tempdir().unwrap();
        let packed = gzip(&[b'x'; 1000]);
        let open = || Ok(&packed[..packed.len() / 2]);
        let got = expand_gzip(open, (1 << 20, 1 << 20), dir.path(), |_| true).unwrap();
        assert!(matches!(got, Err(Unreadable::Damaged(_))), "{got:?}");
        let open = || Ok(packed.as_slice());
        let got = expand_gzip(open, (10, 100), dir.path(), |_| true).unwrap();
        assert!(
            matches!(got, Err(Unreadable::TooLarge { limit: 100 })),
            "{got:?}"
        );
        let missing = || std::fs::File::open(dir.path().join("missing.gz"));
        let got = expand_gzip(missing, (10, 100), dir.path(), |_| true);
        assert!(matches!(got, Err(ExpandError::Open(_))), "{got:?}");
    }
}
