//! Tables printed for people and for pipes: the first rows by key (like Spark's
//! `show()`), every row streamed, or the rows of one key; as a text table, CSV
//! or JSON Lines.

use crate::table::error::LakeError;
use crate::table::location::LakeRoot;
use crate::table::open::open;
use crate::table::{query_stream, query_with};
use deltalake::arrow::array::{Array, Int64Array};
use deltalake::arrow::record_batch::RecordBatch;
use deltalake::arrow::util::pretty::pretty_format_batches;
use deltalake::datafusion::common::ScalarValue;
use deltaload_engine::tables::TableName;
use futures::StreamExt;
use std::io::Write;

/// Rows `show` prints when no limit is given.
pub const DEFAULT_SHOW_LIMIT: usize = 20;

/// How rows are printed.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum ShowFormat {
    /// A text table with a header, and a line of counts after it.
    #[default]
    Table,
    /// CSV with a header row.
    Csv,
    /// One JSON object per row (JSON Lines).
    Json,
}

/// Which rows `show` prints, and how.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ShowOptions {
    /// The first this many rows by the table's key; `None` for every row,
    /// streamed in storage order without holding them.
    pub limit: Option<usize>,
    /// How the rows are printed.
    pub format: ShowFormat,
    /// Only the rows whose key column (`TableName::key_column`) holds this value.
    pub key: Option<String>,
}

impl Default for ShowOptions {
    fn default() -> Self {
        Self {
            limit: Some(DEFAULT_SHOW_LIMIT),
            format: ShowFormat::Table,
            key: None,
        }
    }
}

/// What `show` printed.
#[derive(Debug, Clone, PartialEq)]
pub struct Shown {
    /// The table printed.
    pub table: TableName,
    /// Rows printed.
    pub printed: u64,
    /// Rows of the table (of the key, with `--key`).
    pub total: u64,
    /// The table's version read.
    pub version: Option<u64>,
}

impl Shown {
    /// The line of counts after the rows: "N row(s), table T version V" when all
    /// were printed.
    pub fn summary(&self) -> String {
        let version = self.version.map_or("-".to_string(), |v| v.to_string());
        let table = self.table.as_str();
        if self.printed == self.total {
            format!("{} row(s), table {table} version {version}", self.total)
        } else {
            format!(
                "{} of {} row(s), the first by {}; --limit N shows more, --limit 0 all; table {table} version {version}",
                self.printed,
                self.total,
                self.table.sort_columns()
            )
        }
    }
}

/// The SQL condition selecting the rows of `key` (bound to `$1`) and its
/// value, or an error saying what a key of this table looks like.
fn key_condition(name: &TableName, key: &str) -> Result<(String, ScalarValue), LakeError> {
    let (column, numeric) = name.key_column();
    let quoted = deltaload_engine::tables::quoted(&column);
    let condition = format!("{quoted} = $1");
    if !numeric {
        return Ok((condition, ScalarValue::from(key)));
    }
    let value: i64 = key.trim().parse().map_err(|_| LakeError::Key {
        table: name.as_str(),
        column,
        key: key.to_string(),
    })?;
    Ok((condition, ScalarValue::from(value)))
}

/// Prints rows of `name` under `root` to `out` as `opts` says; the line of counts
/// is the caller's to print (`Shown::summary`).
pub async fn show(
    root: &LakeRoot,
    name: &TableName,
    opts: &ShowOptions,
    out: &mut dyn Write,
) -> Result<Shown, LakeError> {
    let missing = || LakeError::Missing {
        table: name.as_str(),
        url: root.to_string(),
    };
    let table = open(root, name).await?.ok_or_else(missing)?;
    let ctx = deltalake::delta_datafusion::create_session().into_inner();
    let (filter, params) = match &opts.key {
        Some(key) => {
            let (condition, value) = key_condition(name, key)?;
            (format!(" WHERE {condition}"), vec![value])
        }
        None => (String::new(), Vec::new()),
    };
    let from = format!("FROM {}{filter}", name.sql());
    let count = format!("SELECT COUNT(*) {from}");
    let counted = query_with(&ctx, &table, name, &count, params.clone()).await?;
    let total = counted
        .first()
        .and_then(|b| b.column(0).as_any().downcast_ref::<Int64Array>())
        .filter(|c| !c.is_empty())
        .map_or(0, |c| c.value(0).max(0) as u64);
    let mut printer = Printer::new(opts.format, name.as_str(), out);
    match opts.limit {
        Some(limit) => {
            let sql = format!(
                "SELECT * {from} ORDER BY {} LIMIT {limit}",
                name.sort_columns()
            );
            let batches = query_with(&ctx, &table, name, &sql, params).await?;
            printer.all(&batches)?;
        }
        None => {
            let all = format!("SELECT * {from}");
            let mut stream = query_stream(&ctx, &table, name, &all, params).await?;
            while let Some(batch) = stream.next().await {
                printer.all(&[batch.map_err(LakeError::query(name.as_str()))?])?;
            }
        }
    }
    let printed = printer.finish()?;
    Ok(Shown {
        table: name.clone(),
        printed,
        total,
        version: table.version(),
    })
}

/// Writes batches in one format, the header once.
struct Printer<'a> {
    format: ShowFormat,
    table: String,
    out: &'a mut dyn Write,
    printed: u64,
    header_written: bool,
}

impl<'a> Printer<'a> {
    fn new(format: ShowFormat, table: String, out: &'a mut dyn Write) -> Self {
        Self {
            format,
            table,
            out,
            printed: 0,
            header_written: false,
        }
    }

    fn all(&mut self, batches: &[RecordBatch]) -> Result<(), LakeError> {
        let batches: Vec<RecordBatch> = batches
            .iter()
            .filter(|b| b.num_rows() > 0)
            .cloned()
            .collect();
        if batches.is_empty() {
            return Ok(());
        }
        let name = self.table.as_str();
        let arrow = LakeError::arrow(name);
        match self.format {
            ShowFormat::Table => {
                let text = pretty_format_batches(&batches).map_err(arrow)?;
                writeln!(self.out, "{text}").map_err(LakeError::output(name))?;
            }
            ShowFormat::Csv => {
                // Into a buffer first: the CSV writer's own errors keep no
                // I/O error, and a closed pipe must stay one (status 141).
                let mut text = Vec::new();
                let mut writer = deltalake::arrow::csv::WriterBuilder::new()
                    .with_header(!self.header_written)
                    .build(&mut text);
                for batch in &batches {
                    writer.write(batch).map_err(LakeError::arrow(name))?;
                }
                drop(writer);
                self.out.write_all(&text).map_err(LakeError::output(name))?;
            }
            ShowFormat::Json => {
                // Every column in every object, a null one as null.
                let mut writer = deltalake::arrow::json::WriterBuilder::new()
                    .with_explicit_nulls(true)
                    .build::<_, deltalake::arrow::json::writer::LineDelimited>(&mut *self.out);
                for batch in &batches {
                    writer.write(batch).map_err(LakeError::arrow(name))?;
                }
                writer.finish().map_err(arrow)?;
            }
        }
        self.header_written = true;
        self.printed += batches.iter().map(|b| b.num_rows() as u64).sum::<u64>();
        Ok(())
    }

    fn finish(self) -> Result<u64, LakeError> {
        self.out.flush().map_err(LakeError::output(self.table))?;
        Ok(self.printed)
    }
}

/// Every row of `name` as text cells (`NULL` for null), sorted by the table's key;
/// `columns` is an SQL select list. For tests and scripted checks.
pub async fn table_rows(
    root: &LakeRoot,
    name: &TableName,
    columns: &str,
) -> Result<Vec<Vec<String>>, LakeError> {
    use deltalake::arrow::util::display::{ArrayFormatter, FormatOptions};
    let Some((_, batches)) = crate::table::open::select_all(root, name, columns).await? else {
        return Ok(Vec::new());
    };
    let options = FormatOptions::default().with_null("NULL");
    let mut rows = Vec::new();
    for batch in &batches {
        let formatters = batch
            .columns()
            .iter()
            .map(|c| ArrayFormatter::try_new(c.as_ref(), &options))
            .collect::<Result<Vec<_>, _>>()
            .map_err(LakeError::arrow(name.as_str()))?;
        for row in 0..batch.num_rows() {
            rows.push(
                formatters
                    .iter()
                    .map(|f| f.value(row).to_string())
                    .collect(),
            );
        }
    }
    Ok(rows)
}

/// The current version of table `name`, `None` when it does not exist.
pub async fn table_version(root: &LakeRoot, name: &TableName) -> Result<Option<u64>, LakeError> {
    Ok(open(root, name).await?.and_then(|t| t.version()))
}

/// The columns of `dataset`'s table, one another writer made, that its
/// spec does not declare and a load keeps (inserts write them null,
/// updates leave them); none when the table does not exist yet or is
/// deltaload's own; the difference a load would refuse, as its error.
pub async fn undeclared_columns(
    root: &LakeRoot,
    dataset: &std::sync::Arc<deltaload_core::Dataset>,
) -> Result<Vec<String>, LakeError> {
    let name = TableName::Target(dataset.clone());
    let Some(table) = open(root, &name).await? else {
        return Ok(Vec::new());
    };
    let label = name.as_str();
    let snapshot = table
        .snapshot()
        .map_err(LakeError::delta(&label, table.table_url()))?;
    // deltaload's own tables keep their definition: no column is kept there.
    if !crate::table::evolve::adopted(snapshot.metadata().configuration(), &snapshot.schema()) {
        return Ok(Vec::new());
    }
    // The rule a load applies: what its plan keeps.
    let wanted = crate::table::evolve::kernel_schema(&name)?;
    let plan =
        crate::table::adopt::plan(&name, &snapshot.schema(), &wanted, true).map_err(|detail| {
            LakeError::SpecChange {
                table: label,
                detail,
            }
        })?;
    Ok(plan.kept)
}

/// The rules (CHECK constraints, invariants) of `dataset`'s table at `root`
/// that every record loaded into it must hold; empty when the table does
/// not exist or has none. `Err` when a rule cannot be checked: a load
/// would refuse the table for it.
pub async fn table_rules(
    root: &LakeRoot,
    dataset: &std::sync::Arc<deltaload_core::Dataset>,
) -> Result<Vec<deltaload_core::spec::Rule>, LakeError> {
    let Some(table) = open(root, &TableName::Target(dataset.clone())).await? else {
        return Ok(Vec::new());
    };
    let read = crate::table::rules::read(&table, dataset)?;
    Ok(read.map(|(d, _)| d.rules.clone()).unwrap_or_default())
}
