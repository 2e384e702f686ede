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
///
/// Each file is let go once it is read (its content no longer held while its
/// round writes); a round that runs again after a lost commit race reuses
/// what its first attempt read.
pub async fn load<P: Source + Tables>(
    port: &mut P,
    dataset: &str,
    files: Vec<P::File>,
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
        ids: &ids,
        force,
    };
    let mut held = Held::new(files);
    for round in &plan.rounds {
        retried_round(port, &batch, &mut held, round, &mut outcomes).await?;
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

/// The files of a load: each one's identity.
struct Batch<'a> {
    dataset: &'a str,
    ids: &'a [Identified],
    force: bool,
}

/// Each file of a load until it is read, then what reading it gave (until
/// its round is done): what a round that runs again starts from.
struct Held<F, R> {
    files: Vec<Option<F>>,
    reads: Vec<Option<Intake<R>>>,
}

impl<F, R> Held<F, R> {
    fn new(files: Vec<F>) -> Self {
        let reads = files.iter().map(|_| None).collect();
        let files = files.into_iter().map(Some).collect();
        Self { files, reads }
    }

    /// What file `slot` gives: kept from an earlier attempt, else read now
    /// (and the file let go).
    fn take<P>(&mut self, port: &mut P, slot: usize, id: &Identified) -> ReadResult<P>
    where
        P: Source<File = F, Read = R>,
    {
        if let Some(got) = self.reads[slot].take() {
            return Ok(got);
        }
        let Some(file) = self.files[slot].take() else {
            let location = id.key.location.clone();
            return Err(LoadError::LeftOut { location });
        };
        port.read(&file, id).map_err(|e| {
            self.files[slot] = Some(file);
            LoadError::Port(e)
        })
    }

    /// Keeps what file `slot` gave, for the round's next attempt.
    fn keep(&mut self, slot: usize, got: Intake<R>) {
        self.reads[slot] = Some(got);
    }

    /// Lets file `slot` go unread (the ledger holds it loaded).
    fn forget(&mut self, slot: usize) {
        (self.files[slot], self.reads[slot]) = (None, None);
    }
}

/// What a file gives when it is read.
type ReadResult<P> =
    Result<Intake<<P as crate::ports::Port>::Read>, LoadError<<P as crate::ports::Port>::Error>>;

impl Batch<'_> {
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
    batch: &Batch<'_>,
    held: &mut Held<P::File, P::Read>,
    round: &[usize],
    outcomes: &mut [Option<LoadOutcome>],
) -> Result<(), LoadError<P::Error>> {
    let mut attempt = 1;
    loop {
        match load_round(port, batch, held, round, outcomes).await {
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

/// Loads the files `round` names (distinct locations), writing their outcomes;
/// on error keeps what the files gave for the next attempt.
async fn load_round<P: Source + Tables>(
    port: &mut P,
    batch: &Batch<'_>,
    held: &mut Held<P::File, P::Read>,
    round: &[usize],
    outcomes: &mut [Option<LoadOutcome>],
) -> Result<(), LoadError<P::Error>> {
    let started = std::time::Instant::now();
    let keys: Vec<FileKey> = round.iter().map(|&i| batch.ids[i].key.clone()).collect();
    let recorded = match batch.force {
        true => HashMap::new(),
        false => port.recorded(&keys).await?,
    };
    let (ledger_rows, read) = read_round(port, batch, held, round, &recorded, outcomes)?;
    if read.is_empty() {
        return Ok(port.record(&ledger_rows).await?);
    }
    let (slots, read): (Vec<usize>, Vec<P::Read>) = read.into_iter().unzip();
    let round = Reads {
        slots: &slots,
        read: &read,
        started,
    };
    let written = mark_and_write(port, batch, &recorded, ledger_rows, round, outcomes).await;
    if written.is_err() {
        for (slot, file) in slots.into_iter().zip(read) {
            held.keep(slot, Intake::Read(file));
        }
    }
    written
}

/// The files of a round that were read (each its slot in the batch), and
/// when the round started.
struct Reads<'a, R> {
    slots: &'a [usize],
    read: &'a [R],
    started: std::time::Instant,
}

/// Marks the files read `loading` (with the refused ones' rows), then writes.
async fn mark_and_write<P: Source + Tables>(
    port: &mut P,
    batch: &Batch<'_>,
    recorded: &HashMap<FileKey, Recorded>,
    mut ledger_rows: Vec<LedgerRow>,
    round: Reads<'_, P::Read>,
    outcomes: &mut [Option<LoadOutcome>],
) -> Result<(), LoadError<P::Error>> {
    let started = round.started;
    reached(port, started, Step::AfterRead);
    // Start from the tables' latest versions: another writer may have committed
    // since the last load, and a stale snapshot turns every commit into a conflict.
    let start = port.refresh().await?;
    // Mark the files `loading` with the table version they start from (an
    // earlier, interrupted attempt's if there was one): a rerun searches the
    // table's history from there for a commit this load made.
    let mut resume = Resume::Fresh;
    // Forced, or resuming what a forced load left `loading`: counted as forced.
    let mut forced_round = batch.force;
    for slot in round.slots {
        // A forced load's marker says so, for a load that resumes it.
        let seen = recorded.get(&batch.ids[*slot].key);
        let forced = batch.force || seen.is_some_and(Recorded::forced);
        forced_round |= forced;
        let reason = forced.then(|| crate::ledger::FORCED.to_string());
        let mut marker = batch.row(*slot, LedgerStatus::Loading, reason);
        marker.orders_version = match seen {
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
    write_round(port, batch, round, (resume, forced_round), outcomes).await
}

/// The round's files read, skipped (the ledger holds them loaded) or refused
/// (their ledger rows, when the ledger does not hold them yet).
type ReadRound<R> = (Vec<LedgerRow>, Vec<(usize, R)>);

/// Reads the files of `round` the ledger does not hold as loaded; writes the
/// outcomes of the files skipped and refused.
fn read_round<P: Source + Tables>(
    port: &mut P,
    batch: &Batch<'_>,
    held: &mut Held<P::File, P::Read>,
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
            held.forget(slot);
            continue;
        }
        match held.take(port, slot, &batch.ids[slot])? {
            Intake::Read(file) => read.push((slot, file)),
            Intake::Refused(mismatch) => {
                if seen.is_none() {
                    let reason = Some(mismatch.to_string());
                    ledger_rows.push(batch.row(slot, LedgerStatus::Refused, reason));
                }
                held.keep(slot, Intake::Refused(mismatch.clone()));
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
    batch: &Batch<'_>,
    round: Reads<'_, P::Read>,
    (resume, forced): (Resume, bool),
    outcomes: &mut [Option<LoadOutcome>],
) -> Result<(), LoadError<P::Error>> {
    let Reads {
        slots,
        read,
        started,
    } = round;
    let loaded_at = now_micros();
    let rejected_version = port.replace_rejects(read, loaded_at).await?;
    reached(port, started, Step::AfterRejected);
    let (merged, orders_version) = port.upsert(read, (resume, forced), loaded_at).await?;
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
                    expectations: file.expectations(),
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
            expectations: f.expectations.clone(),
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
