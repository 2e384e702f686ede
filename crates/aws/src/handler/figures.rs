//! What a batch reports after its loads: each dataset's figures and its
//! expectations' tallied, the lake's tables registered in Glue, and the EMF
//! lines printed.

use super::Handler;
use crate::catalog::Synced;
use crate::report::{tally, BatchReport, DatasetFigures};
use deltaload_lake::LoadOutcome;
use std::time::{Duration, Instant};

impl Handler {
    /// Prints the batch's EMF lines, when asked; with one dataset, a line every
    /// batch, as a heartbeat.
    pub(super) fn publish(&self, report: &mut BatchReport) {
        if let ([only], true) = (self.spec.datasets.as_slice(), report.by_dataset.is_empty()) {
            report
                .by_dataset
                .insert(only.name.clone(), DatasetFigures::default());
        }
        if let Some(namespace) = &self.metrics {
            let now = chrono::Utc::now().timestamp_millis();
            for line in crate::metrics::emf_lines(namespace, report, now) {
                println!("{line}");
            }
        }
    }

    /// Adds the figures of dataset `ds`'s outcomes to the batch's.
    pub(super) fn tally(&self, report: &mut BatchReport, ds: usize, outcomes: &[LoadOutcome]) {
        let dataset = &self.spec.datasets[ds];
        tally(report, &dataset.name, outcomes);
        crate::report::tally_expectations(report, dataset, outcomes);
    }

    /// Registers the lake's tables in the Glue catalog, when there is one,
    /// within `left` (the invocation's time but its margin) when given: the
    /// tables it could not register (each logged; all of them when cut
    /// short), or `None`.
    pub(super) async fn sync_catalog(&self, left: Option<Duration>) -> Option<usize> {
        let catalog = self.catalog.as_ref()?;
        // A lake that could not be opened failed the loads already.
        let tables = self.lake.get().await.ok()?.catalog_tables();
        let (started, n) = (Instant::now(), tables.len());
        let sync = catalog.sync(tables);
        let synced = match left {
            None => sync.await,
            Some(left) => tokio::time::timeout(left, sync).await.unwrap_or_else(|_| {
                tracing::warn!(
                    tables = n,
                    "catalog sync cut short by the invocation's deadline; the next load tries again"
                );
                Synced {
                    failed: n,
                    ..Synced::default()
                }
            }),
        };
        tracing::debug!(
            catalog_ms = started.elapsed().as_millis() as u64,
            created = synced.created,
            updated = synced.updated,
            unchanged = synced.unchanged,
            remembered = synced.remembered,
            failed = synced.failed,
            "catalog synced"
        );
        Some(synced.failed)
    }
}
