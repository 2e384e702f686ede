//! A change file read into Arrow: the newest change of each key and the
//! rejects ([`read_changes`]), and the steps a file read in pieces shares
//! with it (its place in the feed, the newest of batches).

use arrow_array::cast::AsArray;
use arrow_array::RecordBatch;
use deltaload_core::{Dataset, HeaderMismatch, Reject};
use deltaload_ingest::rules::Check;
use deltaload_ingest::DataError;
use deltaload_ingest::IngestError;

/// A file read whole: the newest change of each key, and its rejects.
pub struct FileChanges {
    /// The newest change of each key, sorted by key, of
    /// `deltaload_ingest::changes_schema`.
    pub newest: RecordBatch,
    /// Records that parsed.
    pub loaded: u64,
    /// Of those, the deletes.
    pub deletes: u64,
    /// Records that did not parse.
    pub rejects: Vec<Reject>,
    /// Every change, in file order, of a dataset that keeps history (its
    /// versions are made of them all); `None` for the others.
    pub all: Option<RecordBatch>,
    /// Per expectation of the dataset: records checked, and those that broke it.
    pub expectations: Vec<deltaload_core::ExpectationCount>,
}

/// Reads a change file of `dataset` at `location` (a path or an object
/// key: a preset's order comes from its name) in its format (CSV, JSON
/// Lines or Parquet) into Arrow: the newest change of each key and the
/// rejects (those of a rule `check` evaluates among them), or why the whole
/// file is refused (the inner `Err`).
pub fn read_changes(
    dataset: &Dataset,
    location: &str,
    bytes: &[u8],
    check: &dyn Check,
) -> Result<Result<FileChanges, HeaderMismatch>, DataError> {
    let started = std::time::Instant::now();
    let rank = match file_rank(dataset, location) {
        Ok(rank) => rank,
        Err(refused) => return Ok(Err(refused)),
    };
    let ingested = match ingest(dataset, bytes, check)? {
        Ok(ingested) => ingested,
        Err(refused) => return Ok(Err(refused)),
    };
    let read_ms = started.elapsed().as_millis() as u64;
    let width = dataset.columns.len();
    let deletes = ingested
        .batches
        .iter()
        .map(|b| b.column(width).as_boolean().true_count() as u64)
        .sum();
    // A history keeps every change: the batches are joined once for both.
    let mut all = match dataset.history {
        Some(_) => Some(concat(dataset, &ingested.batches)?),
        None => None,
    };
    let mut newest = match &all {
        Some(all) => newest_of(dataset, std::slice::from_ref(all))?,
        None => newest_of(dataset, &ingested.batches)?,
    };
    if let Some(rank) = rank {
        newest = in_feed(dataset, newest, &rank, 0)?;
        all = all.map(|a| in_feed(dataset, a, &rank, 0)).transpose()?;
    }
    tracing::debug!(
        read_ms,
        newest_ms = started.elapsed().as_millis() as u64 - read_ms,
        records = ingested.records(),
        distinct = newest.num_rows(),
        peak_mib = deltaload_ingest::peak_mib(),
        "file read into Arrow"
    );
    Ok(Ok(FileChanges {
        newest,
        loaded: ingested.changes(),
        deletes,
        rejects: ingested.rejects,
        all,
        expectations: ingested.expectations,
    }))
}

/// `bytes` read into Arrow, the records that break a rule `check`
/// evaluates among the rejects, or why the whole file is refused (the inner
/// `Err`; also when a rule cannot be evaluated on its records).
pub fn ingest(
    dataset: &Dataset,
    bytes: &[u8],
    check: &dyn Check,
) -> Result<Result<deltaload_ingest::Ingested, HeaderMismatch>, DataError> {
    let read = deltaload_ingest::read_changes(dataset, bytes)
        .and_then(|ingested| deltaload_ingest::rules::apply(dataset, bytes, ingested, check));
    match read {
        Ok(ingested) => Ok(Ok(ingested)),
        Err(IngestError::Refused(refused)) => Ok(Err(refused)),
        Err(e @ IngestError::Rules { .. }) => {
            Ok(Err(HeaderMismatch::new(dataset, Vec::new(), e.to_string())
                .with_remedy(
                    "correct the records, or the table's rule, then load the file again",
                )))
        }
        Err(e @ IngestError::Defect { .. }) => Err(DataError::Invariant {
            table: dataset.name.clone(),
            detail: e.to_string(),
        }),
    }
}

/// The newest change of each key among `batches` (changes in file order, of
/// `deltaload_ingest::changes_schema`), sorted by key.
pub fn newest_of(dataset: &Dataset, batches: &[RecordBatch]) -> Result<RecordBatch, DataError> {
    let label = dataset.name.as_str();
    let batch = concat(dataset, batches)?;
    let order = changes_order(dataset)?;
    if !dataset.keep_on_null.is_empty() {
        return newest_filled(dataset, &order, &batch);
    }
    let winners = crate::newest::newest_indices(&order, &batch).map_err(DataError::arrow(label))?;
    match winners.len() == batch.num_rows() && is_identity(&winners) {
        true => Ok(batch),
        false => {
            arrow_select::take::take_record_batch(&batch, &winners).map_err(DataError::arrow(label))
        }
    }
}

/// `batches` (of `deltaload_ingest::changes_schema`) as one batch.
fn concat(dataset: &Dataset, batches: &[RecordBatch]) -> Result<RecordBatch, DataError> {
    let schema = deltaload_ingest::changes_schema(dataset);
    match batches {
        [one] => Ok(one.clone()),
        many => arrow_select::concat::concat_batches(&schema, many)
            .map_err(DataError::arrow(&dataset.name)),
    }
}

/// The newest change of each key, its [`Dataset::keep_on_null`] columns
/// filled where null from the older changes of its key in the file
/// (`ignore_null_updates`: the winner then sets what they set).
fn newest_filled(
    dataset: &Dataset,
    order: &crate::order::Order,
    batch: &RecordBatch,
) -> Result<RecordBatch, DataError> {
    use arrow_array::Array;
    use arrow_select::take::{take, take_record_batch};
    let label = dataset.name.as_str();
    let fill = &dataset.keep_on_null;
    let filled =
        crate::newest::newest_filled(order, batch, fill).map_err(DataError::arrow(label))?;
    let winners = &filled.winners;
    let newest = take_record_batch(batch, winners).map_err(DataError::arrow(label))?;
    let mut columns = newest.columns().to_vec();
    for (&c, from) in fill.iter().zip(&filled.sources) {
        if from != winners {
            columns[c] = take(batch.column(c), from, None).map_err(DataError::arrow(label))?;
        }
    }
    let newest = RecordBatch::try_new(newest.schema(), columns).map_err(DataError::arrow(label))?;
    if !filled.reborn.contains(&true) {
        return Ok(newest);
    }
    // An upsert after a delete of its key in the file sets its row whole:
    // its delete flag is null.
    let width = dataset.columns.len();
    let old = newest.column(width).as_boolean().clone();
    let flags = (filled.reborn.iter().enumerate())
        .map(|(i, &reborn)| (!reborn).then(|| old.is_valid(i) && old.value(i)))
        .collect();
    with_flags(newest, width, flags, label)
}

/// `batch` (of `deltaload_ingest::changes_schema`) with `flags` as its
/// delete flags, at position `width`.
pub fn with_flags(
    batch: RecordBatch,
    width: usize,
    flags: Vec<Option<bool>>,
    label: &str,
) -> Result<RecordBatch, DataError> {
    use arrow_array::BooleanArray;
    let mut columns = batch.columns().to_vec();
    columns[width] = std::sync::Arc::new(BooleanArray::from(flags));
    RecordBatch::try_new(batch.schema(), columns).map_err(DataError::arrow(label))
}

/// The order of `dataset`'s changes (`deltaload_ingest::changes_schema`:
/// the columns in the spec's order, then the delete flag).
pub fn changes_order(dataset: &Dataset) -> Result<crate::order::Order, DataError> {
    let schema = deltaload_ingest::changes_schema(dataset);
    let width = dataset.columns.len();
    let position: Vec<usize> = (0..width).collect();
    crate::order::Order::new(dataset, &schema, &position, Some(width))
        .map_err(DataError::arrow(&dataset.name))
}

/// The text of the preset's [`deltaload_core::spec::FEED_FILE`] column for
/// the file at `location` (`None` without one), or the file's refusal.
pub fn file_rank(dataset: &Dataset, location: &str) -> Result<Option<String>, HeaderMismatch> {
    dataset
        .file_rank(location)
        .map_err(|problem| HeaderMismatch::new(dataset, Vec::new(), problem))
}

/// `batch` (changes of one file, or of a piece of it after `lines_before`
/// lines) with its place in the feed: [`deltaload_core::spec::FEED_FILE`]
/// holding `rank`, and [`deltaload_core::spec::FEED_LINE`] counted from the
/// file's start. The readers leave the first null, as they do not know the
/// file's name, and count lines from the start of what they read.
pub fn in_feed(
    dataset: &Dataset,
    batch: RecordBatch,
    rank: &str,
    lines_before: u64,
) -> Result<RecordBatch, DataError> {
    use arrow_array::{Int64Array, StringArray};
    use deltaload_core::spec::{FEED_FILE, FEED_LINE};
    let mut columns = batch.columns().to_vec();
    if let Some(at) = dataset.column_index(FEED_FILE) {
        let ranks = StringArray::from_iter_values(std::iter::repeat_n(rank, batch.num_rows()));
        columns[at] = std::sync::Arc::new(ranks);
    }
    match dataset.column_index(FEED_LINE) {
        Some(at) if lines_before > 0 => {
            let lines = columns[at].as_primitive::<arrow_array::types::Int64Type>();
            let shifted: Int64Array = lines.unary(|l| l + lines_before as i64);
            columns[at] = std::sync::Arc::new(shifted);
        }
        _ => {}
    }
    RecordBatch::try_new(batch.schema(), columns).map_err(DataError::arrow(&dataset.name))
}

/// Whether `winners` is `0, 1, 2, ...`: the file held each key once, in order.
fn is_identity(winners: &arrow_array::UInt32Array) -> bool {
    winners
        .values()
        .iter()
        .enumerate()
        .all(|(i, &w)| i as u32 == w)
}

#[cfg(test)]
mod tests {
    use super::*;

    use crate::test_random as next;

    // Changes cut into batches anywhere (as a large file's are, and a
    // spilled file's pieces) give the newest changes of the same changes in
    // one batch. 64 files of up to 80 changes of 30 keys (repeats, ties),
    // cut 0-5 times.
    #[test]
    fn the_newest_of_batches_is_the_newest_of_one_batch() {
        let dataset = Dataset::orders();
        let schema = deltaload_ingest::changes_schema(&dataset);
        let mut state = 7u64;
        for case in 0..64 {
            let mut csv =
                String::from("order_id,customer_id,status,amount,currency,ordered_at,updated_at\n");
            for _ in 0..1 + next(&mut state, 80) {
                let (id, day) = (next(&mut state, 30), 1 + next(&mut state, 3));
                let status = ["placed", "shipped"][next(&mut state, 2) as usize];
                csv.push_str(&format!(
                    "{id},C{day},{status},1.00,EUR,,2026-10-0{day}T00:00:00\n"
                ));
            }
            let ingested = match ingest(&dataset, csv.as_bytes(), &deltaload_ingest::rules::NoRules)
            {
                Ok(Ok(i)) => i,
                other => panic!("{other:?}"),
            };
            let one = arrow_select::concat::concat_batches(&schema, &ingested.batches).unwrap();
            let n = one.num_rows() as u64;
            let mut cuts: Vec<usize> = (0..next(&mut state, 6))
                .map(|_| next(&mut state, n + 1) as usize)
                .chain([0, n as usize])
                .collect();
            cuts.sort_unstable();
            cuts.dedup();
            let pieces: Vec<RecordBatch> = cuts
                .windows(2)
                .map(|w| one.slice(w[0], w[1] - w[0]))
                .collect();
            let whole = newest_of(&dataset, std::slice::from_ref(&one)).unwrap();
            let cut = newest_of(&dataset, &pieces).unwrap();
            assert_eq!(cut, whole, "case {case}, {} pieces", pieces.len());
        }
    }
}
