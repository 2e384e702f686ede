//! The trace a load leaves in its table's history: each MERGE commit names the
//! file versions it loaded, so a rerun of a load that died after its MERGE
//! finds that commit and its counts instead of merging again.

use crate::table::error::LakeError;
use crate::write::merge::{MergeCommit, COMMIT_KEY};
use crate::write::Writer;
use deltaload_core::MergeCounts;
use deltaload_flow::FileKey;
use serde_json::Value as Json;
use std::collections::HashMap;

impl Writer<'_> {
    /// Finds the MERGE commits after version `from` that loaded these file
    /// versions: the trace of loads that committed to `orders` but died before
    /// their ledger rows were written.
    pub(crate) async fn find_merge_commits(
        &self,
        from: Option<u64>,
        keys: &[FileKey],
    ) -> Result<HashMap<FileKey, MergeCommit>, LakeError> {
        let mut found = HashMap::new();
        let Some(latest) = self.set.target.version() else {
            return Ok(found);
        };
        let first = from.unwrap_or(0).saturating_add(1);
        if first > latest || keys.is_empty() {
            return Ok(found);
        }
        let target = &self.set.target;
        let label = self.set.dataset.name.clone();
        let url = target.table_url().clone();
        let log_store = target.log_store();
        // Newest first, each commit read by its version: the log may already hold
        // commits newer than this snapshot (other writers), which are not ours.
        for version in (first..=latest).rev() {
            let Some(bytes) = log_store
                .read_commit_entry(version)
                .await
                .map_err(LakeError::delta(&label, &url))?
            else {
                continue;
            };
            for (key, counts) in files_of_commit(&bytes) {
                if !found.contains_key(&key) && keys.contains(&key) {
                    found.insert(key, MergeCommit { version, counts });
                }
            }
        }
        Ok(found)
    }
}

/// The `commitInfo` action of a commit file (newline-delimited JSON actions).
fn commit_info(bytes: &[u8]) -> Option<serde_json::Map<String, Json>> {
    bytes
        .split(|b| *b == b'\n')
        .filter_map(|line| serde_json::from_slice::<Json>(line).ok())
        .find_map(|action| match action {
            Json::Object(mut o) => match o.remove("commitInfo") {
                Some(Json::Object(info)) => Some(info),
                _ => None,
            },
            _ => None,
        })
}

/// The files a deltaload commit names in its metadata, each with its
/// counts (from the operation's metrics where the file's own are missing:
/// a commit of one file written before batches, named at the top level);
/// none for another writer's commit.
fn files_of_commit(bytes: &[u8]) -> Vec<(FileKey, MergeCounts)> {
    let Some(info) = commit_info(bytes) else {
        return Vec::new();
    };
    let Some(meta) = info.get(COMMIT_KEY) else {
        return Vec::new();
    };
    let metrics = info.get("operationMetrics");
    let metric = |k: &str| metrics.and_then(|m| m.get(k)).and_then(Json::as_u64);
    let files = match meta.get("files").and_then(Json::as_array) {
        Some(files) => files.clone(),
        None => vec![meta.clone()],
    };
    let mut out = Vec::new();
    for file in files {
        let text = |k: &str| file.get(k).and_then(Json::as_str).map(str::to_string);
        let (Some(location), Some(content_id)) = (text("location"), text("content_id")) else {
            continue;
        };
        let count = |k: &str, m: &str| file.get(k).and_then(Json::as_u64).or_else(|| metric(m));
        let counts = MergeCounts {
            inserted: count("inserted", "num_target_rows_inserted").unwrap_or(0),
            updated: count("updated", "num_target_rows_updated").unwrap_or(0),
            deleted: count("deleted", "num_target_rows_deleted").unwrap_or(0),
            retired: file.get("retired").and_then(Json::as_u64).unwrap_or(0),
            ..MergeCounts::default()
        };
        out.push((
            FileKey {
                location,
                content_id,
            },
            counts,
        ));
    }
    out
}
