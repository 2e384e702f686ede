//! Merge-on-read: the changed rows of a file marked deleted in a new deletion
//! vector (with those its old vector marks), the file kept.

use super::dv;
use super::files::TargetFile;
use crate::table::error::LakeError;
use crate::write::Writer;
use deltalake::kernel::{Add, Remove};
use deltalake::{ObjectStore, Path};
use roaring::RoaringTreemap;
use std::sync::Arc;

/// The property that lets a table hold deletion vectors.
const ENABLE: &str = "delta.enableDeletionVectors";

/// For the files `changed` names (indexes into `files`), with their rows and
/// the positions of their changed rows: the removes, the files added back
/// with their new vector, and the file of the vectors. A file left with no
/// row is removed only.
#[allow(clippy::type_complexity)]
pub(crate) async fn marked(
    store: &Arc<dyn ObjectStore>,
    files: &[TargetFile],
    which: &[usize],
    changed: &[(u64, Vec<u64>)],
    label: &str,
) -> Result<(Vec<Remove>, Vec<Add>, Option<(Path, Vec<u8>)>), LakeError> {
    let failed = |detail: String| LakeError::Invariant {
        table: label.to_string(),
        detail,
    };
    let mut removes = Vec::with_capacity(which.len());
    let mut kept: Vec<Add> = Vec::new();
    let mut vectors = Vec::new();
    for &f in which {
        let file = &files[f];
        let mut deleted = match &file.add.deletion_vector {
            Some(d) => dv::read(store, d).await.map_err(&failed)?,
            None => RoaringTreemap::new(),
        };
        let (rows, positions) = &changed[f];
        deleted.extend(positions.iter().copied());
        removes.push(file.remove.clone());
        if deleted.len() < *rows {
            kept.push(file.add.clone());
            vectors.push(deleted);
        }
    }
    if vectors.is_empty() {
        return Ok((removes, kept, None));
    }
    let (path, bytes, descriptors) = dv::write(&vectors).map_err(&failed)?;
    for (add, descriptor) in kept.iter_mut().zip(descriptors) {
        add.deletion_vector = Some(descriptor);
        add.data_change = true;
        add.stats = add.stats.as_deref().map(loose_bounds);
    }
    Ok((removes, kept, Some((path, bytes))))
}

/// Statistics of a file some of whose rows are deleted: the bounds still
/// hold every live row, but are no longer tight.
fn loose_bounds(stats: &str) -> String {
    match serde_json::from_str::<serde_json::Value>(stats) {
        Ok(serde_json::Value::Object(mut o)) => {
            o.insert("tightBounds".into(), serde_json::Value::Bool(false));
            serde_json::Value::Object(o).to_string()
        }
        _ => stats.to_string(),
    }
}

impl Writer<'_> {
    /// Lets the dataset's table hold deletion vectors (a protocol upgrade,
    /// once: readers without deletion vector support can no longer read it).
    pub(crate) async fn enable_deletion_vectors(&mut self) -> Result<(), LakeError> {
        let set = &mut *self.set;
        allow_deletion_vectors(&mut set.target, &set.dataset.name).await
    }
}

/// Lets `table` hold deletion vectors (a protocol upgrade, once: readers
/// without deletion vector support can no longer read it).
pub(crate) async fn allow_deletion_vectors(
    table: &mut deltalake::DeltaTable,
    label: &str,
) -> Result<(), LakeError> {
    if crate::table::properties::property(table, label, ENABLE)?.is_some_and(|v| v == "true") {
        return Ok(());
    }
    tracing::info!(table = %label, "enabling deletion vectors for merge_on_read");
    crate::table::properties::set_property(table, label, ENABLE, "true").await
}
