//! `serve` killed at every step of a batch, then the messages delivered again:
//! the tables end as one clean run leaves them.

use deltaload_tests::localstack::Stack;
use deltaload_tests::{lake_state, stderr, stdout, DAY1, HEADER};

const EXE: &str = env!("CARGO_BIN_EXE_deltaload-faulty");

const POINTS: [&str; 6] = [
    "after-read",
    "after-rejected",
    "after-orders",
    "after-reconciliation",
    "after-ledger",
    "before-delete",
];

/// Orders no seed file touches, and one reject, so that the figures of each file
/// do not depend on which of the two the queue delivers first.
fn other_day() -> String {
    format!(
        "{HEADER}2001,C1,placed,1.00,EUR,,2026-10-05T08:00:00\n\
         2002,C2,placed,2.00,EUR,,2026-10-05T08:00:00\n\
         2001,C1,shipped,1.00,EUR,,2026-10-05T09:00:00\n\
         2003,C3,placed,x,EUR,,2026-10-05T08:00:00\n"
    )
}

/// Uploads both files and waits for their notifications.
async fn stack_with_two_files() -> Stack {
    let stack = Stack::new(5, 2).await;
    stack.put("in/day1.csv", DAY1).await;
    stack.put("in/other.csv", other_day()).await;
    stack.wait_for_messages(2).await;
    stack
}

fn serve_args(stack: &Stack) -> Vec<String> {
    stack.serve_args(&stack.lake(), "1", &[])
}

async fn state(stack: &Stack) -> Vec<Vec<Vec<String>>> {
    lake_state(&stack.lake_root(), &stack.landing, "<landing>").await
}

#[tokio::test(flavor = "multi_thread")]
async fn serve_killed_at_any_step_then_redelivered_equals_a_clean_run() {
    let clean = stack_with_two_files().await;
    let args = serve_args(&clean);
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    let out = clean.cli(EXE, &args);
    assert!(
        stdout(&out).starts_with("2 messages, 2 files loaded"),
        "{}",
        stdout(&out)
    );
    let expected = state(&clean).await;

    for point in POINTS {
        let stack = stack_with_two_files().await;
        let args = serve_args(&stack);
        let args: Vec<&str> = args.iter().map(String::as_str).collect();
        let killed = stack.cli_fault(EXE, &args, point);
        assert!(
            stderr(&killed).contains("fault injected"),
            "{point}: {}",
            stderr(&killed)
        );
        // The messages come back after the 2 s visibility timeout.
        stack
            .serve_until_drained(10, point, || stack.cli(EXE, &args))
            .await;
        assert_eq!(
            state(&stack).await,
            expected,
            "{point}: tables differ from a clean run"
        );
        assert_eq!(stack.depth(&stack.dlq_url).await, 0, "{point}");
    }
}
