//! Records that break a rule leave the changes for the rejects, with their
//! line and raw text, whatever the file: against a model that reads the
//! file's lines one by one.

use super::*;
use deltaload_core::spec::{OnFail, Rule, RuleKind};
use proptest::prelude::*;
use std::sync::Arc;

/// Breaks the rows whose `order_id` is a multiple of `modulus` (or null).
struct Multiples {
    modulus: i64,
}

impl Check for Multiples {
    fn holds(&self, batch: &RecordBatch) -> Result<Vec<BooleanArray>, String> {
        let ids = batch
            .column(0)
            .as_primitive::<arrow_array::types::Int64Type>();
        Ok(vec![ids
            .iter()
            .map(|id| id.map(|i| i % self.modulus != 0))
            .collect()])
    }
}

fn orders_with_rule() -> Arc<Dataset> {
    let mut d = Dataset::orders().as_ref().clone();
    d.rules = vec![Rule {
        kind: RuleKind::Constraint,
        name: "no_multiples".into(),
        expression: "order_id % m <> 0".into(),
    }];
    Arc::new(d)
}

const HEADER: &str = "order_id,customer_id,status,amount,currency,ordered_at,updated_at";
const REASON: &str = "breaks CHECK constraint no_multiples: order_id % m <> 0";

/// A record of order `id` (`bad`: an amount that does not parse).
fn record(id: i64, bad: bool) -> String {
    let amount = if bad { "abc" } else { "1.00" };
    format!("{id},c,new,{amount},EUR,,2026-10-01T00:00:00Z")
}

proptest! {
    #[test]
    fn broken_records_are_rejected_by_line_and_the_rest_kept_in_order(
        rows in prop::collection::vec((0i64..20, any::<bool>(), prop::bool::weighted(0.2)), 0..40),
        modulus in 2i64..5,
    ) {
        let d = orders_with_rule();
        let mut text = format!("{HEADER}\n");
        let (mut line, mut kept, mut rejected) = (1u64, Vec::new(), Vec::new());
        for (id, bad, blank) in &rows {
            if *blank {
                text.push('\n');
                line += 1;
            }
            line += 1;
            text.push_str(&record(*id, *bad));
            text.push('\n');
            match (*bad, id % modulus == 0) {
                (true, _) => rejected.push((line, record(*id, *bad), None)),
                (false, true) => rejected.push((line, record(*id, *bad), Some(REASON.to_string()))),
                (false, false) => kept.push(*id),
            }
        }
        let read = crate::read_changes(&d, text.as_bytes()).expect("reads");
        prop_assert_eq!(read.lines.as_ref().map(Vec::len), Some(read.changes() as usize));
        let checked = apply(&d, text.as_bytes(), read, &Multiples { modulus }).expect("applies");
        let ids: Vec<i64> = (checked.batches.iter())
            .flat_map(|b| b.column(0).as_primitive::<arrow_array::types::Int64Type>().values().to_vec())
            .collect();
        prop_assert_eq!(ids, kept);
        let got: Vec<(u64, String, Option<String>)> = (checked.rejects.iter())
            .map(|r| {
                let reason = r.reason.to_string();
                (r.line, r.raw.clone(), reason.starts_with("breaks").then_some(reason))
            })
            .collect();
        prop_assert_eq!(got, rejected);
        for r in checked.rejects.iter().filter(|r| r.reason.to_string().starts_with("breaks")) {
            let id = r.raw.split(',').next().map(String::from);
            prop_assert_eq!(r.key.clone(), id, "the key names the record");
        }
    }
}

#[test]
fn without_rules_nothing_is_kept_or_checked() {
    let d = Dataset::orders();
    let text = format!("{HEADER}\n{}\n", record(4, false));
    let read = crate::read_changes(&d, text.as_bytes()).expect("reads");
    assert_eq!(read.lines, None, "no lines kept without rules");
    let checked = apply(&d, text.as_bytes(), read, &Multiples { modulus: 2 }).expect("applies");
    assert_eq!((checked.changes(), checked.rejects.len()), (1, 0));
}

#[test]
fn a_rule_that_cannot_be_evaluated_is_an_error_naming_the_dataset() {
    struct Fails;
    impl Check for Fails {
        fn holds(&self, _: &RecordBatch) -> Result<Vec<BooleanArray>, String> {
            Err("division by zero".into())
        }
    }
    let d = orders_with_rule();
    let text = format!("{HEADER}\n{}\n", record(4, false));
    let read = crate::read_changes(&d, text.as_bytes()).expect("reads");
    let e = apply(&d, text.as_bytes(), read, &Fails).expect_err("fails");
    assert!(
        e.to_string().contains("dataset orders") && e.to_string().contains("division by zero"),
        "{e}"
    );
}

/// Three expectations over `order_id`: `warn` breaks multiples of 2, `drop`
/// of 3, `fail` of `fail` (0: never); a null `amount` breaks `warn` too.
struct Expectations {
    fail: i64,
}

impl Check for Expectations {
    fn holds(&self, batch: &RecordBatch) -> Result<Vec<BooleanArray>, String> {
        let ids = batch
            .column(0)
            .as_primitive::<arrow_array::types::Int64Type>();
        let amounts = batch.column(3);
        let by =
            |f: &dyn Fn(i64) -> bool| -> BooleanArray { ids.iter().map(|i| i.map(f)).collect() };
        let warn: BooleanArray = (0..batch.num_rows())
            .map(|r| (!amounts.is_null(r)).then(|| ids.value(r) % 2 != 0))
            .collect();
        Ok(vec![
            warn,
            by(&|i| i % 3 != 0),
            by(&|i| self.fail == 0 || i % self.fail != 0),
        ])
    }
}

fn orders_expecting() -> Arc<Dataset> {
    let mut d = Dataset::orders().as_ref().clone();
    let rule = |name: &str, on_fail| Rule {
        kind: RuleKind::Expectation(on_fail),
        name: name.into(),
        expression: format!("{name}(order_id)"),
    };
    d.expectations = vec![
        rule("odd", OnFail::Warn),
        rule("not_three", OnFail::Drop),
        rule("not_fail", OnFail::Fail),
    ];
    d.rules = d.expectations.clone();
    Arc::new(d)
}

proptest! {
    #[test]
    fn expectations_count_every_record_drop_theirs_and_fail_refuses_at_the_first_line(
        ids in prop::collection::vec((1i64..30, prop::bool::weighted(0.2)), 0..30),
        fail in prop_oneof![Just(0i64), 5i64..9],
    ) {
        let d = orders_expecting();
        let mut text = format!("{HEADER}\n");
        for (id, null_amount) in &ids {
            let amount = if *null_amount { "" } else { "1.00" };
            text.push_str(&format!("{id},c,new,{amount},EUR,,2026-10-01T00:00:00Z\n"));
        }
        let read = crate::read_changes(&d, text.as_bytes()).expect("reads");
        let got = apply(&d, text.as_bytes(), read, &Expectations { fail });
        // The model: every record checked; null fails `odd`.
        let odd = ids.iter().filter(|(i, n)| *n || i % 2 == 0).count() as u64;
        let three = ids.iter().filter(|(i, _)| i % 3 == 0).count() as u64;
        let first_fail = ids.iter().position(|(i, _)| fail != 0 && i % fail == 0);
        match (got, first_fail) {
            (Err(IngestError::Refused(refused)), Some(at)) => {
                let says = format!("line {} (the first to break it): expectation not_fail failed", at + 2);
                prop_assert!(refused.problem.starts_with(&says), "{}", refused.problem);
            }
            (Ok(checked), None) => {
                let n = ids.len() as u64;
                let counts: Vec<(u64, u64)> = checked.expectations.iter().map(|c| (c.checked, c.failed)).collect();
                prop_assert_eq!(counts, vec![(n, odd), (n, three), (n, 0)]);
                prop_assert_eq!(checked.rejects.len() as u64, three);
                prop_assert_eq!(checked.changes(), n - three);
                for r in &checked.rejects {
                    prop_assert_eq!(r.reason.to_string(), "expectation not_three failed: not_three(order_id)");
                }
            }
            (other, expected) => prop_assert!(false, "{other:?} against a first fail at {expected:?}"),
        }
    }
}
