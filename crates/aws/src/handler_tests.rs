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

#[test]
fn a_panic_is_its_message_error_and_a_result_passes_through() {
    let panicked: Result<Result<u8, AwsError>, _> = std::panic::catch_unwind(|| panic!("bug"));
    assert!(matches!(settle(panicked), Err(AwsError::Panicked)));
    assert_eq!(settle::<u8>(Ok(Ok(3))).ok(), Some(3));
}
