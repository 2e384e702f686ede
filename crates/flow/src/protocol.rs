//! The load of a batch of files into a dataset, in an order that makes every
//! step safe to repeat: the files marked `loading` in the ledger, their
//! rejects (replaced), the dataset's table (upserted, only newer, in a commit
//! that names the files), their figures (replaced), and the ledger marking
//! them `loaded` last, so the ledger never claims work that did not finish.

use crate::error::LoadError;
use crate::ledger::{FileKey, LedgerRow, LedgerStatus, Recorded};
use crate::outcome::{LoadOutcome, Loaded, Resume};
use crate::plan::plan;
use crate::ports::{FileFigures, Identified, Intake, ReadFile, Source, Step, Tables};
use crate::retry::{backoff, ATTEMPTS};
use deltaload_core::Reconciliation;
use std::collections::HashMap;

/// Loads `files` into dataset `dataset` (see the module docs and
/// [`mod@crate::plan`]): one outcome per file, in the order given. A file given
/// twice with the same content is loaded once and reported skipped the second
/// time. `force` loads files the ledger holds as loaded again. On error
/// nothing is recorded in the ledger for the round that failed.
pub async fn load<P: Source + Tables>(
    port: &mut P,
    dataset: &str,
    files: &[P::File],
    force: bool,
) -> Result<Vec<LoadOutcome>, LoadError<P::Error>> {
    let ids: Vec<Identified> = files
        .iter()
        .map(|f| port.identify(f))
        .collect::<Result<_, _>>()?;
    let sized: Vec<(&FileKey, u64)> = ids.iter().map(|id| (&id.key, id.size)).collect();
    let plan = plan(&sized, |bytes| port.fits_whole(bytes));
    let mut outcomes: Vec<Option<LoadOutcome>> = vec![None; files.len()];
    let batch = Batch {
        dataset,
        files,
        ids: &ids,
        force,
    };
    for round in &plan.rounds {
        retried_round(port, &batch, round, &mut outcomes).await?;
    }
    for (copy, first) in plan.copies {
        outcomes[copy] = outcomes[first].as_ref().map(|o| match o {
            LoadOutcome::Loaded(done) => LoadOutcome::Skipped {
                orders_version: done.orders_version,
            },
            other => other.clone(),
        });
    }
    outcomes
        .into_iter()
        .zip(&ids)
        .map(|(o, id)| {
            o.ok_or_else(|| LoadError::LeftOut {
                location: id.key.location.clone(),
            })
        })
        .collect()
}

/// The files of a load, each with its identity.
struct Batch<'a, F> {
    dataset: &'a str,
    files: &'a [F],
    ids: &'a [Identified],
    force: bool,
}

impl<F> Batch<'_, F> {
    fn row(&self, i: usize, status: LedgerStatus, reason: Option<String>) -> LedgerRow {
        let id = &self.ids[i];
        LedgerRow {
            dataset: self.dataset.to_string(),
            location: id.key.location.clone(),
            content_id: id.key.content_id.clone(),
            size: id.size,
            etag: id.etag.clone(),
            version_id: id.version_id.clone(),
            status,
            reason,
            figures: Reconciliation::default(),
            orders_version: None,
            rejected_version: None,
            loaded_at: now_micros(),
        }
    }
}

/// Now, in microseconds since the epoch (the tables' `loaded_at`).
fn now_micros() -> i64 {
    chrono::Utc::now().timestamp_micros()
}

/// Runs a round, again after a lost commit race (with backoff and jitter).
async fn retried_round<P: Source + Tables>(
    port: &mut P,
    batch: &Batch<'_, P::File>,
    round: &[usize],
    outcomes: &mut [Option<LoadOutcome>],
) -> Result<(), LoadError<P::Error>> {
    let mut attempt = 1;
    loop {
        match load_round(port, batch, round, outcomes).await {
            Err(LoadError::Port(e)) if P::is_conflict(&e) && attempt < ATTEMPTS => {
                let wait = backoff(attempt);
                attempt += 1;
                // Expected with several writers, and handled: INFO. Should
                // every attempt lose, the caller logs the failure as an error.
                tracing::info!(
                    attempt,
                    of = ATTEMPTS,
                    wait_ms = wait.as_millis() as u64,
                    "commit conflict with another writer; running the load again"
                );
                port.pause(attempt, wait).await;
            }
            Err(LoadError::Port(e)) if P::is_conflict(&e) => {
                return Err(LoadError::Conflicts {
                    attempts: attempt,
                    source: e,
                })
            }
            done => return done,
        }
    }
}

/// Loads the files `round` names (distinct locations), writing their outcomes.
async fn load_round<P: Source + Tables>(
    port: &mut P,
    batch: &Batch<'_, P::File>,
    round: &[usize],
    outcomes: &mut [Option<LoadOutcome>],
) -> Result<(), LoadError<P::Error>> {
    let started = std::time::Instant::now();
    let keys: Vec<FileKey> = round.iter().map(|&i| batch.ids[i].key.clone()).collect();
    let recorded = match batch.force {
        true => HashMap::new(),
        false => port.recorded(&keys).await?,
    };
    let (mut ledger_rows, read) = read_round(port, batch, round, &recorded, outcomes)?;
    if read.is_empty() {
        return Ok(port.record(&ledger_rows).await?);
    }
    reached(port, started, Step::AfterRead);
    // Start from the tables' latest versions: another writer may have committed
    // since the last load, and a stale snapshot turns every commit into a conflict.
    let start = port.refresh().await?;
    // Mark the files `loading` with the table version they start from (an
    // earlier, interrupted attempt's if there was one): a rerun searches the
    // table's history from there for a commit this load made.
    let mut resume = Resume::Fresh;
    for (slot, _) in &read {
        let mut marker = batch.row(*slot, LedgerStatus::Loading, None);
        marker.orders_version = match recorded.get(&batch.ids[*slot].key) {
            Some(Recorded {
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
    port.record(&ledger_rows).await?;
    write_round(port, batch, read, resume, started, outcomes).await
}

/// The round's files read, skipped (the ledger holds them loaded) or refused
/// (their ledger rows, when the ledger does not hold them yet).
type ReadRound<R> = (Vec<LedgerRow>, Vec<(usize, R)>);

/// Reads the files of `round` the ledger does not hold as loaded; writes the
/// outcomes of the files skipped and refused.
fn read_round<P: Source + Tables>(
    port: &mut P,
    batch: &Batch<'_, P::File>,
    round: &[usize],
    recorded: &HashMap<FileKey, Recorded>,
    outcomes: &mut [Option<LoadOutcome>],
) -> Result<ReadRound<P::Read>, LoadError<P::Error>> {
    let mut ledger_rows = Vec::new();
    let mut read = Vec::new();
    for &slot in round {
        let seen = recorded.get(&batch.ids[slot].key);
        if let Some(Recorded {
            status: LedgerStatus::Loaded,
            orders_version,
            ..
        }) = seen
        {
            let orders_version = *orders_version;
            outcomes[slot] = Some(LoadOutcome::Skipped { orders_version });
            continue;
        }
        match port.read(&batch.files[slot], &batch.ids[slot])? {
            Intake::Read(file) => read.push((slot, file)),
            Intake::Refused(mismatch) => {
                if seen.is_none() {
                    let reason = Some(mismatch.to_string());
                    ledger_rows.push(batch.row(slot, LedgerStatus::Refused, reason));
                }
                outcomes[slot] = Some(LoadOutcome::Refused(mismatch));
            }
        }
    }
    Ok((ledger_rows, read))
}

/// The writes of a round whose files are marked `loading`: rejects, the
/// table, the figures, and the ledger marking them `loaded` last.
async fn write_round<P: Source + Tables>(
    port: &mut P,
    batch: &Batch<'_, P::File>,
    read: Vec<(usize, P::Read)>,
    resume: Resume,
    started: std::time::Instant,
    outcomes: &mut [Option<LoadOutcome>],
) -> Result<(), LoadError<P::Error>> {
    let (slots, read): (Vec<usize>, Vec<P::Read>) = read.into_iter().unzip();
    let loaded_at = now_micros();
    let rejected_version = port.replace_rejects(&read, loaded_at).await?;
    reached(port, started, Step::AfterRejected);
    let (merged, orders_version) = port.upsert(&read, resume, loaded_at).await?;
    reached(port, started, Step::AfterOrders);
    let figures = read
        .iter()
        .zip(&merged)
        .map(|(file, merged)| {
            let key = file.key();
            let (records, rejected, distinct) = (file.records(), file.rejected(), file.distinct());
            Reconciliation::build(&key.location, records, rejected, distinct, merged.counts)
                .map(|figures| FileFigures {
                    key: key.clone(),
                    figures,
                })
                .map_err(LoadError::Figures)
        })
        .collect::<Result<Vec<_>, _>>()?;
    port.replace_figures(&figures, orders_version, loaded_at)
        .await?;
    reached(port, started, Step::AfterReconciliation);
    let loaded: Vec<LedgerRow> = slots
        .iter()
        .zip(&figures)
        .map(|(&slot, f)| LedgerRow {
            figures: f.figures,
            orders_version,
            rejected_version,
            ..batch.row(slot, LedgerStatus::Loaded, None)
        })
        .collect();
    port.record(&loaded).await?;
    reached(port, started, Step::AfterLedger);
    for ((slot, f), merged) in slots.iter().zip(&figures).zip(&merged) {
        outcomes[*slot] = Some(LoadOutcome::Loaded(Loaded {
            figures: f.figures,
            orders_version,
            recovered: merged.recovered,
        }));
    }
    Ok(())
}

/// Marks the end of a step: logs its time at debug level and tells the port.
fn reached<P: Tables>(port: &mut P, started: std::time::Instant, step: Step) {
    tracing::debug!(
        step = step.name(),
        elapsed_ms = started.elapsed().as_millis() as u64,
        "step done"
    );
    port.reached(step);
}
