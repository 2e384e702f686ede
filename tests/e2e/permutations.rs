//! Any load order of the same files, with repeats, gives the same `orders`: the
//! newest change of each order under the documented tie rule (seed's 1,2,2,1, generalised).

use deltaload_core::{newest_per_key, read_file, Dataset, Value};
use deltaload_tests::{Sandbox, HEADER};
use proptest::prelude::*;

/// A small record over few orders, few timestamps and few values, so that
/// repeats, stale rows and exact ties are common.
fn record() -> impl Strategy<Value = String> {
    (
        1i64..6,
        prop::sample::select(vec!["", "C1", "C2"]),
        prop::sample::select(vec!["", "placed", "shipped", "cancelled"]),
        prop::sample::select(vec!["", "1.00", "2.50", "bad"]),
        0u32..3,
    )
        .prop_map(|(id, customer, status, amount, hour)| {
            format!("{id},{customer},{status},{amount},EUR,2026-10-01T08:00:00,2026-10-01T1{hour}:00:00")
        })
}

fn file() -> impl Strategy<Value = String> {
    prop::collection::vec(record(), 0..6).prop_map(|rows| {
        let mut text = HEADER.to_string();
        for r in rows {
            text.push_str(&r);
            text.push('\n');
        }
        text
    })
}

/// Files, then a load order over all of them with some loaded again.
fn scenario() -> impl Strategy<Value = (Vec<String>, Vec<usize>)> {
    prop::collection::vec(file(), 1..4).prop_flat_map(|files| {
        let n = files.len();
        let order = deltaload_tests::load_order(n);
        (Just(files), order)
    })
}

fn expected(files: &[String]) -> Vec<Vec<String>> {
    let orders = Dataset::orders();
    let changes = files.iter().flat_map(|f| {
        let changes = read_file(&orders, f.as_bytes())
            .expect("valid header")
            .changes;
        changes.iter().map(<[Value]>::to_vec).collect::<Vec<_>>()
    });
    newest_per_key(&orders, changes)
        .into_iter()
        .map(|c| {
            let text = |v: &Value| v.as_text().unwrap_or_else(|| "NULL".to_string());
            let Value::Timestamp(updated_at) = c[6] else {
                panic!("updated_at is a timestamp")
            };
            vec![
                text(&c[0]),
                text(&c[1]),
                text(&c[2]),
                match c[3] {
                    Value::Decimal(a) => format!("{}.{:02}", a.get() / 100, a.get() % 100),
                    _ => "NULL".to_string(),
                },
                "EUR".to_string(),
                "2026-10-01T08:00:00Z".to_string(),
                format!("2026-10-01T{}:00:00Z", (updated_at / 3_600_000_000) % 24),
            ]
        })
        .collect()
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 12, ..ProptestConfig::default() })]
    #[test]
    fn every_load_order_gives_the_newest_change_of_each_order((files, order) in scenario()) {
        let runtime = tokio::runtime::Runtime::new().unwrap();
        let got = runtime.block_on(async {
            let sb = Sandbox::new();
            let paths: Vec<_> = files.iter().enumerate().map(|(i, f)| sb.file(&format!("f{i}.csv"), f)).collect();
            for &i in &order {
                sb.load(&paths[i], false).await;
            }
            sb.orders().await
        });
        prop_assert_eq!(got, expected(&files));
    }
}
