//! The load use case of deltaload: how a batch of files becomes rows in a
//! dataset's tables exactly once, whatever repeats, races or dies.
//!
//! - [`plan()`] cuts a batch into rounds;
//! - [`load`] runs each round through the ledger protocol (`loading`, the
//!   writes, `loaded` last), retries a round that lost a commit race, and
//!   resumes a round an earlier process left `loading`;
//! - [`ports`] are what it runs over: the object source ([`Source`]) and the
//!   tables ([`Tables`]). The Delta adapter (`deltaload-lake`) implements
//!   them; this crate's tests implement them in memory.
//!
//! The argument for exactly once is in `docs/design.md`.

#![warn(missing_docs)]

mod error;
pub mod ledger;
mod outcome;
pub mod plan;
pub mod ports;
mod protocol;
pub mod retry;

#[cfg(test)]
mod fake;
#[cfg(test)]
mod tests;

pub use error::LoadError;
pub use ledger::{FileKey, LedgerRow, LedgerStatus, Recorded, UnknownStatus};
pub use outcome::{log_outcome, LoadOutcome, Loaded, Merged, Resume};
pub use plan::{plan, Plan};
pub use ports::{FileFigures, Identified, Intake, Port, ReadFile, Source, Step, Tables};
pub use protocol::load;
