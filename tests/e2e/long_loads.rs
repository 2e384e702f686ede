//! A load that holds its thread for several visibility timeouts (as parsing a
//! large file does, without yielding) keeps its message from every other
//! consumer: `serve` extends the visibility on a task of its own.

use deltaload_tests::localstack::Stack;
use deltaload_tests::{stderr, stdout, DAY1};
use std::time::{Duration, Instant};

const EXE: &str = env!("CARGO_BIN_EXE_deltaload-faulty");

/// Waits until the queue holds exactly one message and it is in flight
/// (received by the consumer under test, not yet deleted).
async fn wait_until_in_flight(stack: &Stack) {
    use aws_sdk_sqs::types::QueueAttributeName as Name;
    let deadline = Instant::now() + Duration::from_secs(60);
    while Instant::now() < deadline {
        let attr =
            |name| deltaload_tests::localstack::queue_attribute(&stack.sqs, &stack.queue_url, name);
        let visible = attr(Name::ApproximateNumberOfMessages).await;
        let in_flight = attr(Name::ApproximateNumberOfMessagesNotVisible).await;
        if visible.as_deref() == Some("0") && in_flight.as_deref() == Some("1") {
            return;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    panic!("serve never received the message within 60 s");
}

#[tokio::test(flavor = "multi_thread")]
async fn a_load_longer_than_the_visibility_timeout_is_never_delivered_to_a_second_consumer() {
    // A visibility timeout of 2 s; the load stalls its thread for 8 s.
    let stack = Stack::new(5, 2).await;
    stack.put("in/day1.csv", DAY1).await;
    stack.wait_for_messages(1).await;
    let lake = stack.lake();
    let args = stack.serve_args(&lake, "5", &["--log", "deltaload_aws=info"]);
    let mut serve = stack.spawn_fault(EXE, &args, "stall-after-read");
    wait_until_in_flight(&stack).await;
    // A second consumer receives over and over while the load runs.
    let mut seen = 0;
    while serve.try_wait().expect("serve's status").is_none() {
        let received = stack
            .sqs
            .receive_message()
            .queue_url(&stack.queue_url)
            .wait_time_seconds(1)
            .send()
            .await
            .expect("receive");
        seen += received.messages().len();
    }
    let out = serve.wait_with_output().expect("serve's output");
    let err = stderr(&out);
    assert_eq!(out.status.code(), Some(0), "{err}");
    assert!(err.contains("fault injected: the thread stalls"), "{err}");
    assert_eq!(
        seen, 0,
        "a second consumer got the message during the load:\n{err}"
    );
    // The extender ran during the stall: one extension a second for 8 s.
    let extensions: u32 = err
        .lines()
        .filter_map(|l| l.split("extensions=").nth(1))
        .filter_map(|n| n.split_whitespace().next()?.parse::<u32>().ok())
        .sum();
    assert!(extensions >= 4, "{extensions} extensions:\n{err}");
    assert!(
        stdout(&out).starts_with("1 messages, 1 files loaded"),
        "{}",
        stdout(&out)
    );
    assert_eq!(
        stack.pending(&stack.queue_url).await,
        0,
        "deleted once loaded"
    );
}
