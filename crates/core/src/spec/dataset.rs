//! The checked types: a [`Dataset`] and the [`Spec`] of every dataset a
//! deployment loads, with what they answer about rows and tables. The
//! parser that builds them is `check`; the built-in spec is the parent's.

use super::column::Column;
use super::formats::{CsvFormat, DeleteWhen, ExtraFields, Format};
use super::history::History;
use super::preset::Preset;
use super::rules::Rule;
use super::snapshot::Snapshot;
use crate::value::Value;
use std::cmp::Ordering;
use std::sync::Arc;

/// A dataset: its columns, its key, how a newer change is told, and where its files land.
#[derive(Debug, Clone, PartialEq)]
pub struct Dataset {
    /// `[a-z][a-z0-9_]*`: the dataset's name, and its table's unless
    /// [`Dataset::table`] says otherwise; rejects go to `rejected_<name>`.
    pub name: String,
    /// The folder of the dataset's table under the lake root, when it is not
    /// the dataset's name (`table = "…"`: a table another writer made).
    pub table: Option<String>,
    /// The table of rejected records, when it is not `rejected_<name>`
    /// (`rejected_table = "…"`).
    pub rejected: Option<String>,
    /// `s3://bucket/prefix` whose objects load into this dataset.
    pub source: Option<String>,
    /// The columns, in declared order.
    pub columns: Vec<Column>,
    /// Indexes into `columns`.
    pub keys: Vec<usize>,
    /// The columns that tell a newer change (indexes into `columns`); empty: the later record wins.
    pub sequence_by: Vec<usize>,
    /// Compared in order when two changes of a key have equal sequences.
    pub tie_break: Vec<usize>,
    /// The columns an update of a matched row sets (sequence columns included).
    pub update: Vec<usize>,
    /// The update columns where an update's null keeps the table's value
    /// (`ignore_null_updates`): for feeds that send only what changed.
    pub keep_on_null: Vec<usize>,
    /// The table's partition columns (indexes into `columns`).
    pub partition_by: Vec<usize>,
    /// How the files are written.
    pub format: Format,
    /// Deletes in the feed; a parsed row then carries one more value after the
    /// columns: `Value::Bool(true)` for a delete (see [`Dataset::is_delete`]).
    pub delete_when: Option<DeleteWhen>,
    /// What a field the spec does not declare does.
    pub extra_fields: ExtraFields,
    /// A changed row of a data file no load otherwise rewrites is marked
    /// deleted (a deletion vector) and its new version appended, instead of
    /// the file being rewritten: a load costs what it changes.
    pub merge_on_read: bool,
    /// The table keeps Delta's change data feed (`delta.enableChangeDataFeed`):
    /// every commit that changes rows also writes them, with their change
    /// type, under `_change_data/`.
    pub change_data_feed: bool,
    /// Each file is a snapshot of the table (`mode = "snapshot"`): keys it
    /// no longer holds are deleted, an older snapshot changes nothing.
    pub snapshot: Option<Snapshot>,
    /// The dataset keeps every version of its keys in `history_<name>`
    /// (`history = true`, SCD type 2).
    pub history: Option<History>,
    /// The CSV dialect and encoding.
    pub csv: CsvFormat,
    /// The CDC tool whose files the dataset reads as it writes them.
    pub preset: Option<Preset>,
    /// How many of the last `columns` deltaload fills itself rather than
    /// reads from a file: a preset's order
    /// ([`FEED_FILE`](super::preset::FEED_FILE), [`FEED_LINE`](super::preset::FEED_LINE)).
    pub generated: usize,
    /// The rules every record is checked against, which the adapter sets
    /// when it opens the table (a spec's are empty): the CHECK constraints
    /// and invariants of a table deltaload took over, then
    /// [`Dataset::expectations`].
    /// Readers keep each record's line while there are any, so that one
    /// breaking a rule is rejected as a record that does not parse is.
    pub rules: Vec<Rule>,
    /// The spec's expectations (`[[dataset.expect]]`), in its order.
    pub expectations: Vec<Rule>,
}

impl Dataset {
    /// The columns a file holds: all but the [`Dataset::generated`] ones.
    pub fn declared(&self) -> &[Column] {
        &self.columns[..self.columns.len() - self.generated]
    }

    /// The columns deltaload fills itself, after the declared ones.
    pub fn generated_columns(&self) -> &[Column] {
        &self.columns[self.columns.len() - self.generated..]
    }

    /// The text of [`FEED_FILE`](super::preset::FEED_FILE) for the file at
    /// `location`; `Ok(None)` for a dataset without generated columns, `Err`
    /// when the preset's tool writes no file of that name.
    pub fn file_rank(&self, location: &str) -> Result<Option<String>, String> {
        match (self.preset, self.generated) {
            (Some(preset), 1..) => preset.file_rank(location).map(Some),
            _ => Ok(None),
        }
    }

    /// The folder of the dataset's table: `table`, else the dataset's name.
    pub fn table_name(&self) -> &str {
        self.table.as_deref().unwrap_or(&self.name)
    }

    /// The table of rejected records: `rejected_table`, else `rejected_<name>`.
    pub fn rejected_table(&self) -> String {
        match &self.rejected {
            Some(table) => table.clone(),
            None => format!("rejected_{}", self.name),
        }
    }

    /// The folders of every table the dataset may write: its table, its
    /// rejects, its tombstones, and its history's two when it keeps one.
    pub fn table_folders(&self) -> Vec<String> {
        let mut t = vec![
            self.table_name().to_string(),
            self.rejected_table(),
            self.tombstones_table(),
        ];
        if self.history.is_some() {
            t.extend([self.history_table(), self.history_log_table()]);
        }
        t
    }

    /// The column names, in declared order.
    pub fn column_names(&self) -> Vec<&str> {
        self.columns.iter().map(|c| c.name.as_str()).collect()
    }

    /// Names of the columns at `indexes`.
    pub fn names(&self, indexes: &[usize]) -> Vec<&str> {
        indexes
            .iter()
            .map(|&i| self.columns[i].name.as_str())
            .collect()
    }

    /// The index of the column called `name`.
    pub fn column_index(&self, name: &str) -> Option<usize> {
        self.columns.iter().position(|c| c.name == name)
    }

    /// The name of the rejected table's column holding a reject's key text:
    /// the key's own name for a single key, else `key`.
    pub fn reject_key_column(&self) -> &str {
        match self.keys.as_slice() {
            [only]
                if ![
                    "source_file",
                    "content_id",
                    "line_number",
                    "raw_line",
                    "reason",
                    "loaded_at",
                ]
                .iter()
                .any(|c| c.eq_ignore_ascii_case(&self.columns[*only].name)) =>
            {
                &self.columns[*only].name
            }
            _ => "key",
        }
    }

    /// How many values a parsed change holds: the columns, and the delete
    /// flag when the dataset has `delete_when`.
    pub fn width(&self) -> usize {
        self.columns.len() + usize::from(self.delete_when.is_some())
    }

    /// Whether column `i` is a key or a sequence column: the columns a
    /// delete carries (its others are not read), never null.
    pub fn is_key_or_sequence(&self, i: usize) -> bool {
        self.keys.contains(&i) || self.sequence_by.contains(&i)
    }

    /// Whether a change (a row of [`Dataset::width`] values) is a delete. A
    /// row of the table, which has no flag, is not.
    pub fn is_delete(&self, row: &[Value]) -> bool {
        self.delete_when.is_some() && row.get(self.columns.len()) == Some(&Value::Bool(true))
    }

    /// Whether the dataset remembers deletes (tombstones): deletes with a sequence.
    pub fn keeps_tombstones(&self) -> bool {
        self.delete_when.is_some() && !self.sequence_by.is_empty()
    }

    /// The table of tombstones: the deleted keys with their delete's sequence.
    pub fn tombstones_table(&self) -> String {
        format!("tombstones_{}", self.name)
    }

    /// The table of versions (`history = true`).
    pub fn history_table(&self) -> String {
        format!("history_{}", self.name)
    }

    /// The table of every change a history was made of (`history = true`).
    pub fn history_log_table(&self) -> String {
        format!("history_log_{}", self.name)
    }

    /// A row's key values.
    pub fn key_of(&self, row: &[Value]) -> Vec<Value> {
        self.keys.iter().map(|&i| row[i].clone()).collect()
    }

    /// Whether change `a` replaces held row `b` of the same key: a strictly
    /// greater sequence, or an equal one and greater by the tie-break columns.
    /// Without `sequence_by` a later change always replaces.
    pub fn replaces(&self, a: &[Value], b: &[Value]) -> bool {
        self.sequence_by.is_empty() || self.compare(a, b) == Ordering::Greater
    }

    /// Total order of two changes of one key: by sequence; at an equal
    /// sequence a delete is greater than an upsert (two deletes are equal),
    /// and two upserts compare by the tie-break columns.
    pub fn compare(&self, a: &[Value], b: &[Value]) -> Ordering {
        let by_sequence = self
            .sequence_by
            .iter()
            .map(|&i| a[i].cmp(&b[i]))
            .find(|o| o.is_ne());
        if let Some(o) = by_sequence {
            return o;
        }
        match (self.is_delete(a), self.is_delete(b)) {
            (true, true) => Ordering::Equal,
            (true, false) => Ordering::Greater,
            (false, true) => Ordering::Less,
            (false, false) => self
                .tie_break
                .iter()
                .map(|&i| a[i].cmp(&b[i]))
                .find(|o| o.is_ne())
                .unwrap_or(Ordering::Equal),
        }
    }

    /// The rule by which a change wins, in words, for users.
    pub fn newest_wins_rule(&self) -> String {
        if let Some(snapshot) = &self.snapshot {
            let scope = match snapshot.scope.is_empty() {
                true => "the table".to_string(),
                false => format!("its ({}) values", self.names(&snapshot.scope).join(", ")),
            };
            return format!(
                "each file is a snapshot of {scope}: the newest by {} makes those rows its own \
                 (missing keys retired, equal rows left alone); an older one changes nothing",
                snapshot.order_name(&self.columns)
            );
        }
        if self.sequence_by.is_empty() {
            return "no sequence_by: the later load wins, and within one file the later record"
                .to_string();
        }
        let seq = self.names(&self.sequence_by).join(", ");
        let ties = self.names(&self.tie_break).join(", ");
        let deletes = if self.delete_when.is_some() {
            format!("; at equal ({seq}) a delete wins over an upsert")
        } else {
            String::new()
        };
        format!(
            "a change replaces a row only when its ({seq}) is strictly greater; for two changes \
             with equal ({seq}), the one whose ({ties}) is greater wins, compared column by column \
             in that order, text by its UTF-8 bytes, an empty (null) value lowest{deletes}"
        )
    }
}

/// Every dataset a deployment loads.
#[derive(Debug, Clone, PartialEq)]
pub struct Spec {
    /// The datasets, in declared order.
    pub datasets: Vec<Arc<Dataset>>,
    /// Datasets of the spec file this command leaves alone (`--dataset`):
    /// they still take the objects under their sources.
    pub others: Vec<Arc<Dataset>>,
}

impl Spec {
    /// The spec narrowed to the dataset `name`; objects stay routed as the
    /// whole spec routes them.
    pub fn narrow(&self, name: &str) -> Result<Spec, String> {
        let chosen = self.select(Some(name))?.clone();
        let others = self
            .datasets
            .iter()
            .chain(&self.others)
            .filter(|d| d.name != chosen.name)
            .cloned()
            .collect();
        Ok(Spec {
            datasets: vec![chosen],
            others,
        })
    }

    /// The dataset called `name`.
    pub fn dataset(&self, name: &str) -> Option<&Arc<Dataset>> {
        self.datasets.iter().find(|d| d.name == name)
    }

    /// The dataset an object at `s3://bucket/key` loads into: the longest
    /// source prefix holding it; a spec of one dataset without a source takes
    /// every object.
    pub fn route(&self, bucket: &str, key: &str) -> Option<&Arc<Dataset>> {
        if let ([only], true) = (self.datasets.as_slice(), self.others.is_empty()) {
            if only.source.is_none() {
                return Some(only);
            }
        }
        let url = format!("s3://{bucket}/{key}");
        let winner = self
            .datasets
            .iter()
            .chain(&self.others)
            .filter_map(|d| d.source.as_deref().map(|s| (d, s)))
            .filter(|(_, s)| url.starts_with(s))
            .max_by_key(|(_, s)| s.len())?
            .0;
        self.datasets.iter().find(|d| d.name == winner.name)
    }

    /// The dataset `name` names, or the only one when `name` is `None`.
    pub fn select(&self, name: Option<&str>) -> Result<&Arc<Dataset>, String> {
        let names = || {
            self.datasets
                .iter()
                .map(|d| d.name.as_str())
                .collect::<Vec<_>>()
                .join(", ")
        };
        match (name, self.datasets.as_slice()) {
            (Some(n), _) => self
                .dataset(n)
                .ok_or_else(|| format!("no dataset {n:?} in the spec (it has: {})", names())),
            (None, [only]) => Ok(only),
            (None, _) => Err(format!(
                "the spec has several datasets ({}): choose one with --dataset",
                names()
            )),
        }
    }
}
