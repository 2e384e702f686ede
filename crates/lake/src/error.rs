//! Errors of the lake adapter, each with the table or file it concerns.

use deltalake::DeltaTableError;

/// A failure of the lake. Every variant says what failed and where.
#[derive(Debug, thiserror::Error)]
pub enum LakeError {
    #[error("table {table} at {url}: {source}; check that the lake location is reachable and writable, then run again")]
    Delta {
        table: String,
        url: String,
        #[source]
        source: Box<DeltaTableError>,
    },
    #[error("query on table {table}: {source}")]
    Query {
        table: String,
        #[source]
        source: Box<deltalake::datafusion::error::DataFusionError>,
    },
    #[error("building the {table} rows: {source}")]
    Arrow {
        table: String,
        #[source]
        source: deltalake::arrow::error::ArrowError,
    },
    #[error("lake location {location:?}: {reason}")]
    Location { location: String, reason: String },
    #[error("cannot read {path}: {source}; check the path and its permissions")]
    ReadSource {
        path: String,
        #[source]
        source: std::io::Error,
    },
    #[error("table {table}: {detail}")]
    Invariant { table: String, detail: String },
    #[error(transparent)]
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
    LedgerStatus {
        location: String,
        content_id: String,
        status: Option<String>,
    },
    #[error(
        "{attempts} attempts each lost a commit race to another writer, the last with: \
         {source}; the load changed nothing and can run again (a message comes back by itself)"
    )]
    Conflicts {
        attempts: u32,
        #[source]
        source: Box<LakeError>,
    },
    #[error(
        "--key {key:?} cannot be a key of {table}: its key column {column} holds whole numbers"
    )]
    Key {
        table: String,
        column: String,
        key: String,
    },
    #[error("printing table {table}: {source}")]
    Output {
        table: String,
        #[source]
        source: std::io::Error,
    },
    #[error(
        "table {table} does not match the spec: {detail}; deltaload adds new nullable columns \
         and changes nothing else in an existing table: restore the earlier definition in the \
         spec, or declare the changed feed as a new dataset"
    )]
    SpecChange { table: String, detail: String },
    #[error("no table {table} at {url}: nothing has been loaded into this lake yet")]
    Missing { table: String, url: String },
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
