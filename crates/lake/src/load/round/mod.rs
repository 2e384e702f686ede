//! The MERGE of a round's files into a dataset's table: one file by the
//! MERGE's own figures (of a feed with deletes, the changes a tombstone bears
//! on replayed first, [`one`]); several files replayed first against the rows
//! (and remembered deletes) of the keys they touch, so that only the rows
//! that end up changed are merged and each file has its own figures. New
//! tombstones are written before the table's MERGE, forgotten ones removed
//! after it.

use crate::load::options::LoadOptions;
use crate::table::error::LakeError;
use crate::write::merge::MergedFile;
use crate::write::{Made, Writer};
use deltaload_core::{Dataset, MergeCounts, Row, Tombstone, Value};
use deltaload_engine::changes::Changes;
use deltaload_engine::parsed::Parsed;
use deltaload_flow::{FileKey, Merged, ReadFile, Resume};
use std::collections::HashMap;

mod one;
mod planned;

impl Writer<'_> {
    /// MERGEs the files of a round in one commit. Returns each file's counts, and
    /// whether they were recovered from the commit of an earlier, interrupted load
    /// (searched for in the table's versions `resume` names), and what the
    /// round made: the version of its commit (made, or recovered) and whether
    /// delta-rs's MERGE wrote.
    pub(crate) async fn merge_round(
        &mut self,
        parsed: &[Parsed],
        resume: Resume,
        loaded_at: i64,
        opts: LoadOptions,
    ) -> Result<(Vec<Merged>, Made), LakeError> {
        let recovered = match resume {
            Resume::Fresh => HashMap::new(),
            Resume::After(from) => {
                let keys: Vec<FileKey> = parsed.iter().map(|p| p.key.clone()).collect();
                self.find_merge_commits(from, &keys).await?
            }
        };
        let found = Made {
            commit: recovered.values().map(|c| c.version).max(),
            unchecked: false,
        };
        let mut counts: Vec<Option<MergeCounts>> = parsed
            .iter()
            .map(|p| recovered.get(&p.key).map(|c| c.counts))
            .collect();
        let was_recovered: Vec<bool> = counts.iter().map(Option::is_some).collect();
        let pending: Vec<usize> = (0..parsed.len()).filter(|&i| counts[i].is_none()).collect();
        // The history beside the table's commit (each can run again, so
        // either may land first), recovered files too, for their figures.
        // A snapshot's history follows its commit ([`Writer::merge_snapshot`]);
        // a recovered one's is written here, before any task is started.
        let dataset = self.set.dataset.clone();
        let snapshots =
            (self.recovered_snapshot_histories(parsed, &recovered, (loaded_at, opts.force)))
                .await?;
        let history = (self.spawn_history(parsed, (loaded_at, opts.force))).await?;
        let table = (self.write_round(parsed, &pending, &mut counts, loaded_at, opts)).await;
        // Waited for whatever the table's write gave, to have its tables back.
        let history = self.finish_history(history, parsed.len()).await;
        let made = found.then(table?);
        let versions: Vec<(u64, u64)> = (history?.into_iter().zip(snapshots))
            .map(|(h, s)| (h.0 + s.0, h.1 + s.1))
            .collect();
        self.count_recovered_spills(parsed, loaded_at)?;
        // A snapshot's commit (recovered too) deletes only what it retires.
        let snapshot = |c: MergeCounts| match dataset.snapshot {
            Some(_) => crate::snapshot::retired(c),
            None => c,
        };
        let merged = (counts.into_iter().zip(was_recovered).zip(versions))
            .map(|((counts, recovered), (opened, closed))| {
                // A snapshot's versions come with its commit's counts.
                let counts = snapshot(counts.unwrap_or_default());
                Merged {
                    counts: MergeCounts {
                        opened: opened + counts.opened,
                        closed: closed + counts.closed,
                        ..counts
                    },
                    recovered,
                }
            })
            .collect();
        Ok((merged, made))
    }

    /// A spilled file whose commit was recovered: its keys, still to count,
    /// counted by going through its slices.
    fn count_recovered_spills(&self, parsed: &[Parsed], loaded_at: i64) -> Result<(), LakeError> {
        let name = &self.set.dataset.name;
        for p in parsed {
            if let Some(spilled) = p.spilled.as_ref().filter(|s| s.distinct.get().is_none()) {
                let mut merge = self.merge_of(spilled, loaded_at)?;
                while merge.next_slice(name)?.is_some() {}
                let _ = spilled.distinct.set(merge.given);
            }
        }
        Ok(())
    }

    /// Writes the files `pending` of a round into the dataset's table,
    /// setting their counts (nothing to write when every file's commit was
    /// recovered, unless the dataset keeps tombstones); what it made.
    async fn write_round(
        &mut self,
        parsed: &[Parsed],
        pending: &[usize],
        counts: &mut [Option<MergeCounts>],
        loaded_at: i64,
        opts: LoadOptions,
    ) -> Result<Made, LakeError> {
        let dataset = self.set.dataset.clone();
        let (one, written) = match pending {
            [] if !dataset.keeps_tombstones() => return Ok(Made::default()),
            [only] if dataset.snapshot.is_some() => {
                let at = (loaded_at, opts.force);
                (*only, self.merge_snapshot(&parsed[*only], at).await?)
            }
            [only] if parsed[*only].spilled.is_some() => {
                (*only, self.upsert_spilled(&parsed[*only], loaded_at).await?)
            }
            [only] if dataset.delete_when.is_none() => {
                // One file: the MERGE's own metrics are its counts.
                let p = &parsed[*only];
                let changes = Changes::of_file(p.changes.clone(), &p.key.location);
                let files = [merged(&parsed[*only], None)];
                (
                    *only,
                    self.upsert_target(&changes, &files, loaded_at).await?,
                )
            }
            _ => {
                return (self.replay_round(parsed, pending, counts, loaded_at, opts)).await;
            }
        };
        counts[one] = Some(written.0);
        Ok(written.1)
    }

    /// Writes the files `pending` of a round (with deletes, or several),
    /// setting their counts: one file alone as [`one`] says, else replayed
    /// against the rows and tombstones of the keys they touch; what it made.
    async fn replay_round(
        &mut self,
        parsed: &[Parsed],
        pending: &[usize],
        counts: &mut [Option<MergeCounts>],
        loaded_at: i64,
        opts: LoadOptions,
    ) -> Result<Made, LakeError> {
        let dataset = self.set.dataset.clone();
        let tombstones = dataset.keeps_tombstones();
        let one = match pending {
            // Another file's recovered commit may want its tombstones written.
            [only] if parsed.len() == 1 || !tombstones => self
                .merge_one_with_deletes(&parsed[*only], loaded_at, opts)
                .await?
                .map(|(c, removed, made)| (vec![*only], vec![c], removed, made)),
            _ => None,
        };
        let (replayed, planned, removed, made) = match one {
            Some(written) => written,
            None => {
                // The tombstones are those of every file of the round: the
                // table may hold a recovered file's changes, but not yet
                // the tombstones that go with them.
                let replayed: Vec<usize> = match tombstones {
                    true => (0..parsed.len()).collect(),
                    false => pending.to_vec(),
                };
                let (planned, removed, made) = self
                    .planned_merge(parsed, &replayed, pending, loaded_at, opts)
                    .await?;
                (replayed, planned, removed, made)
            }
        };
        for (&i, c) in replayed.iter().zip(planned) {
            counts[i].get_or_insert(c);
        }
        if removed.is_empty() {
            return Ok(made);
        }
        let values = rows_of(&dataset, parsed)?;
        for (row, tombstone) in &removed {
            let files = (parsed, values.as_slice());
            recount(&dataset, files, &replayed, counts, row, tombstone);
        }
        Ok(made)
    }

    /// The merge of a spilled file's runs, in slices the budget allows.
    fn merge_of(
        &self,
        spilled: &deltaload_engine::spill::Spilled,
        loaded_at: i64,
    ) -> Result<deltaload_engine::spill::Merge, LakeError> {
        let set = &*self.set;
        let schema = &spilled.schema;
        let position = crate::write::upsert::positions(&set.dataset, schema, &set.dataset.name)?;
        Ok(deltaload_engine::spill::Merge::new(
            &set.dataset,
            (&spilled.schema, &spilled.runs),
            &position,
            loaded_at,
            self.settings.budget.slice_rows(spilled.row_bytes()),
        )?)
    }

    /// Upserts a spilled file's changes by slices of keys; returns its
    /// counts and what it made.
    async fn upsert_spilled(
        &mut self,
        p: &Parsed,
        loaded_at: i64,
    ) -> Result<(MergeCounts, Made), LakeError> {
        let Some(spilled) = &p.spilled else {
            return Ok((MergeCounts::default(), Made::default()));
        };
        let mut merge = self.merge_of(spilled, loaded_at)?;
        let files = [merged(p, None)];
        let (counts, made, given) = (self.upsert_sliced(&mut merge, &files, &mut None)).await?;
        let _ = spilled.distinct.set(given);
        Ok((counts, made))
    }
}

impl Writer<'_> {
    /// Upserts a replay's winners, which are whole rows (an update's result,
    /// or an upsert after a delete that inserts it whole): an update then sets
    /// every update column, a null too, even where the dataset's
    /// `ignore_null_updates` would keep the table's value (the replay kept it
    /// already where it had to).
    async fn upsert_whole(
        &mut self,
        changes: &Changes<'_>,
        files: &[MergedFile<'_>],
        loaded_at: i64,
    ) -> Result<(MergeCounts, Made), LakeError> {
        let dataset = self.set.dataset.clone();
        if dataset.keep_on_null.is_empty() {
            return self.upsert_target(changes, files, loaded_at).await;
        }
        let whole = Dataset {
            keep_on_null: Vec::new(),
            ..(*dataset).clone()
        };
        self.set.dataset = std::sync::Arc::new(whole);
        let written = self.upsert_target(changes, files, loaded_at).await;
        self.set.dataset = dataset;
        written
    }
}

/// The tombstones `puts` written: a test's fault may stop the process here,
/// before the table's write.
fn after_tombstones(opts: LoadOptions, puts: &[Tombstone]) {
    #[cfg(feature = "faults")]
    if opts.fault == Some(crate::load::options::FaultPoint::AfterTombstones) && !puts.is_empty() {
        eprintln!("fault injected: AfterTombstones");
        std::process::abort();
    }
    #[cfg(not(feature = "faults"))]
    let _ = (opts, puts);
}

/// Each file's changes as rows of values, for the replay of a round.
fn rows_of(dataset: &Dataset, parsed: &[Parsed]) -> Result<Vec<Vec<Row>>, LakeError> {
    parsed
        .iter()
        .map(|p| Ok(Changes::rows(dataset, &p.changes)?))
        .collect()
}

/// How a MERGE commit names the file `p` of the round.
fn merged(p: &Parsed, counts: Option<MergeCounts>) -> MergedFile<'_> {
    MergedFile {
        location: &p.key.location,
        content_id: &p.key.content_id,
        counts,
    }
}

/// The figures after settling removed `row` for `tombstone`: the file of the
/// round whose change wrote the row inserted (or updated) nothing after all;
/// else the file whose delete the tombstone is deleted the row.
fn recount(
    d: &Dataset,
    (parsed, values): (&[Parsed], &[Vec<Row>]),
    replayed: &[usize],
    counts: &mut [Option<MergeCounts>],
    row: &[Value],
    tombstone: &[Value],
) {
    let same =
        |c: &[Value], other: &[Value]| d.key_cmp(c, other).is_eq() && d.compare(c, other).is_eq();
    let wrote = replayed
        .iter()
        .find(|&&i| values[i].iter().any(|c| !d.is_delete(c) && same(c, row)));
    if let Some(c) = wrote.and_then(|&i| counts[i].as_mut()) {
        if c.inserted > 0 {
            c.inserted -= 1;
        } else if c.updated > 0 {
            c.updated -= 1;
        }
        return;
    }
    let deleted = replayed.iter().find(|&&i| {
        values[i]
            .iter()
            .any(|c| d.is_delete(c) && same(c, tombstone))
    });
    if let Some(&i) = deleted {
        let distinct = parsed[i].distinct();
        if let Some(c) = counts[i].as_mut() {
            if c.inserted + c.updated + c.deleted < distinct {
                c.deleted += 1;
            }
        }
    }
}
