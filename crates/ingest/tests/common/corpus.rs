//! The fuzz target's seed corpus: small valid files of every page kind.

use arrow_array::*;
use arrow_schema::{Field, Schema};
use parquet::arrow::ArrowWriter;
use parquet::basic::{Compression, Encoding, GzipLevel, ZstdLevel};
use parquet::file::properties::{WriterProperties, WriterVersion};
use parquet::schema::types::ColumnPath;
use std::sync::Arc;

fn write_with(cols: Vec<(&str, ArrayRef)>, props: WriterProperties) -> Vec<u8> {
    let fields: Vec<Field> = cols
        .iter()
        .map(|(n, a)| Field::new(*n, a.data_type().clone(), true))
        .collect();
    let batch = RecordBatch::try_new(
        Arc::new(Schema::new(fields)),
        cols.into_iter().map(|c| c.1).collect(),
    )
    .unwrap();
    let mut out = Vec::new();
    let mut w = ArrowWriter::try_new(&mut out, batch.schema(), Some(props)).unwrap();
    w.write(&batch).unwrap();
    w.close().unwrap();
    out
}

fn inventory_file(op: ArrayRef, extra: bool) -> Vec<(&'static str, ArrayRef)> {
    let mut v = vec![
        (
            "warehouse",
            Arc::new(StringArray::from(vec![
                Some("W1"),
                None,
                Some("W2"),
                Some("W1"),
                Some("W1"),
                Some("W"),
            ])) as ArrayRef,
        ),
        (
            "sku",
            Arc::new(StringArray::from(vec!["A", "A", "B", "A", "C", "A"])),
        ),
        (
            "event_time",
            Arc::new(
                TimestampMicrosecondArray::from(vec![
                    0,
                    1,
                    1_000,
                    -5_000,
                    1_790_846_100_000_000,
                    7,
                ])
                .with_timezone("UTC"),
            ),
        ),
        ("seq", Arc::new(Int64Array::from(vec![1, 2, 3, 4, 5, 6]))),
        (
            "qty",
            Arc::new(Int32Array::from(vec![
                Some(1),
                None,
                Some(-3),
                Some(i32::MAX),
                Some(0),
                Some(7),
            ])),
        ),
        (
            "price",
            Arc::new(
                Decimal128Array::from(vec![
                    Some(1),
                    None,
                    Some(3),
                    Some(-4),
                    Some(5),
                    Some(9_999_999_999),
                ])
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
        ("op", op),
    ];
    if extra {
        v.push(("note", Arc::new(StringArray::from(vec!["x"; 6]))));
    }
    v
}

/// Small valid files of every page kind the reader meets, each with the
/// byte that picks its dataset in the fuzz target (0: inventory, 1: inventory
/// ignoring extras, 2: readings): plain v1 pages with dictionaries; v2 pages,
/// snappy, an extra column; delta, byte-stream-split and gzip with an
/// integer delete column; zstd with doubles, dates and local times.
pub fn corpus() -> Vec<(u8, &'static str, Vec<u8>)> {
    let ops: ArrayRef = Arc::new(StringArray::from(vec![
        Some("d"),
        Some("u"),
        None,
        Some("delete"),
        Some("i"),
        Some("x"),
    ]));
    let plain = WriterProperties::builder()
        .set_max_row_group_row_count(Some(4))
        .build();
    let v2 = WriterProperties::builder()
        .set_writer_version(WriterVersion::PARQUET_2_0)
        .set_compression(Compression::SNAPPY)
        .set_max_row_group_row_count(Some(3))
        .build();
    let delta = WriterProperties::builder()
        .set_compression(Compression::GZIP(GzipLevel::default()))
        .set_dictionary_enabled(false)
        .set_column_encoding(ColumnPath::from("seq"), Encoding::DELTA_BINARY_PACKED)
        .set_column_encoding(ColumnPath::from("qty"), Encoding::DELTA_BINARY_PACKED)
        .set_column_encoding(ColumnPath::from("sku"), Encoding::DELTA_BYTE_ARRAY)
        .set_column_encoding(
            ColumnPath::from("warehouse"),
            Encoding::DELTA_LENGTH_BYTE_ARRAY,
        )
        .set_column_encoding(ColumnPath::from("event_time"), Encoding::BYTE_STREAM_SPLIT)
        .build();
    let mut files = vec![
        (
            0u8,
            "inventory-plain",
            write_with(inventory_file(ops.clone(), false), plain),
        ),
        (
            1,
            "inventory-v2-snappy-extra",
            write_with(inventory_file(ops, true), v2),
        ),
        (
            3,
            "inventory-delta-gzip-int-op",
            write_with(
                inventory_file(Arc::new(Int32Array::from(vec![1, 0, 1, 2, 0, 1])), false),
                delta,
            ),
        ),
    ];
    let readings: Vec<(&str, ArrayRef)> = vec![
        ("id", Arc::new(Int64Array::from(vec![1, 2, 3, 4]))),
        (
            "score",
            Arc::new(Float64Array::from(vec![1.5, -0.0, f64::NAN, 2.0])),
        ),
        ("day", Arc::new(Date32Array::from(vec![0, 1, -1, 20_000]))),
        (
            "at",
            Arc::new(TimestampMillisecondArray::from(vec![
                0,
                1_774_751_400_000,
                1_790_846_100_000,
                5,
            ])),
        ),
        (
            "amount",
            Arc::new(
                Decimal128Array::from(vec![Some(1), None, Some(12_345), Some(-5)])
                    .with_precision_and_scale(5, 2)
                    .unwrap(),
            ),
        ),
        ("other", Arc::new(Float32Array::from(vec![1.0; 4]))),
    ];
    let zstd = WriterProperties::builder()
        .set_compression(Compression::ZSTD(ZstdLevel::default()))
        .build();
    files.push((2, "readings-zstd", write_with(readings, zstd)));
    files
}
