//! Errors of the lake adapter, each with the table or file it concerns.

use deltalake::DeltaTableError;

/// A failure of the lake. Every variant says what failed and where.
#[derive(Debug, thiserror::Error)]
pub enum LakeError {
    #[error("table {table} at {url}: {source}; check that the lake location is reachable and writable, then run again")]
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
    #[error("building the {table} rows: {source}")]
    /// Building Arrow columns failed.
    Arrow {
        /// The table they were for.
        table: String,
        /// Arrow's error.
        #[source]
        source: deltalake::arrow::error::ArrowError,
    },
    #[error("lake location {location:?}: {reason}")]
    /// The lake's location cannot be used.
    Location {
        /// The location given.
        location: String,
        /// Why not.
        reason: String,
    },
    #[error("cannot read {path}: {source}; check the path and its permissions")]
    /// A local file (a change file, a spill) could not be read or written.
    ReadSource {
        /// The file or directory.
        path: String,
        /// The I/O error.
        #[source]
        source: std::io::Error,
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
    /// A rule of the core failed (figures that do not balance).
    Core(#[from] deltaload_core::CoreError),
    #[error(
        "ledger row of {location} (content {content_id}) has status {}, which is none of \
         loading, loaded or refused: the row is damaged or was written by another tool, and \
         the file's state is unknown; delete the row from the ledger table (predicate \
         location = '{location}' AND content_id = '{content_id}', e.g. with deltalake's \
         DeltaTable.delete) and load the file again, which changes orders only where its \
         changes are newer",
        status.as_deref().map_or("missing".to_string(), |s| format!("{s:?}"))
    )]
    /// A ledger row's status is none deltaload writes.
    LedgerStatus {
        /// The row's location.
        location: String,
        /// Its content id.
        content_id: String,
        /// The status found (`None`: missing).
        status: Option<String>,
    },
    #[error(
        "{attempts} attempts each lost a commit race to another writer, the last with: \
         {source}; the load changed nothing and can run again (a message comes back by itself)"
    )]
    /// Every attempt of a load lost its commit to another writer.
    Conflicts {
        /// Attempts made.
        attempts: u32,
        /// The last attempt's error.
        #[source]
        source: Box<LakeError>,
    },
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
    #[error("no table {table} at {url}: nothing has been loaded into this lake yet")]
    /// A table that does not exist yet.
    Missing {
        /// The table.
        table: String,
        /// Where it would be.
        url: String,
    },
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
        let table = table.into();
        move |source| Self::Arrow { table, source }
    }
}
