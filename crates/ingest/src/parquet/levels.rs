//! Levels and dictionary indexes, written as RLE / bit-packed hybrid runs
//! (or the deprecated bit packing): checked to lie within their page, and
//! the levels that mark a value present counted.

use parquet::basic::Encoding;

pub(super) fn tail(buf: &[u8], at: usize) -> &[u8] {
    buf.get(at..).unwrap_or_default()
}

/// The bits a level of at most `max` takes.
pub(super) fn bit_width(max: i16) -> u8 {
    (16 - max.max(0).leading_zeros()) as u8
}

/// A stream after its 4-byte little-endian length: (bytes taken, the stream).
pub(super) fn prefixed(data: &[u8]) -> Result<(usize, &[u8]), String> {
    let short = || "a page's levels or values are cut short".to_string();
    let (len, rest) = data.split_first_chunk::<4>().ok_or_else(short)?;
    let len = usize::try_from(u32::from_le_bytes(*len)).map_err(|_| short())?;
    let stream = rest.get(..len).ok_or_else(short)?;
    Ok((len + 4, stream))
}

/// Version 1 levels of `n` values at the front of `data`: the bytes they
/// take, and how many of them are `max`.
pub(super) fn v1_levels(
    data: &[u8],
    encoding: Encoding,
    max: i16,
    n: usize,
) -> Result<(usize, usize), String> {
    let width = bit_width(max);
    #[allow(deprecated)]
    match encoding {
        Encoding::RLE => {
            let (taken, stream) = prefixed(data)?;
            runs(stream, width)?;
            Ok((taken, count_hybrid(stream, width, max, n)))
        }
        Encoding::BIT_PACKED => {
            let bytes = n
                .checked_mul(usize::from(width))
                .map(|bits| bits.div_ceil(8))
                .filter(|&b| b <= data.len());
            let bytes =
                bytes.ok_or_else(|| "a page's bit-packed levels are cut short".to_string())?;
            // The deprecated packing: most significant bit first.
            let at_max = (0..n)
                .filter(|&k| unpack(data, k * usize::from(width), width, true) == max as u64)
                .count();
            Ok((bytes, at_max))
        }
        other => Err(format!("a page's levels are encoded as {other}")),
    }
}

/// The `width`-bit value at bit `at` of `data`; bits least significant first
/// (the hybrid encoding) or most significant first (the deprecated one).
fn unpack(data: &[u8], at: usize, width: u8, msb_first: bool) -> u64 {
    (0..usize::from(width)).fold(0, |value, b| {
        let p = at + b;
        let byte = data.get(p / 8).copied().unwrap_or(0);
        let bit = if msb_first {
            byte >> (7 - p % 8)
        } else {
            byte >> (p % 8)
        } & 1;
        if msb_first {
            (value << 1) | u64::from(bit)
        } else {
            value | (u64::from(bit) << b)
        }
    })
}

/// How many of the first `n` values of a hybrid stream (checked by [`runs`]) are `max`.
fn count_hybrid(mut data: &[u8], width: u8, max: i16, n: usize) -> usize {
    let (mut seen, mut found) = (0usize, 0usize);
    let value_bytes = usize::from(width).div_ceil(8);
    while seen < n {
        let Ok((header, used)) = uleb128(data) else {
            break;
        };
        data = tail(data, used);
        let count = usize::try_from(header >> 1).unwrap_or(usize::MAX);
        if header & 1 == 1 {
            let values = count.saturating_mul(8).min(n - seen);
            found += (0..values)
                .filter(|&k| unpack(data, k * usize::from(width), width, false) == max as u64)
                .count();
            seen += values;
            data = tail(data, count.saturating_mul(usize::from(width)));
        } else {
            let value = unpack(data, 0, width, false);
            let values = count.min(n - seen);
            found += if value == max as u64 { values } else { 0 };
            seen += values;
            data = tail(data, value_bytes);
        }
    }
    found
}

/// Checks an RLE / bit-packed hybrid stream of `width`-bit values: every
/// run's bytes are there.
pub(super) fn runs(mut data: &[u8], width: u8) -> Result<(), String> {
    let value_bytes = usize::from(width).div_ceil(8);
    while !data.is_empty() {
        let (header, used) = uleb128(data)?;
        data = tail(data, used);
        let len = if header & 1 == 1 {
            // Groups of 8 values of `width` bits: `width` bytes each.
            usize::try_from(header >> 1)
                .ok()
                .and_then(|groups| groups.checked_mul(usize::from(width)))
        } else {
            Some(value_bytes)
        };
        match len {
            Some(len) if len <= data.len() => data = tail(data, len),
            _ => return Err("a run of encoded values is cut short".into()),
        }
    }
    Ok(())
}

/// An unsigned LEB128 varint of at most 64 bits: (value, bytes taken).
fn uleb128(data: &[u8]) -> Result<(u64, usize), String> {
    let mut value = 0u64;
    for (i, &byte) in data.iter().enumerate().take(10) {
        value |= u64::from(byte & 0x7f) << (7 * i);
        if byte & 0x80 == 0 {
            return Ok((value, i + 1));
        }
    }
    Err("a run header is cut short".into())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn runs_must_lie_within_their_stream() {
        assert_eq!(runs(&[], 1), Ok(()));
        // RLE run of 4 values of 3 bits: one value byte.
        assert_eq!(runs(&[8, 5], 3), Ok(()));
        assert!(runs(&[8], 3).is_err());
        // Two bit-packed groups of 2 bits: 4 bytes.
        assert_eq!(runs(&[5, 0, 0, 0, 0], 2), Ok(()));
        assert!(runs(&[5, 0, 0, 0], 2).is_err());
        assert!(runs(&[0xff; 11], 2).is_err(), "an endless header");
        assert!(runs(
            &[0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x01],
            32
        )
        .is_err());
        assert_eq!(bit_width(1), 1);
        assert_eq!(bit_width(3), 2);
        assert_eq!(bit_width(4), 3);
    }

    #[test]
    #[allow(deprecated)]
    fn levels_at_their_maximum_are_counted() {
        // RLE run of 3 ones, then one bit-packed group: 0b1011_0001 (LSB first: 1,0,0,0,1,1,0,1).
        let stream = [6, 1, 3, 0b1011_0001];
        assert_eq!(runs(&stream, 1), Ok(()));
        assert_eq!(count_hybrid(&stream, 1, 1, 11), 3 + 4);
        assert_eq!(count_hybrid(&stream, 1, 1, 4), 4, "only the first n values");
        // Deprecated packing, most significant bit first: 1,0,1,1,0,0,0,1.
        let data = [0b1011_0001];
        assert_eq!(v1_levels(&data, Encoding::BIT_PACKED, 1, 3), Ok((1, 2)));
        let prefixed = [4, 0, 0, 0, 6, 1, 3, 0b1011_0001];
        assert_eq!(v1_levels(&prefixed, Encoding::RLE, 1, 11), Ok((8, 7)));
        assert!(v1_levels(&prefixed[..7], Encoding::RLE, 1, 11).is_err());
    }
}
