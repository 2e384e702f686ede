//! The table's data files as the engine's [`Target`]: listed from the log,
//! read from the object store a few at a time with their deletion vectors
//! applied; and the engine's first pass ([`deltaload_engine::meet`]) run
//! over them.

use super::files::TargetFile;
use super::read;
use crate::table::error::LakeError;
use crate::write::Writer;
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

impl Writer<'_> {
    /// Reads the key, sequence and tie-break columns of the candidate files and
    /// decides what each change does to the row of its key.
    pub(super) async fn meet(
        &self,
        aligned: &Aligned,
        candidates: &[TargetFile],
    ) -> Result<Met, LakeError> {
        let dataset = &self.set.dataset;
        let target = DeltaTarget {
            store: self.set.target.object_store(),
            label: &dataset.name,
        };
        Ok(deltaload_engine::meet(dataset, aligned, candidates, &target).await?)
    }
}

#[cfg(test)]
mod tests {
    use crate::SourceFile;
    use deltaload_core::Value;

    const SPEC: &str = "[[dataset]]\nname = \"t\"\nkeys = [\"k\"]\nsequence_by = [\"s\"]\n\
        [[dataset.columns]]\nname = \"k\"\ntype = \"bigint\"\n\
        [[dataset.columns]]\nname = \"s\"\ntype = \"int\"\n\
        [[dataset.columns]]\nname = \"v\"\ntype = \"string\"\n";

    /// The tie-break columns of a file are read (and the changes ranked on
    /// them) only when a change meets a row of its own sequence there; the
    /// greater tie-break value wins either way.
    #[tokio::test]
    async fn tie_break_columns_are_read_only_for_a_change_of_its_rows_sequence() {
        let (_dir, mut lake) = crate::test_lake(SPEC).await;
        let mut reread = Vec::new();
        for (name, text) in [
            ("f1.csv", "k,s,v\n1,1,a\n2,1,a\n"),
            ("f2.csv", "k,s,v\n1,1,b\n"),
            ("f3.csv", "k,s,v\n2,2,c\n"),
            ("f4.csv", "k,s,v\n1,1,a\n"),
        ] {
            let file = SourceFile::in_memory(format!("/landing/{name}"), text.into());
            lake.load(&file, Default::default()).await.unwrap();
            reread.push(lake.orders_files().reread);
        }
        assert_eq!(reread, [0, 1, 1, 2], "reread files, summed after each load");
        let keys = [vec![Value::Int(1)], vec![Value::Int(2)]];
        let rows = lake.writer(0).current_rows(&keys).await.unwrap();
        let mut values: Vec<(Value, Value)> =
            rows.iter().map(|r| (r[0].clone(), r[2].clone())).collect();
        values.sort_by_key(|(k, _)| format!("{k:?}"));
        let text = |v: &str| Value::Text(v.to_string());
        assert_eq!(
            values,
            [(Value::Int(1), text("b")), (Value::Int(2), text("c"))]
        );
    }
}
