//! What the function is invoked with: an SQS batch of S3 events (the event
//! source mapping's), or the scheduled maintenance event
//! ([`MAINTENANCE_EVENT`], sent by the template's schedule), which runs
//! `deltaload maintain` over the lake with its defaults: compaction,
//! checkpoints, vacuum and the tombstones' expiry. A compaction that loses
//! every attempt to the loads is skipped, not failed, and said in the logs
//! and in the `TablesSkipped` metric: the next run does it.

use crate::error::AwsError;
use crate::handler::Handler;
use aws_lambda_events::event::sqs::SqsEvent;
use deltaload_lake::{MaintainOptions, Maintained};
use serde_json::{json, Value};
use std::time::Instant;

/// An invocation's event as it arrives, before [`Invocation::of`] reads it.
pub type Event = Value;

/// The event the template's schedule sends: `{"deltaload": "maintain"}`.
pub const MAINTENANCE_EVENT: &str = r#"{"deltaload": "maintain"}"#;

/// An invocation's event.
#[derive(Debug)]
pub enum Invocation {
    /// An SQS batch of messages to load.
    Messages(SqsEvent),
    /// The scheduled maintenance of the lake.
    Maintain,
}

impl Invocation {
    /// The invocation `event` asks for; `Err` for an event of another shape.
    pub fn of(event: Value) -> Result<Self, AwsError> {
        if event.get("deltaload").and_then(Value::as_str) == Some("maintain") {
            return Ok(Self::Maintain);
        }
        if event.get("Records").is_some() {
            return serde_json::from_value(event)
                .map(Self::Messages)
                .map_err(|e| {
                    AwsError::Config(format!("an SQS event that does not read as one: {e}"))
                });
        }
        let keys: Vec<&String> = event
            .as_object()
            .map(|o| o.keys().collect())
            .unwrap_or_default();
        Err(AwsError::Config(format!(
            "an invocation that is neither an SQS batch (Records) nor the maintenance event \
             {MAINTENANCE_EVENT} (its keys: {keys:?}); invoke the function through its queue or \
             its schedule"
        )))
    }
}

impl Handler {
    /// Runs the invocation `event` until `deadline`: the SQS batch response,
    /// or what maintenance did per table.
    pub async fn invoke(&self, event: Value, deadline: Option<Instant>) -> Result<Value, AwsError> {
        match Invocation::of(event)? {
            Invocation::Messages(sqs) => {
                let response = self.respond_until(sqs, deadline).await;
                serde_json::to_value(response).map_err(|e| AwsError::Config(e.to_string()))
            }
            Invocation::Maintain => Ok(summary(&self.maintain().await?)),
        }
    }

    /// Maintains the lake's tables with `maintain`'s defaults, logging each
    /// table and publishing the figures when metrics are on.
    pub async fn maintain(&self) -> Result<Vec<Maintained>, AwsError> {
        let done = self
            .lake_mut()
            .await?
            .maintain(MaintainOptions::default())
            .await?;
        for m in &done {
            let skipped = skipped(m);
            tracing::info!(
                table = %m.table,
                files_before = m.files_before,
                files_after = m.files_after,
                files_compacted = m.files_removed,
                vacuumed = m.vacuumed,
                conflicts_retried = m.conflicts_retried,
                skipped,
                "{}",
                match skipped {
                    true => "table maintained in part: concurrent loads won every attempt, the next run does the rest",
                    false => "table maintained",
                }
            );
        }
        if let Some(namespace) = self.metrics_namespace() {
            println!(
                "{}",
                emf(namespace, &done, chrono::Utc::now().timestamp_millis())
            );
        }
        Ok(done)
    }
}

/// Whether loads won every attempt of a step of `m`'s maintenance (left
/// for the next run).
fn skipped(m: &Maintained) -> bool {
    m.compaction_skipped || m.expiry_skipped
}

/// What maintenance did, as the invocation's response.
fn summary(done: &[Maintained]) -> Value {
    let tables: Vec<Value> = done
        .iter()
        .map(|m| {
            json!({
                "table": m.table,
                "files_before": m.files_before,
                "files_after": m.files_after,
                "checkpoint": m.checkpoint,
                "vacuumed": m.vacuumed,
                "skipped": skipped(m),
            })
        })
        .collect();
    json!({ "maintained": tables })
}

/// The EMF line of a maintenance run: tables maintained, tables skipped in
/// part, data files compacted and vacuumed.
fn emf(namespace: &str, done: &[Maintained], timestamp_ms: i64) -> String {
    let skipped = done.iter().filter(|m| skipped(m)).count();
    let compacted: u64 = done.iter().map(|m| m.files_removed).sum();
    let vacuumed: usize = done.iter().map(|m| m.vacuumed).sum();
    let figures = [
        ("TablesMaintained", "Count", done.len() as u64),
        ("TablesSkipped", "Count", skipped as u64),
        ("FilesCompacted", "Count", compacted),
        ("FilesVacuumed", "Count", vacuumed as u64),
    ];
    crate::metrics::document(namespace, None, &figures, timestamp_ms)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_schedules_event_maintains_an_sqs_batch_loads_and_others_are_refused() {
        let maintain: Value = serde_json::from_str(MAINTENANCE_EVENT).unwrap();
        assert!(matches!(Invocation::of(maintain), Ok(Invocation::Maintain)));
        let batch = json!({"Records": [{"messageId": "m0", "body": "{}"}]});
        match Invocation::of(batch) {
            Ok(Invocation::Messages(e)) => assert_eq!(e.records.len(), 1),
            other => panic!("{other:?}"),
        }
        let other = Invocation::of(json!({"detail-type": "Scheduled Event"}));
        let said = other.expect_err("refused").to_string();
        assert!(
            said.contains("detail-type") && said.contains(MAINTENANCE_EVENT),
            "{said}"
        );
    }

    #[test]
    fn a_skipped_table_is_counted_in_the_metrics() {
        let done = [
            Maintained {
                table: "ledger".into(),
                files_removed: 40,
                ..Maintained::default()
            },
            Maintained {
                table: "orders".into(),
                compaction_skipped: true,
                ..Maintained::default()
            },
        ];
        let line: Value = serde_json::from_str(&emf("deltaload", &done, 1)).unwrap();
        assert_eq!(line["TablesMaintained"], 2);
        assert_eq!(line["TablesSkipped"], 1);
        assert_eq!(line["FilesCompacted"], 40);
        assert_eq!(summary(&done)["maintained"][1]["skipped"], true);
    }
}
