//! Writing a keyed upsert's files and committing them, as a MERGE, in one commit.

use crate::table::error::LakeError;
use deltalake::arrow::record_batch::RecordBatch;
use deltalake::kernel::transaction::CommitProperties;
use deltalake::kernel::{Action, Add, MetadataExt as _, Remove};
use deltalake::logstore::object_store::prefix::PrefixStore;
use deltalake::logstore::ObjectStoreRef;
use deltalake::operations::write::writer::{DeltaWriter, WriterConfig};
use deltalake::operations::write::WriterStatsConfig;
use deltalake::parquet::basic::Compression;
use deltalake::parquet::file::properties::WriterProperties;
use deltalake::protocol::DeltaOperation;
use deltalake::DeltaTable;
use object_store::ObjectStoreExt as _;
use std::num::NonZeroU64;
use std::sync::Arc;

/// Rows from which the new files are written by several tasks at once.
const PARALLEL_ROWS: usize = 200_000;

/// What an upsert commits: the rows of its new files, the files they replace,
/// the key ranges it read, and the metadata naming the loaded file versions.
pub(crate) struct Replacement {
    pub rows: Option<RecordBatch>,
    /// New files written already (a load by slices).
    pub written: Vec<Add>,
    pub removes: Vec<Remove>,
    /// Files kept with a new deletion vector (each also among the removes).
    pub kept: Vec<Add>,
    /// The file holding the new deletion vectors: its path and bytes.
    pub dv_file: Option<(deltalake::Path, Vec<u8>)>,
    /// The change data feed's files, written already (their `cdc` actions).
    pub cdc: Vec<Action>,
    /// What the upsert read, for the conflict check (`None`: the whole table).
    pub predicate: Option<deltalake::datafusion::prelude::Expr>,
    pub metadata: serde_json::Value,
    /// The application transaction the commit records (`None`: none).
    pub app: Option<deltalake::kernel::Transaction>,
}

/// Commits `actions` to `table` as `operation` with `properties`, read at
/// the table's version (a commit since then is checked for conflicts), and
/// returns the table at the new version.
pub(crate) async fn commit_actions(
    table: &DeltaTable,
    actions: Vec<deltalake::kernel::Action>,
    operation: deltalake::protocol::DeltaOperation,
    properties: deltalake::kernel::transaction::CommitProperties,
    label: &str,
) -> Result<DeltaTable, LakeError> {
    let delta = || LakeError::delta(label, table.table_url());
    let snapshot = table.snapshot().map_err(delta())?;
    let done = deltalake::kernel::transaction::CommitBuilder::from(properties)
        .with_actions(actions)
        .build(Some(snapshot), table.log_store(), operation)
        .await
        .map_err(delta())?;
    Ok(at_commit(table, &done))
}

/// The table as of a commit just made through it: the state delta-rs
/// brought to that version after the commit (reading the commits since the
/// table's own version, others' included), without reading the log again.
fn at_commit(
    table: &DeltaTable,
    done: &deltalake::kernel::transaction::FinalizedCommit,
) -> DeltaTable {
    let mut table = table.clone();
    table.state = Some(done.snapshot());
    table
}

/// Writes the new files (at most `file_bytes` each) and commits them with the
/// removes as one MERGE whose read predicate is `predicate`: a concurrent
/// commit adding or removing files there conflicts with this one. A
/// snapshot's `mark` (its dataset's high-water marks) is set in the same
/// commit, whose metadata action also conflicts with any other such commit.
/// Returns the table at the new version and how many files were added.
pub(crate) async fn commit(
    table: &DeltaTable,
    replacement: Replacement,
    (file_bytes, mark): (u64, Option<String>),
    label: &str,
) -> Result<(DeltaTable, u64), LakeError> {
    let url = table.table_url().clone();
    let snapshot = table.snapshot().map_err(LakeError::delta(label, &url))?;
    let mut actions: Vec<Action> = replacement.written.into_iter().map(Action::Add).collect();
    if let Some(rows) = replacement.rows.filter(|r| r.num_rows() > 0) {
        let adds = write_files(table, &rows, file_bytes, label).await?;
        actions.extend(adds.into_iter().map(Action::Add));
    }
    let added = actions.len() as u64;
    if let Some((path, bytes)) = replacement.dv_file {
        table
            .object_store()
            .put(&path, bytes.into())
            .await
            .map_err(|e| LakeError::Invariant {
                table: label.to_string(),
                detail: format!("writing deletion vector file {path}: {e}"),
            })?;
    }
    actions.extend(replacement.kept.into_iter().map(Action::Add));
    actions.extend(replacement.cdc);
    actions.extend(replacement.removes.into_iter().map(Action::Remove));
    if let Some(mark) = mark {
        let metadata = snapshot.metadata().clone();
        let key = deltaload_engine::snapshot::marks::MARKS_PROPERTY.to_string();
        actions.push(Action::Metadata(
            (metadata.add_config_key(key, mark))
                .map_err(|e| LakeError::delta(label, &url)(e.into()))?,
        ));
    }
    // The operation records its read predicate as text, which the conflict
    // check parses: DataFusion's unparser writes it, every value a literal.
    let predicate = replacement
        .predicate
        .as_ref()
        .map(crate::table::predicates::sql_of)
        .transpose()?;
    let operation = DeltaOperation::Merge {
        predicate: predicate.clone(),
        merge_predicate: predicate,
        matched_predicates: Vec::new(),
        not_matched_predicates: Vec::new(),
        not_matched_by_source_predicates: Vec::new(),
    };
    let mut properties = crate::table::commit_properties().with_metadata([(
        crate::write::merge::COMMIT_KEY.to_string(),
        replacement.metadata,
    )]);
    if let Some(app) = replacement.app {
        properties = properties.with_application_transaction(app);
    }
    let table = commit_actions(table, actions, operation, properties, label).await?;
    Ok((table, added))
}

/// Writes `rows` into new data files of at most `file_bytes` each, not yet
/// committed; returns their add actions.
pub(crate) async fn write_files(
    table: &DeltaTable,
    rows: &RecordBatch,
    file_bytes: u64,
    label: &str,
) -> Result<Vec<Add>, LakeError> {
    write_parts(table, parts(rows), file_bytes, label).await
}

/// Appends `rows` (in the table's schema) to `table` in one commit made
/// with `properties`, their files written a part per core (delta-rs's
/// write encodes one batch on one core). Returns the table as committed.
pub(crate) async fn append(
    table: &DeltaTable,
    rows: &RecordBatch,
    properties: CommitProperties,
    label: &str,
) -> Result<DeltaTable, LakeError> {
    let adds = write_files(table, rows, crate::table::ORDERS_FILE_BYTES, label).await?;
    let operation = DeltaOperation::Write {
        mode: deltalake::protocol::SaveMode::Append,
        partition_by: None,
        predicate: None,
    };
    let actions = adds.into_iter().map(Action::Add).collect();
    commit_actions(table, actions, operation, properties, label).await
}

/// Writes `batches` (of one schema) into new files under the table's
/// folder `under` (as [`write_files`] does, without a size limit per file),
/// not yet committed; returns their add actions, each path relative to
/// `under`.
pub(crate) async fn write_under(
    table: &DeltaTable,
    batches: &[RecordBatch],
    under: &str,
    label: &str,
) -> Result<Vec<Add>, LakeError> {
    let store = Arc::new(PrefixStore::new(table.object_store(), under));
    let parts = batches.iter().flat_map(parts).collect();
    write_parts_to(table, store, parts, None, label).await
}

/// `rows` cut for writing: large outputs into consecutive key ranges, one
/// per core, each written by a task of its own (Parquet encoding is the
/// costliest step, and the files stay range-disjoint).
fn parts(rows: &RecordBatch) -> Vec<RecordBatch> {
    let parts = match rows.num_rows() >= PARALLEL_ROWS {
        true => cores(),
        false => 1,
    };
    slices(rows, rows.num_rows().div_ceil(parts).max(1))
}

/// Writes each of `pieces` into a new data file of its own (cut short only
/// past twice `file_bytes`), each by a task of its own, a task per core at
/// a time. Returns their add actions.
pub(crate) async fn write_pieces(
    table: &DeltaTable,
    pieces: Vec<RecordBatch>,
    file_bytes: u64,
    label: &str,
) -> Result<Vec<Add>, LakeError> {
    write_parts(table, pieces, file_bytes.saturating_mul(2), label).await
}

/// `rows` in consecutive slices of `chunk` rows (the last fewer).
pub(crate) fn slices(rows: &RecordBatch, chunk: usize) -> Vec<RecordBatch> {
    let n = rows.num_rows();
    (0..n)
        .step_by(chunk.max(1))
        .map(|start| rows.slice(start, chunk.min(n - start)))
        .collect()
}

/// The cores this process may use (1 when unknown).
fn cores() -> usize {
    std::thread::available_parallelism().map_or(1, |n| n.get())
}

/// Writes each of `parts` by a writer of its own (files of at most
/// `file_bytes`), a task per core at a time, in order.
async fn write_parts(
    table: &DeltaTable,
    parts: Vec<RecordBatch>,
    file_bytes: u64,
    label: &str,
) -> Result<Vec<Add>, LakeError> {
    let store = table.object_store();
    write_parts_to(table, store, parts, NonZeroU64::new(file_bytes), label).await
}

/// [`write_parts`] into `store` (the table's, or a folder of it), files of
/// at most `file_bytes` when given.
async fn write_parts_to(
    table: &DeltaTable,
    store: ObjectStoreRef,
    parts: Vec<RecordBatch>,
    file_bytes: Option<NonZeroU64>,
    label: &str,
) -> Result<Vec<Add>, LakeError> {
    use futures::StreamExt;
    let url = table.table_url().clone();
    let snapshot = table.snapshot().map_err(LakeError::delta(label, &url))?;
    let Some(schema) = parts.first().map(RecordBatch::schema) else {
        return Ok(Vec::new());
    };
    let stats = WriterStatsConfig::from_config(snapshot.snapshot().table_configuration());
    let config = WriterConfig::new(
        schema,
        Vec::new(),
        Some(writer_properties()),
        file_bytes,
        None,
        stats.num_indexed_cols,
        stats.stats_columns,
    );
    let mut writers = futures::stream::iter(parts)
        .map(|part| {
            let (store, config) = (store.clone(), config.clone());
            tokio::spawn(async move {
                let mut writer = DeltaWriter::new(store, config);
                writer.write(&part).await?;
                writer.close().await
            })
        })
        .buffered(cores());
    let mut written = Vec::new();
    while let Some(adds) = writers.next().await {
        let adds = adds
            .map_err(|e| LakeError::Invariant {
                table: label.to_string(),
                detail: format!("a writer of new data files failed: {e}"),
            })?
            .map_err(LakeError::delta(label, &url))?;
        written.extend(adds);
    }
    Ok(written)
}

/// A column's dictionary kept while it is at most this large (Parquet's
/// default is 1 MiB): a column of mostly distinct values (keys, times,
/// amounts) is hashed value by value until its dictionary reaches the
/// limit, which cost about a tenth of a large load's time; columns of few
/// values (a status, a currency) keep theirs.
const DICTIONARY_BYTES: usize = 64 * 1024;

/// How new data files are written: delta-rs's settings (Snappy), the
/// dictionary given up sooner.
fn writer_properties() -> WriterProperties {
    WriterProperties::builder()
        .set_created_by(format!("deltaload version {}", env!("CARGO_PKG_VERSION")))
        .set_compression(Compression::SNAPPY)
        .set_dictionary_page_size_limit(DICTIONARY_BYTES)
        .build()
}

#[cfg(test)]
#[path = "commit_tests.rs"]
pub(crate) mod tests;
