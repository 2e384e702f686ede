//! Errors of the lake adapter, each with the table or file it concerns.

use deltalake::DeltaTableError;

/// A failure of the lake. Every variant says what failed and where.
#[derive(Debug, thiserror::Error)]
pub enum LakeError {
    #[error("table {table} at {url}: {}", said(source))]
    /// A Delta operation on a table failed.
    Delta {
        /// The table.
        table: String,
        /// Its location.
        url: String,
        /// delta-rs's error.
        #[source]
        source: Box<DeltaTableError>,
    },
    #[error("query on table {table}: {source}")]
    /// A query on a table failed.
    Query {
        /// The table.
        table: String,
        /// DataFusion's error.
        #[source]
        source: Box<deltalake::datafusion::error::DataFusionError>,
    },
    #[error(transparent)]
    /// The load's data in memory or on local disk: an Arrow kernel, a
    /// local file, a sorted run.
    Data(#[from] deltaload_ingest::DataError),
    #[error("lake location {location:?}: {reason}")]
    /// The lake's location cannot be used.
    Location {
        /// The location given.
        location: String,
        /// Why not.
        reason: String,
    },
    #[error("table {table}: {detail}")]
    /// Something that must hold does not (a bug, or a damaged table).
    Invariant {
        /// The table concerned.
        table: String,
        /// What does not hold.
        detail: String,
    },
    #[error(transparent)]
    /// The upsert's work on Arrow failed (a key in two rows, a kernel).
    Engine(Box<deltaload_engine::EngineError<LakeError>>),
    #[error(transparent)]
    /// A rule of the core failed (figures that do not balance).
    Core(#[from] deltaload_core::CoreError),
    #[error(transparent)]
    /// A ledger row's status is none deltaload writes.
    LedgerStatus(#[from] deltaload_flow::UnknownStatus),
    #[error(
        "no dataset {name:?} in this lake's spec (it has: {}); name one of them, or add \
         the dataset to the spec",
        known.join(", ")
    )]
    /// A dataset the lake's spec does not declare.
    UnknownDataset {
        /// The name given.
        name: String,
        /// The spec's datasets.
        known: Vec<String>,
    },
    #[error("this lake has several datasets ({}): name the one to load into", known.join(", "))]
    /// A load into "the" dataset of a lake that has several.
    DatasetNeeded {
        /// The spec's datasets.
        known: Vec<String>,
    },
    #[error(
        "dataset {dataset} is a snapshot dataset, which only deltaload's keyed upsert loads, and \
         delta-rs's MERGE engine was chosen (--engine merge, DELTALOAD_ENGINE): drop that \
         choice"
    )]
    /// The MERGE engine chosen to load a snapshot dataset.
    SnapshotEngine {
        /// The snapshot dataset.
        dataset: String,
    },
    #[error(transparent)]
    /// Every attempt of a load lost its commit to another writer
    /// ([`deltaload_flow::LoadError::Conflicts`], with the last attempt's error).
    Conflicts(Box<deltaload_flow::LoadError<LakeError>>),
    #[error(
        "--key {key:?} cannot be a key of {table}: its key column {column} holds whole numbers"
    )]
    /// A `--key` that cannot be a key of the table.
    Key {
        /// The table.
        table: String,
        /// Its key column.
        column: String,
        /// The key given.
        key: String,
    },
    #[error("printing table {table}: {source}")]
    /// Printing rows failed.
    Output {
        /// The table printed.
        table: String,
        /// The I/O error.
        #[source]
        source: std::io::Error,
    },
    #[error(
        "table {table} does not match the spec: {detail}; deltaload adds new nullable columns \
         and changes nothing else in an existing table: restore the earlier definition in the \
         spec, or declare the changed feed as a new dataset"
    )]
    /// An existing table does not match its dataset's spec.
    SpecChange {
        /// The table.
        table: String,
        /// What differs.
        detail: String,
    },
    #[error(
        "table {table} holds {count} row(s) with a null {column:?}, a key or sequence_by column of \
         the dataset: deltaload matches changes on them and writes nothing into the table until \
         none is null; delete or fill those rows (SELECT * FROM \"{table}\" WHERE \"{column}\" IS \
         NULL finds them), then load again"
    )]
    /// A table another writer made holds nulls in a key or sequence column.
    NullKeys {
        /// The table.
        table: String,
        /// The column.
        column: String,
        /// How many rows hold a null there.
        count: u64,
    },
    #[error(
        "table {table} has the columns [{}], not those of deltaload's rejects [{}]: another writer \
         made it, and deltaload never writes into it or alters it; give dataset {dataset:?} a \
         rejects table of its own with rejected_table = \"...\" in its spec (docs/operating.md, \
         \"Taking over an existing table\")",
        .columns.join(", "), .ours.join(", ")
    )]
    /// The dataset's rejects table exists with another layout.
    ForeignRejects {
        /// The table.
        table: String,
        /// Its dataset.
        dataset: String,
        /// The table's columns.
        columns: Vec<String>,
        /// The columns of deltaload's rejects.
        ours: Vec<String>,
    },
    #[error(
        "table {table} uses the Delta feature {feature:?}, which deltaload {does}; deltaload \
         wrote nothing to it and the table is unchanged. {remedy}"
    )]
    /// A protocol feature of the table deltaload cannot honour in a write.
    Unsupported {
        /// The table.
        table: String,
        /// The feature, as the protocol names it.
        feature: String,
        /// What deltaload does not do with it.
        does: String,
        /// What it would take.
        remedy: String,
    },
    #[error("dataset {dataset}: expectation {name} ({rule}) cannot be checked: {problem}; correct the rule in the spec (a SQL boolean over the dataset's declared columns, of one record)")]
    /// An expectation of the spec that cannot be compiled.
    Expectation {
        /// The dataset.
        dataset: String,
        /// The expectation.
        name: String,
        /// Its rule.
        rule: String,
        /// What is wrong with it.
        problem: String,
    },
    #[error("no table {table} at {url}: nothing has been loaded into this lake yet")]
    /// A table that does not exist yet.
    Missing {
        /// The table.
        table: String,
        /// Where it would be.
        url: String,
    },
}

impl From<deltaload_engine::EngineError<LakeError>> for LakeError {
    fn from(e: deltaload_engine::EngineError<LakeError>) -> Self {
        match e {
            deltaload_engine::EngineError::Target(e) => e,
            other => Self::Engine(Box::new(other)),
        }
    }
}

impl From<deltaload_flow::LoadError<LakeError>> for LakeError {
    fn from(error: deltaload_flow::LoadError<LakeError>) -> Self {
        use deltaload_flow::LoadError;
        match error {
            LoadError::Port(e) => e,
            conflicts @ LoadError::Conflicts { .. } => Self::Conflicts(Box::new(conflicts)),
            LoadError::Figures(e) => Self::Core(e),
            LoadError::LeftOut { location } => Self::Invariant {
                table: "ledger".into(),
                detail: format!("{location} was left out of its batch"),
            },
        }
    }
}

impl LakeError {
    pub(crate) fn delta(
        table: impl Into<String>,
        url: &url::Url,
    ) -> impl FnOnce(DeltaTableError) -> Self {
        let (table, url) = (table.into(), url.to_string());
        move |source| Self::Delta {
            table,
            url,
            source: Box::new(source),
        }
    }

    pub(crate) fn query(
        table: impl Into<String>,
    ) -> impl FnOnce(deltalake::datafusion::error::DataFusionError) -> Self {
        let table = table.into();
        move |source| Self::Query {
            table,
            source: Box::new(source),
        }
    }

    pub(crate) fn output(table: impl Into<String>) -> impl FnOnce(std::io::Error) -> Self {
        let table = table.into();
        move |source| Self::Output { table, source }
    }

    pub(crate) fn arrow(
        table: impl Into<String>,
    ) -> impl FnOnce(deltalake::arrow::error::ArrowError) -> Self {
        let arrow = deltaload_ingest::DataError::arrow(table);
        move |source| Self::Data(arrow(source))
    }
}

/// delta-rs's error and what to do. A lost commit race in its first line,
/// without delta-rs's help (an isolation level deltaload does not offer).
fn said(source: &DeltaTableError) -> String {
    if crate::table::retry::is_race(source) {
        let text = source.to_string();
        let first = text.lines().next().unwrap_or_default();
        return format!(
            "{first} (another writer committed to this table first; running again completes it)"
        );
    }
    format!("{source}; check that the lake location is reachable and writable, then run again")
}
