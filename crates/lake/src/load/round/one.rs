//! One file of a dataset with deletes, written as a file without deletes is:
//! its changes go to the table in Arrow, as they were read. Only the changes
//! a tombstone bears on are replayed first against their keys' rows, as a
//! round of several files is ([`attribute`]): the deletes (one is remembered
//! unless the table's row is newer) and the changes of keys with a
//! remembered delete. The tombstones are written in the order the replay of
//! a round writes them: new ones before the table's write, forgotten ones
//! after it.

use crate::load::options::LoadOptions;
use crate::table::error::LakeError;
use crate::write::{Made, Writer};
use deltalake::arrow::array::{ArrayRef, BooleanArray, UInt32Array};
use deltalake::arrow::compute::{concat_batches, filter_record_batch, not, take_record_batch};
use deltalake::arrow::record_batch::RecordBatch;
use deltaload_core::{attribute, Dataset, MergeCounts, Row, Tombstone, Value};
use deltaload_engine::changes::Changes;
use deltaload_engine::parsed::Parsed;
use deltaload_engine::read::changes_order;
use deltaload_engine::Order;
use std::collections::HashSet;

/// What the write of one file gave: its counts, the rows settling removed,
/// each with its tombstone, and what the writes made.
pub(super) type Written = (MergeCounts, Vec<(Row, Row)>, Made);

impl Writer<'_> {
    /// Writes `p` (one file, read whole) into the dataset's table as the
    /// module docs say. `None`, having written nothing, when the replayed
    /// changes' figures are not what the table's write would report (a key
    /// whose tombstone is newer than its row, left by a load that stopped
    /// or by another writer): the caller then replays the whole file.
    pub(super) async fn merge_one_with_deletes(
        &mut self,
        p: &Parsed,
        loaded_at: i64,
        opts: LoadOptions,
    ) -> Result<Option<Written>, LakeError> {
        let dataset = self.set.dataset.clone();
        let label = dataset.name.as_str();
        let batch = &p.changes;
        let keys: Vec<ArrayRef> = (dataset.keys.iter())
            .map(|&k| batch.column(k).clone())
            .collect();
        let dead = match dataset.keeps_tombstones() && batch.num_rows() > 0 {
            true => self.tombstones_at(keys.clone()).await?,
            false => Vec::new(),
        };
        let order = changes_order(&dataset)?;
        let mask = to_replay(&dataset, &order, batch, &dead)?;
        let replay = filter_record_batch(batch, &mask).map_err(LakeError::arrow(label))?;
        let direct = (not(&mask).and_then(|m| filter_record_batch(batch, &m)))
            .map_err(LakeError::arrow(label))?;
        let values = Changes::rows(&dataset, &replay)?;
        let replay_keys: Vec<Vec<Value>> = values.iter().map(|r| dataset.key_of(r)).collect();
        let current = match replay_keys.is_empty() {
            true => Vec::new(),
            false => self.current_rows(&replay_keys).await?,
        };
        let list = vec![values.iter().map(Vec::as_slice).collect::<Vec<_>>()];
        let plan = attribute(&dataset, &current, &dead, &list);
        if plan.per_file.first() != Some(&plan.expected) {
            return Ok(None);
        }
        self.tally.writes.replayed += values.len() as u64;
        let location = p.key.location.as_str();
        let winners: Vec<(&[Value], &str)> = (plan.winners.iter())
            .map(|(_, c)| (c.as_ref(), location))
            .collect();
        let winners = Changes::of_rows(&dataset, &winners)?.batch;
        let changes = Changes::of_file(by_key(&order, &direct, &winners, label)?, location);
        let (puts, clears): (Vec<Tombstone>, Vec<Tombstone>) =
            (plan.tombstones.iter().cloned()).partition(|t| matches!(t, Tombstone::Put(..)));
        let files = [super::merged(p, None)];
        self.write_tombstones(&puts, |_| location, &files, loaded_at)
            .await?;
        super::after_tombstones(opts, &puts);
        let (counts, made) = self.upsert_target(&changes, &files, loaded_at).await?;
        self.write_tombstones(&clears, |_| location, &files, loaded_at)
            .await?;
        let (removed, settled) = self.settle_at(keys, loaded_at).await?;
        Ok(Some((counts, removed, made.then(settled))))
    }
}

/// Which of `batch`'s changes a tombstone bears on: the deletes (of a
/// dataset that keeps tombstones) and the changes of keys in `dead`.
fn to_replay(
    dataset: &Dataset,
    order: &Order,
    batch: &RecordBatch,
    dead: &[Row],
) -> Result<BooleanArray, LakeError> {
    let label = dataset.name.as_str();
    let n = batch.num_rows();
    let deletes = match dataset.keeps_tombstones() {
        true => order.deletes(batch).map_err(LakeError::arrow(label))?,
        false => BooleanArray::from(vec![false; n]),
    };
    if dead.is_empty() {
        return Ok(deletes);
    }
    let rows: Vec<(&[Value], &str)> = dead.iter().map(|t| (t.as_slice(), "")).collect();
    let dead = Changes::of_rows(dataset, &rows)?.batch;
    let dead = order.keys(&dead).map_err(LakeError::arrow(label))?;
    let dead: HashSet<_> = dead.iter().collect();
    let keys = order.keys(batch).map_err(LakeError::arrow(label))?;
    Ok((0..n)
        .map(|i| Some(deletes.value(i) || dead.contains(&keys.row(i))))
        .collect())
}

/// The changes of `a` and `b` (each sorted by key, no key in both) in one
/// batch sorted by key, as the table's write takes them.
fn by_key(
    order: &Order,
    a: &RecordBatch,
    b: &RecordBatch,
    label: &str,
) -> Result<RecordBatch, LakeError> {
    if b.num_rows() == 0 {
        return Ok(a.clone());
    }
    let (ka, kb) = (
        order.keys(a).map_err(LakeError::arrow(label))?,
        order.keys(b).map_err(LakeError::arrow(label))?,
    );
    let (na, nb) = (ka.num_rows(), kb.num_rows());
    let mut at: Vec<u32> = Vec::with_capacity(na + nb);
    let (mut i, mut j) = (0, 0);
    while i < na || j < nb {
        if j == nb || (i < na && ka.row(i) < kb.row(j)) {
            at.push(i as u32);
            i += 1;
        } else {
            at.push((na + j) as u32);
            j += 1;
        }
    }
    let both = concat_batches(&a.schema(), [a, b]).map_err(LakeError::arrow(label))?;
    take_record_batch(&both, &UInt32Array::from(at)).map_err(LakeError::arrow(label))
}

#[cfg(test)]
mod tests {
    use super::*;
    use deltaload_core::Spec;

    fn dataset() -> Dataset {
        let spec = Spec::parse(
            "[[dataset]]\nname = \"t\"\nkeys = [\"k\"]\nsequence_by = [\"s\"]\n\
             delete_when = { column = \"op\", in = [\"d\"] }\n\
             columns = [{ name = \"k\", type = \"bigint\" }, { name = \"s\", type = \"bigint\" }, \
             { name = \"v\", type = \"string\" }]\n",
            "t.toml",
        )
        .unwrap();
        spec.datasets[0].as_ref().clone()
    }

    fn changes(d: &Dataset, rows: &[(i64, i64, bool)]) -> RecordBatch {
        let rows: Vec<Row> = (rows.iter())
            .map(|&(k, s, delete)| {
                vec![
                    Value::Int(k),
                    Value::Int(s),
                    Value::Null,
                    Value::Bool(delete),
                ]
            })
            .collect();
        let listed: Vec<(&[Value], &str)> = rows.iter().map(|r| (r.as_slice(), "f")).collect();
        Changes::of_rows(d, &listed).unwrap().batch
    }

    fn keys_of(d: &Dataset, batch: &RecordBatch) -> Vec<Value> {
        let rows = Changes::rows(d, batch).unwrap();
        rows.iter().map(|r| r[0].clone()).collect()
    }

    /// The deletes, and the upserts of keys with a tombstone, are replayed;
    /// the other upserts are not.
    #[test]
    fn deletes_and_the_keys_of_tombstones_are_replayed() {
        let d = dataset();
        let order = changes_order(&d).unwrap();
        let batch = changes(
            &d,
            &[(1, 5, false), (2, 5, true), (3, 5, false), (4, 5, false)],
        );
        let dead = vec![vec![
            Value::Int(3),
            Value::Int(4),
            Value::Null,
            Value::Bool(true),
        ]];
        let mask = to_replay(&d, &order, &batch, &dead).unwrap();
        let flags: Vec<bool> = (0..4).map(|i| mask.value(i)).collect();
        assert_eq!(flags, [false, true, true, false]);
    }

    /// Two batches sorted by key come out as one sorted by key.
    #[test]
    fn two_sorted_batches_are_merged_by_key() {
        let d = dataset();
        let order = changes_order(&d).unwrap();
        let a = changes(&d, &[(1, 1, false), (4, 1, false), (9, 1, false)]);
        let b = changes(&d, &[(2, 1, true), (5, 1, false), (10, 1, false)]);
        let got = keys_of(&d, &by_key(&order, &a, &b, "t").unwrap());
        let want: Vec<Value> = [1, 2, 4, 5, 9, 10].map(Value::Int).to_vec();
        assert_eq!(got, want);
    }
}
