//! The remembered deletes of a dataset (`tombstones_<name>`): read for the
//! keys a load touches, and changed from the keys' newest changes (new ones in
//! a MERGE before the table's, forgotten ones in a MERGE after it), so that
//! writing them again changes nothing.

use crate::table::arrow_rows::{self, DELETE_FLAG};
use crate::table::error::LakeError;
use crate::table::predicates::{join_predicate, sequence_predicate, side};
use crate::write::merge::{MergedFile, COMMIT_KEY};
use crate::write::Writer;
use deltalake::arrow::array::ArrayRef;
use deltalake::datafusion::common::Column;
use deltalake::datafusion::prelude::lit;
use deltalake::operations::merge::MergeBuilder;
use deltalake::DeltaTableError;
use deltaload_core::{Dataset, Row, Tombstone, Value};
use deltaload_engine::tables::{tombstone_columns, TableName};
use serde_json::json;

impl Writer<'_> {
    /// The tombstones of these keys (none for a dataset that keeps none).
    pub(crate) async fn tombstones_of(
        &mut self,
        keys: &[Vec<Value>],
    ) -> Result<Vec<Row>, LakeError> {
        let keys = crate::write::keys::key_columns(&self.set.dataset, keys);
        self.tombstones_at(keys).await
    }

    /// The tombstones of the keys in these key columns (as
    /// [`crate::write::keys::key_columns`] gives them; none for a dataset that keeps none).
    pub(crate) async fn tombstones_at(
        &mut self,
        keys: Vec<ArrayRef>,
    ) -> Result<Vec<Row>, LakeError> {
        let dataset = self.set.dataset.clone();
        let Some(table) = &self.set.tombstones else {
            return Ok(Vec::new());
        };
        let kept: Vec<usize> = tombstone_columns(&dataset).collect();
        let name = TableName::Tombstones(dataset.clone());
        let found = self.keyed(&dataset, table, &name, &kept, keys).await?;
        let mut rows = Vec::new();
        for batch in &found {
            rows.extend(arrow_rows::tombstone_rows(&dataset, batch)?);
        }
        Ok(rows)
    }

    /// Applies `changes` to the dataset's tombstones in one MERGE (no commit
    /// when there are none): a put is inserted, or replaces an older
    /// tombstone; a clear removes the key's. The commit names `files`.
    pub(crate) async fn write_tombstones<'a>(
        &mut self,
        changes: &[Tombstone<'_>],
        location: impl Fn(usize) -> &'a str,
        files: &[MergedFile<'_>],
        loaded_at: i64,
    ) -> Result<(), LakeError> {
        let dataset = self.set.dataset.clone();
        let (Some(table), false) = (&self.set.tombstones, changes.is_empty()) else {
            return Ok(());
        };
        let name = TableName::Tombstones(dataset.clone());
        let label = name.as_str();
        let url = table.table_url().clone();
        let rows: Vec<(&[Value], &str, bool)> = changes
            .iter()
            .map(|t| match t {
                Tombstone::Put(file, row) => (*row, location(*file), true),
                Tombstone::Clear(row) => (*row, "", false),
            })
            .collect();
        let batch = arrow_rows::tombstones(&dataset, &rows, loaded_at)?;
        let source = self
            .ctx
            .read_batch(batch)
            .map_err(LakeError::query(&label))?;
        let files: Vec<serde_json::Value> =
            files.iter().copied().map(MergedFile::to_json).collect();
        let props = crate::table::commit_properties()
            .with_metadata([(COMMIT_KEY.to_string(), json!({ "files": files }))]);
        let builder = (table.clone())
            .merge(source, join_predicate(&dataset, &[]))
            .with_source_alias("s")
            .with_target_alias("t")
            .with_commit_properties(props);
        let (table, _) = tombstone_clauses(builder, &dataset)
            .map_err(LakeError::delta(&label, &url))?
            .await
            .map_err(LakeError::delta(&label, &url))?;
        self.set.tombstones = Some(table);
        Ok(())
    }
}

/// The tombstones MERGE's clauses: a new delete remembered (or replacing an
/// older tombstone), a forgotten one removed only if no newer one replaced
/// it meanwhile.
fn tombstone_clauses(
    builder: MergeBuilder,
    dataset: &Dataset,
) -> Result<MergeBuilder, DeltaTableError> {
    let flag = side("s", DELETE_FLAG);
    let newer = sequence_predicate(dataset, false).unwrap_or(lit(true));
    let not_newer = sequence_predicate(dataset, true).unwrap_or(lit(true));
    let columns: Vec<String> = tombstone_columns(dataset)
        .map(|i| dataset.columns[i].name.clone())
        .chain(["source_file".to_string(), "loaded_at".to_string()])
        .collect();
    let set = |c: &String| (Column::new_unqualified(c), side("s", c));
    builder
        // Forget a tombstone only if no newer one replaced it meanwhile.
        .when_matched_delete(|d| d.predicate((!flag.clone()).and(not_newer)))?
        .when_matched_update(|u| {
            let u = u.predicate(flag.clone().and(newer));
            columns.iter().fold(u, |u, c| {
                let (column, value) = set(c);
                u.update(column, value)
            })
        })?
        .when_not_matched_insert(|i| {
            let i = i.predicate(flag.clone());
            columns.iter().fold(i, |i, c| {
                let (column, value) = set(c);
                i.set(column, value)
            })
        })
}

#[cfg(test)]
mod tests {
    use crate::{lake_url, Lake};
    use deltaload_core::{Spec, Tombstone, Value};

    /// Found by a review: a load that re-inserted a row forgets the tombstone it
    /// saw; another writer may have replaced that tombstone with a newer delete
    /// meanwhile, which must stay.
    #[tokio::test]
    async fn forgetting_a_tombstone_keeps_a_newer_one_written_meanwhile() {
        let spec = Spec::parse(
            "[[dataset]]\nname = \"t\"\nkeys = [\"k\"]\nsequence_by = [\"s\"]\n\
             delete_when = { column = \"op\", in = [\"d\"] }\n\
             [[dataset.columns]]\nname = \"k\"\ntype = \"int\"\n\
             [[dataset.columns]]\nname = \"s\"\ntype = \"int\"\n",
            "t.toml",
        )
        .unwrap();
        let dir = tempfile::tempdir().unwrap();
        let root = lake_url(dir.path().to_str().unwrap()).unwrap();
        let mut lake = Lake::open_spec(&root, &spec).await.unwrap();
        let dead = |s: i64| vec![Value::Int(1), Value::Int(s), Value::Bool(true)];
        let (old, newer) = (dead(3), dead(5));
        let at = |_: usize| "f";
        lake.writer(0)
            .write_tombstones(&[Tombstone::Put(0, &newer)], at, &[], 0)
            .await
            .unwrap();
        lake.writer(0)
            .write_tombstones(&[Tombstone::Clear(&old)], at, &[], 0)
            .await
            .unwrap();
        let keys = vec![vec![Value::Int(1)]];
        let kept = lake.writer(0).tombstones_of(&keys).await.unwrap();
        assert_eq!(kept, vec![newer], "the newer delete is remembered");
        lake.writer(0)
            .write_tombstones(&[Tombstone::Clear(&dead(5))], at, &[], 0)
            .await
            .unwrap();
        assert!(lake
            .writer(0)
            .tombstones_of(&keys)
            .await
            .unwrap()
            .is_empty());
    }
}
