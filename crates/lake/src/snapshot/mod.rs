//! Snapshot feeds (`mode = "snapshot"`): each file is the whole content of
//! the table, or of the scopes it holds. A snapshot as new as the newest
//! loaded of a scope ([`marks`]) makes the scope's rows its own: new keys
//! inserted, changed rows updated, equal rows left alone, and the rows of
//! keys it no longer holds deleted ([`diff`]). An older one changes nothing
//! there, in any load order. The rows and the new marks are one commit of
//! the keyed upsert, so two snapshots committing at once conflict.

mod history;

use crate::table::error::LakeError;
use crate::write::merge::MergedFile;
use crate::write::{Made, Writer};
use deltalake::arrow::array::{AsArray, RecordBatch};
use deltalake::arrow::compute::{cast, concat_batches};
use deltalake::arrow::datatypes::{DataType, Int64Type};
use deltalake::datafusion::common::ScalarValue;
use deltalake::datafusion::prelude::{lit, Expr};
use deltalake::DeltaTable;
use deltaload_core::{key_date, key_dates, Dataset, MergeCounts, Snapshot, SnapshotOrder};
use deltaload_engine::changes::Changes;
use deltaload_engine::parsed::Parsed;
use deltaload_engine::snapshot::diff;
use deltaload_engine::snapshot::marks::MARKS_PROPERTY;
use deltaload_engine::snapshot::marks::{Marks, Verdict};
use deltaload_engine::tables::TableName;
use std::sync::Arc;

/// Why the file at `location` cannot be placed among its dataset's
/// snapshots (`None`: it can, or the dataset's files are changes).
pub(crate) fn unordered(dataset: &Dataset, location: &str) -> Option<String> {
    let SnapshotOrder::KeyDate(format) = &dataset.snapshot.as_ref()?.order else {
        return None;
    };
    match key_dates(location, format).as_slice() {
        [] => Some(format!(
            "the object key holds no date written as snapshot_key_date {format:?} writes it, \
             so the snapshot cannot be ordered: rename the object, or change snapshot_key_date"
        )),
        [_] => None,
        several => {
            let shown = (several.iter())
                .filter_map(|&t| chrono::DateTime::from_timestamp_micros(t))
                .map(|t| t.format("%Y-%m-%dT%H:%M:%SZ").to_string());
            Some(format!(
                "the object key holds {} different dates written as snapshot_key_date {format:?} \
                 writes them ({}), so the snapshot cannot be ordered: write the format so that \
                 it reads only the snapshot's date (with the text around it, such as \
                 \"exports_%Y%m%d\"), or rename the object",
                several.len(),
                shown.collect::<Vec<_>>().join(", ")
            ))
        }
    }
}

/// The sequence of the snapshot `p`: its key's date, or the greatest value
/// of its sequence column (`None` for a file without rows).
fn sequence(snapshot: &Snapshot, p: &Parsed, label: &str) -> Result<Option<i64>, LakeError> {
    match &snapshot.order {
        SnapshotOrder::KeyDate(format) => Ok(key_date(&p.key.location, format)),
        SnapshotOrder::Column(c) => {
            let column = p.changes.column(*c);
            let longs = match column.data_type() {
                DataType::Date32 => {
                    cast(column, &DataType::Int32).and_then(|days| cast(&days, &DataType::Int64))
                }
                _ => cast(column, &DataType::Int64),
            }
            .map_err(LakeError::arrow(label))?;
            Ok(deltalake::arrow::compute::max(
                longs.as_primitive::<Int64Type>(),
            ))
        }
    }
}

/// A snapshot held against its table.
struct Held {
    /// The snapshot's sequence.
    at: i64,
    /// What it changes.
    diff: diff::Diff,
    /// The marks to commit, when it applies in some scope.
    mark: Option<String>,
    /// Whether they are newer than the table's.
    renewed: bool,
}

/// The figures of a snapshot's commit: what the upsert deleted, the
/// snapshot retired (its files hold no deletes).
pub(crate) fn retired(counts: MergeCounts) -> MergeCounts {
    MergeCounts {
        retired: counts.retired + counts.deleted,
        deleted: 0,
        ..counts
    }
}

impl Writer<'_> {
    /// Loads the snapshot `p` into the dataset's table, at `loaded_at`
    /// (`forced`: loaded again on purpose); returns the upsert's counts (its
    /// deletes are the snapshot's retired rows) and what it made.
    pub(crate) async fn merge_snapshot(
        &mut self,
        p: &Parsed,
        (loaded_at, forced): (i64, bool),
    ) -> Result<(MergeCounts, Made), LakeError> {
        let label = self.set.dataset.name.clone();
        if let Some(reason) = self.merge_reason()? {
            return Err(LakeError::Invariant {
                table: label,
                detail: format!(
                    "a snapshot dataset's table is written by deltaload's keyed upsert, which \
                     cannot write this one: {reason}"
                ),
            });
        }
        let Some(held) = self.hold(p, &self.set.target).await? else {
            return Ok((MergeCounts::default(), Made::default()));
        };
        // Only a snapshot that applies changes rows, and so the history.
        let history = (held.mark.is_some()).then(|| held.diff.changes.clone());
        let changes = held.diff.changes;
        let (mut counts, made) =
            (self.upsert_snapshot(p, changes, (held.mark, held.renewed), loaded_at)).await?;
        if let Some(changes) = history {
            (counts.opened, counts.closed) = self
                .snapshot_history(p, changes, held.at, (loaded_at, forced))
                .await?;
        }
        Ok((counts, made))
    }

    /// The snapshot `p` held against `table` (the dataset's table, at its
    /// latest version or an earlier one): `None` for a snapshot without rows.
    async fn hold(&self, p: &Parsed, table: &DeltaTable) -> Result<Option<Held>, LakeError> {
        let dataset = self.set.dataset.clone();
        let label = dataset.name.clone();
        let Some(snapshot) = dataset.snapshot.clone() else {
            return Ok(None);
        };
        let Some(at) = sequence(&snapshot, p, &label)? else {
            tracing::warn!(file = %p.key.location, "the snapshot has no row, so no sequence: it changes nothing");
            return Ok(None);
        };
        let mut marks = crate::table::properties::marks_of(table, &dataset, &snapshot)?;
        let before = marks.clone();
        let kept = admitted(&snapshot, p, &mut marks, at).map_err(LakeError::arrow(&label))?;
        let applies = kept.is_some();
        let rows = diff::take_rows(&p.changes, kept.as_deref().unwrap_or_default())
            .map_err(LakeError::arrow(&label))?;
        let held = match applies {
            true => self.held_rows(&rows, table).await?,
            // Older in every scope: no row of the table is compared.
            false => (rows.project(&(0..dataset.columns.len()).collect::<Vec<_>>()))
                .map_err(LakeError::arrow(&label))?,
        };
        // A rejected record's key cannot be told from a key the snapshot
        // no longer holds: a snapshot with rejects retires nothing.
        let retire = p.rejects.is_empty();
        let diff =
            diff::diff(&rows, &held, &dataset.keys, retire).map_err(LakeError::arrow(&label))?;
        if !retire && diff.kept > 0 {
            tracing::warn!(file = %p.key.location, rejected = p.rejects.len(), kept = diff.kept, "the snapshot has rejected records: the rows of the keys it does not hold are kept, not retired");
        }
        tracing::info!(
            file = %p.key.location,
            sequence = at,
            rows = rows.num_rows(),
            unchanged = diff.unchanged,
            retired = diff.retired,
            "snapshot held against the table"
        );
        // Every commit of a snapshot that applies carries the marks, so it
        // conflicts with any other snapshot's commit, even at an equal sequence.
        Ok(Some(Held {
            at,
            diff,
            mark: applies.then(|| marks.text()),
            renewed: marks != before,
        }))
    }

    /// Upserts a snapshot's `changes` with its `mark` in the commit; with
    /// nothing to write, commits the mark alone when it was `renewed`.
    async fn upsert_snapshot(
        &mut self,
        p: &Parsed,
        changes: RecordBatch,
        (mark, renewed): (Option<String>, bool),
        loaded_at: i64,
    ) -> Result<(MergeCounts, Made), LakeError> {
        let dataset = self.set.dataset.clone();
        let changes = Changes::of_file(changes, &p.key.location);
        let files = [MergedFile {
            location: &p.key.location,
            content_id: &p.key.content_id,
            counts: None,
        }];
        // Within the scopes it applies to, the snapshot is the truth: every
        // row of it wins over the table's, whatever its sequence column says.
        let whole = Dataset {
            sequence_by: Vec::new(),
            tie_break: Vec::new(),
            ..(*dataset).clone()
        };
        self.set.dataset = Arc::new(whole);
        let mut mark = mark;
        let written = (self.upsert_marked(&changes, &files, loaded_at, &mut mark)).await;
        self.set.dataset = dataset.clone();
        let (counts, made) = written?;
        if let Some(mark) = mark.filter(|_| renewed) {
            // Nothing to write, but a newer snapshot: its marks alone.
            let target = &mut self.set.target;
            crate::table::properties::set_property(target, &dataset.name, MARKS_PROPERTY, &mark)
                .await?;
        }
        Ok((counts, made))
    }

    /// The table's rows in the scopes of the snapshot's `rows`, cast to
    /// their types.
    async fn held_rows(
        &self,
        rows: &RecordBatch,
        table: &DeltaTable,
    ) -> Result<RecordBatch, LakeError> {
        let dataset = self.set.dataset.clone();
        let label = dataset.name.clone();
        let width = dataset.columns.len();
        let names = dataset.column_names();
        let name = TableName::Target(dataset.clone());
        let arrow = || LakeError::arrow(&label);
        let scope = (dataset.snapshot.as_ref()).map_or(Vec::new(), |s| s.scope.clone());
        let only = in_scopes(&dataset, rows, &scope).map_err(arrow())?;
        let batches = crate::table::select_where(self.ctx, table, &name, &names, only).await?;
        let columns: Vec<usize> = (0..width).collect();
        let schema = Arc::new(rows.schema().project(&columns).map_err(arrow())?);
        let aligned = batches
            .iter()
            .map(|b| diff::aligned(b, rows, width))
            .collect::<Result<Vec<_>, _>>()
            .map_err(arrow())?;
        let held = concat_batches(&schema, &aligned).map_err(arrow())?;
        diff::within(&held, rows, &scope).map_err(arrow())
    }
}

/// The filter of the table's rows a snapshot is compared with: those whose
/// `scope` columns hold the values of one of the snapshot's `rows` (all
/// rows without a scope, or when a scope column is of a type whose literal
/// may not compare with the table's column as is: the rows are then
/// filtered after the read).
fn in_scopes(
    dataset: &Dataset,
    rows: &RecordBatch,
    scope: &[usize],
) -> Result<Expr, deltalake::arrow::error::ArrowError> {
    let plain = |c: &usize| crate::table::predicates::literal_compares(dataset.columns[*c].ty);
    if scope.is_empty() || !scope.iter().all(plain) {
        return Ok(lit(true));
    }
    let mut tuples: Vec<Expr> = Vec::new();
    for (_, holding) in diff::scopes(rows, scope)? {
        let at = holding[0] as usize;
        let mut parts = Vec::with_capacity(scope.len());
        for &c in scope {
            let column = crate::table::predicates::column(&dataset.columns[c].name);
            let value = ScalarValue::try_from_array(rows.column(c), at)?;
            parts.push(match value.is_null() {
                true => column.is_null(),
                false => column.eq(lit(value)),
            });
        }
        tuples.extend(parts.into_iter().reduce(Expr::and));
    }
    Ok(tuples.into_iter().reduce(Expr::or).unwrap_or(lit(false)))
}

/// A snapshot's sequence `at` as its order writes it: a key's date as
/// the date (and the time, when it has one), a date or time column's value
/// as text, any other as the number.
fn shown(snapshot: &Snapshot, p: &Parsed, at: i64) -> String {
    let micros = |at: i64| chrono::DateTime::from_timestamp_micros(at).map(|t| t.naive_utc());
    let shown = match &snapshot.order {
        SnapshotOrder::KeyDate(_) => micros(at).map(|t| match t.time() == chrono::NaiveTime::MIN {
            true => t.date().to_string(),
            false => t.to_string(),
        }),
        SnapshotOrder::Column(c) => match p.changes.column(*c).data_type() {
            DataType::Date32 => i32::try_from(at)
                .ok()
                .and_then(chrono::NaiveDate::from_epoch_days)
                .map(|d| d.to_string()),
            DataType::Timestamp(_, _) => micros(at).map(|t| t.to_string()),
            _ => None,
        },
    };
    shown.unwrap_or_else(|| at.to_string())
}

/// The rows of `p` in the scopes where the snapshot of sequence `at` is not
/// older than the newest loaded (taking its marks there); `None` when it
/// is older in all of them.
fn admitted(
    snapshot: &Snapshot,
    p: &Parsed,
    marks: &mut Marks,
    at: i64,
) -> Result<Option<Vec<u32>>, deltalake::arrow::error::ArrowError> {
    let scopes = match snapshot.scope.is_empty() {
        true => vec![("[]".to_string(), (0..p.changes.num_rows() as u32).collect())],
        false => diff::scopes(&p.changes, &snapshot.scope)?,
    };
    let mut kept = Vec::new();
    let mut applies = false;
    for (scope, rows) in scopes {
        match marks.admit(&scope, at) {
            Verdict::Applies => {
                applies = true;
                kept.extend(rows);
            }
            Verdict::Superseded(mark) => tracing::warn!(
                file = %p.key.location,
                scope,
                sequence = %shown(snapshot, p, at),
                newest = %shown(snapshot, p, mark),
                "the snapshot is older than the newest loaded: it changes nothing there"
            ),
        }
    }
    kept.sort_unstable();
    Ok(applies.then_some(kept))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_table_is_read_in_the_scopes_the_snapshot_applies_to_only() {
        let text = "[[dataset]]\nname = \"s\"\nkeys = [\"id\"]\nmode = \"snapshot\"\n\
                    snapshot_key_date = \"%Y%m%d\"\nsnapshot_scope = [\"region\"]\n\
                    [[dataset.columns]]\nname = \"id\"\ntype = \"bigint\"\n\
                    [[dataset.columns]]\nname = \"region\"\ntype = \"string\"\n";
        let spec = deltaload_core::Spec::parse(text, "s.toml").unwrap();
        let d = spec.datasets[0].clone();
        let csv = "id,region\n1,eu\n2,us\n3,eu\n";
        let parsed = crate::read_changes(
            &d,
            "/x/20261201.csv",
            csv.as_bytes(),
            &deltaload_ingest::rules::NoRules,
        );
        let batch = parsed.unwrap().unwrap().newest;
        let rows = |at: &[u32]| diff::take_rows(&batch, at).unwrap();
        let only = in_scopes(&d, &rows(&[0, 2]), &[1]).unwrap().to_string();
        assert!(only.contains("eu") && !only.contains("us"), "{only}");
        let both = in_scopes(&d, &rows(&[0, 1, 2]), &[1]).unwrap().to_string();
        assert!(both.contains("eu") && both.contains("us"), "{both}");
        assert_eq!(in_scopes(&d, &rows(&[0]), &[]).unwrap(), lit(true));
    }
}
