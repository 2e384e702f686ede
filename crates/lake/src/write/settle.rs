//! After a load's writes, the keys it touched are settled against what other
//! writers committed meanwhile: the tombstones and a dataset's table are two
//! Delta tables, so a writer that read a key before another's tombstone was
//! written may have inserted a row older than that tombstone (and the other
//! writer, whose delete found no row, made no commit to conflict with). Each
//! writer checks after its own writes, so of two such writers the later check
//! sees both: a row older than its key's tombstone is removed, a tombstone
//! older than its key's row forgotten.

use crate::table::error::LakeError;
use crate::table::refresh;
use crate::write::{Made, Writer};
use deltalake::arrow::array::{Array, ArrayRef};
use deltaload_core::{Row, Tombstone, Value};
use deltaload_engine::tables::TableName;
use std::collections::HashMap;

impl Writer<'_> {
    /// Settles `keys` of the dataset (see the module docs); returns the rows
    /// removed, each with the tombstone that removed it, and what the
    /// removal made.
    pub(crate) async fn settle(
        &mut self,
        keys: &[Vec<Value>],
        loaded_at: i64,
    ) -> Result<(Vec<(Row, Row)>, Made), LakeError> {
        let keys = crate::write::keys::key_columns(&self.set.dataset, keys);
        self.settle_at(keys, loaded_at).await
    }

    /// Settles the keys in these key columns (as [`crate::write::keys::key_columns`]
    /// gives them), as [`Writer::settle`] does. Only keys with a tombstone can
    /// be unsettled, so the table's rows are read for those alone.
    pub(crate) async fn settle_at(
        &mut self,
        keys: Vec<ArrayRef>,
        loaded_at: i64,
    ) -> Result<(Vec<(Row, Row)>, Made), LakeError> {
        let dataset = self.set.dataset.clone();
        if !dataset.keeps_tombstones() || keys.first().is_none_or(|k| k.is_empty()) {
            return Ok((Vec::new(), Made::default()));
        }
        let set = &mut *self.set;
        refresh(&mut set.target, &TableName::Target(dataset.clone())).await?;
        if let Some(t) = &mut set.tombstones {
            refresh(t, &TableName::Tombstones(dataset.clone())).await?;
        }
        let dead = self.tombstones_at(keys).await?;
        if dead.is_empty() {
            return Ok((Vec::new(), Made::default()));
        }
        let dead_keys: Vec<Vec<Value>> = dead.iter().map(|t| dataset.key_of(t)).collect();
        let current = self.current_rows(&dead_keys).await?;
        let rows: HashMap<Vec<Value>, &Row> =
            current.iter().map(|r| (dataset.key_of(r), r)).collect();
        let mut removed: Vec<(Row, Row)> = Vec::new();
        let mut forgotten: Vec<&Row> = Vec::new();
        let mut made = Made::default();
        for tombstone in &dead {
            let Some(&row) = rows.get(&dataset.key_of(tombstone)) else {
                continue;
            };
            match dataset.replaces(tombstone, row) {
                true => removed.push((row.clone(), tombstone.clone())),
                false => forgotten.push(tombstone),
            }
        }
        if !removed.is_empty() {
            tracing::info!(
                table = %dataset.name,
                rows = removed.len(),
                "rows older than their key's tombstone (another writer deleted them meanwhile) removed"
            );
            let rows: Vec<(&[Value], &str)> =
                removed.iter().map(|(_, t)| (t.as_slice(), "")).collect();
            let changes = deltaload_engine::changes::Changes::of_rows(&dataset, &rows)?;
            made = self.merge_target(&changes, &[], loaded_at).await?.1;
        }
        let clears: Vec<Tombstone> = forgotten.into_iter().map(|t| Tombstone::Clear(t)).collect();
        self.write_tombstones(&clears, |_| "", &[], loaded_at)
            .await?;
        Ok((removed, made))
    }
}

#[cfg(test)]
mod tests {
    use crate::{lake_url, Lake, SourceFile};
    use deltaload_core::{Spec, Tombstone, Value};

    fn file(name: &str, line: &str) -> SourceFile {
        SourceFile::in_memory(format!("/landing/{name}"), line.as_bytes().to_vec())
    }

    /// Found by a review: writer B read key 1 before writer A remembered its
    /// delete (seq 7, a key with no row, so A made no table commit), then
    /// inserted the key's older change (seq 6). The next load touching the key
    /// removes the row; a tombstone older than its key's row is forgotten.
    #[tokio::test]
    async fn a_row_older_than_its_tombstone_is_removed_and_an_older_tombstone_forgotten() {
        let spec = Spec::parse(
            "[[dataset]]\nname = \"t\"\nformat = \"jsonl\"\nkeys = [\"k\"]\nsequence_by = [\"s\"]\n\
             delete_when = { column = \"op\", in = [\"d\"] }\n\
             [[dataset.columns]]\nname = \"k\"\ntype = \"int\"\n\
             [[dataset.columns]]\nname = \"s\"\ntype = \"int\"\n",
            "t.toml",
        )
        .unwrap();
        let dir = tempfile::tempdir().unwrap();
        let root = lake_url(dir.path().to_str().unwrap()).unwrap();
        let mut lake = Lake::open_spec(&root, &spec).await.unwrap();
        lake.load(&file("b.jsonl", r#"{"k":1,"s":6}"#), Default::default())
            .await
            .unwrap();
        lake.load(&file("c.jsonl", r#"{"k":2,"s":9}"#), Default::default())
            .await
            .unwrap();
        let dead = |k: i64, s: i64| vec![Value::Int(k), Value::Int(s), Value::Bool(true)];
        let (seven, eight) = (dead(1, 7), dead(2, 8));
        let puts = [Tombstone::Put(0, &seven), Tombstone::Put(0, &eight)];
        lake.writer(0)
            .write_tombstones(&puts, |_| "a.jsonl", &[], 0)
            .await
            .unwrap();
        // Any later load touching the keys settles them.
        let later = file("d.jsonl", "{\"k\":1,\"s\":6}\n{\"k\":2,\"s\":9}\n");
        lake.load(&later, Default::default()).await.unwrap();
        let keys = vec![vec![Value::Int(1)], vec![Value::Int(2)]];
        let rows = lake.writer(0).current_rows(&keys).await.unwrap();
        assert_eq!(rows, vec![vec![Value::Int(2), Value::Int(9)]]);
        let kept = lake.writer(0).tombstones_of(&keys).await.unwrap();
        assert_eq!(kept, vec![seven]);
    }
}
