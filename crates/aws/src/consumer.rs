//! `deltaload serve`: long-polls an SQS queue, hands each batch to the [`Handler`],
//! deletes exactly the messages that succeeded and leaves the others to come back.

use crate::error::AwsError;
use crate::handler::{BatchReport, Handler, Message};
use aws_sdk_sqs::types::{
    ChangeMessageVisibilityBatchRequestEntry, DeleteMessageBatchRequestEntry, QueueAttributeName,
};
use std::collections::HashSet;
use std::sync::atomic::{AtomicBool, AtomicU32, Ordering};
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
        let received = std::time::Instant::now();
        let messages = gather(sqs, opts).await?;
        let receive_ms = received.elapsed().as_millis() as u64;
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
        // Keep the batch invisible while it loads, however long that takes:
        // the extender runs on a task of its own, and the load where its
        // CPU-bound parts cannot hold up the runtime's workers.
        let receipts = messages
            .iter()
            .filter_map(|m| m.receipt_handle.clone())
            .collect();
        let extender = Extender::start(sqs, &opts.queue_url, receipts, visibility);
        let report = off_the_workers(handler.handle(&batch)).await;
        let extensions = extender.stop();
        if extensions > 0 {
            tracing::info!(
                extensions,
                "the batch's visibility was extended while it loaded"
            );
        }
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
        let deleting = std::time::Instant::now();
        delete(sqs, &opts.queue_url, &done).await?;
        tracing::debug!(
            receive_ms,
            delete_ms = deleting.elapsed().as_millis() as u64,
            messages = messages.len(),
            "batch received and deleted"
        );
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

/// Runs `load` to its end on the calling thread with the runtime's
/// context, outside its worker threads (on a multi-thread runtime): however
/// long its CPU-bound parts (parsing, sorting, writing Parquet) hold the
/// thread without yielding, the runtime's other tasks, the visibility
/// extender among them, go on running.
pub async fn off_the_workers<F: std::future::Future>(load: F) -> F::Output {
    let handle = tokio::runtime::Handle::current();
    match handle.runtime_flavor() {
        // One thread runs every task: nothing could run beside the load.
        tokio::runtime::RuntimeFlavor::CurrentThread => load.await,
        _ => tokio::task::block_in_place(|| handle.block_on(load)),
    }
}

/// The visibility extender of a batch in flight: a task of its own that
/// extends the messages' visibility every half timeout until stopped.
pub struct Extender {
    task: tokio::task::JoinHandle<std::convert::Infallible>,
    extended: Arc<AtomicU32>,
}

impl Extender {
    /// Starts extending the visibility of the messages with these receipt
    /// handles, `visibility` seconds at a time.
    pub fn start(
        sqs: &aws_sdk_sqs::Client,
        queue_url: &str,
        receipts: Vec<String>,
        visibility: i32,
    ) -> Self {
        let extended = Arc::new(AtomicU32::new(0));
        let task = tokio::spawn(keep_invisible(
            sqs.clone(),
            queue_url.to_string(),
            receipts,
            visibility,
            extended.clone(),
        ));
        Self { task, extended }
    }

    /// Stops extending; returns how many extensions were sent.
    pub fn stop(self) -> u32 {
        self.task.abort();
        self.extended.load(Ordering::SeqCst)
    }
}

impl Drop for Extender {
    fn drop(&mut self) {
        self.task.abort();
    }
}

/// Extends the messages' visibility every half timeout, counting the
/// extensions sent in `extended`; never returns (abort its task when the
/// batch is done).
async fn keep_invisible(
    sqs: aws_sdk_sqs::Client,
    queue_url: String,
    receipts: Vec<String>,
    visibility: i32,
    extended: Arc<AtomicU32>,
) -> std::convert::Infallible {
    let period = std::time::Duration::from_secs((visibility.max(2) / 2) as u64);
    loop {
        tokio::time::sleep(period).await;
        // SQS takes at most 10 entries per batch request.
        for chunk in receipts.chunks(SQS_BATCH) {
            let entries: Vec<ChangeMessageVisibilityBatchRequestEntry> = chunk
                .iter()
                .enumerate()
                .filter_map(|(i, receipt)| {
                    ChangeMessageVisibilityBatchRequestEntry::builder()
                        .id(i.to_string())
                        .receipt_handle(receipt)
                        .visibility_timeout(visibility)
                        .build()
                        .ok()
                })
                .collect();
            let sent = sqs
                .change_message_visibility_batch()
                .queue_url(&queue_url)
                .set_entries(Some(entries))
                .send()
                .await;
            match sent {
                Ok(_) => {
                    extended.fetch_add(1, Ordering::SeqCst);
                    tracing::debug!(seconds = visibility, "batch visibility extended")
                }
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
