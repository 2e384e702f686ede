//! The history written beside the dataset's table: a round's files go to
//! the history in a task of their own while the table's commit is made on
//! the round's task, so that the two writes share the cores instead of
//! following each other.
//!
//! Either may commit first. Each can run again and change nothing (the log
//! takes a file's changes once, the versions are a function of the log),
//! and a round that fails either is loaded again: the table's commit is
//! then recovered ([`crate::load::recovery`]) and the history written in the
//! round as for any recovered file. The ledger's entry, which ends a load,
//! waits for both.
//! A load dropped while the task runs leaves it to end alone (its writes
//! are as safe as any stopped write); the next writer opens the tables
//! again.

use super::write::{FileChanges, HistoryWriter};
use super::HistoryTables;
use crate::table::error::LakeError;
use crate::write::Writer;
use deltalake::arrow::array::RecordBatch;
use deltaload_engine::parsed::Parsed;
use deltaload_flow::FileKey;
use tokio::task::JoinHandle;

/// What a file gives its history, owned by the history's task.
struct Owned {
    key: FileKey,
    touched: RecordBatch,
    all: Option<RecordBatch>,
}

/// What the history's task gives back: the writer, with its tables, and
/// each file's versions opened and closed.
type Written = (HistoryWriter, Result<Vec<(u64, u64)>, LakeError>);

/// A round's history being written: each file's versions opened and
/// closed once it ends, and the tables to give back.
pub(crate) struct Pending {
    task: JoinHandle<Written>,
}

impl Writer<'_> {
    /// Writes a file's `changes` into the dataset's history (nothing for
    /// a dataset that keeps none). Returns the versions opened and closed.
    pub(crate) async fn write_changes_history(
        &mut self,
        changes: FileChanges<'_>,
        loaded_at: i64,
    ) -> Result<(u64, u64), LakeError> {
        let Some(mut writer) = self.history_writer().await? else {
            return Ok((0, 0));
        };
        let written = writer.write(changes, loaded_at).await;
        self.set.history = Some(writer.into_tables());
        written
    }

    /// Starts writing the files `parsed` into the dataset's history, in
    /// their order, on a task of its own (`forced`: the load was forced,
    /// [`super::write::FileChanges::forced`]): `None` for a dataset that keeps
    /// none, and for a snapshot dataset (its history follows its commit).
    /// [`Writer::finish_history`] must follow.
    pub(crate) async fn spawn_history(
        &mut self,
        parsed: &[Parsed],
        (loaded_at, forced): (i64, bool),
    ) -> Result<Option<Pending>, LakeError> {
        if self.set.dataset.snapshot.is_some() {
            return Ok(None);
        }
        let Some(mut writer) = self.history_writer().await? else {
            return Ok(None);
        };
        let files: Vec<Owned> = (parsed.iter())
            .map(|p| Owned {
                key: p.key.clone(),
                touched: p.changes.clone(),
                all: p.all.clone(),
            })
            .collect();
        let task = tokio::spawn(async move {
            let mut versions = Vec::with_capacity(files.len());
            for f in &files {
                let Some(all) = &f.all else {
                    versions.push((0, 0));
                    continue;
                };
                let changes = FileChanges {
                    key: &f.key,
                    touched: &f.touched,
                    all,
                    forced,
                };
                match writer.write(changes, loaded_at).await {
                    Ok(written) => versions.push(written),
                    Err(e) => return (writer, Err(e)),
                }
            }
            (writer, Ok(versions))
        });
        Ok(Some(Pending { task }))
    }

    /// Waits for the history `pending` (none: no versions, `files` times)
    /// and takes its tables back. Returns each file's versions opened and
    /// closed.
    pub(crate) async fn finish_history(
        &mut self,
        pending: Option<Pending>,
        files: usize,
    ) -> Result<Vec<(u64, u64)>, LakeError> {
        let Some(Pending { task }) = pending else {
            return Ok(vec![(0, 0); files]);
        };
        match task.await {
            Ok((writer, written)) => {
                self.set.history = Some(writer.into_tables());
                written
            }
            Err(stopped) => {
                // The tables went with the task: the next writer opens them.
                Err(LakeError::Invariant {
                    table: self.set.dataset.history_table(),
                    detail: format!("the history's writing stopped: {stopped}"),
                })
            }
        }
    }

    /// A writer of the dataset's history, holding its tables until they
    /// are given back: `None` for a dataset that keeps none. Tables not
    /// given back (a load dropped while its history's task ran) are opened
    /// again.
    async fn history_writer(&mut self) -> Result<Option<HistoryWriter>, LakeError> {
        let dataset = self.set.dataset.clone();
        if dataset.history.is_none() {
            return Ok(None);
        }
        let tables = match self.set.history.take() {
            Some(tables) => tables,
            None => HistoryTables::open(self.root, &dataset).await?,
        };
        Ok(Some(HistoryWriter::new(dataset, tables)))
    }
}
