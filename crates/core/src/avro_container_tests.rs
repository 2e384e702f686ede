//! The framing against files written here by the specification's rules:
//! read back exactly, and any damage an error, never a panic.

use super::*;
use proptest::prelude::*;

/// An Avro `long`.
fn long(v: i64) -> Vec<u8> {
    let mut out = Vec::new();
    put_long(&mut out, v);
    out
}

fn bytes(b: &[u8]) -> Vec<u8> {
    [long(b.len() as i64), b.to_vec()].concat()
}

const SYNC: [u8; 16] = *b"0123456789abcdef";

/// A container with `metadata` and `blocks` (record count, bytes).
fn container(metadata: &[(&str, &[u8])], blocks: &[(i64, Vec<u8>)]) -> Vec<u8> {
    let mut out = MAGIC.to_vec();
    if !metadata.is_empty() {
        out.extend(long(metadata.len() as i64));
        for (k, v) in metadata {
            out.extend(bytes(k.as_bytes()));
            out.extend(bytes(v));
        }
    }
    out.extend(long(0));
    out.extend(SYNC);
    for (count, data) in blocks {
        out.extend(long(*count));
        out.extend(bytes(data));
        out.extend(SYNC);
    }
    out
}

#[test]
fn a_file_reads_back_its_metadata_and_blocks() {
    let file = container(
        &[("avro.schema", b"\"long\""), ("avro.codec", b"deflate")],
        &[(2, vec![2, 4]), (1, vec![6])],
    );
    let h = header(&file).unwrap();
    assert_eq!(h.get("avro.schema"), Some(&b"\"long\""[..]));
    assert_eq!(h.codec(), b"deflate");
    let blocks: Vec<_> = blocks(&file, &h).collect::<Result<_, _>>().unwrap();
    let got: Vec<(u64, &[u8])> = blocks.iter().map(|b| (b.count, b.data)).collect();
    assert_eq!(got, [(2, &[2u8, 4][..]), (1, &[6u8][..])]);
    let none = container(&[], &[]);
    assert_eq!(header(&none).unwrap().codec(), b"null");
}

#[test]
fn damage_is_an_error_naming_it() {
    let file = container(&[("avro.schema", b"\"long\"")], &[(2, vec![2, 4])]);
    assert_eq!(header(b"Obj\x02rest"), Err(ContainerError::BadMagic));
    let mut spliced = file.clone();
    let last = spliced.len() - 1;
    spliced[last] ^= 1;
    let h = header(&spliced).unwrap();
    let got: Vec<_> = blocks(&spliced, &h).collect();
    assert!(
        matches!(got[..], [Err(ContainerError::SyncMismatch { .. })]),
        "{got:?}"
    );
    // A block stating more bytes than the file holds.
    let mut big = container(&[], &[]);
    big.extend(long(1));
    big.extend(long(1 << 40));
    let h = header(&big).unwrap();
    let got: Vec<_> = blocks(&big, &h).collect();
    assert!(
        matches!(
            got[..],
            [Err(ContainerError::Truncated {
                what: "a block",
                ..
            })]
        ),
        "{got:?}"
    );
    let mut negative = container(&[], &[]);
    negative.extend(long(-3));
    let h = header(&negative).unwrap();
    let got: Vec<_> = blocks(&negative, &h).collect();
    assert!(
        matches!(
            got[..],
            [Err(ContainerError::BadLength {
                why: "negative",
                ..
            })]
        ),
        "{got:?}"
    );
    let mut endless = MAGIC.to_vec();
    endless.extend([0xff; 11]);
    assert!(matches!(
        header(&endless),
        Err(ContainerError::BadLength { .. })
    ));
}

proptest! {
    #[test]
    fn a_prefix_is_its_whole_blocks_then_truncated_and_damage_never_panics(
        blocks_in in prop::collection::vec((0i64..5, prop::collection::vec(any::<u8>(), 0..40)), 0..5),
        cut in any::<prop::sample::Index>(),
        flip in any::<prop::sample::Index>(),
    ) {
        let meta: &[(&str, &[u8])] = &[("avro.codec", b"null")];
        let file = container(meta, &blocks_in);
        // Where each block ends.
        let mut ends = vec![container(meta, &[]).len()];
        for (count, data) in &blocks_in {
            let last = *ends.last().unwrap();
            ends.push(last + long(*count).len() + bytes(data).len() + 16);
        }
        let cut = cut.index(file.len() + 1);
        let prefix = &file[..cut];
        match header(prefix) {
            Err(e) => prop_assert!(cut < ends[0], "{e}"),
            Ok(h) => {
                let read: Vec<_> = blocks(prefix, &h).collect();
                match ends.iter().position(|&e| e == cut) {
                    // At a block's end: the blocks before it, whole.
                    Some(n) => {
                        prop_assert_eq!(read.len(), n);
                        prop_assert!(read.iter().all(|b| b.is_ok()));
                    }
                    // Inside one: the whole ones, then the truncation.
                    None => {
                        let whole = ends.iter().filter(|&&e| e < cut).count() - 1;
                        prop_assert_eq!(read.len(), whole + 1);
                        let truncated = matches!(read.last(), Some(Err(ContainerError::Truncated { .. })));
                        prop_assert!(truncated, "{:?}", read.last());
                    }
                }
            }
        }
        // Any byte changed: read or refused, never a panic.
        let mut damaged = file.clone();
        let i = flip.index(damaged.len());
        damaged[i] ^= 0x5a;
        if let Ok(h) = header(&damaged) {
            blocks(&damaged, &h).for_each(drop);
        }
    }
}

/// The cut `cut` finds in `file` from `at`, its window doubled from
/// `window` bytes until it finds one (as a large file's source does).
fn grown(file: &[u8], at: usize, window: usize, cut: fn(&[u8], bool) -> Option<usize>) -> usize {
    let mut size = window;
    loop {
        let end = (at + size).min(file.len());
        let eof = end == file.len();
        if let Some(found) = cut(&file[at..end], eof) {
            return found;
        }
        assert!(!eof, "no cut at the end of the file");
        size *= 2;
    }
}

proptest! {
    /// A file cut into pieces as a large file is (the header, then runs of
    /// whole blocks found in windows of any size) gives back every block,
    /// and the pieces' records add up to the file's.
    #[test]
    fn pieces_are_whole_blocks_whatever_the_window(
        blocks_in in prop::collection::vec((0i64..5, prop::collection::vec(any::<u8>(), 0..40)), 0..6),
        window in 1usize..200,
    ) {
        let meta: &[(&str, &[u8])] = &[("avro.codec", b"null")];
        let file = container(meta, &blocks_in);
        let head = grown(&file, 0, window, header_end);
        prop_assert_eq!(head, header(&file).unwrap().end);
        let (mut at, mut counted) = (head, 0u64);
        let mut pieces = 0;
        while at < file.len() {
            let cut = grown(&file, at, window, piece_end);
            prop_assert!(cut > 0);
            let piece = [&file[..head], &file[at..at + cut]].concat();
            let h = header(&piece).unwrap();
            let read: Vec<_> = blocks(&piece, &h).collect::<Result<_, _>>().unwrap();
            counted += read.iter().map(|b| b.count).sum::<u64>();
            prop_assert_eq!(records(&file[at..at + cut]), read.iter().map(|b| b.count).sum::<u64>());
            at += cut;
            pieces += 1;
        }
        prop_assert_eq!(counted, blocks_in.iter().map(|(c, _)| *c as u64).sum::<u64>());
        prop_assert_eq!(records(&file), counted);
        prop_assert!(pieces <= blocks_in.len());
    }
}

#[test]
fn a_window_that_cannot_grow_into_a_block_is_taken_whole() {
    let mut file = container(&[], &[(1, vec![2])]);
    let head = header(&file).unwrap().end;
    file.extend(long(-1));
    file.extend([0; 8]);
    assert_eq!(
        piece_end(&file[head..], false),
        Some(file.len() - head),
        "a negative count after a whole block"
    );
    assert_eq!(header_end(b"Ob", false), None);
    assert_eq!(header_end(b"Ob", true), Some(2));
    assert_eq!(header_end(b"PAR1....", false), Some(8));
}
