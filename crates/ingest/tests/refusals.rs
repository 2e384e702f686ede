//! Files the reader refuses whole: a missing, nested or lossy column, an
//! undeclared one, a bad delete column, bytes that are not Parquet.

mod common;

use arrow_array::*;
use common::*;
use deltaload_core::Value;
use deltaload_ingest::parquet::read_parquet;
use std::sync::Arc;

#[test]
fn a_type_its_column_cannot_hold_refuses_the_file_naming_both() {
    let e = refusal(with("qty", Arc::new(Int64Array::from(vec![1, 2, 3, 4, 5]))));
    assert_eq!(e.problem, "column \"qty\" is Int64 in the file and int in the spec, which cannot hold it without loss");
    assert_eq!(
        e.found,
        [
            "warehouse",
            "sku",
            "event_time",
            "seq",
            "qty",
            "price",
            "active",
            "op"
        ]
    );
    assert_eq!(e.expected, e.found, "the delete column is expected too");
    let e = refusal(with("price", Arc::new(Float64Array::from(vec![1.0; 5]))));
    assert_eq!(e.problem, "column \"price\" is Float64 in the file and decimal(10,2) in the spec, which cannot hold it without loss");
    let e = refusal(with("qty", Arc::new(Float32Array::from(vec![1.0; 5]))));
    assert!(e.problem.contains("\"qty\" is Float32"), "{}", e.problem);
    let e = refusal(with(
        "active",
        Arc::new(BinaryArray::from(vec![b"1".as_ref(); 5])),
    ));
    assert!(
        e.problem
            .contains("\"active\" is Binary in the file and boolean"),
        "{}",
        e.problem
    );
    let e = refusal(with("sku", Arc::new(Int32Array::from(vec![1; 5]))));
    assert!(
        e.problem
            .contains("\"sku\" is Int32 in the file and string"),
        "{}",
        e.problem
    );
    let decimal = |p: u8, s: i8| -> ArrayRef {
        Arc::new(
            Decimal128Array::from(vec![12_345; 5])
                .with_precision_and_scale(p, s)
                .unwrap(),
        )
    };
    let e = refusal(with("qty", decimal(5, 0)));
    assert!(
        e.problem.contains("Decimal128(5, 0) in the file and int"),
        "{}",
        e.problem
    );
    let e = refusal(with("price", decimal(12, 3)));
    assert_eq!(e.problem, "column \"price\" is Decimal128(12, 3) in the file and decimal(10,2) in the spec, which cannot hold it without loss");
    let e = refusal(with("price", decimal(11, 2)));
    assert!(e.problem.contains("Decimal128(11, 2)"), "{}", e.problem);
}

#[test]
fn a_missing_column_refuses_the_file() {
    let e = refusal(without("qty"));
    assert_eq!(
        e.problem,
        "the file has no column(s) \"qty\" that the spec declares"
    );
    assert_eq!(
        e.found,
        [
            "warehouse",
            "sku",
            "event_time",
            "seq",
            "price",
            "active",
            "op"
        ]
    );
    let e = refusal(without("op"));
    assert_eq!(
        e.problem,
        "the file has no column \"op\", which delete_when reads to tell deletes"
    );
}

#[test]
fn extra_columns_refuse_the_file_unless_ignored() {
    let cols = with("note", strings(&[Some("x"); 5]));
    let e = refusal(cols.clone());
    assert_eq!(
        e.problem,
        "the file has column(s) \"note\" that the spec does not declare: declare them, or set extra_fields = \"ignore\" to drop them"
    );
    // Ignored extras are never decoded: one of a type no column takes reads fine.
    let mut cols = cols;
    cols.push((
        "blob",
        Arc::new(BinaryArray::from(vec![b"\xff".as_ref(); 5])),
    ));
    cols.push(("nested", nested()));
    let p = read_parquet(&inventory_ignoring_extras(), &parquet(cols, 2)).unwrap();
    assert_eq!(p.changes, read(columns()).unwrap().changes);
}

#[test]
fn a_nested_column_refuses_the_file() {
    let e = refusal(with("qty", nested()));
    assert!(
        e.problem.starts_with("column \"qty\" is a nested Struct("),
        "{}",
        e.problem
    );
    assert!(
        e.problem.ends_with(": only flat columns load"),
        "{}",
        e.problem
    );
}

#[test]
fn the_delete_column_must_be_text_integer_or_boolean() {
    let e = refusal(with("op", Arc::new(Float64Array::from(vec![1.0; 5]))));
    assert_eq!(e.problem, "delete column \"op\" is Float64 in the file: delete_when reads a string, integer or boolean column");
    let dataset = |values: &str| {
        let text = INVENTORY
            .replace("EXTRA", "")
            .replace(r#"in = ["d", "delete"]"#, values);
        deltaload_core::Spec::parse(&text, "t.toml")
            .unwrap()
            .datasets
            .remove(0)
    };
    let ints = parquet(
        with(
            "op",
            Arc::new(Int8Array::from(vec![
                Some(1),
                Some(2),
                None,
                Some(1),
                Some(3),
            ])),
        ),
        2,
    );
    let p = read_parquet(&dataset(r#"in = ["1", "3"]"#), &ints).unwrap();
    let flags: Vec<bool> = p
        .changes
        .iter()
        .map(|r| r[7] == Value::Bool(true))
        .collect();
    assert_eq!(flags, [true, false, false, true, true]);
    let bools = parquet(
        with(
            "op",
            Arc::new(BooleanArray::from(vec![
                Some(true),
                Some(false),
                None,
                None,
                None,
            ])),
        ),
        2,
    );
    let p = read_parquet(&dataset(r#"in = ["true"]"#), &bools).unwrap();
    let flags: Vec<bool> = p
        .changes
        .iter()
        .map(|r| r[7] == Value::Bool(true))
        .collect();
    assert_eq!(flags, [true, false, false, false, false]);
}

#[test]
fn unreadable_files_are_refused_never_a_panic() {
    let good = parquet(columns(), 2);
    for bytes in [
        &good[..good.len() / 2],
        &good[good.len() / 2..],
        b"PAR1 not really PAR1".as_ref(),
        b"",
        b"order_id\n1\n",
    ] {
        let e = read_parquet(&inventory(), bytes).unwrap_err();
        assert!(
            e.problem.starts_with("not a readable Parquet file: "),
            "{}",
            e.problem
        );
        assert!(e.found.is_empty());
    }
}
