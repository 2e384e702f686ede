//! The rows a merge-on-read keyed upsert appends, once every change has met
//! its row: the updated rows' new versions and the inserted keys, sorted by
//! key. (Copy-on-write rewrites files by groups: `rewrite`.)

use super::aligned::updated_mask;
use super::files::TargetFile;
use super::read::{self, Hit};
use crate::table::error::LakeError;
use deltalake::arrow::record_batch::RecordBatch;
use deltalake::kernel::{Add, Remove};
use deltalake::{ObjectStore, Path};
use deltaload_core::Dataset;
use deltaload_engine::{Action, Aligned, Met, Picks, Take};
use futures::StreamExt;
use std::sync::Arc;

/// What the met changes do to the table: the candidate files that change and
/// the changes whose key no file holds.
pub(super) struct Outcome<'a> {
    pub met: &'a Met,
    pub candidates: &'a [TargetFile],
    pub rewritten: &'a [usize],
    pub inserted: &'a [u32],
}

/// The rows a merge-on-read upsert appends, sorted by key.
pub(super) struct Appended {
    pub rows: RecordBatch,
    /// Per row: an updated key's new version (`true`) or an inserted key.
    pub updated: Vec<bool>,
}

/// The rows appended beside the kept files of a merge-on-read table (their
/// changed rows marked deleted), read from `store` as far as needed; `lap`
/// is told when the files have been read.
pub(super) async fn rows_out(
    store: Arc<dyn ObjectStore>,
    dataset: &Dataset,
    aligned: &Aligned,
    outcome: &Outcome<'_>,
    (label, lap): (&str, &(dyn Fn(&str) + Sync)),
) -> Result<Appended, LakeError> {
    let Outcome {
        met,
        rewritten,
        inserted,
        ..
    } = *outcome;
    let width = aligned.schema.fields().len();
    let key_positions: Vec<usize> = dataset.keys.iter().map(|&k| aligned.position[k]).collect();
    let updated = updated_mask(dataset, &aligned.schema);
    // A changed file stays, its changed rows marked deleted and their new
    // versions appended; its updated rows are read when an update keeps
    // some of the row's columns, those rows only.
    let covers = (0..width).all(|i| updated[i] == Take::Set || key_positions.contains(&i));
    let (read, hits) = match covers {
        true => (Vec::new(), Vec::new()),
        false => decided_rows(store, aligned, outcome, |h| h.2 == Action::Update, label).await?,
    };
    let changes = hits.len();
    let mut picks = Picks::default();
    picks.reborn_in(changes, aligned.flags());
    for (source, hits) in hits.iter().enumerate() {
        picks.updates(source, changes, hits);
    }
    if covers {
        for &f in rewritten {
            let updates: Vec<u32> = met.hits[f]
                .iter()
                .filter(|h| h.2 == Action::Update)
                .map(|h| h.1)
                .collect();
            picks.inserts(changes, &updates);
        }
    }
    let updates = picks.picked();
    picks.inserts(changes, inserted);
    lap("read");
    let mut sources: Vec<&RecordBatch> = read.iter().collect();
    sources.push(&aligned.changes);
    let (columns, order) = picks
        .assemble_ordered(&sources, width, &updated, &key_positions)
        .map_err(LakeError::arrow(label))?;
    let rows =
        RecordBatch::try_new(aligned.schema.clone(), columns).map_err(LakeError::arrow(label))?;
    let updated = order.values().iter().map(|&o| (o as usize) < updates);
    Ok(Appended {
        rows,
        updated: updated.collect(),
    })
}

/// For each file where `outcome` makes a decision `keep` keeps: the rows
/// those decisions name, read from `store` in the order of their
/// positions, and the decisions, each naming its row by its place among
/// the rows read.
pub(super) async fn decided_rows(
    store: Arc<dyn ObjectStore>,
    aligned: &Aligned,
    outcome: &Outcome<'_>,
    keep: impl Fn(&Hit) -> bool,
    label: &str,
) -> Result<(Vec<RecordBatch>, Vec<Vec<Hit>>), LakeError> {
    let all: Vec<usize> = (0..aligned.schema.fields().len()).collect();
    let mut wanted = Vec::with_capacity(outcome.rewritten.len());
    let mut hits = Vec::with_capacity(outcome.rewritten.len());
    for &f in outcome.rewritten {
        let kept: Vec<Hit> = outcome.met.hits[f]
            .iter()
            .filter(|h| keep(h))
            .copied()
            .collect();
        if !kept.is_empty() {
            let (at, local) = read::in_order(kept);
            wanted.push((&outcome.candidates[f], at));
            hits.push(local);
        }
    }
    let mut reads = read::read_files_at(store, wanted, &aligned.schema, &all, label);
    let mut files = Vec::with_capacity(hits.len());
    while let Some(file) = reads.next().await {
        files.push(file?);
    }
    Ok((files, hits))
}

/// The files that leave the table: the rewritten ones removed (copy-on-write),
/// or kept with their changed rows marked deleted in a new deletion vector
/// file (merge-on-read).
#[allow(clippy::type_complexity)]
pub(super) async fn removed(
    store: &Arc<dyn ObjectStore>,
    merge_on_read: bool,
    outcome: &Outcome<'_>,
    label: &str,
) -> Result<(Vec<Remove>, Vec<Add>, Option<(Path, Vec<u8>)>), LakeError> {
    let Outcome {
        met,
        candidates,
        rewritten,
        ..
    } = *outcome;
    if merge_on_read {
        return super::deletions::marked(store, candidates, rewritten, &met.changed, label).await;
    }
    let removes = rewritten
        .iter()
        .map(|&f| candidates[f].remove.clone())
        .collect();
    Ok((removes, Vec::new(), None))
}
