//! What can go wrong with a load's data in memory or on local disk: an Arrow
//! kernel, a local file, a sorted run, a rule that must hold. The Delta
//! adapter wraps it whole (`LakeError::Data`).

/// A failure of a load's data, before or apart from any table. Every
/// variant says what failed and where.
#[derive(Debug, thiserror::Error)]
pub enum DataError {
    /// Building or reading Arrow columns failed.
    #[error("building the {table} rows: {source}")]
    Arrow {
        /// The table (or dataset) they were for.
        table: String,
        /// Arrow's error.
        #[source]
        source: arrow_schema::ArrowError,
    },
    /// A local file (a change file, a spill) could not be read or written.
    #[error("cannot read {path}: {source}; check the path and its permissions")]
    ReadSource {
        /// The file or directory.
        path: String,
        /// The I/O error.
        #[source]
        source: std::io::Error,
    },
    /// A sorted run of a file read in pieces could not be written.
    #[error(
        "writing the sorted run {path} of {table}: {source}; check the space left in the \
         spill directory (--spill-dir, DELTALOAD_SPILL_DIR), then load again"
    )]
    Spill {
        /// The dataset.
        table: String,
        /// The run's file.
        path: String,
        /// Arrow's error (the I/O error within).
        #[source]
        source: arrow_schema::ArrowError,
    },
    /// Something that must hold does not (a bug).
    #[error("table {table}: {detail}")]
    Invariant {
        /// The table or dataset concerned.
        table: String,
        /// What does not hold.
        detail: String,
    },
}

impl DataError {
    /// Maps an Arrow error to [`DataError::Arrow`] for `table`.
    pub fn arrow(table: impl Into<String>) -> impl FnOnce(arrow_schema::ArrowError) -> Self {
        let table = table.into();
        move |source| Self::Arrow { table, source }
    }

    /// Maps an I/O error on `path` to [`DataError::ReadSource`].
    pub fn io(path: &std::path::Path) -> impl Fn(std::io::Error) -> Self + '_ {
        move |source| Self::ReadSource {
            path: path.display().to_string(),
            source,
        }
    }
}
