//! Loading files into a dataset, in an order that makes every step safe to
//! repeat: rejects (replaced), the dataset's table (MERGE, only newer),
//! reconciliation (replaced), and the ledger last, so the ledger never claims
//! work that did not finish.
//!
//! Files loaded together share one commit per table. A batch is cut into rounds
//! that each hold at most one version of a location, in the order given, so that
//! a file's rejects and figures are those of loading the files one by one.

use crate::arrow_rows::ReconciliationRow;
use crate::candidate::{log_outcome, now_micros, Candidate, Parsed, Resume};
use crate::error::LakeError;
use crate::intake::Intake;
use crate::ledger::{FileKey, LedgerStatus, Seen};
#[cfg(feature = "faults")]
use crate::outcome::FaultPoint;
use crate::outcome::{LoadOptions, LoadOutcome, Loaded, SourceFile};
use crate::retry;
use crate::writes::FileRejects;
use crate::Lake;
use deltaload_core::{newest_of, ParsedFile, Reconciliation, Value};
use std::collections::{HashMap, HashSet};
use tracing::Instrument;

/// Marks the end of a step: logs its time at debug level and, in test builds with
/// the `faults` feature, aborts the process when a test asked for it.
macro_rules! step {
    ($opts:expr, $started:expr, $point:ident, $name:literal) => {
        tracing::debug!(
            step = $name,
            elapsed_ms = $started.elapsed().as_millis() as u64,
            "step done"
        );
        #[cfg(feature = "faults")]
        if $opts.fault == Some(FaultPoint::$point) {
            eprintln!("fault injected: {:?}", FaultPoint::$point);
            std::process::abort();
        }
    };
}

impl Lake {
    /// Loads one file version into the lake's only dataset; see [`Lake::load_into`].
    pub async fn load(
        &mut self,
        file: &SourceFile,
        opts: LoadOptions,
    ) -> Result<LoadOutcome, LakeError> {
        let mut outcomes = self.load_batch(std::slice::from_ref(file), opts).await?;
        outcomes.pop().ok_or_else(|| LakeError::Invariant {
            table: "ledger".into(),
            detail: format!("the load of {} gave no outcome", file.location),
        })
    }

    /// Loads files into the lake's only dataset; see [`Lake::load_into`].
    pub async fn load_batch(
        &mut self,
        files: &[SourceFile],
        opts: LoadOptions,
    ) -> Result<Vec<LoadOutcome>, LakeError> {
        let name = match self.sets.as_slice() {
            [only] => only.dataset.name.clone(),
            _ => {
                return Err(LakeError::Invariant {
                    table: "ledger".into(),
                    detail: "this lake has several datasets: name the one to load into".into(),
                })
            }
        };
        self.load_into(&name, files, opts).await
    }

    /// Loads files into dataset `dataset` together, with one commit per table
    /// for each round (see the module docs); returns one outcome per file, in
    /// the order given. A file given twice with the same content is loaded once
    /// and reported skipped the second time. On error nothing is recorded in the
    /// ledger for the round that failed, and running the same files again
    /// completes the load.
    pub async fn load_into(
        &mut self,
        dataset: &str,
        files: &[SourceFile],
        opts: LoadOptions,
    ) -> Result<Vec<LoadOutcome>, LakeError> {
        let ds = self.set_index(dataset)?;
        let bytes: u64 = files.iter().map(SourceFile::size).sum();
        let span = tracing::info_span!("load", dataset, files = files.len(), bytes);
        let outcomes = self
            .load_rounds(ds, files, opts)
            .instrument(span.clone())
            .await;
        let _entered = span.enter();
        match &outcomes {
            Ok(outcomes) => {
                for (file, outcome) in files.iter().zip(outcomes) {
                    log_outcome(&file.location, outcome);
                }
            }
            Err(e) => tracing::error!(error = %e, "load failed"),
        }
        outcomes
    }

    async fn load_rounds(
        &mut self,
        ds: usize,
        files: &[SourceFile],
        opts: LoadOptions,
    ) -> Result<Vec<LoadOutcome>, LakeError> {
        let dataset = self.sets[ds].dataset.clone();
        let mut candidates: Vec<Candidate> = Vec::with_capacity(files.len());
        for file in files {
            let content = file.content_id()?;
            let key = FileKey {
                location: file.location.clone(),
                content_id: file.content_key(&content),
            };
            candidates.push(Candidate {
                dataset: &dataset.name,
                file,
                content,
                key,
            });
        }
        let mut outcomes: Vec<Option<LoadOutcome>> = vec![None; files.len()];
        let mut first_of: HashMap<&FileKey, usize> = HashMap::new();
        let mut round: Vec<usize> = Vec::new();
        let mut in_round: HashSet<&str> = HashSet::new();
        // The bytes of the round's files: read whole together, they stay
        // within the memory budget.
        let mut round_bytes = 0u64;
        let mut copies: Vec<(usize, usize)> = Vec::new();
        for (i, c) in candidates.iter().enumerate() {
            if let Some(&first) = first_of.get(&c.key) {
                copies.push((i, first));
                continue;
            }
            first_of.insert(&c.key, i);
            if !self.budget.fits_whole(c.content.size) {
                // Read in pieces: loaded alone, by slices of keys.
                self.retried_round(ds, &candidates, &round, &mut outcomes, opts)
                    .await?;
                round.clear();
                in_round.clear();
                self.retried_round(ds, &candidates, &[i], &mut outcomes, opts)
                    .await?;
                round_bytes = 0;
                continue;
            }
            let full = !self.budget.fits_whole(round_bytes + c.content.size);
            if !in_round.insert(c.key.location.as_str()) || full {
                self.retried_round(ds, &candidates, &round, &mut outcomes, opts)
                    .await?;
                round.clear();
                in_round = HashSet::from([c.key.location.as_str()]);
                round_bytes = 0;
            }
            round.push(i);
            round_bytes += c.content.size;
        }
        self.retried_round(ds, &candidates, &round, &mut outcomes, opts)
            .await?;
        for (copy, first) in copies {
            outcomes[copy] = outcomes[first].as_ref().map(|o| match o {
                LoadOutcome::Loaded(done) => LoadOutcome::Skipped {
                    orders_version: done.orders_version,
                },
                other => other.clone(),
            });
        }
        outcomes
            .into_iter()
            .zip(files)
            .map(|(o, f)| {
                o.ok_or_else(|| LakeError::Invariant {
                    table: "ledger".into(),
                    detail: format!("{} was left out of its batch", f.location),
                })
            })
            .collect()
    }

    /// Runs a round, again after a commit conflict with another writer (with
    /// backoff and jitter, counted in [`Lake::commit_retries`]).
    async fn retried_round(
        &mut self,
        ds: usize,
        candidates: &[Candidate<'_>],
        round: &[usize],
        outcomes: &mut [Option<LoadOutcome>],
        opts: LoadOptions,
    ) -> Result<(), LakeError> {
        let mut attempt = 1;
        loop {
            match self.load_round(ds, candidates, round, outcomes, opts).await {
                Err(e) if retry::is_conflict(&e) && attempt < retry::ATTEMPTS => {
                    let wait = retry::backoff(attempt);
                    attempt += 1;
                    // Expected with several writers, and handled: INFO. Should
                    // every attempt lose, the caller logs the failure as an error.
                    tracing::info!(
                        attempt,
                        of = retry::ATTEMPTS,
                        wait_ms = wait.as_millis() as u64,
                        "commit conflict with another writer; running the load again"
                    );
                    self.commit_retries += 1;
                    tokio::time::sleep(wait).await;
                }
                Err(e) if retry::is_conflict(&e) => {
                    return Err(LakeError::Conflicts {
                        attempts: attempt,
                        source: Box::new(e),
                    })
                }
                done => return done,
            }
        }
    }

    /// Loads the files `round` names (distinct locations), writing their outcomes.
    async fn load_round(
        &mut self,
        ds: usize,
        candidates: &[Candidate<'_>],
        round: &[usize],
        outcomes: &mut [Option<LoadOutcome>],
        opts: LoadOptions,
    ) -> Result<(), LakeError> {
        if round.is_empty() {
            return Ok(());
        }
        let started = std::time::Instant::now();
        let keys: Vec<FileKey> = round.iter().map(|&i| candidates[i].key.clone()).collect();
        let seen = if opts.force {
            HashMap::new()
        } else {
            self.seen(&keys).await?
        };
        let mut ledger_rows = Vec::new();
        let mut parsed = Vec::new();
        let dataset = self.sets[ds].dataset.clone();
        for &slot in round {
            let candidate = &candidates[slot];
            let seen = seen.get(&candidate.key);
            if let Some(Seen {
                status: LedgerStatus::Loaded,
                orders_version,
                ..
            }) = seen
            {
                let orders_version = *orders_version;
                outcomes[slot] = Some(LoadOutcome::Skipped { orders_version });
                continue;
            }
            match self.intake(ds, candidate.file, candidate.content.size)? {
                Intake::Whole(file) => {
                    let loaded = file.changes.len() as u64;
                    // The records stay where they were parsed; the MERGE reads
                    // the newest change of each key through these indexes.
                    let newest = newest_of(&dataset, &file.changes);
                    parsed.push(Parsed {
                        slot,
                        candidate,
                        file,
                        loaded,
                        newest,
                        spilled: None,
                    });
                }
                Intake::Spilled(spilled, rejects) => parsed.push(Parsed {
                    slot,
                    candidate,
                    file: ParsedFile {
                        changes: deltaload_core::Rows::new(dataset.width()),
                        rejects,
                    },
                    loaded: spilled.loaded,
                    newest: Vec::new(),
                    spilled: Some(spilled),
                }),
                Intake::Refused(mismatch) => {
                    if seen.is_none() {
                        let reason = Some(mismatch.to_string());
                        ledger_rows.push(candidate.entry(LedgerStatus::Refused, reason));
                    }
                    outcomes[slot] = Some(LoadOutcome::Refused(mismatch));
                }
            }
        }
        if parsed.is_empty() {
            return self.record(&ledger_rows).await;
        }
        step!(opts, started, AfterRead, "after-read");
        // Start from the tables' latest versions: another writer may have committed
        // since the last load, and a stale snapshot turns every commit into a conflict.
        self.refresh_writes(ds).await?;
        // Mark the files `loading` with the orders version they start from (an
        // earlier, interrupted attempt's if there was one): a rerun searches the
        // orders history from there for a MERGE this load committed.
        let start = self.sets[ds].target.version();
        let mut resume = Resume::Fresh;
        for p in &parsed {
            let mut marker = p.candidate.entry(LedgerStatus::Loading, None);
            marker.orders_version = match seen.get(&p.candidate.key) {
                Some(Seen {
                    status: LedgerStatus::Loading,
                    orders_version,
                    ..
                }) => {
                    resume = resume.and_after(*orders_version);
                    *orders_version
                }
                _ => start,
            };
            ledger_rows.push(marker);
        }
        self.record(&ledger_rows).await?;
        ledger_rows.clear();
        let loaded_at = now_micros();
        let rejects: Vec<FileRejects> = parsed
            .iter()
            .map(|p| FileRejects {
                location: &p.candidate.key.location,
                content_id: &p.candidate.key.content_id,
                rejects: &p.file.rejects,
            })
            .collect();
        let rejected_version = self.replace_rejects(ds, &rejects, loaded_at).await?;
        step!(opts, started, AfterRejected, "after-rejected");

        let merged = self
            .merge_round(ds, &parsed, resume, loaded_at, opts)
            .await?;
        step!(opts, started, AfterOrders, "after-orders");
        let loaded_rows: Vec<&[Value]> = parsed.iter().flat_map(|p| p.rows()).collect();
        if std::mem::take(&mut self.merged_unchecked) {
            self.check_unique_keys(ds, &loaded_rows).await?;
        }
        let orders_version = self.sets[ds].target.version();
        let mut rows = Vec::with_capacity(parsed.len());
        for (p, merged) in parsed.iter().zip(&merged) {
            let (location, content_id) = (&p.candidate.key.location, &p.candidate.key.content_id);
            let figures = Reconciliation::build(
                location,
                p.loaded,
                p.file.rejects.len() as u64,
                p.distinct(),
                merged.counts,
            )?;
            rows.push(ReconciliationRow {
                dataset: &dataset.name,
                location,
                content_id,
                figures,
            });
        }
        self.replace_reconciliation(&rows, orders_version, loaded_at)
            .await?;
        step!(opts, started, AfterReconciliation, "after-reconciliation");
        for (p, row) in parsed.iter().zip(&rows) {
            let mut entry = p.candidate.entry(LedgerStatus::Loaded, None);
            entry.figures = row.figures;
            entry.orders_version = orders_version;
            entry.rejected_version = rejected_version;
            ledger_rows.push(entry);
        }
        self.record(&ledger_rows).await?;
        step!(opts, started, AfterLedger, "after-ledger");
        for ((p, row), merged) in parsed.iter().zip(&rows).zip(&merged) {
            outcomes[p.slot] = Some(LoadOutcome::Loaded(Loaded {
                figures: row.figures,
                orders_version,
                recovered: merged.recovered,
            }));
        }
        Ok(())
    }
}
