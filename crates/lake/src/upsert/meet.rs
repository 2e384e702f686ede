//! The first pass of the keyed upsert: the candidate files' keys and
//! sequences read, and what each change does to the row of its key decided.

use super::aligned::Aligned;
use super::apply::{Action, ChangeKeys};
use super::{files, rank, read, twice};
use crate::error::LakeError;
use crate::Lake;
use deltalake::arrow::array::ArrayRef;
use futures::StreamExt;

/// What the target files hold for the changes.
#[derive(Default)]
pub(super) struct Met {
    /// Per candidate file: (row, change, action).
    pub hits: Vec<Vec<(u32, u32, Action)>>,
    /// Per candidate file: its rows (deleted ones included) and the position
    /// in the file of each row a change updates or deletes.
    pub changed: Vec<(u64, Vec<u64>)>,
    /// Per change: whether a row of its key was found.
    pub found: Vec<bool>,
}

impl Met {
    /// The candidate files where a row changes: those to rewrite.
    pub fn rewritten(&self) -> Vec<usize> {
        (0..self.hits.len())
            .filter(|&f| self.hits[f].iter().any(|h| h.2.changes()))
            .collect()
    }

    /// The changes whose key no row holds, deletes left out: those to insert.
    pub fn inserted(&self, aligned: &Aligned) -> Vec<u32> {
        (0..self.found.len())
            .filter(|&c| !self.found[c] && !aligned.is_delete(c))
            .map(|c| c as u32)
            .collect()
    }
}

impl Lake {
    /// Reads the key, sequence and tie-break columns of the candidate files and
    /// decides what each change does to the row of its key.
    pub(super) async fn meet(
        &self,
        ds: usize,
        aligned: &Aligned,
        candidates: &[files::TargetFile],
    ) -> Result<Met, LakeError> {
        let dataset = &self.sets[ds].dataset;
        let label = dataset.name.as_str();
        // The tie-break columns are read only for the files where an upsert
        // meets a row of an equal sequence (rare): most loads decide on the
        // keys and sequences alone.
        let sorted = |cols: Vec<usize>| {
            let mut cols = cols;
            cols.sort_unstable();
            cols.dedup();
            cols
        };
        let probe = sorted(
            dataset
                .keys
                .iter()
                .chain(&dataset.sequence_by)
                .copied()
                .collect(),
        );
        let full = sorted(probe.iter().chain(&dataset.tie_break).copied().collect());
        let wanted: Vec<usize> = probe.iter().map(|&i| aligned.position[i]).collect();
        let key_at: Vec<usize> = dataset
            .keys
            .iter()
            .map(|k| probe.iter().position(|p| p == k).unwrap_or(0))
            .collect();
        let key_columns: Vec<ArrayRef> = dataset
            .keys
            .iter()
            .map(|&k| aligned.changes.column(aligned.position[k]).clone())
            .collect();
        let keys = ChangeKeys::new(&key_columns).map_err(LakeError::arrow(label))?;
        let index = keys.index().map_err(|first| LakeError::Invariant {
            table: label.to_string(),
            detail: format!(
                "the changes to write hold key {:?} twice; this is a bug of deltaload, please report it",
                aligned.key_text(dataset, first as usize)
            ),
        })?;
        let store = self.sets[ds].target.object_store();
        let mut reads = read::read_files(store, candidates.iter(), &aligned.schema, &wanted, label);
        let rank = rank::Rank::new(dataset, aligned, &probe, label)?;
        let tied = rank::Rank::new(dataset, aligned, &full, label)?;
        let wanted_full: Vec<usize> = full.iter().map(|&i| aligned.position[i]).collect();
        let mut met = Met {
            hits: Vec::with_capacity(candidates.len()),
            changed: Vec::with_capacity(candidates.len()),
            found: vec![false; aligned.changes.num_rows()],
        };
        let mut holder: Vec<Option<usize>> = vec![None; aligned.changes.num_rows()];
        while let Some(file) = reads.next().await {
            let file = file?;
            let batch = &file.batch;
            let f = met.hits.len();
            let columns: Vec<ArrayRef> = key_at.iter().map(|&i| batch.column(i).clone()).collect();
            let pairs = keys
                .matches(&index, &columns)
                .map_err(LakeError::arrow(label))?;
            let mut actions = rank.decide(dataset, aligned, batch, &pairs)?;
            if actions.iter().any(Option::is_none) {
                let store = self.sets[ds].target.object_store();
                let c = &candidates[f];
                let dv = c.add.deletion_vector.clone();
                let whole =
                    read::read_columns(store, &c.path, dv, &aligned.schema, &wanted_full, label)
                        .await?;
                actions = tied.decide(dataset, aligned, &whole.batch, &pairs)?;
            }
            let mut hits = Vec::with_capacity(pairs.len());
            for ((r, c), action) in pairs.into_iter().zip(actions) {
                let action = action.unwrap_or(Action::Stale);
                if let Some(other) = holder[c as usize].replace(f) {
                    return Err(twice(
                        dataset,
                        &aligned.key_text(dataset, c as usize),
                        &candidates[other],
                        &candidates[f],
                    ));
                }
                met.found[c as usize] = true;
                hits.push((r, c, action));
            }
            let changed = hits
                .iter()
                .filter(|h| h.2.changes())
                .map(|h| file.physical(h.0))
                .collect();
            met.changed.push((file.rows, changed));
            met.hits.push(hits);
        }
        Ok(met)
    }
}
