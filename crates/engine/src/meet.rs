//! The first pass of the upsert: the candidate files' keys and sequences
//! read, and what each change does to the row of its key decided.

use crate::aligned::Aligned;
use crate::decide::{Action, Decider};
use crate::error::{arrow, EngineError};
use crate::matching::ChangeKeys;
use crate::target::Target;
use arrow_array::ArrayRef;
use arrow_schema::ArrowError;
use deltaload_core::Dataset;
use futures::StreamExt;

/// What the target files hold for the changes.
#[derive(Default)]
pub struct Met {
    /// Per candidate file: (row, change, action).
    pub hits: Vec<Vec<(u32, u32, Action)>>,
    /// Per candidate file: its rows (deleted ones included) and the position
    /// in the file of each row a change updates or deletes.
    pub changed: Vec<(u64, Vec<u64>)>,
    /// Per change: whether a row of its key was found.
    pub found: Vec<bool>,
    /// Candidate files read again for their tie-break columns (an upsert
    /// met a row of its own sequence there).
    pub reread: u64,
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

/// Sorted, without repeats.
fn sorted(mut cols: Vec<usize>) -> Vec<usize> {
    cols.sort_unstable();
    cols.dedup();
    cols
}

/// What the first pass reads of each file and how it ranks what it finds.
struct Probe {
    /// The key and sequence columns, in the table's order.
    wanted: Vec<usize>,
    /// The same with the tie-break columns.
    wanted_full: Vec<usize>,
    /// Where each key column is among `wanted`.
    key_at: Vec<usize>,
    keys: ChangeKeys,
    /// The key, sequence and tie-break columns, as dataset columns.
    full: Vec<usize>,
    /// Decides on keys and sequences; `tied` also on tie-breaks, made the
    /// first time a file needs it (an upsert meeting a row of its own
    /// sequence, rare): its ranks of the changes take as much memory as
    /// their sequence and tie-break columns.
    rank: Decider,
    tied: Option<Decider>,
}

impl Probe {
    fn new<E: std::error::Error + 'static>(
        dataset: &Dataset,
        aligned: &Aligned,
    ) -> Result<Self, EngineError<E>> {
        let label = dataset.name.as_str();
        let probe = sorted(
            dataset
                .keys
                .iter()
                .chain(&dataset.sequence_by)
                .copied()
                .collect(),
        );
        let full = sorted(probe.iter().chain(&dataset.tie_break).copied().collect());
        let key_at = (dataset.keys.iter())
            .map(|k| probe.iter().position(|p| p == k).unwrap_or(0))
            .collect();
        let key_columns: Vec<ArrayRef> = (dataset.keys.iter())
            .map(|&k| aligned.changes.column(aligned.position[k]).clone())
            .collect();
        let keys = ChangeKeys::new(&key_columns)
            .map_err(arrow(label, "indexing the changes' keys"))?
            .map_err(|first| EngineError::ChangesTwice {
                table: label.to_string(),
                key: aligned.key_text(dataset, first as usize),
            })?;
        let ranked = |cols| {
            Decider::new(dataset, aligned, cols).map_err(arrow(label, "ranking the changes"))
        };
        Ok(Self {
            wanted: probe.iter().map(|&i| aligned.position[i]).collect(),
            wanted_full: full.iter().map(|&i| aligned.position[i]).collect(),
            key_at,
            keys,
            rank: ranked(&probe)?,
            full,
            tied: None,
        })
    }

    /// The decider on the tie-break columns too.
    fn tied(&mut self, dataset: &Dataset, aligned: &Aligned) -> Result<&Decider, ArrowError> {
        let decider = match self.tied.take() {
            Some(decider) => decider,
            None => Decider::new(dataset, aligned, &self.full)?,
        };
        Ok(self.tied.insert(decider))
    }
}

/// Reads the key and sequence columns of the `candidates` and decides what
/// each change does to the row of its key. The tie-break columns are read
/// only for a file where an upsert meets a row of an equal sequence (rare).
pub async fn meet<T: Target>(
    dataset: &Dataset,
    aligned: &Aligned,
    candidates: &[T::File],
    target: &T,
) -> Result<Met, EngineError<T::Error>> {
    let label = dataset.name.as_str();
    let mut probe = Probe::new(dataset, aligned)?;
    let n = aligned.changes.num_rows();
    let mut met = Met {
        hits: Vec::with_capacity(candidates.len()),
        changed: Vec::with_capacity(candidates.len()),
        found: vec![false; n],
        reread: 0,
    };
    let mut holder: Vec<Option<usize>> = vec![None; n];
    let mut reads = target.read_all(candidates.iter().collect(), &aligned.schema, &probe.wanted);
    while let Some(file) = reads.next().await {
        let file = file.map_err(EngineError::Target)?;
        let f = met.hits.len();
        let columns: Vec<ArrayRef> = (probe.key_at.iter())
            .map(|&i| file.batch.column(i).clone())
            .collect();
        let pairs =
            (probe.keys.matches(&columns)).map_err(arrow(label, "matching a file's keys"))?;
        let decided = |d: &Decider, batch| {
            d.decide(aligned, batch, &pairs)
                .map_err(arrow(label, "deciding the changes"))
        };
        let mut actions = decided(&probe.rank, &file.batch)?;
        if actions.iter().any(Option::is_none) {
            let whole = target
                .read(&candidates[f], &aligned.schema, &probe.wanted_full)
                .await
                .map_err(EngineError::Target)?;
            let tied =
                (probe.tied(dataset, aligned)).map_err(arrow(label, "ranking the changes"))?;
            actions = decided(tied, &whole.batch)?;
            met.reread += 1;
        }
        let mut hits = Vec::with_capacity(pairs.len());
        for ((r, c), action) in pairs.iter().copied().zip(actions) {
            if let Some(other) = holder[c as usize].replace(f) {
                return Err(EngineError::KeyTwice {
                    table: label.to_string(),
                    columns: dataset.names(&dataset.keys).join(", "),
                    key: aligned.key_text(dataset, c as usize),
                    first: T::name(&candidates[other]),
                    second: T::name(&candidates[f]),
                });
            }
            met.found[c as usize] = true;
            hits.push((r, c, action.unwrap_or(Action::Stale)));
        }
        let changed = (hits.iter().filter(|h| h.2.changes()))
            .map(|h| file.physical(h.0))
            .collect();
        met.changed.push((file.rows, changed));
        met.hits.push(hits);
    }
    Ok(met)
}
