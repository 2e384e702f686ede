//! What can go wrong in the upsert's work: an Arrow kernel, the target's
//! reads (the adapter's error, kept whole), or a key found in two rows.

/// An error of the engine, over a target whose reads fail with `E`.
#[derive(Debug, thiserror::Error)]
pub enum EngineError<E: std::error::Error + 'static> {
    /// An Arrow kernel failed while the engine did `what`.
    #[error("table {table}: {what}: {source}")]
    Arrow {
        /// The dataset's table.
        table: String,
        /// What the engine was doing.
        what: &'static str,
        /// The kernel's error.
        #[source]
        source: arrow_schema::ArrowError,
    },
    /// Reading the target failed.
    #[error(transparent)]
    Target(E),
    /// A key of the changes is held by two rows of the table.
    #[error(
        "table {table}: key(s) of this load appear more than once: ({columns}) = ({key}) in data \
         files {first} and {second}; nothing was written: stop loading and inspect the table \
         history (deltaload show {table})"
    )]
    KeyTwice {
        /// The dataset's table.
        table: String,
        /// The key columns' names.
        columns: String,
        /// The key's values, as text.
        key: String,
        /// One file holding it.
        first: String,
        /// Another file holding it.
        second: String,
    },
    /// The changes given hold a key twice: a defect of the caller.
    #[error(
        "table {table}: the changes to write hold key ({key}) twice; this is a bug of deltaload, \
         please report it"
    )]
    ChangesTwice {
        /// The dataset's table.
        table: String,
        /// The key's values, as text.
        key: String,
    },
}

/// Maps an Arrow error to the engine's, naming the table and the step.
pub(crate) fn arrow<'a, E: std::error::Error + 'static>(
    table: &'a str,
    what: &'static str,
) -> impl Fn(arrow_schema::ArrowError) -> EngineError<E> + 'a {
    move |source| EngineError::Arrow {
        table: table.to_string(),
        what,
        source,
    }
}
