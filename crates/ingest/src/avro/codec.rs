//! A block's bytes expanded by its file's codec (Avro 1.11, "Required
//! Codecs" and "Optional Codecs"), never beyond a bound: a block that
//! expands further is refused, not held. Snappy's checksum is checked.

use std::io::Read;

/// The most bytes a block may expand to: Avro writers cut blocks at tens
/// or hundreds of kilobytes (64 KB by default in Java and Kafka Connect).
pub(super) const MAX_BLOCK_BYTES: u64 = 128 << 20;

/// The most records a block may hold (each is decoded into the block's
/// Arrow arrays at once): a block of 64 KB holds a few hundred.
pub(super) const MAX_BLOCK_RECORDS: u64 = 1 << 20;

/// How many times its own size a file may expand to, beyond one block: the
/// codecs shrink records a few times, never a hundred (a decompression
/// bomb does, which would take memory the file's size does not show).
pub(super) const MAX_EXPANSION: u64 = 100;

/// The memory the xz decoder may take (its dictionary): 256 MiB.
const XZ_MEMORY: u64 = 256 << 20;

/// A codec of the specification.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Codec {
    Null,
    Deflate,
    Snappy,
    Zstandard,
    Bzip2,
    Xz,
}

impl Codec {
    /// The codec a header's `avro.codec` names (absent: `null`), or why
    /// it is none deltaload reads.
    pub fn named(name: &[u8]) -> Result<Self, String> {
        Ok(match name {
            b"null" => Self::Null,
            b"deflate" => Self::Deflate,
            b"snappy" => Self::Snappy,
            b"zstandard" => Self::Zstandard,
            b"bzip2" => Self::Bzip2,
            b"xz" => Self::Xz,
            other => {
                return Err(format!(
                    "its codec (avro.codec) is {:?}, not one of the specification's: null, \
                     deflate, snappy, zstandard, bzip2, xz",
                    String::from_utf8_lossy(other)
                ))
            }
        })
    }

    /// `data` expanded, at most `max` bytes; why not, when it cannot be.
    pub fn expand(self, data: &[u8], max: u64) -> Result<Vec<u8>, String> {
        let out = match self {
            Self::Null => Ok(data.to_vec()),
            Self::Deflate => bounded(flate2::read::DeflateDecoder::new(data), max),
            Self::Snappy => return snappy(data, max),
            Self::Zstandard => zstd::stream::read::Decoder::with_buffer(data)
                .map_err(|e| e.to_string())
                .and_then(|d| bounded(d, max)),
            Self::Bzip2 => bounded(bzip2::read::BzDecoder::new(data), max),
            Self::Xz => liblzma::stream::Stream::new_stream_decoder(XZ_MEMORY, 0)
                .map_err(|e| format!("a block does not expand: {e}"))
                .and_then(|s| bounded(liblzma::read::XzDecoder::new_stream(data, s), max)),
        }?;
        match out.len() as u64 > max {
            true => Err(too_large(max)),
            false => Ok(out),
        }
    }
}

fn too_large(max: u64) -> String {
    format!(
        "a block expands to more than {max} bytes, beyond the {} MiB a block may hold or the \
         {MAX_EXPANSION} times its size a file may expand to (a damaged block, a decompression \
         bomb, or blocks written with a very large sync interval: write smaller blocks)",
        MAX_BLOCK_BYTES >> 20
    )
}

/// What `reader` gives, one byte beyond `max` at most (so that more is seen).
fn bounded(reader: impl Read, max: u64) -> Result<Vec<u8>, String> {
    let mut out = Vec::new();
    (reader.take(max + 1))
        .read_to_end(&mut out)
        .map_err(|e| format!("a block does not expand: {e}"))?;
    Ok(out)
}

/// Snappy's raw block, then the CRC-32 of the expanded bytes (big-endian).
fn snappy(data: &[u8], max: u64) -> Result<Vec<u8>, String> {
    let Some(split) = data.len().checked_sub(4) else {
        return Err(format!(
            "a snappy block of {} bytes holds no checksum (4 bytes)",
            data.len()
        ));
    };
    let (body, crc) = data.split_at(split);
    let len =
        snap::raw::decompress_len(body).map_err(|e| format!("a block does not expand: {e}"))?;
    if len as u64 > max {
        return Err(too_large(max));
    }
    let out = snap::raw::Decoder::new()
        .decompress_vec(body)
        .map_err(|e| format!("a block does not expand: {e}"))?;
    let stated = u32::from_be_bytes([crc[0], crc[1], crc[2], crc[3]]);
    match crc32fast::hash(&out) == stated {
        true => Ok(out),
        false => Err("a snappy block's checksum does not match its bytes (a damaged block)".into()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Write;

    fn each(data: &[u8]) -> Vec<(Codec, Vec<u8>)> {
        let mut deflate = flate2::write::DeflateEncoder::new(Vec::new(), Default::default());
        deflate.write_all(data).unwrap();
        let mut snappy = snap::raw::Encoder::new().compress_vec(data).unwrap();
        snappy.extend(crc32fast::hash(data).to_be_bytes());
        let mut bz = bzip2::write::BzEncoder::new(Vec::new(), Default::default());
        bz.write_all(data).unwrap();
        let mut xz = liblzma::write::XzEncoder::new(Vec::new(), 1);
        xz.write_all(data).unwrap();
        vec![
            (Codec::Null, data.to_vec()),
            (Codec::Deflate, deflate.finish().unwrap()),
            (Codec::Snappy, snappy),
            (Codec::Zstandard, zstd::encode_all(data, 1).unwrap()),
            (Codec::Bzip2, bz.finish().unwrap()),
            (Codec::Xz, xz.finish().unwrap()),
        ]
    }

    #[test]
    fn every_codec_expands_and_none_beyond_the_bound() {
        let data = vec![7u8; 10_000];
        for (codec, packed) in each(&data) {
            assert_eq!(codec.expand(&packed, 10_000).unwrap(), data, "{codec:?}");
            let e = codec.expand(&packed, 9_999).unwrap_err();
            assert!(e.contains("expands to more than"), "{codec:?}: {e}");
        }
    }

    #[test]
    fn damage_is_refused_never_a_panic() {
        let mut snappy = snap::raw::Encoder::new().compress_vec(b"abc").unwrap();
        snappy.extend([0, 0, 0, 0]);
        let e = Codec::Snappy.expand(&snappy, 100).unwrap_err();
        assert!(e.contains("checksum"), "{e}");
        for short in [&b""[..], b"\x01", b"abc"] {
            assert!(Codec::Snappy.expand(short, 100).is_err());
        }
        for (codec, mut packed) in each(b"some bytes to pack, some bytes to pack") {
            if codec == Codec::Null {
                continue;
            }
            packed.truncate(packed.len() / 2);
            assert!(codec.expand(&packed, 1000).is_err(), "{codec:?}");
        }
        assert!(Codec::named(b"lz4").unwrap_err().contains("\"lz4\""));
    }
}
