//! A copy-on-write upsert's new files, written a group of rewritten files at
//! a time ([`deltaload_engine::groups`]): a group's files are read, their
//! rows and the group's inserts put together sorted by key and written,
//! before the next group is read. What is held at once is a group, never
//! the whole rewrite. The rows are cut into files of the table's file size
//! by count (from the rewritten files' figures), and what is left of a
//! group, less than a file, goes at the head of the next group's rows, so
//! a load writes no more small files than one.

use super::aligned::{updated_mask, Aligned};
use super::commit;
use super::files::TargetFile;
use super::read;
use crate::table::error::LakeError;
use crate::write::Writer;
use deltalake::arrow::compute::concat_batches;
use deltalake::arrow::record_batch::RecordBatch;
use deltalake::kernel::Add;
use deltaload_engine::{Group, Met, Picks};
use futures::StreamExt;

/// The rows written so far, and those of a group not yet a whole file.
struct Output {
    adds: Vec<Add>,
    carry: Option<RecordBatch>,
    /// Rows per new file (`None`: unknown, the writer cuts by bytes).
    per_file: Option<usize>,
}

impl Writer<'_> {
    /// The new files of a copy-on-write upsert whose changes `aligned` met
    /// `candidates` as `met` says: the rewritten files' rows and the
    /// `inserted` changes, written by groups.
    pub(super) async fn rewrite_met(
        &self,
        aligned: &Aligned,
        (candidates, met): (&[TargetFile], &Met),
        inserted: &[u32],
    ) -> Result<(Vec<Add>, u64), LakeError> {
        let rewritten = met.rewritten();
        let sizes: Vec<u64> = candidates
            .iter()
            .map(|c| c.add.size.max(0) as u64)
            .collect();
        let most = (self.settings.budget)
            .rewrite_group_bytes()
            .min(self.settings.rewrite_group_bytes);
        let mut groups = deltaload_engine::groups(met, &rewritten, &sizes, inserted, most);
        let dataset = &self.set.dataset;
        if let [k] = dataset.keys[..] {
            let keys = aligned.changes.column(aligned.position[k]);
            super::edges::place_by_key(&mut groups, candidates, keys, &dataset.columns[k].name);
        }
        let known: Vec<&TargetFile> = match rewritten.is_empty() {
            true => candidates.iter().collect(),
            false => rewritten.iter().map(|&f| &candidates[f]).collect(),
        };
        let mut out = Output {
            adds: Vec::new(),
            carry: None,
            per_file: rows_per_file(&known, crate::table::ORDERS_FILE_BYTES),
        };
        let last = groups.len().saturating_sub(1);
        for (i, group) in groups.iter().enumerate() {
            let rows = self.group_rows(aligned, candidates, met, group).await?;
            self.write_rows(&mut out, rows, i == last).await?;
        }
        let (label, written) = (&self.set.dataset.name, groups.len() as u64);
        tracing::debug!(table = %label, groups = written, files = out.adds.len(), "rewrite written by groups");
        Ok((out.adds, written))
    }

    /// A group's rows: its files read whole with the changes to their rows
    /// applied, and its inserts, sorted by key.
    async fn group_rows(
        &self,
        aligned: &Aligned,
        candidates: &[TargetFile],
        met: &Met,
        group: &Group,
    ) -> Result<RecordBatch, LakeError> {
        let dataset = &self.set.dataset;
        let label = dataset.name.as_str();
        let width = aligned.schema.fields().len();
        let all: Vec<usize> = (0..width).collect();
        let store = self.set.target.object_store();
        let files = group.files.iter().map(|&f| &candidates[f]);
        let mut reads = read::read_files(store, files, &aligned.schema, &all, label);
        let (n, mut picks) = (group.files.len(), Picks::default());
        picks.reborn_in(n, aligned.flags());
        let mut read = Vec::with_capacity(n);
        while let Some(file) = reads.next().await {
            let file = file?.batch;
            picks.file(
                read.len(),
                file.num_rows(),
                n,
                &met.hits[group.files[read.len()]],
            );
            read.push(file);
        }
        drop(reads);
        picks.inserts(n, &group.inserts);
        let mut sources: Vec<&RecordBatch> = read.iter().collect();
        sources.push(&aligned.changes);
        let updated = updated_mask(dataset, &aligned.schema);
        let keys: Vec<usize> = dataset.keys.iter().map(|&k| aligned.position[k]).collect();
        let columns =
            (picks.assemble(&sources, width, &updated, &keys)).map_err(LakeError::arrow(label))?;
        RecordBatch::try_new(aligned.schema.clone(), columns).map_err(LakeError::arrow(label))
    }

    /// Writes `rows`, after what the last group left, in whole files; keeps
    /// what is left for the next group unless this is the `last`. Only what
    /// was left and the rows that fill its file are copied together.
    async fn write_rows(
        &self,
        out: &mut Output,
        rows: RecordBatch,
        last: bool,
    ) -> Result<(), LakeError> {
        let label = self.set.dataset.name.as_str();
        let table = &self.set.target;
        let Some(per_file) = out.per_file else {
            let written = commit::write_files(table, &rows, crate::table::ORDERS_FILE_BYTES, label);
            out.adds.extend(written.await?);
            return Ok(());
        };
        let mut parts = Vec::new();
        let mut rows = rows;
        if let Some(carry) = out.carry.take() {
            let fill = per_file
                .saturating_sub(carry.num_rows())
                .min(rows.num_rows());
            let head = concat_batches(&rows.schema(), [&carry, &rows.slice(0, fill)])
                .map_err(LakeError::arrow(label))?;
            rows = rows.slice(fill, rows.num_rows() - fill);
            match head.num_rows() < per_file && !last {
                true => out.carry = Some(head),
                false => parts.push(head),
            }
        }
        let whole = match last {
            true => rows.num_rows(),
            false => rows.num_rows() / per_file * per_file,
        };
        if whole < rows.num_rows() {
            out.carry = Some(rows.slice(whole, rows.num_rows() - whole));
        }
        parts.extend(commit::slices(&rows.slice(0, whole), per_file));
        let written = commit::write_pieces(table, parts, crate::table::ORDERS_FILE_BYTES, label);
        out.adds.extend(written.await?);
        Ok(())
    }
}

/// The rows of a file of `file_bytes`, as `files` (with their figures) hold
/// them; `None` when none gives its count of rows.
fn rows_per_file(files: &[&TargetFile], file_bytes: u64) -> Option<usize> {
    let (mut rows, mut bytes) = (0u64, 0u64);
    for f in files {
        let stats = super::files::stats_of(&f.add);
        let Some(n) = stats
            .as_ref()
            .and_then(|s| s.get("numRecords"))
            .and_then(|n| n.as_u64())
        else {
            continue;
        };
        rows = rows.saturating_add(n);
        bytes = bytes.saturating_add(f.add.size.max(0) as u64);
    }
    if rows == 0 || bytes == 0 {
        return None;
    }
    let per = (rows as u128 * file_bytes as u128 / bytes as u128) as u64;
    Some(per.clamp(1, u32::MAX as u64) as usize)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn file(size: i64, stats: Option<&str>) -> TargetFile {
        TargetFile {
            path: deltalake::Path::from("a.parquet"),
            remove: Default::default(),
            add: Add {
                size,
                stats: stats.map(str::to_string),
                ..Default::default()
            },
        }
    }

    #[test]
    fn rows_per_file_follow_the_files_figures() {
        let a = file(1000, Some(r#"{"numRecords":100}"#));
        let b = file(3000, Some(r#"{"numRecords":500}"#));
        let none = file(5000, None);
        assert_eq!(rows_per_file(&[&a, &b, &none], 4000), Some(600));
        assert_eq!(rows_per_file(&[&none], 4000), None);
        assert_eq!(rows_per_file(&[], 4000), None);
        let tiny = file(1 << 40, Some(r#"{"numRecords":1}"#));
        assert_eq!(rows_per_file(&[&tiny], 10), Some(1));
    }
}
