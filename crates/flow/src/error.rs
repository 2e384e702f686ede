//! Errors of a load: the adapter's, or the protocol's own.

/// A load that failed. The ledger holds nothing of the round that failed,
/// and running the same files again completes the load.
#[derive(Debug, thiserror::Error)]
pub enum LoadError<E: std::error::Error + 'static> {
    /// An adapter's call failed.
    #[error(transparent)]
    Port(#[from] E),
    /// Every attempt of a round lost its commit to another writer.
    #[error(
        "{attempts} attempts each lost a commit race to another writer (loads or `deltaload \
         maintain` committing to the same table at the same time), the last: {source}. Nothing \
         is lost: running the same load again completes it, what it committed included (a \
         message from SQS comes back by itself)"
    )]
    Conflicts {
        /// Attempts made.
        attempts: u32,
        /// The last attempt's error.
        #[source]
        source: E,
    },
    /// A file's figures do not balance (a bug: the load stops before the
    /// ledger claims it).
    #[error(transparent)]
    Figures(deltaload_core::CoreError),
    /// A file of the batch got no outcome (a bug).
    #[error("{location} was left out of its batch: a bug; run the load again")]
    LeftOut {
        /// The file.
        location: String,
    },
}
