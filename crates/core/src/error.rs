//! Errors of the core: a file that breaks the contract, or figures that do not add up.

use crate::contract::HeaderMismatch;

/// What the core can refuse. Each variant names what to do next.
#[derive(Debug, thiserror::Error)]
pub enum CoreError {
    /// The header differs from the contract: the file is refused before any write.
    #[error(transparent)]
    Header(#[from] HeaderMismatch),
    /// The per-file figures do not balance; a bug, never a data problem.
    #[error("reconciliation of {file} does not balance: {detail}; the file is not recorded as loaded; report this as a bug")]
    /// A file's figures do not add up: records read != loaded + rejected.
    Unbalanced {
        /// The file's location.
        file: String,
        /// Which figures disagree.
        detail: String,
    },
}
