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

    pub(crate) fn arrow(
        table: &'static str,
    ) -> impl FnOnce(deltalake::arrow::error::ArrowError) -> Self {
        move |source| Self::Arrow { table, source }
    }
}
