//! The upsert's work on Arrow batches, with nothing of Delta: the target
//! table's files come in through the [`Target`] trait, and the Delta adapter
//! (`deltaload-lake`) implements it and commits what the engine decides.
//!
//! - [`order`]: the one definition of how keys and changes compare.
//! - [`newest`]: one change per key, the newest.
//! - [`aligned`]: the changes laid out as the table's rows.
//! - [`matching`]: which rows of a file hold a change's key.
//! - [`mod@decide`]: what a change does to the row of its key.
//! - [`mod@meet`]: the candidate files read and every change decided.
//! - [`picks`]: the rows that replace a rewritten file, sorted by key.
//! - [`target`]: the target table's files, as the engine reads them.

#![warn(missing_docs)]

pub mod aligned;
pub mod decide;
pub mod error;
pub mod groups;
pub mod matching;
pub mod meet;
pub mod newest;
pub mod order;
pub mod picks;
pub mod target;

pub use aligned::{positions, updated_mask, Aligned};
pub use decide::{decide, Action, Decider};
pub use error::EngineError;
pub use groups::{groups, Group};
pub use matching::ChangeKeys;
pub use meet::{meet, Met};
pub use newest::{newest_filled, newest_indices, Filled};
pub use order::Order;
pub use picks::{Picks, Take};
pub use target::{FileRows, Target};

#[cfg(test)]
mod order_tests;
