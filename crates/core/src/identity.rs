//! The content identity of a file: its size and SHA-256.

use sha2::{Digest, Sha256};
use std::fmt;

/// Identifies a file's content, so identical re-uploads are skipped and changed ones loaded.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct ContentId {
    /// Size in bytes.
    pub size: u64,
    /// Lower-case hex SHA-256 of the bytes.
    pub sha256: String,
}

impl ContentId {
    /// Computes the identity of `bytes`.
    pub fn of(bytes: &[u8]) -> Self {
        Self {
            size: bytes.len() as u64,
            sha256: hex::encode(Sha256::digest(bytes)),
        }
    }
}

impl ContentId {
    /// Computes the identity of everything `reader` yields, a block at a time
    /// (a file too large to hold in memory).
    pub fn of_reader(mut reader: impl std::io::Read) -> std::io::Result<Self> {
        let mut hasher = Sha256::new();
        let mut block = vec![0u8; 1 << 20];
        let mut size = 0u64;
        loop {
            match reader.read(&mut block) {
                Ok(0) => break,
                Ok(n) => {
                    hasher.update(&block[..n]);
                    size += n as u64;
                }
                Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
                Err(e) => return Err(e),
            }
        }
        Ok(Self {
            size,
            sha256: hex::encode(hasher.finalize()),
        })
    }
}

impl fmt::Display for ContentId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "sha256:{}", self.sha256)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn same_bytes_same_id_other_bytes_other_id() {
        let a = ContentId::of(b"order_id\n1\n");
        assert_eq!(a, ContentId::of(b"order_id\n1\n"));
        assert_ne!(a, ContentId::of(b"order_id\n2\n"));
        assert_eq!(a.size, 11);
        let big: Vec<u8> = (0..3_000_000u32).map(|i| i as u8).collect();
        assert_eq!(ContentId::of_reader(&big[..]).unwrap(), ContentId::of(&big));
        assert!(a.to_string().starts_with("sha256:"));
        assert_eq!(a.to_string().len(), 7 + 64);
    }
}
