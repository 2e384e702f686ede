//! What a batch of messages did: the figures of the whole batch (the summary
//! line of `serve`) and per dataset (the metrics).

use deltaload_lake::LoadOutcome;
use std::collections::BTreeMap;

/// What a batch did.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct BatchReport {
    /// Ids of the messages to deliver again.
    pub failures: Vec<String>,
    pub messages: usize,
    pub loaded: usize,
    pub skipped: usize,
    pub refused: usize,
    pub missing: usize,
    pub ignored: usize,
    /// Figures of the files loaded (not of those skipped or refused).
    pub records: u64,
    pub rejected: u64,
    pub duplicates: u64,
    pub inserted: u64,
    pub updated: u64,
    pub stale: u64,
    pub deleted: u64,
    /// Load rounds run again after a commit conflict with another writer.
    pub retries: usize,
    /// Time spent loading, in milliseconds.
    pub load_ms: u64,
    /// The figures per dataset, for the metrics.
    pub by_dataset: BTreeMap<String, DatasetFigures>,
}

/// One dataset's figures in a batch.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct DatasetFigures {
    pub loaded: usize,
    pub skipped: usize,
    pub refused: usize,
    pub records: u64,
    pub rejected: u64,
    pub duplicates: u64,
    pub inserted: u64,
    pub updated: u64,
    pub stale: u64,
    pub deleted: u64,
    pub retries: usize,
    pub load_ms: u64,
}

impl DatasetFigures {
    fn absorb(&mut self, o: &DatasetFigures) {
        self.loaded += o.loaded;
        self.skipped += o.skipped;
        self.refused += o.refused;
        self.records += o.records;
        self.rejected += o.rejected;
        self.duplicates += o.duplicates;
        self.inserted += o.inserted;
        self.updated += o.updated;
        self.stale += o.stale;
        self.deleted += o.deleted;
        self.retries += o.retries;
        self.load_ms += o.load_ms;
    }
}

/// The metrics dimension of objects refused before they reached a dataset,
/// when the spec has several.
pub const UNROUTED: &str = "unrouted";

impl BatchReport {
    /// The summary line of `serve --once`: messages and files, then the figures
    /// of the files loaded (records = rejected + duplicates + inserted + updated
    /// + stale, + deleted when a file deleted rows).
    pub fn summary(&self) -> String {
        let deleted = match self.deleted {
            0 => String::new(),
            n => format!(", {n} deleted"),
        };
        format!(
            "{} messages, {} files loaded, {} skipped, {} refused, {} missing, {} failed; \
             {} records: {} rejected, {} duplicates, {} inserted, {} updated, {} stale{}",
            self.messages,
            self.loaded,
            self.skipped,
            self.refused,
            self.missing,
            self.failures.len(),
            self.records,
            self.rejected,
            self.duplicates,
            self.inserted,
            self.updated,
            self.stale,
            deleted
        )
    }

    /// Adds another report's figures to this one.
    pub fn absorb(&mut self, other: BatchReport) {
        self.failures.extend(other.failures);
        self.messages += other.messages;
        self.loaded += other.loaded;
        self.skipped += other.skipped;
        self.refused += other.refused;
        self.missing += other.missing;
        self.ignored += other.ignored;
        self.records += other.records;
        self.rejected += other.rejected;
        self.duplicates += other.duplicates;
        self.inserted += other.inserted;
        self.updated += other.updated;
        self.stale += other.stale;
        self.deleted += other.deleted;
        self.retries += other.retries;
        self.load_ms += other.load_ms;
        for (name, figures) in &other.by_dataset {
            self.by_dataset
                .entry(name.clone())
                .or_default()
                .absorb(figures);
        }
    }

    /// Adds one dataset's figures to the batch's totals and to that dataset's.
    pub(crate) fn add(&mut self, dataset: &str, d: &DatasetFigures) {
        self.loaded += d.loaded;
        self.skipped += d.skipped;
        self.refused += d.refused;
        self.records += d.records;
        self.rejected += d.rejected;
        self.duplicates += d.duplicates;
        self.inserted += d.inserted;
        self.updated += d.updated;
        self.stale += d.stale;
        self.deleted += d.deleted;
        self.retries += d.retries;
        self.load_ms += d.load_ms;
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
            }
            LoadOutcome::Skipped { .. } => d.skipped += 1,
            LoadOutcome::Refused(_) => d.refused += 1,
        }
    }
    report.add(dataset, &d);
}
