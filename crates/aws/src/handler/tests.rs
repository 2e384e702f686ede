//! Unit tests of the batch handler.

use super::*;

#[test]
fn the_response_names_exactly_the_messages_to_deliver_again() {
    let report = BatchReport {
        failures: vec!["m2".into(), "m5".into()],
        messages: 6,
        ..BatchReport::default()
    };
    let ids: Vec<String> = batch_response(report)
        .batch_item_failures
        .into_iter()
        .map(|f| f.item_identifier)
        .collect();
    assert_eq!(ids, ["m2", "m5"]);
    let none = batch_response(BatchReport::default());
    assert!(
        none.batch_item_failures.is_empty(),
        "all succeeded: none again"
    );
}
