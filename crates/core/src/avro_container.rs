//! The framing of an Avro object container file, read without trusting a
//! length it states: the header (magic, metadata, sync marker) and the
//! blocks (a record count, a byte size, the bytes, the sync marker again).
//! Every length is checked against the bytes that are there before
//! anything is taken or allocated, a block whose marker differs from the
//! header's is an error (a corrupt or spliced file), and so is a file that
//! ends inside a block. The blocks' bytes are handed on as they are
//! (compressed with the header's `avro.codec`); decoding records is not
//! done here. Avro 1.11 specification, "Object Container Files".

/// The four bytes every container starts with.
pub const MAGIC: [u8; 4] = *b"Obj\x01";

/// The most metadata entries a header may hold.
const MAX_ENTRIES: u64 = 1024;

/// Why a container file cannot be read.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ContainerError {
    /// It does not start with `Obj\x01`.
    #[error("not an Avro object container file: it does not start with Obj\\x01")]
    BadMagic,
    /// It ends before `what` at byte `at`.
    #[error("truncated Avro file: it ends inside {what} at byte {at}")]
    Truncated {
        /// What was being read.
        what: &'static str,
        /// Where.
        at: usize,
    },
    /// A length or count that cannot be (negative, or larger than what
    /// follows it).
    #[error("corrupt Avro file: {what} of {value} at byte {at} cannot be ({why})")]
    BadLength {
        /// What it counts.
        what: &'static str,
        /// The value read.
        value: i64,
        /// Where.
        at: usize,
        /// Why it cannot be.
        why: &'static str,
    },
    /// A block's sync marker is not the header's.
    #[error("corrupt Avro file: the block at byte {at} ends without the header's sync marker")]
    SyncMismatch {
        /// Where the block starts.
        at: usize,
    },
}

/// A container's header.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Header {
    /// The metadata (`avro.schema`, `avro.codec`, and any other), in order.
    pub metadata: Vec<(String, Vec<u8>)>,
    /// The marker that ends every block.
    pub sync: [u8; 16],
    /// Where the first block starts.
    pub end: usize,
}

impl Header {
    /// The value of metadata `key`.
    pub fn get(&self, key: &str) -> Option<&[u8]> {
        (self.metadata.iter())
            .find(|(k, _)| k == key)
            .map(|(_, v)| v.as_slice())
    }

    /// The codec of the blocks (`avro.codec`; `null` when absent).
    pub fn codec(&self) -> &[u8] {
        self.get("avro.codec").unwrap_or(b"null")
    }
}

/// One block: how many records it holds and its bytes as written.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Block<'a> {
    /// Where it starts in the file.
    pub at: usize,
    /// The records it holds.
    pub count: u64,
    /// Its bytes, compressed with the header's codec.
    pub data: &'a [u8],
}

/// A cursor over the file's bytes.
struct Cursor<'a> {
    bytes: &'a [u8],
    at: usize,
}

impl<'a> Cursor<'a> {
    /// An Avro `long` (zig-zag, variable length, at most 10 bytes).
    fn long(&mut self, what: &'static str) -> Result<i64, ContainerError> {
        let (mut value, mut shift) = (0u64, 0u32);
        loop {
            let byte = *self
                .bytes
                .get(self.at)
                .ok_or(ContainerError::Truncated { what, at: self.at })?;
            self.at += 1;
            if shift > 63 {
                let why = "a number of more than ten bytes";
                return Err(ContainerError::BadLength {
                    what,
                    value: -1,
                    at: self.at,
                    why,
                });
            }
            value |= u64::from(byte & 0x7f) << shift;
            if byte & 0x80 == 0 {
                return Ok((value >> 1) as i64 ^ -((value & 1) as i64));
            }
            shift += 7;
        }
    }

    /// `n` bytes (a length read from the file: checked against what is there).
    fn take(&mut self, n: i64, what: &'static str) -> Result<&'a [u8], ContainerError> {
        let left = self.bytes.len() - self.at;
        let at = self.at;
        if n < 0 {
            return Err(ContainerError::BadLength {
                what,
                value: n,
                at,
                why: "negative",
            });
        }
        if n as u64 > left as u64 {
            return Err(ContainerError::Truncated {
                what,
                at: self.bytes.len(),
            });
        }
        let taken = &self.bytes[self.at..self.at + n as usize];
        self.at += n as usize;
        Ok(taken)
    }
}

/// The header of the container `bytes`.
pub fn header(bytes: &[u8]) -> Result<Header, ContainerError> {
    if bytes.len() < MAGIC.len() || bytes[..MAGIC.len()] != MAGIC {
        return Err(ContainerError::BadMagic);
    }
    let mut c = Cursor {
        bytes,
        at: MAGIC.len(),
    };
    let mut metadata = Vec::new();
    loop {
        let at = c.at;
        let mut count = c.long("the metadata's count")?;
        if count == 0 {
            break;
        }
        if count < 0 {
            // A negative count is followed by the entries' byte size.
            count = count.checked_neg().unwrap_or(i64::MAX);
            c.long("the metadata's size")?;
        }
        if metadata.len() as u64 + count as u64 > MAX_ENTRIES {
            let why = "more than 1,024 entries";
            return Err(ContainerError::BadLength {
                what: "the metadata's count",
                value: count,
                at,
                why,
            });
        }
        for _ in 0..count {
            let n = c.long("a metadata key's length")?;
            let key = c.take(n, "a metadata key")?;
            let n = c.long("a metadata value's length")?;
            let value = c.take(n, "a metadata value")?;
            metadata.push((String::from_utf8_lossy(key).into_owned(), value.to_vec()));
        }
    }
    let sync = c.take(16, "the header's sync marker")?;
    let mut marker = [0u8; 16];
    marker.copy_from_slice(sync);
    Ok(Header {
        metadata,
        sync: marker,
        end: c.at,
    })
}

/// The blocks of the container `bytes` whose header is `header`, in order;
/// the first error ends them.
pub fn blocks<'a>(
    bytes: &'a [u8],
    header: &Header,
) -> impl Iterator<Item = Result<Block<'a>, ContainerError>> + 'a {
    let sync = header.sync;
    let mut c = Cursor {
        bytes,
        at: header.end,
    };
    let mut failed = false;
    std::iter::from_fn(move || {
        if failed || c.at >= bytes.len() {
            return None;
        }
        let block = next_block(&mut c, &sync);
        failed = block.is_err();
        Some(block)
    })
}

fn next_block<'a>(c: &mut Cursor<'a>, sync: &[u8; 16]) -> Result<Block<'a>, ContainerError> {
    let at = c.at;
    let count = c.long("a block's record count")?;
    if count < 0 {
        return Err(ContainerError::BadLength {
            what: "a block's record count",
            value: count,
            at,
            why: "negative",
        });
    }
    let size = c.long("a block's byte size")?;
    let data = c.take(size, "a block")?;
    let marker = c.take(16, "a block's sync marker")?;
    if marker != sync {
        return Err(ContainerError::SyncMismatch { at });
    }
    Ok(Block {
        at,
        count: count as u64,
        data,
    })
}

/// Appends Avro `long` `v` to `out` (zig-zag, variable length), as a
/// container's framing writes its counts and sizes.
pub fn put_long(out: &mut Vec<u8>, v: i64) {
    let mut z = ((v << 1) ^ (v >> 63)) as u64;
    loop {
        let byte = (z & 0x7f) as u8;
        z >>= 7;
        if z == 0 {
            out.push(byte);
            return;
        }
        out.push(byte | 0x80);
    }
}

/// The end of the header in `window` (the file's first bytes); `None` when
/// the window holds no whole header yet. A window that is no header at all
/// (or the whole file, `eof`) is taken whole: the reader refuses it.
pub fn header_end(window: &[u8], eof: bool) -> Option<usize> {
    if window.len() < MAGIC.len() && !eof {
        return None;
    }
    match header(window) {
        Ok(h) => Some(h.end),
        Err(ContainerError::Truncated { .. }) if !eof => None,
        Err(_) => Some(window.len()),
    }
}

/// Each whole block of `bytes` (which start at a block, or at the file's
/// header, which is skipped): where it ends, and its records. The sync
/// markers are not compared (the reader does): this only finds the cuts.
fn block_ends(bytes: &[u8]) -> impl Iterator<Item = (usize, u64)> + '_ {
    let start = match bytes.starts_with(&MAGIC) {
        true => header(bytes).map_or(bytes.len(), |h| h.end),
        false => 0,
    };
    let mut c = Cursor { bytes, at: start };
    std::iter::from_fn(move || {
        if c.at >= bytes.len() {
            return None;
        }
        let count = c.long("a block's record count").ok()?;
        let size = c.long("a block's byte size").ok()?;
        c.take(size, "a block").ok()?;
        c.take(16, "a block's sync marker").ok()?;
        Some((c.at, u64::try_from(count).ok()?))
    })
}

/// The end of the last whole block of `window` (a piece of the file after
/// its header, starting at a block); `None` when it holds none yet. At the
/// end of the file (`eof`), or when what follows the whole blocks cannot be
/// a block, the whole window (the reader refuses what it holds).
pub fn piece_end(window: &[u8], eof: bool) -> Option<usize> {
    if eof {
        return Some(window.len());
    }
    let last = block_ends(window).last().map(|(end, _)| end);
    let mut c = Cursor {
        bytes: window,
        at: last.unwrap_or(0),
    };
    // A negative count or size cannot grow into a block: stop there.
    let broken =
        matches!(c.long("count"), Ok(n) if n < 0) || matches!(c.long("size"), Ok(n) if n < 0);
    match broken {
        true => Some(window.len()),
        false => last.filter(|&end| end > 0),
    }
}

/// The records the whole blocks of `bytes` hold (its header skipped).
pub fn records(bytes: &[u8]) -> u64 {
    block_ends(bytes).map(|(_, n)| n).sum()
}

#[cfg(test)]
#[path = "avro_container_tests.rs"]
mod tests;
