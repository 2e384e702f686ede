//! S3 events of Debezium's topic as the Kafka Connect S3 sink writes it
//! with the AvroConverter, handled in one batch through LocalStack: Avro
//! files (AvroFormat) and Parquet files (ParquetFormat) of the same events
//! routed by prefix to their datasets, the changes' file before the
//! snapshot's, and a truncated Avro file refused and recorded. Both tables
//! end as the source table is (the JSON Lines example's rows).

use crate::preset_events::{example, handled, refused};
use deltaload_core::Spec;
use deltaload_lake::{table_rows, TableName};
use deltaload_tests::localstack::Stack;

const TOPIC: &str = "dbserver1.inventory.customers";

#[tokio::test(flavor = "multi_thread")]
async fn avro_and_parquet_sink_files_load_by_offset_and_a_truncated_one_is_refused() {
    let stack = Stack::new(5, 30).await;
    let text = String::from_utf8(example("debezium_avro/spec.toml")).unwrap();
    let text = text.replace("s3://landing/", &format!("s3://{}/", stack.landing));
    let spec = Spec::parse(&text, "spec.toml").unwrap();
    let object = |prefix: &str, offset: &str, ext: &str| {
        let name = format!("{TOPIC}+0+{offset}.{ext}");
        let folder = if ext == "avro" {
            "customers"
        } else {
            "customers_parquet"
        };
        (
            format!("{prefix}topics/{TOPIC}/partition=0/{name}"),
            example(&format!("debezium_avro/{folder}/{name}")),
        )
    };
    let mut objects = vec![
        object("", "0000000003", "avro"),
        object("parquet/", "0000000003", "parquet"),
        object("", "0000000000", "avro"),
        object("parquet/", "0000000000", "parquet"),
    ];
    let (_, whole) = object("", "0000000000", "avro");
    objects.push((
        format!("topics/{TOPIC}/partition=1/{TOPIC}+1+0000000000.avro"),
        whole[..whole.len() - 20].to_vec(),
    ));
    for (key, bytes) in &objects {
        stack.put(key, bytes.clone()).await;
    }
    let per = handled(&stack, &spec, objects.len()).await;
    assert_eq!(
        per,
        [
            "customers: 2 loaded, 1 refused",
            "customers_parquet: 2 loaded, 0 refused"
        ]
    );
    let root = stack.lake_root();
    for name in ["customers", "customers_parquet"] {
        let table = TableName::Target(spec.dataset(name).unwrap().clone());
        let rows = table_rows(&root, &table, "id, email, balance, signed_up, updated_at")
            .await
            .unwrap();
        assert_eq!(
            rows,
            [
                [
                    "1001",
                    "sally@thomas.org",
                    "120.50",
                    "2024-03-01",
                    "2026-12-01T09:30:00.250Z"
                ],
                [
                    "1003",
                    "ed@walker.com",
                    "25.75",
                    "2025-01-20",
                    "2026-12-01T09:32:00Z"
                ],
                [
                    "1004",
                    "annek@noanswer.org",
                    "999.99",
                    "2026-12-01",
                    "2026-12-01T09:31:00Z"
                ],
            ],
            "{name}"
        );
    }
    let refused = refused(&root).await;
    assert_eq!(refused.len(), 1, "{refused:?}");
    assert!(refused[0].0.contains("+1+0000000000.avro"), "{refused:?}");
    assert!(
        refused[0]
            .1
            .contains("not a readable Avro file: truncated Avro file"),
        "{refused:?}"
    );
}
