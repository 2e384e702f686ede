//! `format = "avro"` against JSON Lines: random records of every column
//! type, written as Avro by the reference writer (fastavro: nullable
//! unions, the `decimal`, `date` and `timestamp-micros` logical types, any
//! codec, blocks of any size) and as JSON Lines, read into the same changes
//! and the same rejects (record numbers and reasons) by both readers.

use deltalake::arrow::compute::concat_batches;
use deltaload_core::Spec;
use deltaload_ingest::{read_changes, Ingested};
use deltaload_lake::LoadOutcome;
use proptest::prelude::*;
use serde_json::{json, Value};

const COLUMNS: &str = r#"
keys = ["g"]
columns = [
    { name = "s", type = "string" },
    { name = "b", type = "boolean" },
    { name = "i", type = "int" },
    { name = "g", type = "bigint" },
    { name = "d", type = "double" },
    { name = "m", type = "decimal(12,2)" },
    { name = "t", type = "date" },
    { name = "ts", type = "timestamp" },
    { name = "txt", type = "decimal(10,2)" },
]
"#;

fn dataset(format: &str) -> std::sync::Arc<deltaload_core::Dataset> {
    let text = format!("[[dataset]]\nname = \"all\"\nformat = \"{format}\"\n{COLUMNS}");
    Spec::parse(&text, "all.toml").unwrap().datasets.remove(0)
}

fn nullable(ty: Value) -> Value {
    json!(["null", ty])
}

fn avro_schema() -> Value {
    let decimal = json!({"type": "bytes", "logicalType": "decimal", "precision": 12, "scale": 2});
    json!({"type": "record", "name": "all", "namespace": "deltaload.test", "fields": [
        {"name": "s", "type": nullable(json!("string"))},
        {"name": "b", "type": nullable(json!("boolean"))},
        {"name": "i", "type": nullable(json!("int"))},
        {"name": "g", "type": "long"},
        {"name": "d", "type": nullable(json!("double"))},
        {"name": "m", "type": nullable(decimal)},
        {"name": "t", "type": nullable(json!({"type": "int", "logicalType": "date"}))},
        {"name": "ts", "type": nullable(json!({"type": "long", "logicalType": "timestamp-micros"}))},
        {"name": "txt", "type": nullable(json!("string"))},
    ]})
}

/// One record: its Avro values (as the writer takes them) and its JSON Lines line.
fn record() -> impl Strategy<Value = (Value, String)> {
    let text = prop::option::of(prop_oneof!["\\PC{0,8}", Just("say \"hi\",\n".to_string())]);
    let cents = prop::option::of(-99_999_999_999i64..99_999_999_999);
    let days = prop::option::of(-25_567i32..47_482);
    let micros = prop::option::of(-2_208_988_800_000_000i64..4_102_444_800_000_000);
    let amount = prop::option::of(prop_oneof![
        "-?[0-9]{1,9}\\.[0-9]{1,3}",
        Just("12,5".to_string()),
        Just("".to_string()),
    ]);
    let double = prop::option::of(any::<f64>().prop_filter("finite", |v| v.is_finite()));
    (
        (
            text,
            prop::option::of(any::<bool>()),
            prop::option::of(any::<i32>()),
        ),
        (any::<i64>(), double, cents),
        (days, micros, amount),
    )
        .prop_map(|((s, b, i), (g, d, m), (t, ts, txt))| {
            let decimal = |c: i64| {
                let sign = if c < 0 { "-" } else { "" };
                format!(
                    "{sign}{}.{:02}",
                    c.unsigned_abs() / 100,
                    c.unsigned_abs() % 100
                )
            };
            let m = m.map(decimal);
            let avro = json!({"s": s, "b": b, "i": i, "g": g, "d": d, "m": m, "t": t, "ts": ts,
                              "txt": txt});
            let date = t.map(|t| {
                (chrono::DateTime::UNIX_EPOCH + chrono::Duration::days(t.into()))
                    .date_naive()
                    .to_string()
            });
            let time = ts.map(|us| {
                (chrono::DateTime::from_timestamp_micros(us).unwrap())
                    .to_rfc3339_opts(chrono::SecondsFormat::Micros, true)
            });
            let line = json!({"s": s, "b": b, "i": i, "g": g, "d": d, "m": m, "t": date,
                              "ts": time, "txt": txt});
            (avro, line.to_string())
        })
}

/// What a reader gave: the changes as one batch, and each reject's record
/// number and reason.
fn read(
    format: &str,
    bytes: &[u8],
) -> (
    deltalake::arrow::record_batch::RecordBatch,
    Vec<(u64, String)>,
) {
    let d = dataset(format);
    let Ingested {
        batches, rejects, ..
    } = read_changes(&d, bytes).expect("read");
    let schema = deltaload_ingest::changes_schema(&d);
    let rejects = rejects
        .iter()
        .map(|r| (r.line, r.reason.to_string()))
        .collect();
    (concat_batches(&schema, &batches).unwrap(), rejects)
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 24, ..ProptestConfig::default() })]
    #[test]
    fn avro_records_read_as_the_same_records_in_json_lines(
        records in prop::collection::vec(record(), 0..60),
        codec in prop::sample::select(vec!["null", "deflate", "snappy", "zstandard", "bzip2", "xz"]),
        sync_interval in 16usize..2_000,
    ) {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("all.avro");
        let avro: Vec<&Value> = records.iter().map(|(a, _)| a).collect();
        crate::avro_write(&json!({"path": path, "schema": avro_schema(), "records": avro,
                                  "codec": codec, "sync_interval": sync_interval}));
        let lines: String = records.iter().map(|(_, l)| format!("{l}\n")).collect();
        let from_avro = read("avro", &std::fs::read(&path).unwrap());
        let from_json = read("jsonl", lines.as_bytes());
        prop_assert_eq!(&from_avro.1, &from_json.1);
        prop_assert_eq!(from_avro.0, from_json.0);
    }
}

/// The orders dataset reading Avro files, `amount` as text (so that some
/// records are rejects).
fn orders_avro() -> Spec {
    let text = deltaload_core::spec::ORDERS_SPEC;
    let start = text.find("[dataset.csv]").unwrap();
    let end = start + text[start..].find("[[dataset.columns]]").unwrap();
    let text = format!("{}{}", &text[..start], &text[end..]);
    let text = text.replacen(
        "name = \"orders\"",
        "name = \"orders\"\nformat = \"avro\"",
        1,
    );
    Spec::parse(&text, "orders.toml").unwrap()
}

/// 2,000 changes of 500 orders in blocks of about 400 bytes, one in 97 with
/// an amount that is no decimal.
fn orders_records() -> Vec<Value> {
    (0..2_000i64)
        .map(|i| {
            let amount = match i % 97 {
                0 => "12,50".to_string(),
                _ => format!("{}.{:02}", i % 300, i % 100),
            };
            let at = 1_790_000_000_000_000i64 + i * 1_000_000;
            let status = ["placed", "shipped", "paid"][(i % 3) as usize];
            json!({"order_id": i % 500, "customer_id": format!("C{}", i % 13),
                   "status": status,
                   "amount": amount, "currency": "EUR", "ordered_at": at,
                   "updated_at": at + (i % 7) * 1_000})
        })
        .collect()
}

#[tokio::test]
async fn a_large_avro_file_is_read_in_pieces_of_whole_blocks_as_it_reads_whole() {
    let time = json!({"type": "long", "logicalType": "timestamp-micros"});
    let schema = json!({"type": "record", "name": "order", "fields": [
        {"name": "order_id", "type": "long"},
        {"name": "customer_id", "type": nullable(json!("string"))},
        {"name": "status", "type": "string"},
        {"name": "amount", "type": "string"},
        {"name": "currency", "type": "string"},
        {"name": "ordered_at", "type": time},
        {"name": "updated_at", "type": time},
    ]});
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("orders.avro");
    crate::avro_write(
        &json!({"path": path, "schema": schema, "records": orders_records(),
                              "codec": "deflate", "sync_interval": 400}),
    );
    let bytes = std::fs::read(&path).unwrap();
    let spec = orders_avro();
    let file = crate::memory_budget::source(dir.path(), "big.avro", &bytes, true);
    let root =
        |name: &str| deltaload_lake::lake_url(dir.path().join(name).to_str().unwrap()).unwrap();
    let load = |name: &'static str, budget| {
        let (root, spec, file) = (root(name), spec.clone(), file.clone());
        async move { crate::memory_budget::load_all(&root, &spec, budget, &[file]).await }
    };
    let (whole, none) = load("free", deltaload_lake::MemoryBudget::unlimited()).await;
    let tiny = deltaload_lake::MemoryBudget::of(crate::memory_budget::TINY, dir.path().into());
    let (pieces, spills) = load("tiny", tiny).await;
    assert_eq!(none, deltaload_lake::Spills::default());
    assert_eq!(spills.files_in_pieces, 1, "{spills:?}");
    assert!(spills.runs_written > 10, "{spills:?}");
    assert_eq!(format!("{pieces:?}"), format!("{whole:?}"));
    let LoadOutcome::Loaded(done) = &pieces[0] else {
        panic!("{pieces:?}");
    };
    assert_eq!(
        (done.figures.rejected, done.figures.inserted),
        (21, 500),
        "{done:?}"
    );
    assert_eq!(
        deltaload_tests::lake_state_of(&root("tiny"), &spec, "", "").await,
        deltaload_tests::lake_state_of(&root("free"), &spec, "", "").await
    );
    // A block of the middle whose sync marker is damaged: refused, naming
    // the block's byte in the file, whether read whole or in pieces.
    let header = deltaload_core::avro_container::header(&bytes).unwrap();
    let blocks: Vec<_> = deltaload_core::avro_container::blocks(&bytes, &header)
        .map(Result::unwrap)
        .collect();
    let middle = &blocks[blocks.len() / 2];
    let sync = middle.data.as_ptr() as usize - bytes.as_ptr() as usize + middle.data.len();
    let at = middle.at;
    let mut damaged = bytes.clone();
    damaged[sync] ^= 1;
    let file = crate::memory_budget::source(dir.path(), "damaged.avro", &damaged, true);
    let refusal = |budget| {
        let (root, spec, file) = (root("damaged"), spec.clone(), file.clone());
        async move {
            let (outcomes, _) = crate::memory_budget::load_all(&root, &spec, budget, &[file]).await;
            match &outcomes[..] {
                [LoadOutcome::Refused(m)] => m.problem.clone(),
                other => panic!("{other:?}"),
            }
        }
    };
    let whole = refusal(deltaload_lake::MemoryBudget::unlimited()).await;
    let tiny = deltaload_lake::MemoryBudget::of(crate::memory_budget::TINY, dir.path().into());
    let in_pieces = refusal(tiny).await;
    let expected = format!("the block at byte {at} ends without the header's sync marker");
    assert!(whole.contains(&expected), "{whole}");
    assert_eq!(in_pieces, whole);
}
