//! The versions of a merge-on-read dataset's history put in place as its
//! table's rows are: every version of the keys a file touches marked
//! deleted in a deletion vector, their versions folded again appended, in
//! one commit. Only the key columns of the history's files are read, and
//! only the new versions written (copy-on-write rewrites the touched keys'
//! range: [`super::write`]).

use super::write::{aligned, next_of, WRITER};
use crate::error::LakeError;
use crate::merge::MergedFile;
use crate::schema::TableName;
use crate::snapshot::rows_of;
use crate::upsert::{candidates, delta_error, read_files, stats_prefix, KeyBounds, TargetFile};
use crate::Lake;
use deltalake::arrow::array::RecordBatch;
use deltalake::arrow::datatypes::SchemaRef;
use deltalake::DeltaTable;
use deltaload_core::Dataset;
use deltaload_flow::FileKey;
use futures::StreamExt;
use std::collections::HashSet;

impl Lake {
    /// Puts `versions` (in key order) in place of every version of the keys
    /// of `touched` (the file `file`'s newest change per key) in dataset
    /// `ds`'s history, merge-on-read. Returns whether it wrote them: `false`
    /// when the history's table has a feature this write does not handle.
    pub(super) async fn mark_versions(
        &mut self,
        ds: usize,
        touched: &RecordBatch,
        versions: RecordBatch,
        file: &FileKey,
    ) -> Result<bool, LakeError> {
        let dataset = self.sets[ds].dataset.clone();
        let label = TableName::History(dataset.clone()).as_str();
        let Some(tables) = &mut self.sets[ds].history else {
            return Ok(true);
        };
        let table = &mut tables.versions;
        if let Some(reason) =
            crate::upsert::unsupported(table).map_err(delta_error(table, &label))?
        {
            tracing::debug!(table = %label, reason, "the history's versions replaced by range");
            return Ok(false);
        }
        crate::upsert::allow_deletion_vectors(table, &label).await?;
        let key = &dataset.columns[dataset.keys[0]].name;
        let bounds = KeyBounds::of_column(touched.column(dataset.keys[0]));
        let (files, _) = candidates(table, key, &bounds, stats_prefix(table))
            .await
            .map_err(delta_error(table, &label))?;
        let snapshot = table.snapshot().map_err(delta_error(table, &label))?;
        let schema = snapshot.snapshot().arrow_schema();
        let changed = touched_rows(table, &files, (&dataset, &schema), touched, &label).await?;
        let which: Vec<usize> = (0..files.len())
            .filter(|&f| !changed[f].1.is_empty())
            .collect();
        if which.is_empty() && versions.num_rows() == 0 {
            return Ok(true);
        }
        let store = table.object_store();
        let (removes, kept, dv_file) =
            crate::upsert::marked(&store, &files, &which, &changed, &label).await?;
        let rows = aligned(&schema, &[versions]).map_err(LakeError::arrow(&label))?;
        let named = MergedFile {
            location: &file.location,
            content_id: &file.content_id,
            counts: None,
        };
        let replacement = crate::upsert::Replacement {
            rows: Some(rows),
            written: Vec::new(),
            removes,
            kept,
            dv_file,
            cdc: Vec::new(),
            predicate: bounds.predicate(key),
            metadata: serde_json::json!({ "files": [named.to_json()] }),
            app: Some(next_of(WRITER, table)),
        };
        let sizes = (crate::ORDERS_FILE_BYTES, None);
        let (written, _) = crate::upsert::commit(table, replacement, sizes, &label).await?;
        *table = written;
        Ok(true)
    }
}

/// For each of `files` (of the history `table`, whose Arrow schema is
/// `schema`): its rows, and the positions of its live rows whose key is
/// one of `touched`'s.
async fn touched_rows(
    table: &DeltaTable,
    files: &[TargetFile],
    (dataset, schema): (&Dataset, &SchemaRef),
    touched: &RecordBatch,
    label: &str,
) -> Result<Vec<(u64, Vec<u64>)>, LakeError> {
    let arrow = || LakeError::arrow(label);
    let wanted = (dataset.keys.iter())
        .map(|&k| schema.index_of(&dataset.columns[k].name))
        .collect::<Result<Vec<usize>, _>>()
        .map_err(arrow())?;
    let keys = rows_of(touched, &dataset.keys).map_err(arrow())?;
    let gone: HashSet<&[u8]> = (0..touched.num_rows())
        .map(|i| keys.row(i).data())
        .collect();
    let all: Vec<usize> = (0..wanted.len()).collect();
    let store = table.object_store();
    let mut reads = read_files(store, files.iter(), schema, &wanted, label);
    let mut changed = Vec::with_capacity(files.len());
    while let Some(file) = reads.next().await {
        let file = file?;
        let found = rows_of(&file.batch, &all).map_err(arrow())?;
        let positions = (0..file.batch.num_rows() as u32)
            .filter(|&r| gone.contains(found.row(r as usize).data()))
            .map(|r| file.physical(r))
            .collect();
        changed.push((file.rows, positions));
    }
    Ok(changed)
}
