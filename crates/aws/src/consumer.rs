//! `deltaload serve`: long-polls an SQS queue, hands each batch to the [`Handler`],
//! deletes exactly the messages that succeeded and leaves the others to come back.

use crate::error::AwsError;
use crate::handler::{BatchReport, Handler, Message};
use aws_sdk_sqs::types::{
    ChangeMessageVisibilityBatchRequestEntry, DeleteMessageBatchRequestEntry, QueueAttributeName,
};
use std::collections::HashSet;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

/// How `serve` polls.
#[derive(Debug, Clone)]
pub struct ServeOptions {
    /// The queue read.
    pub queue_url: String,
    /// Most messages loaded together, 1 to 10,000 (gathered over several
    /// receives of up to 10 each, as Lambda's batching does).
    pub batch_size: usize,
    /// Longest time spent filling a batch after its first message; with zero,
    /// a batch takes what the queue holds at once (receives that come back full).
    pub batching_window: std::time::Duration,
    /// Long-poll wait for a batch's first message, 0 to 20 seconds.
    pub wait_seconds: i32,
    /// Stop when a receive gets nothing.
    pub once: bool,
}

/// Polls until stopped (Ctrl-C after the batch in flight) or, with `once`, until
/// the queue is empty. Returns the figures of every batch.
pub async fn serve(
    handler: &Handler,
    sqs: &aws_sdk_sqs::Client,
    opts: &ServeOptions,
) -> Result<BatchReport, AwsError> {
    let stop = Arc::new(AtomicBool::new(false));
    let flag = stop.clone();
    tokio::spawn(async move {
        if tokio::signal::ctrl_c().await.is_ok() {
            eprintln!("stopping after the batch in flight");
            flag.store(true, Ordering::SeqCst);
        }
    });
    let visibility = visibility_timeout(sqs, &opts.queue_url).await?;
    let mut total = BatchReport::default();
    while !stop.load(Ordering::SeqCst) {
        let messages = gather(sqs, opts).await?;
        if messages.is_empty() {
            if opts.once {
                break;
            }
            continue;
        }
        let batch: Vec<Message> = messages
            .iter()
            .map(|m| Message {
                id: m.message_id.clone().unwrap_or_default(),
                body: m.body.clone().unwrap_or_default(),
            })
            .collect();
        // Keep the batch invisible while it loads, however long that takes.
        let report = tokio::select! {
            report = handler.handle(&batch) => report,
            never = keep_invisible(sqs, &opts.queue_url, &messages, visibility) => match never {},
        };
        #[cfg(feature = "faults")]
        if handler.fault() == Some(deltaload_lake::FaultPoint::BeforeDelete) {
            eprintln!("fault injected: BeforeDelete");
            std::process::abort();
        }
        let failures: HashSet<&str> = report.failures.iter().map(String::as_str).collect();
        let done: Vec<&aws_sdk_sqs::types::Message> = messages
            .iter()
            .filter(|m| !failures.contains(m.message_id.as_deref().unwrap_or_default()))
            .collect();
        delete(sqs, &opts.queue_url, &done).await?;
        total.absorb(report);
    }
    Ok(total)
}

/// The queue's visibility timeout in seconds (30 when it cannot be read).
async fn visibility_timeout(sqs: &aws_sdk_sqs::Client, queue_url: &str) -> Result<i32, AwsError> {
    let attr = QueueAttributeName::VisibilityTimeout;
    let attrs = sqs
        .get_queue_attributes()
        .queue_url(queue_url)
        .attribute_names(attr.clone())
        .send()
        .await
        .map_err(|e| AwsError::Queue {
            queue: queue_url.to_string(),
            detail: format!(
                "cannot read the queue's attributes: {}; check the URL and the credentials",
                crate::error::describe(&e)
            ),
            source: Some(Box::new(e)),
        })?;
    Ok(attrs
        .attributes()
        .and_then(|a| a.get(&attr))
        .and_then(|v| v.parse().ok())
        .unwrap_or(30))
}

/// Extends the messages' visibility every half timeout; never returns (drop it,
/// or let a `select!` end it, when the batch is done).
pub async fn keep_invisible(
    sqs: &aws_sdk_sqs::Client,
    queue_url: &str,
    messages: &[aws_sdk_sqs::types::Message],
    visibility: i32,
) -> std::convert::Infallible {
    let period = std::time::Duration::from_secs((visibility.max(2) / 2) as u64);
    loop {
        tokio::time::sleep(period).await;
        // SQS takes at most 10 entries per batch request.
        for chunk in messages.chunks(SQS_BATCH) {
            let entries: Vec<ChangeMessageVisibilityBatchRequestEntry> = chunk
                .iter()
                .enumerate()
                .filter_map(|(i, m)| {
                    ChangeMessageVisibilityBatchRequestEntry::builder()
                        .id(i.to_string())
                        .set_receipt_handle(m.receipt_handle.clone())
                        .visibility_timeout(visibility)
                        .build()
                        .ok()
                })
                .collect();
            let sent = sqs
                .change_message_visibility_batch()
                .queue_url(queue_url)
                .set_entries(Some(entries))
                .send()
                .await;
            match sent {
                Ok(_) => tracing::debug!(seconds = visibility, "batch visibility extended"),
                Err(e) => {
                    tracing::warn!(error = %crate::error::describe(&e), "cannot extend the batch's visibility")
                }
            }
        }
    }
}

/// The most entries one SQS receive, delete or visibility request takes.
const SQS_BATCH: usize = 10;

/// Receives one batch: waits up to `wait_seconds` for a first message, then
/// keeps receiving until `batch_size` messages, for at most the batching
/// window; with no window, while receives come back full.
async fn gather(
    sqs: &aws_sdk_sqs::Client,
    opts: &ServeOptions,
) -> Result<Vec<aws_sdk_sqs::types::Message>, AwsError> {
    let wanted = opts.batch_size.clamp(1, 10_000);
    let mut messages = receive(sqs, opts, wanted, opts.wait_seconds).await?;
    let until = std::time::Instant::now() + opts.batching_window;
    let mut last = messages.len();
    while last > 0 && messages.len() < wanted {
        let left = until.saturating_duration_since(std::time::Instant::now());
        if left.is_zero() && last < SQS_BATCH {
            break;
        }
        // SQS waits whole seconds: the window is rounded up.
        let wait = left.as_secs_f64().ceil() as i32;
        let more = receive(sqs, opts, wanted - messages.len(), wait).await?;
        last = more.len();
        messages.extend(more);
    }
    Ok(messages)
}

/// One receive of up to `wanted` (at most 10) messages.
async fn receive(
    sqs: &aws_sdk_sqs::Client,
    opts: &ServeOptions,
    wanted: usize,
    wait_seconds: i32,
) -> Result<Vec<aws_sdk_sqs::types::Message>, AwsError> {
    let received = sqs
        .receive_message()
        .queue_url(&opts.queue_url)
        .max_number_of_messages(wanted.min(SQS_BATCH) as i32)
        .wait_time_seconds(wait_seconds.clamp(0, 20))
        .send()
        .await
        .map_err(|e| AwsError::Queue {
            queue: opts.queue_url.clone(),
            detail: format!("receive failed: {}", crate::error::describe(&e)),
            source: Some(Box::new(e)),
        })?;
    Ok(received.messages.unwrap_or_default())
}

/// Deletes the messages that were processed, 10 per request.
async fn delete(
    sqs: &aws_sdk_sqs::Client,
    queue_url: &str,
    done: &[&aws_sdk_sqs::types::Message],
) -> Result<(), AwsError> {
    for (n, chunk) in done.chunks(SQS_BATCH).enumerate() {
        let entries: Vec<DeleteMessageBatchRequestEntry> = chunk
            .iter()
            .enumerate()
            .filter_map(|(i, m)| {
                // Numbered across the batch, so a failed entry names one message.
                DeleteMessageBatchRequestEntry::builder()
                    .id((n * SQS_BATCH + i).to_string())
                    .set_receipt_handle(m.receipt_handle.clone())
                    .build()
                    .ok()
            })
            .collect();
        let deleted = sqs
            .delete_message_batch()
            .queue_url(queue_url)
            .set_entries(Some(entries))
            .send()
            .await
            .map_err(|e| AwsError::Queue {
                queue: queue_url.to_string(),
                detail: format!("delete failed: {}", crate::error::describe(&e)),
                source: Some(Box::new(e)),
            })?;
        for failed in deleted.failed() {
            // The message comes back after its visibility timeout; the ledger skips it then.
            tracing::warn!(entry = %failed.id(), code = %failed.code(), "a processed message could not be deleted");
        }
    }
    Ok(())
}
