//! Hostile bytes: random, or a valid file cut short or with bits flipped.
//! The reader refuses or reads them, and never panics.

mod common;

use arrow_array::*;
use common::*;
use deltaload_core::Dataset;
use deltaload_ingest::parquet::read_parquet;
use proptest::prelude::*;
use std::sync::{Arc, OnceLock};

/// A valid file of `inventory` with every column kind the reader converts.
fn valid() -> &'static Vec<u8> {
    static FILE: OnceLock<Vec<u8>> = OnceLock::new();
    FILE.get_or_init(|| {
        let n = 6;
        parquet(
            vec![
                (
                    "warehouse",
                    Arc::new(StringArray::from(vec![
                        Some("W1"),
                        None,
                        Some("W2"),
                        Some("W3"),
                        Some("W1"),
                        Some("W"),
                    ])) as ArrayRef,
                ),
                ("sku", Arc::new(StringArray::from(vec!["A"; n]))),
                (
                    "event_time",
                    Arc::new(TimestampNanosecondArray::from(vec![
                        0,
                        1,
                        1_000,
                        -5_000,
                        i64::MAX,
                        i64::MIN,
                    ])),
                ),
                ("seq", Arc::new(Int32Array::from(vec![1, 2, 3, 4, 5, 6]))),
                (
                    "qty",
                    Arc::new(StringArray::from(vec![
                        "1",
                        "x",
                        "",
                        "-2147483648",
                        "2147483648",
                        "7",
                    ])),
                ),
                (
                    "price",
                    Arc::new(
                        Decimal128Array::from(vec![1, 2, 3, 4, 5, 999_999_999_999])
                            .with_precision_and_scale(10, 2)
                            .unwrap(),
                    ),
                ),
                (
                    "active",
                    Arc::new(BooleanArray::from(vec![
                        Some(true),
                        None,
                        Some(false),
                        None,
                        Some(true),
                        Some(false),
                    ])),
                ),
                (
                    "op",
                    Arc::new(StringArray::from(vec![
                        Some("d"),
                        Some("u"),
                        None,
                        Some("delete"),
                        Some("d"),
                        Some("x"),
                    ])),
                ),
            ],
            2,
        )
    })
}

fn check(dataset: &Dataset, bytes: &[u8]) -> Result<(), TestCaseError> {
    let Ok(parsed) = read_parquet(dataset, bytes) else {
        return Ok(());
    };
    for row in parsed.changes.iter() {
        prop_assert_eq!(row.len(), dataset.width());
        prop_assert!(dataset.keys.iter().all(|&k| !row[k].is_null()));
    }
    for r in &parsed.rejects {
        prop_assert!(r.line >= 1 && !r.reason.to_string().is_empty());
    }
    Ok(())
}

#[test]
fn the_valid_file_reads() {
    let p = read_parquet(&inventory(), valid()).unwrap();
    assert_eq!(p.records(), 6);
    assert_eq!(p.changes.len(), 2, "{:?}", p.rejects);
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 300, ..ProptestConfig::default() })]

    #[test]
    fn random_bytes_never_panic(bytes in prop::collection::vec(any::<u8>(), 0..2048), tail in any::<bool>()) {
        let mut bytes = bytes;
        if tail {
            // A footer's magic, so the reader goes on to the metadata.
            bytes.extend_from_slice(&[8, 0, 0, 0]);
            bytes.extend_from_slice(b"PAR1");
        }
        check(&inventory(), &bytes)?;
    }

    #[test]
    fn cut_files_never_panic(cut in 0usize..4096) {
        let file = valid();
        check(&inventory(), &file[..cut.min(file.len())])?;
    }

    #[test]
    fn flipped_files_never_panic(flips in prop::collection::vec((any::<prop::sample::Index>(), 0u8..8), 1..6), ignore in any::<bool>()) {
        let mut file = valid().clone();
        for (at, bit) in flips {
            let i = at.index(file.len());
            file[i] ^= 1 << bit;
        }
        let dataset = if ignore { inventory_ignoring_extras() } else { inventory() };
        check(&dataset, &file)?;
    }
}

/// Found by the proptests and by flipping bits of the fuzz corpus, each a
/// panic inside the parquet crate or arrow-ipc on a damaged file, now a
/// refusal: an embedded Arrow schema with a decimal precision beyond 255; a
/// column chunk at a negative offset; a page using a dictionary its chunk
/// lacks; a dictionary page of no values holding bytes (a division by zero);
/// level runs longer than their page; dictionary indexes wider than 32 bits
/// or without their bit width; split byte streams shorter than the levels
/// say. Every single-bit flip of each small file is refused or read, never
/// a panic.
#[test]
fn every_bit_flip_of_a_file_is_survived() {
    let mut files = vec![(0, "inventory", valid().clone())];
    files.extend(corpus());
    for (byte, _, file) in files {
        let dataset =
            [inventory(), inventory_ignoring_extras(), readings()][usize::from(byte) % 3].clone();
        for i in 0..file.len() {
            for bit in 0..8 {
                let mut flipped = file.clone();
                flipped[i] ^= 1 << bit;
                let _ = read_parquet(&dataset, &flipped);
            }
        }
    }
}

/// Writes the fuzz target's seed corpus: `cargo test -p deltaload-ingest
/// --test hostile -- --ignored`.
#[test]
#[ignore]
fn write_fuzz_corpus() {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../fuzz/corpus/parquet");
    for (byte, name, bytes) in corpus() {
        let mut data = vec![byte];
        data.extend(bytes);
        std::fs::write(dir.join(name), data).unwrap();
    }
}

#[test]
fn the_corpus_reads() {
    for (byte, name, file) in corpus() {
        let dataset =
            [inventory(), inventory_ignoring_extras(), readings()][usize::from(byte) % 3].clone();
        let p = read_parquet(&dataset, &file).unwrap_or_else(|e| panic!("{name}: {e}"));
        assert!(p.changes.len() >= 2, "{name}: {:?}", p.rejects);
    }
}

/// Found by the fuzzer: a dictionary page claiming about 1.15 billion values
/// in a few bytes made the decoder size and zero a 9 GB dictionary.
#[test]
fn a_dictionary_page_claiming_more_values_than_bytes_is_refused() {
    let bytes = include_bytes!("data/dictionary-bomb.parquet");
    let refused = read_parquet(&readings(), bytes).unwrap_err();
    assert!(
        refused.problem.contains("a dictionary page claims"),
        "{}",
        refused.problem
    );
}
