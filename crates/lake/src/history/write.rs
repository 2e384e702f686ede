//! A file's changes written into its dataset's history: appended to the
//! log once, then the versions of the keys it touches folded again and put
//! in place of theirs, in one commit of the history table. Its writer owns
//! the history's tables and a query context, so the history can be
//! written while the dataset's table is ([`super::task`]).

use super::marked::{Marks, Touched};
use super::HistoryTables;
use crate::table::error::LakeError;
use crate::table::select_where;
use crate::write::keys::keyed_rows;
use deltalake::arrow::array::UInt32Array;
use deltalake::arrow::array::{Array, ArrayRef, RecordBatch};
use deltalake::arrow::compute::{cast, concat_batches, take, take_record_batch};
use deltalake::arrow::datatypes::SchemaRef;
use deltalake::arrow::error::ArrowError;
use deltalake::datafusion::common::ScalarValue;
use deltalake::datafusion::prelude::{lit, Expr, SessionContext};
use deltalake::kernel::transaction::CommitProperties;
use deltalake::kernel::Transaction;
use deltalake::protocol::SaveMode;
use deltalake::DeltaTable;
use deltaload_core::Dataset;
use deltaload_engine::history::fold::{fold, Version};
use deltaload_engine::history::log_rows::{flagged, folded_schema, log_rows, of_file, Origin};
use deltaload_engine::history::{log_schema, schema};
use deltaload_engine::tables::TableName;
use deltaload_flow::FileKey;
use std::sync::Arc;
use tokio::task::JoinHandle;

/// The application transaction every commit of a history carries, so
/// that two writers of one history conflict.
pub(super) const WRITER: &str = "deltaload-history";

/// The same for the log: of two loads appending at once, the later runs
/// again and finds the other's changes.
const LOG_WRITER: &str = "deltaload-history-log";

/// The application transaction `app` at the version after the table's.
pub(super) fn next_of(app: &str, table: &deltalake::DeltaTable) -> Transaction {
    let next = table.version().map_or(0, |v| v as i64 + 1);
    Transaction::new(app, next)
}

/// Commit properties naming `app` at the version after the table's.
fn writer(app: &str, table: &deltalake::DeltaTable) -> CommitProperties {
    crate::table::commit_properties().with_application_transaction(next_of(app, table))
}

/// A file's changes as the history takes them.
pub(crate) struct FileChanges<'a> {
    /// The file version.
    pub key: &'a FileKey,
    /// The newest change of each key it touches.
    pub touched: &'a RecordBatch,
    /// Every change (of `deltaload_ingest::changes_schema`).
    pub all: &'a RecordBatch,
    /// Whether the file is loaded again on purpose (`--force`): its figures
    /// then compare with the history as the log holds it, the file's logged
    /// changes included, so a file the history holds already changes
    /// nothing. Otherwise they compare with the history without the file,
    /// so a load that runs again after a crash counts what it first did.
    pub forced: bool,
}

/// A dataset's history tables with a query context of their own, so that
/// the history can be written while the dataset's table is: both writes
/// can run again and change nothing, so either may commit first.
pub(crate) struct HistoryWriter {
    pub(super) dataset: Arc<Dataset>,
    pub(super) tables: HistoryTables,
    ctx: SessionContext,
}

impl HistoryWriter {
    /// A writer of `dataset`'s history `tables`.
    pub(crate) fn new(dataset: Arc<Dataset>, tables: HistoryTables) -> Self {
        let ctx = crate::write::keys::keys_session();
        Self {
            dataset,
            tables,
            ctx,
        }
    }

    /// The tables, as written.
    pub(crate) fn into_tables(self) -> HistoryTables {
        self.tables
    }

    /// Writes a file's `changes` into the history. Returns the versions
    /// opened and closed: the history of the touched keys with the file
    /// against without it.
    pub(crate) async fn write(
        &mut self,
        p: FileChanges<'_>,
        loaded_at: i64,
    ) -> Result<(u64, u64), LakeError> {
        let dataset = self.dataset.clone();
        let Some(history) = &dataset.history else {
            return Ok((0, 0));
        };
        let all = p.all;
        if all.num_rows() == 0 {
            return Ok((0, 0));
        }
        let label = dataset.history_table();
        let arrow = || LakeError::arrow(&label);
        let started = std::time::Instant::now();
        let ms = |at: std::time::Instant| at.elapsed().as_millis() as u64;
        let (changes, from, mine, origin) = self.logged_changes(&p, loaded_at).await?;
        let read_ms = ms(started);
        let mine = match p.forced {
            true => (0..changes.num_rows()).map(|i| i >= from).collect(),
            false => mine,
        };
        // A snapshot loaded again at its sequence wins, as in the table.
        let arrival = match dataset.snapshot {
            Some(_) => Some(origin.arrival(changes.num_rows()).map_err(arrow())?),
            None => None,
        };
        let folded = fold(
            &dataset,
            &history.tracked,
            &changes,
            (from, &mine),
            arrival.as_deref(),
        )
        .map_err(arrow())?;
        let folded_at = std::time::Instant::now();
        let fold_ms = ms(started) - read_ms;
        // Nothing is kept of a file the log holds already: no row is past `from`.
        let new = match folded.kept.is_empty() {
            true => None,
            false => {
                let kept = (from, folded.kept);
                Some(log_rows(&dataset, &changes, kept, p.key, loaded_at).map_err(arrow())?)
            }
        };
        let logging = new.map(|new| self.spawn_log(new));
        let versions = versions(&dataset, (&changes, &origin), &folded.versions).map_err(arrow());
        let marked = self.put_in_place(&p, logging, versions).await?;
        let put_ms = ms(folded_at);
        tracing::debug!(
            table = %label,
            changes = changes.num_rows(),
            read_ms,
            fold_ms,
            put_ms,
            marked,
            total_ms = ms(started),
            opened = folded.opened,
            closed = folded.closed,
            "history written"
        );
        Ok((folded.opened, folded.closed))
    }

    /// The logged changes of the keys `p` touches, then `p`'s own (`all`,
    /// from the returned position on) unless the log holds them already,
    /// as the fold takes them; which rows are of `p`'s file version; and
    /// where each came from.
    async fn logged_changes(
        &mut self,
        p: &FileChanges<'_>,
        loaded_at: i64,
    ) -> Result<(RecordBatch, usize, Vec<bool>, Origin), LakeError> {
        let dataset = self.dataset.clone();
        let label = dataset.history_log_table();
        let arrow = || LakeError::arrow(&label);
        let log_name = TableName::HistoryLog(dataset.clone());
        // The newest change of each key: each touched key once.
        let keys: Vec<ArrayRef> = (dataset.keys.iter())
            .map(|&k| p.touched.column(k).clone())
            .collect();
        let read = keyed_rows(&self.ctx, &dataset, &self.tables.log, &log_name, keys).await?;
        let read = by_name(&log_schema(&dataset), &read).map_err(arrow())?;
        let from = read.iter().map(RecordBatch::num_rows).sum();
        let mut mine = Vec::with_capacity(from + p.all.num_rows());
        for batch in &read {
            mine.extend(of_file(batch, p.key).map_err(arrow())?);
        }
        let origin = Origin::of(&dataset, &read, p.key, loaded_at).map_err(arrow())?;
        let schema = folded_schema(&dataset).map_err(arrow())?;
        let columns: Vec<usize> = (0..schema.fields().len()).collect();
        let mut parts = (read.iter())
            .map(|b| b.project(&columns))
            .collect::<Result<Vec<_>, _>>()
            .map_err(arrow())?;
        // A snapshot loaded again on purpose changed its table again: its
        // changes come again, at their new load time.
        let again = p.forced && dataset.snapshot.is_some();
        if again || !mine.contains(&true) {
            parts.push(flagged(&dataset, p.all).map_err(arrow())?);
            mine.resize(from + p.all.num_rows(), true);
        }
        // One copy of the log's rows and the file's into the fold's batch.
        let changes = concat_batches(&schema, &parts).map_err(arrow())?;
        Ok((changes, from, mine, origin))
    }

    /// Puts `versions` in place of the versions of the keys `p` touches
    /// once the log's append (`logging`, if any: [`Self::spawn_log`]) has
    /// ended; merge-on-read, they are made ready while it runs. Returns
    /// whether they were marked merge-on-read.
    async fn put_in_place(
        &mut self,
        p: &FileChanges<'_>,
        logging: Option<JoinHandle<Result<DeltaTable, LakeError>>>,
        versions: Result<RecordBatch, LakeError>,
    ) -> Result<bool, LakeError> {
        let marks = match &versions {
            Ok(versions) if self.dataset.merge_on_read => {
                self.prepare_marks(p.touched, versions.clone(), p.key).await
            }
            _ => Ok(Marks::ByRange),
        };
        // The log before the versions, never at once: another writer whose
        // versions' commit fails against ours runs again on the log, and
        // must find this file's changes there. The log is waited for even
        // when the versions failed, so that the writer holds it as written.
        if let Some(logging) = logging {
            self.tables.log = logging.await.map_err(|stopped| LakeError::Invariant {
                table: self.dataset.history_log_table(),
                detail: format!("the history log's append stopped: {stopped}"),
            })??;
        }
        let versions = versions?;
        match marks? {
            Marks::Ready(ready) => self.commit_marks(*ready).await?,
            Marks::Nothing => {}
            Marks::ByRange => {
                self.replace_versions(p.touched, versions).await?;
                return Ok(false);
            }
        }
        Ok(true)
    }

    /// Appends `new` changes to the history log on a task of its own;
    /// gives back the log as written.
    fn spawn_log(&self, new: RecordBatch) -> JoinHandle<Result<DeltaTable, LakeError>> {
        let name = TableName::HistoryLog(self.dataset.clone());
        let log = self.tables.log.clone();
        tokio::spawn(async move {
            let label = name.as_str();
            let snapshot = log
                .snapshot()
                .map_err(LakeError::delta(&label, log.table_url()))?;
            let rows = aligned(&snapshot.snapshot().arrow_schema(), &[new]);
            let rows = rows.map_err(LakeError::arrow(&label))?;
            crate::write::upsert::append(&log, &rows, writer(LOG_WRITER, &log), &label).await
        })
    }

    /// Puts `versions` in place of the versions of the keys of `touched`
    /// (the file's newest change per key) in one commit: the rows of the
    /// touched keys' range are replaced, those of other keys written again.
    async fn replace_versions(
        &mut self,
        touched: &RecordBatch,
        versions: RecordBatch,
    ) -> Result<(), LakeError> {
        let dataset = self.dataset.clone();
        let name = TableName::History(dataset.clone());
        let label = name.as_str();
        let arrow = || LakeError::arrow(&label);
        let range = key_range(&dataset, touched).map_err(arrow())?;
        let target = schema(&dataset);
        let columns: Vec<&str> = target.fields().iter().map(|f| f.name().as_str()).collect();
        let table = &mut self.tables.versions;
        let held = select_where(&self.ctx, table, &name, &columns, range.clone()).await?;
        let held = aligned(&target, &held).map_err(arrow())?;
        let carried = others(&dataset, &held, touched).map_err(arrow())?;
        let all = concat_batches(&target, [&carried, &versions]).map_err(arrow())?;
        let url = table.table_url().clone();
        let commit = writer(WRITER, table);
        *table = (table.clone().write(vec![all]))
            .with_save_mode(SaveMode::Overwrite)
            .with_replace_where(range)
            .with_commit_properties(commit)
            .await
            .map_err(LakeError::delta(&label, &url))?;
        Ok(())
    }
}

/// `batches` (as read back) cast to `schema`'s types, as one batch; their
/// columns are found by name (a column the spec added later sits last in
/// the table).
pub(super) fn aligned(
    schema: &SchemaRef,
    batches: &[RecordBatch],
) -> Result<RecordBatch, ArrowError> {
    concat_batches(schema, &by_name(schema, batches)?)
}

/// `batches` cast to `schema`'s types, each column found by name.
fn by_name(schema: &SchemaRef, batches: &[RecordBatch]) -> Result<Vec<RecordBatch>, ArrowError> {
    let mut cast_batches = Vec::with_capacity(batches.len() + 1);
    for b in batches {
        let columns = (schema.fields().iter())
            .map(|f| match b.column_by_name(f.name()) {
                Some(c) => cast(c, f.data_type()),
                None => Err(ArrowError::SchemaError(format!(
                    "the table has no column {:?}",
                    f.name()
                ))),
            })
            .collect::<Result<Vec<_>, _>>()?;
        cast_batches.push(RecordBatch::try_new(schema.clone(), columns)?);
    }
    Ok(cast_batches)
}

/// The rows of `history_<name>` for `versions` of the keys in `changes`
/// (the fold's batch), whose origins are `origin`.
fn versions(
    dataset: &Dataset,
    (changes, origin): (&RecordBatch, &Origin),
    versions: &[Version],
) -> Result<RecordBatch, ArrowError> {
    let width = dataset.columns.len();
    let at = |f: fn(&Version) -> Option<u32>| -> UInt32Array { versions.iter().map(f).collect() };
    let values = at(|v| Some(v.values));
    let mut columns: Vec<ArrayRef> = Vec::with_capacity(width + 4);
    for c in 0..width {
        columns.push(take(changes.column(c), &values, None)?);
    }
    columns.extend(origin.of_rows(versions.iter().map(|v| v.values))?);
    let first = dataset.sequence_by.first().copied().unwrap_or(0);
    columns.push(take(changes.column(first), &at(|v| Some(v.start)), None)?);
    columns.push(take(changes.column(first), &at(|v| v.end), None)?);
    RecordBatch::try_new(schema(dataset), columns)
}

/// The filter of the history's rows whose first key column lies between the
/// least and the greatest of `touched`'s (every row, for a key type whose
/// literal may not compare with the table's column as is).
fn key_range(dataset: &Dataset, touched: &RecordBatch) -> Result<Expr, ArrowError> {
    let first = dataset.keys[0];
    let column = touched.column(first);
    if !crate::table::predicates::literal_compares(dataset.columns[first].ty) || column.is_empty() {
        return Ok(lit(true));
    }
    let sorted = deltalake::arrow::compute::sort_to_indices(column, None, None)?;
    let bound = |i: usize| ScalarValue::try_from_array(column, sorted.value(i) as usize);
    let (low, high) = (bound(0)?, bound(sorted.len() - 1)?);
    let name = &dataset.columns[first].name;
    Ok(crate::table::predicates::column(name).between(lit(low), lit(high)))
}

/// The rows of `held` (versions) whose key is not one of `touched`'s.
fn others(
    dataset: &Dataset,
    held: &RecordBatch,
    touched: &RecordBatch,
) -> Result<RecordBatch, ArrowError> {
    let keys = held.project(&dataset.keys)?;
    // In ascending order: walked once beside every row.
    let mut inside = Touched::of(dataset, touched)?
        .held(&keys)?
        .into_iter()
        .peekable();
    let kept: UInt32Array = (0..held.num_rows() as u32)
        .filter(|r| inside.next_if_eq(r).is_none())
        .map(Some)
        .collect();
    take_record_batch(held, &kept)
}
