//! The table's rows for a batch's keys, and the check that none of them
//! appears twice: both join the table with the keys registered as a table.

use crate::error::LakeError;
use crate::predicates::{batch_ranges, integer_key, within_ranges};
use crate::schema::{arrow_type, quoted, TableName};
use crate::table::{first_long, query};
use crate::{arrow_rows, values, Lake};
use deltalake::arrow::datatypes::{Field, Schema};
use deltalake::arrow::record_batch::RecordBatch;
use deltaload_core::{Dataset, Row, Value};
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

/// The whole numbers among `values` (those of an integer key column).
pub(crate) fn integers<'a>(values: impl Iterator<Item = &'a Value>) -> Vec<i64> {
    values
        .filter_map(|v| match v {
            Value::Int(i) => Some(*i),
            _ => None,
        })
        .collect()
}

impl Lake {
    /// Registers `keys` as a table of columns `k0`, `k1`, ... for a join.
    pub(crate) fn register_keys(
        &self,
        dataset: &Dataset,
        keys: &[Vec<Value>],
    ) -> Result<(), LakeError> {
        let label = dataset.name.as_str();
        let mut fields = Vec::new();
        let mut arrays = Vec::new();
        for (j, &k) in dataset.keys.iter().enumerate() {
            let ty = dataset.columns[k].ty;
            fields.push(Field::new(format!("k{j}"), arrow_type(ty), true));
            arrays.push(values::array(ty, keys.iter().map(|key| &key[j])));
        }
        let batch = RecordBatch::try_new(Arc::new(Schema::new(fields)), arrays)
            .map_err(LakeError::arrow(label))?;
        self.ctx
            .deregister_table(KEYS)
            .and_then(|_| self.ctx.register_batch(KEYS, batch))
            .map_err(LakeError::query(label))?;
        Ok(())
    }

    /// The table's rows for these keys.
    pub(crate) async fn current_rows(
        &mut self,
        ds: usize,
        keys: &[Vec<Value>],
    ) -> Result<Vec<Row>, LakeError> {
        let dataset = self.sets[ds].dataset.clone();
        let all: Vec<usize> = (0..dataset.columns.len()).collect();
        let name = TableName::Target(dataset.clone());
        let found = self
            .keyed(&dataset, &self.sets[ds].target, &name, &all, keys)
            .await?;
        let mut current = Vec::new();
        for batch in &found {
            current.extend(arrow_rows::target_rows(&dataset, batch)?);
        }
        Ok(current)
    }

    /// The dataset's `columns` (indexes) of the rows of `table` (registered
    /// as `name`) whose key is one of `keys`.
    pub(crate) async fn keyed(
        &self,
        dataset: &Dataset,
        table: &deltalake::DeltaTable,
        name: &TableName,
        columns: &[usize],
        keys: &[Vec<Value>],
    ) -> Result<Vec<RecordBatch>, LakeError> {
        self.register_keys(dataset, keys)?;
        let columns: Vec<String> = columns
            .iter()
            .map(|&i| format!("t.{}", quoted(&dataset.columns[i].name)))
            .collect();
        let sql = format!(
            "SELECT {} FROM {} t JOIN {KEYS} b ON {}",
            columns.join(", "),
            name.sql(),
            key_join(dataset)
        );
        query(&self.ctx, table, name, &sql).await
    }

    /// Fails when a key of this load's `rows` appears twice in the dataset's table.
    pub(crate) async fn check_unique_keys(
        &mut self,
        ds: usize,
        rows: &[&[Value]],
    ) -> Result<(), LakeError> {
        if rows.is_empty() {
            return Ok(());
        }
        let dataset = self.sets[ds].dataset.clone();
        let name = TableName::Target(dataset.clone());
        let table = dataset.name.as_str();
        let from = quoted(table);
        let (sql, scope) = match (integer_key(&dataset), dataset.keys.len()) {
            (Some(column), 1) => {
                // The same ranges as the MERGE's: the files it skipped are not read here either.
                let ids = integers(rows.iter().map(|r| &r[dataset.keys[0]]));
                let ranges = batch_ranges(&ids);
                let (min, max) = (
                    ranges.first().map_or(0, |r| r.0),
                    ranges.last().map_or(0, |r| r.1),
                );
                (
                    format!(
                        "SELECT count(*) - count(DISTINCT {column}) FROM {from} WHERE {}",
                        within_ranges(&column, &ranges)
                    ),
                    format!("{} value(s) of this load (between {min} and {max})", column),
                )
            }
            _ => {
                // Files of one round may change the same key: each key once.
                let mut keys: Vec<Vec<Value>> = rows.iter().map(|r| dataset.key_of(r)).collect();
                keys.sort_unstable();
                keys.dedup();
                self.register_keys(&dataset, &keys)?;
                let key_columns: Vec<String> = dataset
                    .keys
                    .iter()
                    .map(|&k| format!("t.{}", quoted(&dataset.columns[k].name)))
                    .collect();
                (
                    format!(
                        "SELECT count(*) FROM (SELECT 1 FROM {from} t JOIN {KEYS} b ON {} \
                         GROUP BY {} HAVING count(*) > 1)",
                        key_join(&dataset),
                        key_columns.join(", ")
                    ),
                    format!(
                        "key(s) ({}) of this load",
                        dataset.names(&dataset.keys).join(", ")
                    ),
                )
            }
        };
        let batches = query(&self.ctx, &self.sets[ds].target, &name, &sql).await?;
        let doubled = match batches.iter().find(|b| b.num_rows() > 0) {
            Some(batch) => first_long(batch.column(0))?.unwrap_or(0),
            None => 0,
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
