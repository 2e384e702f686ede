//! Several files of a round replayed against the rows (and remembered
//! deletes) of the keys they touch, then merged: each file has its own
//! figures, and the tombstones are written around the table's MERGE.

use super::{after_tombstones, merged, rows_of};
use crate::load::options::LoadOptions;
use crate::table::error::LakeError;
use crate::write::merge::MergedFile;
use crate::write::{Made, Writer};
use deltaload_core::{attribute, Dataset, MergeCounts, Row, Tombstone, Value};
use deltaload_engine::changes::Changes;
use deltaload_engine::parsed::Parsed;

impl Writer<'_> {
    /// Replays the files `replayed` against the rows and tombstones of the
    /// keys they touch, merges the rows that change (when some of `pending`
    /// are among them) and writes the tombstones. Returns each replayed
    /// file's counts, the rows settling removed and what the writes made.
    pub(super) async fn planned_merge(
        &mut self,
        parsed: &[Parsed],
        replayed: &[usize],
        pending: &[usize],
        loaded_at: i64,
        opts: LoadOptions,
    ) -> Result<(Vec<MergeCounts>, Vec<(Row, Row)>, Made), LakeError> {
        let dataset = self.set.dataset.clone();
        let values = rows_of(&dataset, parsed)?;
        self.tally.writes.replayed += replayed
            .iter()
            .map(|&i| values[i].len() as u64)
            .sum::<u64>();
        let keys = distinct_keys(&dataset, replayed.iter().map(|&i| &values[i]));
        let current = self.current_rows(&keys).await?;
        let dead = self.tombstones_of(&keys).await?;
        let lists: Vec<Vec<&[Value]>> = replayed
            .iter()
            .map(|&i| values[i].iter().map(Vec::as_slice).collect())
            .collect();
        let plan = attribute(&dataset, &current, &dead, &lists);
        let location = |k: usize| parsed[replayed[k]].key.location.as_str();
        let files: Vec<MergedFile> = replayed
            .iter()
            .zip(&plan.per_file)
            .filter(|(i, _)| pending.contains(i))
            .map(|(&i, c)| merged(&parsed[i], Some(*c)))
            .collect();
        // Deletes are remembered before the table loses their rows, and
        // forgotten after it regains them: whatever another writer reads in
        // between, the newer of a key's row and tombstone is right.
        let (puts, clears): (Vec<Tombstone>, Vec<Tombstone>) = plan
            .tombstones
            .iter()
            .cloned()
            .partition(|t| matches!(t, Tombstone::Put(..)));
        self.write_tombstones(&puts, location, &files, loaded_at)
            .await?;
        after_tombstones(opts, &puts);
        let mut made = Made::default();
        if !files.is_empty() {
            let rows: Vec<(&[Value], &str)> = plan
                .winners
                .iter()
                .map(|(k, c)| (c.as_ref(), location(*k)))
                .collect();
            let changes = Changes::of_rows(&dataset, &rows)?;
            let (got, upserted) = self.upsert_whole(&changes, &files, loaded_at).await?;
            warn_if_unplanned(plan.expected, got);
            made = upserted;
        }
        self.write_tombstones(&clears, location, &files, loaded_at)
            .await?;
        let per_file = plan.per_file;
        let (removed, settled) = self.settle(&keys, loaded_at).await?;
        Ok((per_file, removed, made.then(settled)))
    }
}

/// The keys of `rows`, each once, sorted.
fn distinct_keys<'a>(
    dataset: &Dataset,
    rows: impl Iterator<Item = &'a Vec<Row>>,
) -> Vec<Vec<Value>> {
    let mut keys: Vec<Vec<Value>> = rows
        .flat_map(|r| r.iter().map(|r| dataset.key_of(r)))
        .collect();
    keys.sort_unstable();
    keys.dedup();
    keys
}

/// Says so when a batch's MERGE changed other rows than its replay planned.
fn warn_if_unplanned(expected: MergeCounts, got: MergeCounts) {
    if got != expected {
        tracing::warn!(
            expected_inserted = expected.inserted,
            expected_updated = expected.updated,
            expected_deleted = expected.deleted,
            inserted = got.inserted,
            updated = got.updated,
            deleted = got.deleted,
            "the MERGE changed other rows than the batch replay planned \
             (another writer changed these keys meanwhile?); \
             per-file figures follow the replay"
        );
    }
}
