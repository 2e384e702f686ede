//! A message that fails until its cause is fixed: it rests in the dead-letter
//! queue, `replay` loads it from a saved copy once fixed, `redrive` sends it back.

use crate::other_engines::{dedupe_orders, duplicate_order_1004};
use crate::serve_once;
use deltaload_lake::TableName;
use deltaload_tests::localstack::Stack;
use deltaload_tests::{stderr, stdout, Sandbox, DAY2};

const EXE: &str = env!("CARGO_BIN_EXE_deltaload-faulty");

#[tokio::test(flavor = "multi_thread")]
async fn a_poison_message_round_trips_through_replay_and_redrive_once_fixed() {
    let stack = Stack::new(1, 1).await;
    // The cause: another writer doubled order 1004, which day 2 changes.
    let sb = Sandbox::with_seed_files();
    sb.load(&sb.dir.path().join("raw/a.csv"), false).await;
    duplicate_order_1004(&sb);
    let lake = sb.lake_dir().display().to_string();
    stack.put("day2.csv", DAY2).await;
    let serve = || serve_once(&stack, &lake, "1", &[]);
    for _ in 0..5 {
        serve();
        if stack.depth(&stack.dlq_url).await == 1 {
            break;
        }
        stack
            .wait_visible_on(&[&stack.queue_url, &stack.dlq_url], 1)
            .await;
    }
    assert_eq!(
        stack.depth(&stack.dlq_url).await,
        1,
        "the message is dead-lettered"
    );

    // Save it as `aws sqs receive-message` prints it, and make it visible again.
    let received = stack
        .sqs
        .receive_message()
        .queue_url(&stack.dlq_url)
        .wait_time_seconds(1)
        .send()
        .await
        .expect("receive from the dead-letter queue");
    let message = &received.messages()[0];
    let id = message.message_id().unwrap_or_default().to_string();
    let saved = serde_json::json!({"Messages": [{
        "MessageId": id,
        "ReceiptHandle": message.receipt_handle(),
        "Body": message.body(),
    }]});
    let file = sb.dir.path().join("dead.json");
    std::fs::write(&file, saved.to_string()).expect("save the message");
    stack
        .sqs
        .change_message_visibility()
        .queue_url(&stack.dlq_url)
        .receipt_handle(message.receipt_handle().unwrap_or_default())
        .visibility_timeout(0)
        .send()
        .await
        .expect("visible again");

    let replay = |file: &std::path::Path| {
        stack.cli(EXE, &["replay", file.to_str().unwrap(), "--lake", &lake])
    };
    let failed = replay(&file);
    assert_eq!(failed.status.code(), Some(1), "{}", stderr(&failed));
    assert_eq!(
        stdout(&failed),
        format!("{{\"batchItemFailures\":[{{\"itemIdentifier\":\"{id}\"}}]}}\n")
    );
    dedupe_orders(&sb);
    let fixed = replay(&file);
    assert_eq!(fixed.status.code(), Some(0), "{}", stderr(&fixed));
    assert_eq!(stdout(&fixed), "{\"batchItemFailures\":[]}\n");
    let loaded = sb.rows(TableName::Ledger, "location, status").await;
    assert!(
        loaded
            .iter()
            .any(|r| r[0].ends_with("/day2.csv") && r[1] == "loaded"),
        "{loaded:?}"
    );

    let redrive = stack.cli(
        EXE,
        &[
            "redrive",
            "--dlq",
            &stack.dlq_url,
            "--queue",
            &stack.queue_url,
        ],
    );
    assert_eq!(redrive.status.code(), Some(0), "{}", stderr(&redrive));
    assert!(
        stdout(&redrive).starts_with("moved 1 message(s)"),
        "{}",
        stdout(&redrive)
    );
    assert_eq!(stack.depth(&stack.dlq_url).await, 0);
    let out = serve();
    assert_eq!(
        stdout(&out),
        "1 messages, 0 files loaded, 1 skipped, 0 refused, 0 missing, 0 failed; \
         0 records: 0 rejected, 0 duplicates, 0 inserted, 0 updated, 0 stale\n",
        "{}",
        stderr(&out)
    );
}
