//! S3 events of an AWS DMS folder and a Debezium topic, and a DMS object
//! of a name DMS does not write, handled in one batch through LocalStack:
//! each object routed by its prefix, the misnamed one refused and recorded,
//! and both tables as their tools' order makes them, whatever order the
//! events came in.

use crate::dataset_events::receive;
use deltaload_core::Spec;
use deltaload_lake::{table_rows, Lake, LakeRoot, TableName};
use deltaload_tests::localstack::Stack;

/// The bytes of `path` under examples/.
pub(crate) fn example(path: &str) -> Vec<u8> {
    std::fs::read(format!("{}/../examples/{path}", env!("CARGO_MANIFEST_DIR")))
        .expect("example file")
}

fn spec_text(bucket: &str) -> String {
    let dms = String::from_utf8(example("aws_dms/spec.toml")).expect("utf-8");
    let debezium = String::from_utf8(example("debezium/spec.toml")).expect("utf-8");
    format!("{dms}\n{debezium}").replace("s3://landing/", &format!("s3://{bucket}/"))
}

#[tokio::test(flavor = "multi_thread")]
async fn a_batch_of_dms_and_debezium_objects_routes_orders_and_refuses_by_preset() {
    let stack = Stack::new(5, 30).await;
    let spec = Spec::parse(&spec_text(&stack.landing), "spec.toml").unwrap();
    let topic = "dbserver1.inventory.customers";
    let dms = |name: &str| {
        (
            format!("dms/hr/employee/{name}"),
            format!("aws_dms/employees/{name}"),
        )
    };
    let kafka = |offset: &str| {
        let name = format!("{topic}+0+{offset}.json");
        (
            format!("topics/{topic}/partition=0/{name}"),
            format!("debezium/customers/{name}"),
        )
    };
    let objects = [
        dms("20261201-101600456.csv"),
        dms("LOAD00000001.csv"),
        dms("20261201-101500123.csv"),
        kafka("0000000003"),
        kafka("0000000000"),
    ];
    for (key, path) in &objects {
        stack.put(key, example(path)).await;
    }
    stack
        .put(
            "dms/hr/employee/employees.csv",
            "101,Smith,Bob,2014-06-04,Boston\n",
        )
        .await;
    let per = handled(&stack, &spec, 6).await;
    assert_eq!(
        per,
        [
            "customers: 2 loaded, 0 refused",
            "employees: 3 loaded, 1 refused"
        ]
    );
    let root = stack.lake_root();
    let rows = |name: &str, columns: &'static str| {
        let (root, t) = (
            root.clone(),
            TableName::Target(spec.dataset(name).unwrap().clone()),
        );
        async move { table_rows(&root, &t, columns).await.unwrap() }
    };
    assert_eq!(
        rows("employees", "id, city, _feed_file, _feed_line").await,
        [
            ["102", "Denver", "1 20261201-101600456000", "3"],
            ["103", "Chicago", "1 20261201-101600456000", "1"],
            ["104", "Austin", "1 20261201-101500123000", "5"],
        ]
    );
    assert_eq!(
        rows("customers", "id, email, balance, updated_at").await,
        [
            [
                "1001",
                "sally@thomas.org",
                "120.50",
                "2026-12-01T09:30:00.250Z"
            ],
            ["1003", "ed@walker.com", "25.75", "2026-12-01T09:32:00Z"],
            [
                "1004",
                "annek@noanswer.org",
                "999.99",
                "2026-12-01T09:31:00Z"
            ],
        ]
    );
    let refused = refused(&root).await;
    assert_eq!(refused.len(), 1, "{refused:?}");
    assert!(
        refused[0].0.ends_with("dms/hr/employee/employees.csv"),
        "{refused:?}"
    );
    assert!(
        refused[0].1.contains("is not one AWS DMS writes"),
        "{refused:?}"
    );
}

/// The `n` messages waiting in `stack`'s queue handled in one batch by a
/// handler of `spec`, which must fail none: per dataset, the files loaded
/// and refused (`customers: 2 loaded, 0 refused`).
pub(crate) async fn handled(stack: &Stack, spec: &Spec, n: usize) -> Vec<String> {
    let messages = receive(stack, n).await;
    let lake = Lake::open_spec(&stack.lake_root(), spec).await.unwrap();
    let handler = stack.handler(lake).await;
    let report = handler.handle(&messages).await;
    assert_eq!(report.failures, Vec::<String>::new(), "{report:?}");
    (report.by_dataset.iter())
        .map(|(name, f)| format!("{name}: {} loaded, {} refused", f.loaded, f.refused))
        .collect()
}

/// The ledger's refused files under `root`: location and reason.
pub(crate) async fn refused(root: &LakeRoot) -> Vec<(String, String)> {
    let ledger = table_rows(root, &TableName::Ledger, "location, status, reason")
        .await
        .unwrap();
    (ledger.into_iter())
        .filter(|r| r[1] == "refused")
        .map(|r| (r[0].clone(), r[2].clone()))
        .collect()
}
