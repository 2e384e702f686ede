//! The table's rows for a batch's keys, and the check that none of them
//! appears twice: both join the table with the keys registered as a table.

use crate::table::arrow_rows;
use crate::table::error::LakeError;
use crate::table::frame;
use crate::table::predicates::{self, batch_ranges, integer_key, within_ranges};
use crate::table::{first_row_long, query};
use crate::write::Writer;
use deltalake::arrow::array::ArrayRef;
use deltalake::arrow::datatypes::{Field, Schema};
use deltalake::arrow::record_batch::RecordBatch;
use deltalake::datafusion::functions_aggregate::expr_fn::{count, count_distinct};
use deltalake::datafusion::prelude::{lit, Expr, SessionContext};
use deltaload_core::{Dataset, Row, Value};
use deltaload_engine::keys::{distinct_keys, integers, key_integers};
use deltaload_engine::tables::{arrow_type, quoted, TableName};
use deltaload_ingest::values;
use std::sync::Arc;

/// The name the batch's keys are registered under for a join.
const KEYS: &str = "deltaload_batch_keys";

/// `t.k = b.k0 AND ...`: the table's rows of the registered keys.
pub(crate) fn key_join(dataset: &Dataset) -> String {
    dataset
        .keys
        .iter()
        .enumerate()
        .map(|(j, &k)| format!("t.{} = b.k{j}", quoted(&dataset.columns[k].name)))
        .collect::<Vec<_>>()
        .join(" AND ")
}

/// `keys` (each the values of the dataset's key columns) as key columns,
/// one array per key column, in key order.
pub(crate) fn key_columns(dataset: &Dataset, keys: &[Vec<Value>]) -> Vec<ArrayRef> {
    dataset
        .keys
        .iter()
        .enumerate()
        .map(|(j, &k)| values::array(dataset.columns[k].ty, keys.iter().map(|key| &key[j])))
        .collect()
}

/// Registers the key columns `arrays` (one per key column, in key order)
/// in `ctx` as a table of columns `k0`, `k1`, ... for a join.
fn register_key_columns(
    ctx: &SessionContext,
    dataset: &Dataset,
    arrays: Vec<ArrayRef>,
) -> Result<(), LakeError> {
    let label = dataset.name.as_str();
    let fields: Vec<Field> = dataset
        .keys
        .iter()
        .enumerate()
        .map(|(j, &k)| Field::new(format!("k{j}"), arrow_type(dataset.columns[k].ty), true))
        .collect();
    let batch = RecordBatch::try_new(Arc::new(Schema::new(fields)), arrays)
        .map_err(LakeError::arrow(label))?;
    ctx.deregister_table(KEYS)
        .and_then(|_| ctx.register_batch(KEYS, batch))
        .map_err(LakeError::query(label))?;
    Ok(())
}

/// A query context for joins of a table with a batch of keys
/// ([`keyed_rows`]): the keys, in memory already, build one hash table that
/// every partition of the table's scan probes, where DataFusion would
/// repartition both sides by hash for more than 128K keys (copying every
/// row of the table once more on the way).
pub(crate) fn keys_session() -> SessionContext {
    let ctx = deltalake::delta_datafusion::create_session().into_inner();
    {
        let state = ctx.state_ref();
        let mut state = state.write();
        let optimizer = &mut state.config_mut().options_mut().optimizer;
        optimizer.hash_join_single_partition_threshold = 1 << 30;
        optimizer.hash_join_single_partition_threshold_rows = 1 << 27;
    }
    ctx
}

/// Every column of the rows of `table` (registered in `ctx` as `name`,
/// keyed as `dataset`) whose key is one of `keys` (key columns, each key
/// once).
pub(crate) async fn keyed_rows(
    ctx: &SessionContext,
    dataset: &Dataset,
    table: &deltalake::DeltaTable,
    name: &TableName,
    keys: Vec<ArrayRef>,
) -> Result<Vec<RecordBatch>, LakeError> {
    register_key_columns(ctx, dataset, keys)?;
    query(ctx, table, name, &keyed_rows_sql(dataset, name)).await
}

/// The query of [`keyed_rows`].
fn keyed_rows_sql(dataset: &Dataset, name: &TableName) -> String {
    format!(
        "SELECT t.* FROM {} t JOIN {KEYS} b ON {}",
        name.sql(),
        key_join(dataset)
    )
}

impl Writer<'_> {
    /// The table's rows for these keys.
    pub(crate) async fn current_rows(
        &mut self,
        keys: &[Vec<Value>],
    ) -> Result<Vec<Row>, LakeError> {
        let dataset = self.set.dataset.clone();
        let all: Vec<usize> = (0..dataset.columns.len()).collect();
        let name = TableName::Target(dataset.clone());
        let keys = key_columns(&dataset, keys);
        let found = self
            .keyed(&dataset, &self.set.target, &name, &all, keys)
            .await?;
        let mut current = Vec::new();
        for batch in &found {
            current.extend(arrow_rows::target_rows(&dataset, batch)?);
        }
        Ok(current)
    }

    /// The dataset's `columns` (indexes) of the rows of `table` (registered
    /// as `name`) whose key is one of `keys` (key columns, as
    /// [`key_columns`] gives them). With an integer key, only the files
    /// whose statistics may hold one of the keys are read.
    pub(crate) async fn keyed(
        &self,
        dataset: &Dataset,
        table: &deltalake::DeltaTable,
        name: &TableName,
        columns: &[usize],
        keys: Vec<ArrayRef>,
    ) -> Result<Vec<RecordBatch>, LakeError> {
        let within = match (integer_key(dataset), dataset.keys.len(), keys.first()) {
            (Some(column), 1, Some(first)) => {
                let ranges = batch_ranges(&integers(first));
                Some(within_ranges(predicates::side("t", &column), &ranges))
            }
            _ => None,
        };
        let sql = self.keyed_sql(dataset, name, columns, keys, within)?;
        query(self.ctx, table, name, &sql).await
    }

    /// The query of [`Writer::keyed`], the keys registered; `within`, a
    /// filter of the table's rows (an integer key's ranges).
    fn keyed_sql(
        &self,
        dataset: &Dataset,
        name: &TableName,
        columns: &[usize],
        keys: Vec<ArrayRef>,
        within: Option<Expr>,
    ) -> Result<String, LakeError> {
        register_key_columns(self.ctx, dataset, keys)?;
        let columns: Vec<String> = columns
            .iter()
            .map(|&i| format!("t.{}", quoted(&dataset.columns[i].name)))
            .collect();
        let mut sql = format!(
            "SELECT {} FROM {} t JOIN {KEYS} b ON {}",
            columns.join(", "),
            name.sql(),
            key_join(dataset)
        );
        if let Some(within) = within {
            // Written by DataFusion's unparser, as the MERGE's predicates are.
            sql.push_str(&format!(" WHERE {}", predicates::sql_of(&within)?));
        }
        Ok(sql)
    }

    /// Fails when a key of this load's changes (batches of
    /// `deltaload_ingest::changes_schema`) appears twice in the dataset's table.
    pub(crate) async fn check_unique_keys(
        &mut self,
        changes: &[&RecordBatch],
    ) -> Result<(), LakeError> {
        if changes.iter().all(|b| b.num_rows() == 0) {
            return Ok(());
        }
        let dataset = self.set.dataset.clone();
        let name = TableName::Target(dataset.clone());
        let table = dataset.table_name();
        let from = quoted(table);
        let (doubled, scope) = match (integer_key(&dataset), dataset.keys.len()) {
            (Some(column), 1) => {
                // The same ranges as the MERGE's: the files it skipped are not read here either.
                let ranges = batch_ranges(&key_integers(&dataset, changes));
                let (min, max) = (
                    ranges.first().map_or(0, |r| r.0),
                    ranges.last().map_or(0, |r| r.1),
                );
                let doubled = self.doubled_within(&column, &ranges).await?;
                let scope = format!("{column} value(s) of this load (between {min} and {max})");
                (doubled, scope)
            }
            _ => {
                // Files of one round may change the same key: each key once.
                let keys = distinct_keys(&dataset, changes)?;
                register_key_columns(self.ctx, &dataset, keys)?;
                let key_columns: Vec<String> = dataset
                    .keys
                    .iter()
                    .map(|&k| format!("t.{}", quoted(&dataset.columns[k].name)))
                    .collect();
                let sql = format!(
                    "SELECT count(*) FROM (SELECT 1 FROM {from} t JOIN {KEYS} b ON {} \
                     GROUP BY {} HAVING count(*) > 1)",
                    key_join(&dataset),
                    key_columns.join(", ")
                );
                let batches = query(self.ctx, &self.set.target, &name, &sql).await?;
                let scope = format!(
                    "key(s) ({}) of this load",
                    dataset.names(&dataset.keys).join(", ")
                );
                (first_row_long(&batches, 0)?, scope)
            }
        };
        if doubled != 0 {
            return Err(LakeError::Invariant {
                table: table.to_string(),
                detail: format!(
                    "{doubled} {scope} appear more than once; \
                     stop loading and inspect the table history (deltaload show {table})"
                ),
            });
        }
        Ok(())
    }
}

impl Writer<'_> {
    /// Rows of the dataset's table whose integer key `column` lies in
    /// `ranges`, less the distinct keys among them: the keys held twice.
    async fn doubled_within(&self, column: &str, ranges: &[(i64, i64)]) -> Result<i64, LakeError> {
        let dataset = &self.set.dataset;
        let (name, label) = (TableName::Target(dataset.clone()), dataset.name.as_str());
        let key = predicates::column(column);
        let counts = vec![
            count(lit(1)).alias("rows"),
            count_distinct(key.clone()).alias("keys"),
        ];
        let counted = frame(self.ctx, &self.set.target, &name)
            .await?
            .filter(within_ranges(key, ranges))
            .and_then(|f| f.aggregate(vec![], counts))
            .map_err(LakeError::query(label))?
            .collect()
            .await
            .map_err(LakeError::query(label))?;
        Ok(first_row_long(&counted, 0)? - first_row_long(&counted, 1)?)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::Lake;
    use deltalake::arrow::array::Int64Array;
    use deltalake::datafusion::physical_plan::displayable;
    use deltalake::protocol::SaveMode;

    /// A new lake whose orders table holds orders 1 to `n`.
    async fn orders(n: i64) -> (tempfile::TempDir, Lake) {
        let dir = tempfile::tempdir().unwrap();
        let root = crate::lake_url(dir.path().to_str().unwrap()).unwrap();
        let mut lake = Lake::open(&root).await.unwrap();
        let rows = crate::write::upsert::commit::tests::orders(1..=n);
        let table = lake.tables.sets[0].target.clone();
        let written = table.write(vec![rows]).with_save_mode(SaveMode::Append);
        lake.tables.sets[0].target = written.await.unwrap();
        (dir, lake)
    }

    /// 200,000 keys joined with a table of 300,000 rows: the keys build one
    /// hash table (`CollectLeft`) in [`keys_session`], where a default
    /// context repartitions both sides (`Partitioned`); the rows are the same.
    #[tokio::test]
    async fn a_large_batch_of_keys_builds_one_hash_table() {
        let (_dir, lake) = orders(300_000).await;
        let d = lake.tables.sets[0].dataset.clone();
        let (table, name) = (&lake.tables.sets[0].target, TableName::Target(d.clone()));
        let keys: ArrayRef = Arc::new(Int64Array::from_iter_values(100_001..=300_000));
        let sql = keyed_rows_sql(&d, &name);
        let default = deltalake::delta_datafusion::create_session().into_inner();
        for (ctx, mode) in [(keys_session(), "CollectLeft"), (default, "Partitioned")] {
            register_key_columns(&ctx, &d, vec![keys.clone()]).unwrap();
            let planned = crate::table::prepared(&ctx, table, &name, &sql, Vec::new());
            let plan = planned.await.unwrap().create_physical_plan().await.unwrap();
            let text = displayable(plan.as_ref()).indent(true).to_string();
            assert!(text.contains(&format!("mode={mode}")), "{text}");
            let read = keyed_rows(&ctx, &d, table, &name, vec![keys.clone()]).await;
            let rows: usize = read.unwrap().iter().map(RecordBatch::num_rows).sum();
            assert_eq!(rows, 200_000);
        }
    }
}
