//! The keyed upsert a slice of keys at a time, for a load whose changes or
//! rewritten files do not fit in the memory budget. Each slice meets the
//! files as the slices before it left them (rewritten files written, not yet
//! committed) and rewrites the files where it changes a row, sorted by key;
//! on a merge-on-read table too (the rows are the same, the files rewritten).
//! Slices hold distinct keys, so this is the upsert of all of them at once.
//! One commit at the end removes the table's rewritten files and adds the new
//! files still current: crash recovery, ledger and figures are those of a load
//! in one piece. A new file rewritten by a later slice is never committed; it
//! is deleted.

use super::aligned::Aligned;
use super::files::{self, KeyBounds, TargetFile};
use super::{commit, count, metadata};
use crate::table::error::LakeError;
use crate::write::merge::MergedFile;
use crate::write::{Made, Writer};
use deltalake::arrow::record_batch::RecordBatch;
use deltalake::kernel::{Add, Remove};
use deltaload_core::MergeCounts;
use object_store::ObjectStoreExt as _;

/// Changes given a slice at a time, each slice's keys distinct from every other's.
pub(crate) trait Slices: Send {
    /// The next slice (rows of the table with the delete flag last); `None` when done.
    fn next_slice(&mut self, label: &str) -> Result<Option<RecordBatch>, LakeError>;
}

impl Slices for deltaload_engine::spill::Merge {
    fn next_slice(&mut self, label: &str) -> Result<Option<RecordBatch>, LakeError> {
        Ok(deltaload_engine::spill::Merge::next_slice(self, label)?)
    }
}

/// Changes held in memory, given in slices of `rows`.
pub(crate) struct InMemory {
    pub changes: RecordBatch,
    pub at: usize,
    pub rows: usize,
}

impl Slices for InMemory {
    fn next_slice(&mut self, _label: &str) -> Result<Option<RecordBatch>, LakeError> {
        if self.at >= self.changes.num_rows() {
            return Ok(None);
        }
        let len = self.rows.max(1).min(self.changes.num_rows() - self.at);
        let slice = self.changes.slice(self.at, len);
        self.at += len;
        Ok(Some(slice))
    }
}

/// A file of the table as the slices so far left it.
struct Staged {
    file: TargetFile,
    /// In the table (else written by an earlier slice, not committed).
    committed: bool,
}

/// The table's shape every slice must have: its columns, where the
/// dataset's columns are among them, and how its key statistics read.
struct Shape {
    schema: deltalake::arrow::datatypes::SchemaRef,
    position: Vec<usize>,
    key: String,
    key_at: usize,
    prefix: usize,
}

impl Shape {
    /// A slice as the table's rows, after checking that the table's columns
    /// are still those the changes were aligned on when read (a column added
    /// since, by another writer, would shift them).
    fn aligned(&self, changes: RecordBatch, label: &str) -> Result<Aligned, LakeError> {
        let names = |f: &deltalake::arrow::datatypes::FieldRef| f.name().clone();
        let expected = self.schema.fields().len();
        let same = changes.num_columns() == expected + 1
            && (changes.schema().fields().iter().take(expected))
                .map(names)
                .eq(self.schema.fields().iter().map(names));
        if !same {
            return Err(LakeError::Invariant {
                table: label.to_string(),
                detail: "the table's columns changed while the file was read (another writer \
                         evolved the schema); run the load again"
                    .to_string(),
            });
        }
        let (position, schema) = (self.position.clone(), self.schema.clone());
        Ok(Aligned {
            changes,
            position,
            schema,
        })
    }
}

/// What the slices of a keyed upsert by slices did, beside the files they
/// staged.
#[derive(Default)]
struct Sliced {
    counts: MergeCounts,
    /// The slices' feed files.
    cdc: Vec<deltalake::kernel::Action>,
    /// The keys of every slice, from the least to the greatest.
    span: Option<KeyBounds>,
    /// Changes given, and slices.
    given: u64,
    slices: u64,
}

/// The table's files as the slices so far left them, and the committed
/// files they replaced.
struct Staging {
    live: Vec<Staged>,
    removes: Vec<Remove>,
}

impl Staging {
    /// The table's committed files, none replaced yet.
    fn of(files: Vec<TargetFile>) -> Self {
        let live = (files.into_iter())
            .map(|file| Staged {
                file,
                committed: true,
            })
            .collect();
        Staging {
            live,
            removes: Vec::new(),
        }
    }

    /// The live files whose statistics may hold a key within `bounds`.
    fn candidates(&self, bounds: &KeyBounds, shape: &Shape) -> Vec<usize> {
        (0..self.live.len())
            .filter(|&i| {
                let stats = self.live[i].file.add.stats.as_deref();
                bounds.may_hold_stats(stats, &shape.key, shape.prefix)
            })
            .collect()
    }

    /// The live files `gone` replaced by `adds`: a committed one removed, one
    /// written by an earlier slice deleted.
    async fn replace(
        &mut self,
        table: &deltalake::DeltaTable,
        mut gone: Vec<usize>,
        adds: Vec<Add>,
        label: &str,
    ) -> Result<(), LakeError> {
        gone.sort_unstable_by(|a, b| b.cmp(a));
        for i in gone {
            let staged = self.live.remove(i);
            match staged.committed {
                true => self.removes.push(staged.file.remove),
                false => forget(table, &staged.file.path).await,
            }
        }
        for add in adds {
            let file = new_file(add, label)?;
            self.live.push(Staged {
                file,
                committed: false,
            });
        }
        Ok(())
    }
}

impl Writer<'_> {
    /// Writes the changes `slices` gives into the dataset's table, a slice at
    /// a time, in one commit; returns the figures, the new version (when one
    /// was committed) and the number of changes given.
    pub(crate) async fn upsert_sliced(
        &mut self,
        slices: &mut (dyn Slices + Send),
        files: &[MergedFile<'_>],
        mark: &mut Option<String>,
    ) -> Result<(MergeCounts, Made, u64), LakeError> {
        let dataset = self.set.dataset.clone();
        let label = dataset.name.clone();
        if dataset.merge_on_read {
            // As a load in one pass does: the table's protocol is the same.
            self.enable_deletion_vectors().await?;
        }
        if dataset.change_data_feed {
            self.enable_change_data_feed().await?;
        }
        let table = self.set.target.clone();
        let shape = self.shape(&table)?;
        let (all, _) = files::candidates(&table, &shape.key, &KeyBounds::None, usize::MAX)
            .await
            .map_err(files::delta_error(&table, &label))?;
        let mut staging = Staging::of(all);
        let done = self
            .rewrite_slices(slices, (&table, &shape), &mut staging)
            .await?;
        let Sliced { counts, given, .. } = done;
        let written: Vec<Add> = (staging.live.into_iter())
            .filter(|s| !s.committed)
            .map(|s| s.file.add)
            .collect();
        let stats = crate::write::OrdersFiles {
            rewritten: staging.removes.len() as u64,
            ..crate::write::OrdersFiles::default()
        };
        self.tally.writes.keyed += 1;
        let what = "keyed upsert by slices";
        if written.is_empty() && staging.removes.is_empty() {
            self.count_files(&label, stats, what);
            return Ok((counts, Made::default(), given));
        }
        let replacement = commit::Replacement {
            rows: None,
            written,
            removes: staging.removes,
            kept: Vec::new(),
            dv_file: None,
            cdc: done.cdc,
            predicate: done.span.and_then(|s| s.span_predicate(&shape.key)),
            metadata: metadata(files, counts),
            app: None,
        };
        let version = self
            .commit_keyed(replacement, stats, (&label, what), mark)
            .await?;
        let made = Made {
            commit: version,
            unchecked: false,
        };
        Ok((counts, made, given))
    }

    /// Each slice met with the live files that may hold its keys, and those
    /// it changed replaced in `staging` by what it wrote; the counts, the
    /// feed and the keys' span summed over the slices.
    async fn rewrite_slices(
        &mut self,
        slices: &mut (dyn Slices + Send),
        (table, shape): (&deltalake::DeltaTable, &Shape),
        staging: &mut Staging,
    ) -> Result<Sliced, LakeError> {
        let label = self.set.dataset.name.clone();
        let mut done = Sliced::default();
        let mut rewrites = 0u64;
        while let Some(changes) = slices.next_slice(&label)? {
            done.given += changes.num_rows() as u64;
            done.slices += 1;
            let aligned = shape.aligned(changes, &label)?;
            let bounds = KeyBounds::of_column(aligned.changes.column(shape.key_at));
            done.span = Some(done.span.as_ref().unwrap_or(&bounds).spanning(&bounds));
            let at = staging.candidates(&bounds, shape);
            let candidates: Vec<TargetFile> =
                at.iter().map(|&i| staging.live[i].file.clone()).collect();
            let (slice_counts, rewritten, adds, feed) =
                self.rewrite_slice(&aligned, &candidates).await?;
            done.cdc.extend(feed);
            add_counts(&mut done.counts, slice_counts);
            rewrites += rewritten.len() as u64;
            let gone = rewritten.iter().map(|&f| at[f]).collect();
            staging.replace(table, gone, adds, &label).await?;
        }
        self.tally.spills.slices += done.slices;
        tracing::debug!(
            table = %label,
            changes = done.given,
            slices = done.slices,
            files_rewritten = rewrites,
            "keyed upsert by slices"
        );
        Ok(done)
    }

    /// The shape of the dataset's table as it is now.
    fn shape(&self, table: &deltalake::DeltaTable) -> Result<Shape, LakeError> {
        let dataset = &self.set.dataset;
        let label = dataset.name.as_str();
        let url = table.table_url().clone();
        let snapshot = table.snapshot().map_err(LakeError::delta(label, &url))?;
        let schema = snapshot.snapshot().arrow_schema();
        let position = super::positions(dataset, &schema, label)?;
        Ok(Shape {
            key: dataset.columns[dataset.keys[0]].name.clone(),
            key_at: position[dataset.keys[0]],
            prefix: files::stats_prefix(table),
            position,
            schema,
        })
    }

    /// One slice's upsert against `candidates`: its figures, the candidates
    /// it rewrote, the files written in their place (by groups, each
    /// within the budget: [`Writer::rewrite_met`]) and its change data feed.
    async fn rewrite_slice(
        &mut self,
        aligned: &Aligned,
        candidates: &[TargetFile],
    ) -> Result<SliceWritten, LakeError> {
        let met = self.meet(aligned, candidates).await?;
        let (rewritten, inserted) = (met.rewritten(), met.inserted(aligned));
        let counts = count(&met, inserted.len());
        let (adds, groups) = (self.rewrite_met(aligned, (candidates, &met), &inserted)).await?;
        self.tally.writes.groups += groups;
        let outcome = super::rows_out::Outcome {
            met: &met,
            candidates,
            rewritten: &rewritten,
            inserted: &inserted,
        };
        let label = self.set.dataset.name.clone();
        let cdc = self.feed(aligned, &outcome, None, &label).await?;
        Ok((counts, rewritten, adds, cdc))
    }
}

/// What a slice wrote: its figures, the candidates it rewrote, the files
/// written in their place and its change data feed's `cdc` actions.
type SliceWritten = (
    MergeCounts,
    Vec<usize>,
    Vec<Add>,
    Vec<deltalake::kernel::Action>,
);

fn add_counts(total: &mut MergeCounts, slice: MergeCounts) {
    total.inserted += slice.inserted;
    total.updated += slice.updated;
    total.deleted += slice.deleted;
}

/// A file written by a slice, as a file of the table for the next slices.
fn new_file(add: Add, label: &str) -> Result<TargetFile, LakeError> {
    let path = deltalake::Path::from_url_path(&add.path).map_err(|e| LakeError::Invariant {
        table: label.to_string(),
        detail: format!("a new data file's path {:?}: {e}", add.path),
    })?;
    Ok(TargetFile {
        path,
        remove: Remove::default(),
        add,
    })
}

/// Deletes a file written by an earlier slice and rewritten since: it was
/// never committed. Should the delete fail, the file stays unreferenced, as
/// after a crash, until `maintain` vacuums it.
async fn forget(table: &deltalake::DeltaTable, path: &deltalake::Path) {
    if let Err(e) = table.object_store().delete(path).await {
        tracing::warn!(file = %path, error = %e, "could not delete an uncommitted data file");
    }
}
