//! Errors of the lake adapter, each with the table or file it concerns.

use deltalake::DeltaTableError;

/// A failure of the lake. Every variant says what failed and where.
#[derive(Debug, thiserror::Error)]
pub enum LakeError {
    #[error("table {table} at {url}: {source}; check that the lake location is reachable and writable, then run again")]
    Delta {
        table: &'static str,
        url: String,
        #[source]
        source: Box<DeltaTableError>,
    },
    #[error("query on table {table}: {source}")]
    Query {
        table: &'static str,
        #[source]
        source: Box<deltalake::datafusion::error::DataFusionError>,
    },
    #[error("building the {table} rows: {source}")]
    Arrow {
        table: &'static str,
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
    Invariant { table: &'static str, detail: String },
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
        table: &'static str,
        column: &'static str,
        key: String,
    },
    #[error("printing table {table}: {source}")]
    Output {
        table: &'static str,
        #[source]
        source: std::io::Error,
    },
    #[error("no table {table} at {url}: nothing has been loaded into this lake yet")]
    Missing { table: &'static str, url: String },
}

impl LakeError {
    pub(crate) fn delta(
        table: &'static str,
        url: &url::Url,
    ) -> impl FnOnce(DeltaTableError) -> Self {
        let url = url.to_string();
        move |source| Self::Delta {
            table,
            url,
            source: Box::new(source),
        }
    }

    pub(crate) fn query(
        table: &'static str,
    ) -> impl FnOnce(deltalake::datafusion::error::DataFusionError) -> Self {
        move |source| Self::Query {
            table,
            source: Box::new(source),
        }
    }

    pub(crate) fn output(table: &'static str) -> impl FnOnce(std::io::Error) -> Self {
        move |source| Self::Output { table, source }
    }

    pub(crate) fn arrow(
        table: &'static str,
    ) -> impl FnOnce(deltalake::arrow::error::ArrowError) -> Self {
        move |source| Self::Arrow { table, source }
    }
}
