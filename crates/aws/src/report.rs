//! What a batch of messages did: the figures of the whole batch (the summary
//! line of `serve`) and per dataset (the metrics).

use deltaload_lake::LoadOutcome;
use std::collections::BTreeMap;

/// What a batch did.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct BatchReport {
    /// Ids of the messages to deliver again.
    pub failures: Vec<String>,
    /// Messages handled.
    pub messages: usize,
    /// Objects announced that no longer exist (acknowledged).
    pub missing: usize,
    /// Records of other events than object-created (acknowledged).
    pub ignored: usize,
    /// The figures of the whole batch: the sum of `by_dataset`'s.
    pub totals: DatasetFigures,
    /// The figures per dataset, for the metrics.
    pub by_dataset: BTreeMap<String, DatasetFigures>,
    /// Tables the Glue sync after the loads could not register; `None` when
    /// no sync ran (no Glue database, or nothing loaded).
    pub catalog_failed: Option<usize>,
    /// Per dataset and expectation, of the files loaded: the records that
    /// broke it, and of those the ones it dropped.
    pub expectations: BTreeMap<(String, String), ExpectationFigures>,
}

/// One expectation's figures in a batch.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct ExpectationFigures {
    /// Records that broke it.
    pub failed: u64,
    /// Of those, the ones it sent to the rejects (a `drop` expectation's).
    pub dropped: u64,
}

/// Declares [`DatasetFigures`] from its figures, each once: its field, and
/// its metric's name and unit when it is published. A new figure is one line.
macro_rules! figures {
    ($( $(#[$doc:meta])* $field:ident: $ty:ty $(=> $metric:literal $unit:literal)?, )*) => {
        /// One dataset's figures in a batch (of the files loaded: records and
        /// rows; of every file: loaded, skipped, refused).
        #[derive(Debug, Clone, Default, PartialEq, Eq)]
        pub struct DatasetFigures {
            $( $(#[$doc])* pub $field: $ty, )*
        }

        impl DatasetFigures {
            /// Adds another's figures to these.
            pub fn absorb(&mut self, other: &DatasetFigures) {
                $( self.$field += other.$field; )*
            }

            /// The published figures: metric name, unit and value, in order.
            #[allow(clippy::unnecessary_cast)]
            pub fn metrics(&self) -> Vec<(&'static str, &'static str, u64)> {
                vec![$( $( ($metric, $unit, self.$field as u64), )? )*]
            }
        }
    };
}

figures! {
    /// Files loaded.
    loaded: usize => "FilesLoaded" "Count",
    /// Files the ledger had loaded already.
    skipped: usize => "FilesSkipped" "Count",
    /// Files refused (contract, size, budget), read or unread.
    refused: usize => "FilesRefused" "Count",
    /// Records read.
    records: u64 => "RecordsRead" "Count",
    /// Records rejected.
    rejected: u64 => "RecordsRejected" "Count",
    /// Records that were not their key's newest change in the file.
    duplicates: u64,
    /// Rows inserted.
    inserted: u64 => "RowsInserted" "Count",
    /// Rows updated.
    updated: u64 => "RowsUpdated" "Count",
    /// Changes no newer than their row.
    stale: u64 => "RowsStale" "Count",
    /// Rows deleted.
    deleted: u64 => "RowsDeleted" "Count",
    /// Rows a snapshot deleted because it no longer holds their key.
    retired: u64 => "RowsRetired" "Count",
    /// Versions a history gained.
    opened: u64 => "VersionsOpened" "Count",
    /// Versions of a history closed (their end set or moved).
    closed: u64 => "VersionsClosed" "Count",
    /// Time spent loading, in milliseconds.
    load_ms: u64 => "LoadLatency" "Milliseconds",
    /// Load rounds run again after a commit conflict with another writer.
    retries: usize => "CommitRetries" "Count",
}

/// The metrics dimension of objects refused before they reached a dataset,
/// when the spec has several.
pub const UNROUTED: &str = "unrouted";

impl BatchReport {
    /// The summary line of `serve --once`: messages and files, then the figures
    /// of the files loaded (records = rejected + duplicates + inserted + updated
    /// + stale, + deleted when a file deleted rows).
    pub fn summary(&self) -> String {
        let t = &self.totals;
        let deleted = match (t.deleted, t.retired) {
            (0, 0) => String::new(),
            (n, 0) => format!(", {n} deleted"),
            (n, r) => format!(", {n} deleted, {r} retired"),
        };
        let deleted = match (t.opened, t.closed) {
            (0, 0) => deleted,
            (o, c) => format!("{deleted}; history: {o} versions opened, {c} closed"),
        };
        let catalog = match self.catalog_failed {
            Some(n) if n > 0 => format!("; {n} tables not registered in Glue"),
            _ => String::new(),
        };
        format!(
            "{} messages, {} files loaded, {} skipped, {} refused, {} missing, {} failed; \
             {} records: {} rejected, {} duplicates, {} inserted, {} updated, {} stale{}{}",
            self.messages,
            t.loaded,
            t.skipped,
            t.refused,
            self.missing,
            self.failures.len(),
            t.records,
            t.rejected,
            t.duplicates,
            t.inserted,
            t.updated,
            t.stale,
            deleted,
            catalog
        )
    }

    /// Adds another report's figures to this one.
    pub fn absorb(&mut self, other: BatchReport) {
        self.failures.extend(other.failures);
        self.messages += other.messages;
        self.missing += other.missing;
        self.ignored += other.ignored;
        self.totals.absorb(&other.totals);
        for (key, e) in other.expectations {
            let mine = self.expectations.entry(key).or_default();
            mine.failed += e.failed;
            mine.dropped += e.dropped;
        }
        self.catalog_failed = match (self.catalog_failed, other.catalog_failed) {
            (None, None) => None,
            (a, b) => Some(a.unwrap_or(0) + b.unwrap_or(0)),
        };
        for (name, figures) in &other.by_dataset {
            self.by_dataset
                .entry(name.clone())
                .or_default()
                .absorb(figures);
        }
    }

    /// Adds one dataset's figures to the batch's totals and to that dataset's.
    pub(crate) fn add(&mut self, dataset: &str, d: &DatasetFigures) {
        self.totals.absorb(d);
        self.by_dataset
            .entry(dataset.to_string())
            .or_default()
            .absorb(d);
    }

    /// Adds a failed message, once.
    pub(crate) fn fail(&mut self, id: &str) {
        if !self.failures.iter().any(|f| f == id) {
            self.failures.push(id.to_string());
        }
    }
}

/// Adds the expectations' figures of the files of `dataset` loaded.
pub(crate) fn tally_expectations(
    report: &mut BatchReport,
    dataset: &deltaload_core::Dataset,
    outcomes: &[LoadOutcome],
) {
    for outcome in outcomes {
        let LoadOutcome::Loaded(done) = outcome else {
            continue;
        };
        for (rule, count) in dataset.expectations.iter().zip(&done.expectations) {
            let key = (dataset.name.clone(), rule.name.clone());
            let e = report.expectations.entry(key).or_default();
            e.failed += count.failed;
            if rule.drops() {
                e.dropped += count.failed;
            }
        }
    }
}

pub(crate) fn tally(report: &mut BatchReport, dataset: &str, outcomes: &[LoadOutcome]) {
    let mut d = DatasetFigures::default();
    for outcome in outcomes {
        match outcome {
            LoadOutcome::Loaded(done) => {
                let f = done.figures;
                d.loaded += 1;
                d.records += f.records;
                d.rejected += f.rejected;
                d.duplicates += f.duplicates;
                d.inserted += f.inserted;
                d.updated += f.updated;
                d.stale += f.stale;
                d.deleted += f.deleted;
                d.retired += f.retired;
                d.opened += f.opened;
                d.closed += f.closed;
            }
            LoadOutcome::Skipped { .. } => d.skipped += 1,
            LoadOutcome::Refused(_) => d.refused += 1,
        }
    }
    report.add(dataset, &d);
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_dataset_s_figures_reach_the_totals_and_the_metrics_in_order() {
        let d = DatasetFigures {
            loaded: 2,
            refused: 1,
            records: 10,
            rejected: 3,
            duplicates: 1,
            inserted: 4,
            stale: 2,
            load_ms: 7,
            ..DatasetFigures::default()
        };
        let mut report = BatchReport::default();
        report.add("orders", &d);
        report.add("orders", &d);
        assert_eq!(report.totals.records, 20);
        assert_eq!(report.by_dataset["orders"], report.totals);
        // The names and their order: metrics.rs's EMF test.
        assert_eq!(d.metrics().len(), 14, "duplicates is not published");
        assert_eq!(d.metrics()[12], ("LoadLatency", "Milliseconds", 7));
    }
}
