//! Parquet files whose columns hold the dataset's own Arrow types are taken
//! a batch at a time, no value converted; others value by value. Either
//! way the Arrow reader holds what the value reader holds, for any file.

use super::tests::as_values;
use super::*;
use arrow_array::{
    ArrayRef, BooleanArray, Decimal128Array, Float64Array, Int32Array, Int64Array, StringArray,
    TimestampMicrosecondArray,
};
use deltaload_core::{Spec, Value};
use proptest::prelude::*;

const SPEC: &str = r#"
[[dataset]]
name = "stock"
format = "parquet"
keys = ["sku"]
sequence_by = ["at", "seq"]
delete_when = { column = "op", in = ["d"] }
columns = [
    { name = "sku", type = "string" },
    { name = "at", type = "timestamp" },
    { name = "seq", type = "bigint" },
    { name = "qty", type = "int" },
    { name = "ratio", type = "double" },
    { name = "price", type = "decimal(6,2)" },
    { name = "label", type = "string", nullable = false },
]
"#;

/// One row: each column's value or null, and the op.
#[derive(Debug, Clone)]
struct Row {
    sku: Option<String>,
    at: Option<i64>,
    seq: Option<i64>,
    qty: Option<i32>,
    ratio: Option<f64>,
    price: Option<i128>,
    label: Option<String>,
    op: Option<&'static str>,
}

fn row() -> impl Strategy<Value = Row> {
    (
        (prop::option::weighted(0.9, "[ab'\"%é]{0,3}"), prop::option::weighted(0.9, -5i64..5), prop::option::weighted(0.9, any::<i64>())),
        (prop::option::of(any::<i32>()), prop::option::of(prop_oneof![20 => prop::sample::select(vec![0.5, -0.0, 1e300]), 1 => prop::sample::select(vec![f64::NAN, f64::INFINITY])])),
        (prop::option::of(prop_oneof![20 => prop::sample::select(vec![0i128, 2550, -999_999]), 1 => prop::sample::select(vec![-1_000_000i128, 100_000_000])]), prop::option::weighted(0.9, "[xy]{0,2}")),
        prop::option::of(prop::sample::select(vec!["d", "u"])),
    )
        .prop_map(|((sku, at, seq), (qty, ratio), (price, label), op)| Row {
            sku,
            at,
            seq,
            qty,
            ratio,
            price,
            label,
            op,
        })
}

/// A Parquet file of `rows`, `qty` of the column's own type when `exact`.
fn parquet(rows: &[Row], exact: bool) -> Vec<u8> {
    let sku: ArrayRef = Arc::new(StringArray::from(
        rows.iter().map(|r| r.sku.clone()).collect::<Vec<_>>(),
    ));
    let at: ArrayRef = Arc::new(
        TimestampMicrosecondArray::from(rows.iter().map(|r| r.at).collect::<Vec<_>>())
            .with_timezone("UTC"),
    );
    let seq: ArrayRef = Arc::new(Int64Array::from(
        rows.iter().map(|r| r.seq).collect::<Vec<_>>(),
    ));
    let qty: ArrayRef = match exact {
        true => Arc::new(Int32Array::from(
            rows.iter().map(|r| r.qty).collect::<Vec<_>>(),
        )),
        // Narrower than the column: converted value by value.
        false => Arc::new(arrow_array::Int16Array::from(
            rows.iter()
                .map(|r| r.qty.map(|v| v as i16))
                .collect::<Vec<_>>(),
        )),
    };
    let ratio: ArrayRef = Arc::new(Float64Array::from(
        rows.iter().map(|r| r.ratio).collect::<Vec<_>>(),
    ));
    let price: ArrayRef = Arc::new(
        Decimal128Array::from(rows.iter().map(|r| r.price).collect::<Vec<_>>())
            .with_precision_and_scale(6, 2)
            .unwrap_or_else(|_| Decimal128Array::from(vec![None::<i128>; rows.len()])),
    );
    let label: ArrayRef = Arc::new(StringArray::from(
        rows.iter().map(|r| r.label.clone()).collect::<Vec<_>>(),
    ));
    let op: ArrayRef = Arc::new(StringArray::from(
        rows.iter().map(|r| r.op).collect::<Vec<_>>(),
    ));
    let batch = RecordBatch::try_from_iter([
        ("sku", sku),
        ("at", at),
        ("seq", seq),
        ("qty", qty),
        ("ratio", ratio),
        ("price", price),
        ("label", label),
        ("op", op),
    ])
    .unwrap();
    let mut out = Vec::new();
    let mut writer =
        ::parquet::arrow::ArrowWriter::try_new(&mut out, batch.schema(), None).unwrap();
    writer.write(&batch).unwrap();
    writer.close().unwrap();
    out
}

fn dataset() -> Arc<Dataset> {
    Spec::parse(SPEC, "stock.toml").unwrap().datasets.remove(0)
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 120, ..ProptestConfig::default() })]

    #[test]
    fn parquet_files_read_into_arrow_as_into_values(rows in prop::collection::vec(row(), 0..40), exact in any::<bool>()) {
        let d = dataset();
        let bytes = parquet(&rows, exact);
        let values = crate::parquet::read_parquet(&d, &bytes).unwrap();
        let arrow = read_changes(&d, &bytes).unwrap();
        let expected: Vec<Vec<Value>> = values.changes.iter().map(<[Value]>::to_vec).collect();
        prop_assert_eq!(as_values(&d, &arrow), expected);
        prop_assert_eq!(arrow.rejects, values.rejects);
        // Taken whole exactly when every column holds its own type and
        // every value would be kept as it is.
        let clean = rows.iter().all(|r| {
            r.ratio.is_none_or(f64::is_finite)
                && r.price.is_none_or(|p| p.abs() < 1_000_000)
        });
        let whole = usize::from(exact && clean && !rows.is_empty());
        prop_assert_eq!(arrow.whole_batches, whole);
    }
}

/// The batch of a file of the dataset's own types comes through whole: the
/// arrays read are those given (no builder filled them).
#[test]
fn a_file_of_the_datasets_own_types_is_taken_a_batch_at_a_time() {
    let d = dataset();
    let rows: Vec<Row> = (0..3)
        .map(|i| Row {
            sku: Some(format!("s{i}")),
            at: Some(i),
            seq: Some(i),
            qty: Some(1),
            ratio: Some(0.5),
            price: Some(100),
            label: Some("x".into()),
            op: None,
        })
        .collect();
    let read = read_changes(&d, &parquet(&rows, true)).unwrap();
    assert_eq!(read.changes(), 3);
    assert_eq!(read.whole_batches, 1, "taken as read, not rebuilt");
    let built = read_changes(&d, &parquet(&rows, false)).unwrap();
    assert_eq!((built.changes(), built.whole_batches), (3, 0));
    let flags = read.batches[0].column(d.columns.len());
    assert_eq!(
        flags
            .as_any()
            .downcast_ref::<BooleanArray>()
            .unwrap()
            .true_count(),
        0
    );
}

/// `batch` written as a Parquet file.
fn written(batch: &RecordBatch) -> Vec<u8> {
    let mut out = Vec::new();
    let mut writer =
        ::parquet::arrow::ArrowWriter::try_new(&mut out, batch.schema(), None).unwrap();
    writer.write(batch).unwrap();
    writer.close().unwrap();
    out
}

#[test]
fn a_dms_parquet_file_rejects_unknown_operations_and_numbers_its_rows_either_way() {
    let spec = "[[dataset]]\nname = \"t\"\nformat = \"parquet\"\npreset = \"aws_dms\"\n\
                keys = [\"id\"]\ncolumns = [{ name = \"id\", type = \"bigint\" }, \
                { name = \"v\", type = \"string\" }]\n";
    let d = Spec::parse(spec, "t.toml").unwrap().datasets[0]
        .as_ref()
        .clone();
    let ops = StringArray::from(vec![Some("I"), Some("X"), None, Some("D"), Some("U")]);
    let ids = Int64Array::from(vec![1, 2, 3, 4, 5]);
    let texts = StringArray::from(vec!["a", "b", "c", "d", "e"]);
    let with_op = RecordBatch::try_from_iter([
        ("Op", Arc::new(ops) as ArrayRef),
        ("id", Arc::new(ids.clone()) as ArrayRef),
        ("v", Arc::new(texts.clone()) as ArrayRef),
    ])
    .unwrap();
    // Int32 ids are converted value by value; Int64 ones taken whole.
    let converted = RecordBatch::try_from_iter([
        ("Op", with_op.column(0).clone()),
        (
            "id",
            Arc::new(Int32Array::from(vec![1, 2, 3, 4, 5])) as ArrayRef,
        ),
        ("v", Arc::new(texts.clone()) as ArrayRef),
    ])
    .unwrap();
    for (batch, whole) in [(&with_op, 1), (&converted, 0)] {
        let read = read_changes(&d, &written(batch)).unwrap();
        assert_eq!(read.whole_batches, whole);
        let reasons: Vec<(u64, String)> = read
            .rejects
            .iter()
            .map(|r| (r.line, r.reason.to_string()))
            .collect();
        assert_eq!(
            reasons,
            [
                (
                    2,
                    "Op \"X\" is not an operation: expected one of I, U, D".to_string()
                ),
                (
                    3,
                    "Op \"\" is not an operation: expected one of I, U, D".to_string()
                ),
            ]
        );
        let rows = as_values(&d, &read);
        let lines: Vec<&Value> = rows.iter().map(|r| &r[3]).collect();
        assert_eq!(lines, [&Value::Int(1), &Value::Int(4), &Value::Int(5)]);
        let deletes: Vec<&Value> = rows.iter().map(|r| &r[4]).collect();
        assert_eq!(
            deletes,
            [&Value::Bool(false), &Value::Bool(true), &Value::Bool(false)]
        );
    }
    let full_load = RecordBatch::try_from_iter([
        ("id", Arc::new(ids) as ArrayRef),
        ("v", Arc::new(texts) as ArrayRef),
    ])
    .unwrap();
    let read = read_changes(&d, &written(&full_load)).unwrap();
    assert_eq!(
        (read.changes(), read.rejects.len()),
        (5, 0),
        "no Op: every row upserts"
    );
}

/// With rules, a file of the dataset's own types is read a row at a time
/// (each with its row number); a row breaking a rule is rejected as its
/// row, rendered as JSON; a delete is not checked.
#[test]
fn rows_breaking_a_rule_are_rejected_by_row_number_and_deletes_are_not_checked() {
    struct Positive;
    impl crate::rules::Check for Positive {
        fn holds(&self, batch: &RecordBatch) -> Result<Vec<BooleanArray>, String> {
            let qty = batch
                .column(3)
                .as_any()
                .downcast_ref::<Int32Array>()
                .unwrap();
            Ok(vec![qty.iter().map(|q| q.map(|q| q > 0)).collect()])
        }
    }
    let mut d = dataset().as_ref().clone();
    d.rules = vec![deltaload_core::spec::Rule {
        kind: deltaload_core::spec::RuleKind::Constraint,
        name: "positive".into(),
        expression: "qty > 0".into(),
    }];
    let at = |sku: &str, qty: Option<i32>, op: Option<&'static str>| Row {
        sku: Some(sku.into()),
        at: Some(1),
        seq: Some(1),
        qty,
        ratio: None,
        price: None,
        label: Some("x".into()),
        op,
    };
    let rows = [
        at("a", Some(1), None),
        at("b", Some(-1), None),
        at("c", Some(-5), Some("d")),
        at("d", None, None),
    ];
    let bytes = parquet(&rows, true);
    let read = read_changes(&d, &bytes).unwrap();
    assert_eq!(
        read.whole_batches, 0,
        "read a row at a time, with row numbers"
    );
    assert_eq!(read.lines.as_deref(), Some(&[1u64, 2, 3, 4][..]));
    let checked = crate::rules::apply(&d, &bytes, read, &Positive).unwrap();
    assert_eq!(checked.changes(), 2, "a and the delete of c");
    let rejects: Vec<(u64, Option<String>)> = (checked.rejects.iter())
        .map(|r| (r.line, r.key.clone()))
        .collect();
    assert_eq!(rejects, [(2, Some("b".into())), (4, Some("d".into()))]);
    let raw = &checked.rejects[0].raw;
    assert!(
        raw.starts_with("{\"sku\":\"b\"") && raw.contains("\"qty\":-1"),
        "{raw}"
    );
    assert!(!raw.contains("__deltaload_delete"), "{raw}");
    assert_eq!(
        checked.rejects[0].reason.to_string(),
        "breaks CHECK constraint positive: qty > 0"
    );
}
