//! The keyed upsert: deltaload's own MERGE of a round's changes into a
//! dataset's table, built on deltalake's public pieces, with delta-rs's MERGE
//! as the fallback for table features it does not write.
//!
//! 1. The target files whose key statistics may hold a changed key are
//!    listed (files without statistics count); the others are not read.
//! 2. Their key and sequence columns are read (the tie-break columns only of
//!    a file where sequences tie) and each change meets the row of its key:
//!    [`deltaload_engine::decide`] says update, stale or delete (the rule of the MERGE's
//!    clauses). A key found in two rows stops the load before anything is
//!    committed.
//! 3. Only the files where a row changes are read whole and rewritten, a
//!    group of files at a time ([`rewrite`]); their rows and the inserted
//!    keys are written sorted by key in files of about
//!    [`crate::table::ORDERS_FILE_BYTES`], so files stay range-disjoint ([`edges`]
//!    places an insert among the groups by key).
//! 4. One commit removes the rewritten files and adds the new ones, as a MERGE
//!    whose read predicate covers the changed keys' ranges: a concurrent
//!    writer there conflicts, one elsewhere does not. Nothing changes, no commit.
//!
//! With `merge_on_read`, step 3 keeps a changed file and marks its changed
//! rows deleted in a deletion vector ([`deletions`]), appending their new
//! versions. `tests/e2e/upsert_engines.rs` proves it equal to delta-rs's MERGE.

mod aligned;
pub(crate) mod commit;
mod deletions;
mod dv;
mod edges;
mod feed;
mod files;
mod meet;
mod read;
mod rewrite;
mod rows_out;
mod sliced;

use crate::table::error::LakeError;
use crate::write::merge::MergedFile;
use crate::write::{Engine, Made, Writer};
pub(crate) use aligned::{align, arrow_schema, positions};
pub(crate) use commit::{append, commit, commit_actions, write_files, Replacement};
pub(crate) use deletions::{allow_deletion_vectors, marked};
use deltaload_core::MergeCounts;
use deltaload_engine::changes::Changes;
use deltaload_engine::{Action, Met};
pub(crate) use files::{candidates, delta_error, stats_prefix, unsupported, KeyBounds, TargetFile};
pub(crate) use read::{read_columns, read_files};
pub(crate) use sliced::InMemory;

/// A keyed upsert in one piece's files: those read, skipped by their
/// statistics, rewritten and read again.
fn files_met(
    scanned: usize,
    skipped: u64,
    rewritten: usize,
    reread: u64,
) -> crate::write::OrdersFiles {
    crate::write::OrdersFiles {
        scanned: scanned as u64,
        skipped,
        rewritten: rewritten as u64,
        added: 0,
        reread,
    }
}

/// A debug event per step of a keyed upsert, with the time since this call
/// and the peak memory (read, from a file, only when the event is logged).
fn laps() -> impl Fn(&str) + Sync {
    let started = std::time::Instant::now();
    move |phase: &str| {
        let elapsed_ms = started.elapsed().as_millis() as u64;
        let peak_mib = deltaload_ingest::peak_mib;
        tracing::debug!(
            phase,
            elapsed_ms,
            peak_mib = peak_mib(),
            "keyed upsert step"
        )
    }
}

impl Writer<'_> {
    /// Writes changes into the dataset's table as [`Writer::merge_target`]
    /// does, with the keyed upsert when the table allows it.
    pub(crate) async fn upsert_target(
        &mut self,
        changes: &Changes<'_>,
        files: &[MergedFile<'_>],
        loaded_at: i64,
    ) -> Result<(MergeCounts, Made), LakeError> {
        self.upsert_marked(changes, files, loaded_at, &mut None)
            .await
    }

    /// [`Writer::upsert_target`], with a snapshot's high-water `mark` for the
    /// keyed upsert's commit to set (taken when it commits).
    pub(crate) async fn upsert_marked(
        &mut self,
        changes: &Changes<'_>,
        files: &[MergedFile<'_>],
        loaded_at: i64,
        mark: &mut Option<String>,
    ) -> Result<(MergeCounts, Made), LakeError> {
        if changes.is_empty() {
            return Ok((MergeCounts::default(), Made::default()));
        }
        let dataset = self.set.dataset.clone();
        if dataset.change_data_feed {
            self.enable_change_data_feed().await?;
        }
        if let Some(reason) = self.merge_reason()? {
            tracing::debug!(table = %dataset.name, reason, "writing with delta-rs's MERGE");
            return self.merge_target(changes, files, loaded_at).await;
        }
        if dataset.merge_on_read {
            self.enable_deletion_vectors().await?;
        }
        self.keyed_upsert(changes, files, loaded_at, mark).await
    }

    /// The keyed upsert of [`Writer::upsert_target`]: the candidate files met
    /// with the changes, then the changed files' rows and the inserts
    /// written and committed in one piece, or by slices beyond the memory
    /// budget.
    async fn keyed_upsert(
        &mut self,
        changes: &Changes<'_>,
        files: &[MergedFile<'_>],
        loaded_at: i64,
        mark: &mut Option<String>,
    ) -> Result<(MergeCounts, Made), LakeError> {
        let dataset = self.set.dataset.clone();
        let label = dataset.name.clone();
        let bounds = KeyBounds::of_column(changes.column(dataset.keys[0]));
        let key = &dataset.columns[dataset.keys[0]].name;
        let table = &self.set.target;
        let (candidates, skipped) =
            files::candidates(table, key, &bounds, files::stats_prefix(table))
                .await
                .map_err(files::delta_error(table, &label))?;
        self.tally.writes.keyed += 1;
        let lap = laps();
        let aligned = align(table, &dataset, changes, loaded_at, &label)?;
        lap("aligned");
        let met = self.meet(&aligned, &candidates).await?;
        lap("met");
        let rewritten = met.rewritten();
        if let Some(rows) = self.slice_rows_beyond_budget(&candidates, &rewritten, &aligned, &label)
        {
            let changes = aligned.changes;
            let slices = &mut InMemory {
                changes,
                at: 0,
                rows,
            };
            let (counts, made, _) = self.upsert_sliced(slices, files, mark).await?;
            return Ok((counts, made));
        }
        let inserted = met.inserted(&aligned);
        let counts = count(&met, inserted.len());
        let stats = files_met(candidates.len(), skipped, rewritten.len(), met.reread);
        if rewritten.is_empty() && inserted.is_empty() {
            self.count_files(&label, stats, "keyed upsert");
            return Ok((counts, Made::default()));
        }
        let outcome = rows_out::Outcome {
            met: &met,
            candidates: &candidates,
            rewritten: &rewritten,
            inserted: &inserted,
        };
        let (replacement, groups) = self.replacement(&aligned, &outcome, (&label, &lap)).await?;
        self.tally.writes.groups += groups;
        let replacement = commit::Replacement {
            predicate: bounds.predicate(key),
            metadata: metadata(files, counts),
            ..replacement
        };
        let what = (label.as_str(), "keyed upsert");
        let version = (self.commit_keyed(replacement, stats, what, mark)).await?;
        lap("committed");
        let made = Made {
            commit: version,
            unchecked: false,
        };
        Ok((counts, made))
    }

    /// What a keyed upsert in one piece commits, but its predicate and
    /// metadata: copy-on-write, the rewritten files' rows and the inserts
    /// written by groups ([`Writer::rewrite_met`]); merge-on-read, the changed
    /// rows' new versions and the deletion vectors marking the old ones.
    async fn replacement(
        &self,
        aligned: &deltaload_engine::Aligned,
        outcome: &rows_out::Outcome<'_>,
        (label, lap): (&str, &(dyn Fn(&str) + Sync)),
    ) -> Result<(commit::Replacement, u64), LakeError> {
        let dataset = &self.set.dataset;
        let store = self.set.target.object_store();
        let (appended, (written, groups)) = match dataset.merge_on_read {
            false => {
                let sources = (outcome.candidates, outcome.met);
                let written = self.rewrite_met(aligned, sources, outcome.inserted);
                (None, written.await?)
            }
            true => {
                let rows =
                    rows_out::rows_out(store.clone(), dataset, aligned, outcome, (label, lap));
                (Some(rows.await?), (Vec::new(), 0))
            }
        };
        lap("written");
        let cdc = self.feed(aligned, outcome, appended.as_ref(), label);
        let cdc = cdc.await?;
        let rows = appended.map(|a| a.rows);
        let (removes, kept, dv_file) =
            rows_out::removed(&store, dataset.merge_on_read, outcome, label).await?;
        let replacement = commit::Replacement {
            rows,
            written,
            removes,
            kept,
            dv_file,
            cdc,
            predicate: None,
            metadata: serde_json::Value::Null,
            app: None,
        };
        Ok((replacement, groups))
    }

    /// Why the dataset's table is written with delta-rs's MERGE (`None`: the
    /// keyed upsert writes it).
    pub(crate) fn merge_reason(&self) -> Result<Option<String>, LakeError> {
        let table = &self.set.target;
        match self.settings.engine {
            Engine::Merge => Ok(Some("the MERGE engine was chosen".to_string())),
            Engine::Keyed => {
                files::unsupported(table).map_err(files::delta_error(table, &self.set.dataset.name))
            }
        }
    }

    /// The rows per slice of keys when rewriting the files a load changes,
    /// with its changes, does not fit in the memory budget (`None`: it fits).
    fn slice_rows_beyond_budget(
        &self,
        candidates: &[files::TargetFile],
        rewritten: &[usize],
        aligned: &deltaload_engine::Aligned,
        label: &str,
    ) -> Option<usize> {
        let rewrite_bytes: u64 = rewritten
            .iter()
            .map(|&f| candidates[f].add.size.max(0) as u64)
            .sum();
        let change_bytes = aligned.changes.get_array_memory_size() as u64;
        if self
            .settings
            .budget
            .fits_rewrite(rewrite_bytes, change_bytes)
        {
            return None;
        }
        tracing::info!(
            table = %label,
            rewrite_bytes,
            change_bytes,
            budget = ?self.settings.budget.bytes,
            "the rewrite does not fit in the memory budget: upserting by slices of keys"
        );
        let row_bytes = change_bytes / (aligned.changes.num_rows().max(1) as u64);
        Some(self.settings.budget.slice_rows(row_bytes))
    }

    /// Commits a keyed upsert's replacement to the dataset's table, with a
    /// snapshot's `mark` when there is one (taken), and counts its files
    /// (logged as `what`); the new version, if one was committed.
    async fn commit_keyed(
        &mut self,
        replacement: commit::Replacement,
        stats: crate::write::OrdersFiles,
        (label, what): (&str, &str),
        mark: &mut Option<String>,
    ) -> Result<Option<u64>, LakeError> {
        let before = self.set.target.version();
        let table = &self.set.target;
        let mark = mark.take();
        let sizes = (crate::table::ORDERS_FILE_BYTES, mark);
        let (table, added) = commit::commit(table, replacement, sizes, label).await?;
        self.set.target = table;
        self.count_files(label, crate::write::OrdersFiles { added, ..stats }, what);
        let after = self.set.target.version();
        Ok((after != before).then_some(after).flatten())
    }

    /// Adds a write's file figures to the lake's totals and logs them, as `what`.
    pub(crate) fn count_files(
        &mut self,
        label: &str,
        files: crate::write::OrdersFiles,
        what: &str,
    ) {
        let total = &mut self.tally.orders_files;
        total.scanned += files.scanned;
        total.skipped += files.skipped;
        total.rewritten += files.rewritten;
        total.added += files.added;
        total.reread += files.reread;
        tracing::debug!(
            table = %label,
            files_scanned = files.scanned,
            files_skipped = files.skipped,
            files_added = files.added,
            files_removed = files.rewritten,
            files_reread = files.reread,
            "{what}"
        );
    }
}

/// The figures of the decisions: a key met and newer updated, a delete met
/// deleted, `inserted` keys not met (a delete of an unknown key: nothing).
fn count(met: &Met, inserted: usize) -> MergeCounts {
    let mut counts = MergeCounts {
        inserted: inserted as u64,
        ..MergeCounts::default()
    };
    for hit in met.hits.iter().flatten() {
        match hit.2 {
            Action::Update => counts.updated += 1,
            Action::Delete => counts.deleted += 1,
            Action::Stale => {}
        }
    }
    counts
}

/// The commit metadata naming the loaded file versions, each with its
/// figures (a round of one file is given the upsert's own).
fn metadata(files: &[MergedFile<'_>], counts: MergeCounts) -> serde_json::Value {
    let named: Vec<serde_json::Value> = files
        .iter()
        .map(|f| {
            let counts = f.counts.or((files.len() == 1).then_some(counts));
            MergedFile { counts, ..*f }.to_json()
        })
        .collect();
    serde_json::json!({ "files": named })
}
