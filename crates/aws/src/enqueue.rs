//! Messages sent to a queue, 10 per `SendMessageBatch`, at a bounded rate.

use crate::error::AwsError;
use aws_sdk_sqs::types::SendMessageBatchRequestEntry;
use std::time::{Duration, Instant};

/// Sends message bodies to one queue.
pub struct Enqueuer<'a> {
    sqs: &'a aws_sdk_sqs::Client,
    queue_url: &'a str,
    /// Messages per second at most; `None` for no limit.
    rate: Option<u32>,
    started: Instant,
    sent: u64,
}

/// What a send did.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Sent {
    /// Messages sent.
    pub sent: u64,
    /// Messages SQS did not take.
    pub failed: u64,
}

impl<'a> Enqueuer<'a> {
    /// A sender to `queue_url`, at most `rate` messages a second when given.
    pub fn new(sqs: &'a aws_sdk_sqs::Client, queue_url: &'a str, rate: Option<u32>) -> Self {
        Self {
            sqs,
            queue_url,
            rate: rate.filter(|r| *r > 0),
            started: Instant::now(),
            sent: 0,
        }
    }

    /// Sends the bodies in batches of 10; entries SQS refuses are counted as
    /// failed (and logged), a call that fails as a whole is an error.
    pub async fn send(&mut self, bodies: &[String]) -> Result<Sent, AwsError> {
        let mut total = Sent::default();
        for chunk in bodies.chunks(10) {
            self.pace(chunk.len() as u64).await;
            let entries = chunk
                .iter()
                .enumerate()
                .map(|(i, body)| {
                    SendMessageBatchRequestEntry::builder()
                        .id(i.to_string())
                        .message_body(body)
                        .build()
                })
                .collect::<Result<Vec<_>, _>>()
                .map_err(|e| self.error(e.to_string(), Box::new(e)))?;
            let out = self
                .sqs
                .send_message_batch()
                .queue_url(self.queue_url)
                .set_entries(Some(entries))
                .send()
                .await
                .map_err(|e| {
                    self.error(
                        format!("send failed: {}", crate::error::describe(&e)),
                        Box::new(e),
                    )
                })?;
            for failed in out.failed() {
                tracing::warn!(code = failed.code(), reason = ?failed.message(), "message not enqueued");
            }
            let failed = out.failed().len() as u64;
            total.failed += failed;
            total.sent += chunk.len() as u64 - failed;
            self.sent += chunk.len() as u64;
        }
        Ok(total)
    }

    /// Waits until sending `next` more messages keeps within the rate.
    async fn pace(&self, next: u64) {
        let Some(rate) = self.rate else { return };
        let due = Duration::from_secs_f64((self.sent + next) as f64 / f64::from(rate));
        let ahead = due.saturating_sub(self.started.elapsed());
        if !ahead.is_zero() {
            tokio::time::sleep(ahead).await;
        }
    }

    fn error(&self, detail: String, source: Box<dyn std::error::Error + Send + Sync>) -> AwsError {
        AwsError::Queue {
            queue: self.queue_url.to_string(),
            detail,
            source: Some(source),
        }
    }
}
