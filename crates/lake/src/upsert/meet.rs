//! The table's data files as the engine's [`Target`]: listed from the log,
//! read from the object store a few at a time with their deletion vectors
//! applied; and the engine's first pass ([`deltaload_engine::meet`]) run
//! over them.

use super::files::TargetFile;
use super::read;
use crate::error::LakeError;
use crate::Lake;
use deltalake::arrow::datatypes::SchemaRef;
use deltalake::ObjectStore;
use deltaload_engine::{Aligned, FileRows, Met, Target};
use futures::stream::BoxStream;
use futures::StreamExt;
use std::sync::Arc;

/// A dataset's table, read by the engine.
pub(crate) struct DeltaTarget<'a> {
    pub store: Arc<dyn ObjectStore>,
    pub label: &'a str,
}

impl Target for DeltaTarget<'_> {
    type File = TargetFile;
    type Error = LakeError;

    fn read_all<'a>(
        &'a self,
        files: Vec<&'a TargetFile>,
        schema: &SchemaRef,
        wanted: &[usize],
    ) -> BoxStream<'a, Result<FileRows, LakeError>> {
        read::read_files(
            self.store.clone(),
            files.into_iter(),
            schema,
            wanted,
            self.label,
        )
        .boxed()
    }

    async fn read(
        &self,
        file: &TargetFile,
        schema: &SchemaRef,
        wanted: &[usize],
    ) -> Result<FileRows, LakeError> {
        let dv = file.add.deletion_vector.clone();
        read::read_columns(
            self.store.clone(),
            &file.path,
            dv,
            schema,
            wanted,
            self.label,
        )
        .await
    }

    fn name(file: &TargetFile) -> String {
        file.path.to_string()
    }
}

impl Lake {
    /// Reads the key, sequence and tie-break columns of the candidate files and
    /// decides what each change does to the row of its key.
    pub(super) async fn meet(
        &self,
        ds: usize,
        aligned: &Aligned,
        candidates: &[TargetFile],
    ) -> Result<Met, LakeError> {
        let dataset = &self.sets[ds].dataset;
        let target = DeltaTarget {
            store: self.sets[ds].target.object_store(),
            label: &dataset.name,
        };
        Ok(deltaload_engine::meet(dataset, aligned, candidates, &target).await?)
    }
}
