//! Helpers of the end-to-end suite: seed files, a lake in a temporary directory,
//! and the `deltaload` command run as a child process.

pub mod faulty_store;
pub mod glue;
pub mod localstack;
pub mod orders;
mod stack_cli;

pub use orders::{orders_csv, Order};

use deltaload_core::{Dataset, Spec};
use deltaload_lake::{
    lake_url, table_rows, Lake, LakeRoot, LoadOptions, LoadOutcome, SourceFile, TableName,
};
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

/// The contract's header line.
pub const HEADER: &str = "order_id,customer_id,status,amount,currency,ordered_at,updated_at\n";

/// The seed's first day (seed 000, `2026-10-03.csv`).
pub const DAY1: &str = include_str!("../../examples/seed/raw/changes/2026-10-03.csv");
/// The seed's second day (seed 000, `2026-10-04.csv`).
pub const DAY2: &str = include_str!("../../examples/seed/raw/changes/2026-10-04.csv");

/// The built-in dataset's table.
pub fn orders_table() -> TableName {
    TableName::Target(Dataset::orders())
}

/// The built-in dataset's rejects.
pub fn rejected_orders_table() -> TableName {
    TableName::Rejected(Dataset::orders())
}

/// A lake and a folder of change files, both in one temporary directory.
pub struct Sandbox {
    pub dir: tempfile::TempDir,
    pub root: LakeRoot,
    /// The datasets the lake is opened with (the built-in `orders` by default).
    pub spec: Spec,
}

impl Sandbox {
    pub fn new() -> Self {
        Self::with_spec(Spec::builtin())
    }

    /// A sandbox whose lake holds `spec`'s datasets.
    pub fn with_spec(spec: Spec) -> Self {
        let dir = tempfile::tempdir().expect("temporary directory");
        let root =
            lake_url(dir.path().join("lake").to_str().expect("utf-8 path")).expect("lake url");
        Self { dir, root, spec }
    }

    /// A sandbox with the seed's two days as `raw/a.csv` and `raw/b.csv`.
    pub fn with_seed_files() -> Self {
        let sb = Self::new();
        sb.file("a.csv", DAY1);
        sb.file("b.csv", DAY2);
        sb
    }

    /// Writes a change file under `raw/` and returns its path.
    pub fn file(&self, name: &str, content: impl AsRef<[u8]>) -> PathBuf {
        let path = self.dir.path().join("raw").join(name);
        std::fs::create_dir_all(path.parent().expect("parent")).expect("mkdir");
        std::fs::write(&path, content).expect("write file");
        path
    }

    pub fn lake_dir(&self) -> PathBuf {
        self.dir.path().join("lake")
    }

    pub async fn lake(&self) -> Lake {
        Lake::open_spec(&self.root, &self.spec)
            .await
            .expect("open lake")
    }

    /// Loads `path` in-process, the way the CLI does.
    pub async fn load(&self, path: &Path, force: bool) -> LoadOutcome {
        let mut lake = self.lake().await;
        let file = SourceFile::in_memory(
            deltaload_lake::local_source(path.to_str().expect("utf-8")).expect("source"),
            std::fs::read(path).expect("read"),
        );
        lake.load(
            &file,
            LoadOptions {
                force,
                ..LoadOptions::default()
            },
        )
        .await
        .expect("load")
    }

    /// Loads files in-process as one batch.
    pub async fn load_batch(&self, files: &[SourceFile]) -> Vec<LoadOutcome> {
        let mut lake = self.lake().await;
        lake.load_batch(files.to_vec(), LoadOptions::default())
            .await
            .expect("load batch")
    }

    /// The current version of every table, in [`TableName::all`] order.
    pub async fn versions(&self) -> Vec<Option<u64>> {
        let mut versions = Vec::new();
        for name in TableName::all(&self.spec.datasets) {
            versions.push(
                deltaload_lake::table_version(&self.root, &name)
                    .await
                    .expect("table version"),
            );
        }
        versions
    }

    /// Rows of a table as text, sorted by its key.
    pub async fn rows(&self, table: TableName, columns: &str) -> Vec<Vec<String>> {
        table_rows(&self.root, &table, columns)
            .await
            .expect("table rows")
    }

    /// The contract columns of `orders`, sorted by order_id.
    pub async fn orders(&self) -> Vec<Vec<String>> {
        self.rows(
            orders_table(),
            "order_id, customer_id, status, amount, currency, ordered_at, updated_at",
        )
        .await
    }

    /// Everything the four tables hold that one clean load would reproduce
    /// (load times and versions left out; the sandbox's own path written `<sandbox>`;
    /// rows sorted, as files loaded together share a load time).
    pub async fn state(&self) -> Vec<Vec<Vec<String>>> {
        let dir = self.dir.path().canonicalize().expect("sandbox path");
        lake_state_of(
            &self.root,
            &self.spec,
            dir.to_str().expect("utf-8 path"),
            "<sandbox>",
        )
        .await
    }

    /// Runs the `deltaload` command at `exe` in the sandbox, with `DELTALOAD_FAULT`
    /// set to `fault` when given.
    pub fn cli_at(&self, exe: &str, args: &[&str], fault: Option<&str>) -> Output {
        let mut cmd = Command::new(exe);
        cmd.current_dir(self.dir.path())
            .args(args)
            .env_remove("DELTALOAD_LAKE")
            .env_remove("DELTALOAD_SPEC")
            .env_remove("DELTALOAD_DATASET");
        if let Some(point) = fault {
            cmd.env("DELTALOAD_FAULT", point);
        }
        cmd.output().expect("run deltaload")
    }
}

impl Default for Sandbox {
    fn default() -> Self {
        Self::new()
    }
}

/// Standard output of a finished command as text.
pub fn stdout(out: &Output) -> String {
    String::from_utf8_lossy(&out.stdout).into_owned()
}

/// Standard error of a finished command as text.
pub fn stderr(out: &Output) -> String {
    String::from_utf8_lossy(&out.stderr).into_owned()
}

/// Everything the four tables under `root` hold that one clean load would
/// reproduce (load times and versions left out, `replace` written `with`, rows
/// sorted).
pub async fn lake_state(root: &LakeRoot, replace: &str, with: &str) -> Vec<Vec<Vec<String>>> {
    lake_state_of(root, &Spec::builtin(), replace, with).await
}

/// [`lake_state`] of a lake holding `spec`'s datasets.
pub async fn lake_state_of(
    root: &LakeRoot,
    spec: &Spec,
    replace: &str,
    with: &str,
) -> Vec<Vec<Vec<String>>> {
    let rows = |table: TableName, columns: String| async move {
        table_rows(root, &table, &columns)
            .await
            .expect("table rows")
    };
    let mut tables = Vec::new();
    for d in &spec.datasets {
        let columns: Vec<String> = d
            .column_names()
            .iter()
            .map(|c| deltaload_lake::quoted(c))
            .chain(["source_file".to_string()])
            .collect();
        tables.push(rows(TableName::Target(d.clone()), columns.join(", ")).await);
        let rejected = format!(
            "source_file, content_id, line_number, {}, raw_line, reason",
            deltaload_lake::quoted(d.reject_key_column())
        );
        tables.push(rows(TableName::Rejected(d.clone()), rejected).await);
        if d.keeps_tombstones() {
            let columns: Vec<String> = d
                .keys
                .iter()
                .chain(&d.sequence_by)
                .map(|&i| deltaload_lake::quoted(&d.columns[i].name))
                .chain(["source_file".to_string()])
                .collect();
            tables.push(rows(TableName::Tombstones(d.clone()), columns.join(", ")).await);
        }
    }
    tables.push(
        rows(
            TableName::Ledger,
            "location, content_id, size, status, reason, records, rejected, inserted, updated, stale, dataset, deleted".into(),
        )
        .await,
    );
    tables.push(
        rows(
            TableName::Reconciliation,
            "location, content_id, records, loaded, rejected, duplicates, inserted, updated, stale, balanced, dataset, deleted".into(),
        )
        .await,
    );
    if spec.datasets.iter().any(|d| !d.expectations.is_empty()) {
        let columns = "location, content_id, dataset, expectation, rule, on_fail, records, failed";
        tables.push(rows(TableName::Expectations, columns.into()).await);
    }
    tables
        .into_iter()
        .map(|rows| {
            let mut rows: Vec<Vec<String>> = rows
                .into_iter()
                .map(|row| {
                    row.into_iter()
                        .map(|cell| cell.replace(replace, with))
                        .collect()
                })
                .collect();
            rows.sort();
            rows
        })
        .collect()
}

/// Loads `files` one at a time, each in its own batch, and counts those loaded
/// (the writer of the concurrency tests; panics naming the file that failed).
pub async fn load_one_by_one(
    lake: &mut Lake,
    writer: u64,
    files: impl IntoIterator<Item = SourceFile>,
) -> usize {
    let mut loaded = 0;
    for (n, file) in files.into_iter().enumerate() {
        let outcomes = lake
            .load_batch(vec![file], Default::default())
            .await
            .unwrap_or_else(|e| panic!("writer {writer}, file {n}: {e}"));
        loaded += outcomes
            .iter()
            .filter(|o| matches!(o, LoadOutcome::Loaded(_)))
            .count();
    }
    loaded
}

/// `batch` as one Parquet file's bytes.
pub fn parquet_bytes(batch: &deltalake::arrow::record_batch::RecordBatch) -> Vec<u8> {
    let mut out = Vec::new();
    let mut writer =
        deltalake::parquet::arrow::ArrowWriter::try_new(&mut out, batch.schema(), None)
            .expect("parquet writer");
    writer.write(batch).expect("parquet write");
    writer.close().expect("parquet close");
    out
}

/// A single-threaded runtime, for a property test's async cases.
/// A load order of `n` files: each once, up to two loaded again, shuffled.
pub fn load_order(n: usize) -> impl proptest::strategy::Strategy<Value = Vec<usize>> {
    use proptest::prelude::*;
    // A set may hold no file: then there is nothing to load again.
    prop::collection::vec(0..n.max(1), 0..3)
        .prop_map(move |again| {
            let again = again.into_iter().filter(|&i| i < n);
            (0..n).chain(again).collect::<Vec<_>>()
        })
        .prop_shuffle()
}

pub fn runtime() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("a tokio runtime")
}

/// `text` gzip-compressed, as a `.csv.gz` upload holds it.
pub fn gzip(text: &str) -> Vec<u8> {
    use std::io::Write;
    let mut encoder = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
    encoder.write_all(text.as_bytes()).expect("compress");
    encoder.finish().expect("compress")
}
