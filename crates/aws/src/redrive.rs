//! `deltaload redrive` and `deltaload replay`: dead-letter messages sent back to
//! their queue, or saved messages fed straight through the handler.

use crate::enqueue::Enqueuer;
use crate::error::AwsError;
use crate::handler::Message;
use aws_sdk_sqs::types::DeleteMessageBatchRequestEntry;
use serde_json::Value;

/// Moves up to `max` messages from `dlq` to `queue` (their bodies unchanged), a
/// batch of 10 at a time: sent first, then deleted from the dead-letter queue.
/// Returns how many moved.
pub async fn redrive(
    sqs: &aws_sdk_sqs::Client,
    dlq: &str,
    queue: &str,
    max: Option<u64>,
) -> Result<u64, AwsError> {
    let err = |detail: String, source: Option<Box<dyn std::error::Error + Send + Sync>>| {
        AwsError::Queue {
            queue: dlq.to_string(),
            detail,
            source,
        }
    };
    let mut enqueuer = Enqueuer::new(sqs, queue, None);
    let mut moved = 0u64;
    while max.is_none_or(|m| moved < m) {
        let want = max.map_or(10, |m| (m - moved).min(10)) as i32;
        let received = sqs
            .receive_message()
            .queue_url(dlq)
            .max_number_of_messages(want)
            .wait_time_seconds(1)
            .send()
            .await
            .map_err(|e| {
                let detail = format!("receive failed: {}", crate::error::describe(&e));
                err(detail, Some(Box::new(e)))
            })?;
        let messages = received.messages();
        if messages.is_empty() {
            break;
        }
        let bodies: Vec<String> = messages
            .iter()
            .map(|m| m.body().unwrap_or_default().to_string())
            .collect();
        let sent = enqueuer.send(&bodies).await?;
        if sent.failed > 0 {
            // Nothing is deleted: the messages stay in the dead-letter queue.
            return Err(err(
                format!(
                    "{} message(s) could not be sent to {queue}; none of this batch was removed",
                    sent.failed
                ),
                None,
            ));
        }
        delete_moved(sqs, (dlq, queue), messages).await?;
        moved += messages.len() as u64;
    }
    Ok(moved)
}

/// Deletes from the dead-letter queue `dlq` the `messages` sent to `queue`.
async fn delete_moved(
    sqs: &aws_sdk_sqs::Client,
    (dlq, queue): (&str, &str),
    messages: &[aws_sdk_sqs::types::Message],
) -> Result<(), AwsError> {
    let entries = messages.iter().enumerate().filter_map(|(i, m)| {
        DeleteMessageBatchRequestEntry::builder()
            .id(i.to_string())
            .receipt_handle(m.receipt_handle()?)
            .build()
            .ok()
    });
    sqs.delete_message_batch()
        .queue_url(dlq)
        .set_entries(Some(entries.collect()))
        .send()
        .await
        .map_err(|e| AwsError::Queue {
            queue: dlq.to_string(),
            detail: format!(
                "sent to {queue} but not deleted (they may be loaded twice, which the ledger makes harmless): {}",
                crate::error::describe(&e)
            ),
            source: Some(Box::new(e)),
        })?;
    Ok(())
}

/// Reads saved messages: a Lambda `SqsEvent` (`Records` with `messageId`/`body`),
/// an SQS `ReceiveMessage` response (`Messages` with `MessageId`/`Body`, as the
/// AWS CLI prints it), or one message of either shape.
pub fn saved_messages(text: &str, origin: &str) -> Result<Vec<Message>, AwsError> {
    let bad = |detail: String| AwsError::Config(format!("{origin}: {detail}"));
    let value: Value = serde_json::from_str(text).map_err(|e| bad(format!("not JSON: {e}")))?;
    let list = value
        .get("Records")
        .or_else(|| value.get("Messages"))
        .and_then(Value::as_array)
        .cloned()
        .unwrap_or_else(|| vec![value.clone()]);
    list.iter()
        .enumerate()
        .map(|(i, m)| {
            let field = |a: &str, b: &str| m.get(a).or_else(|| m.get(b)).and_then(Value::as_str);
            let body = field("body", "Body").ok_or_else(|| {
                bad(format!(
                    "message {i} has no body; expected an SqsEvent, a ReceiveMessage response or one message"
                ))
            })?;
            Ok(Message {
                id: field("messageId", "MessageId")
                    .map_or_else(|| format!("{origin}#{i}"), str::to_string),
                body: body.to_string(),
            })
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn saved_messages_of_every_shape() {
        let event = r#"{"Records":[{"messageId":"a","body":"x"},{"messageId":"b","body":"y"}]}"#;
        let ids: Vec<String> = saved_messages(event, "f")
            .unwrap()
            .into_iter()
            .map(|m| m.id)
            .collect();
        assert_eq!(ids, ["a", "b"]);
        let cli = r#"{"Messages":[{"MessageId":"c","ReceiptHandle":"r","Body":"z"}]}"#;
        assert_eq!(saved_messages(cli, "f").unwrap()[0].body, "z");
        let one = r#"{"Body":"w"}"#;
        assert_eq!(saved_messages(one, "f").unwrap()[0].id, "f#0");
        assert!(saved_messages(r#"{"Messages":[{"x":1}]}"#, "f").is_err());
        assert!(saved_messages("nope", "f").is_err());
    }
}
