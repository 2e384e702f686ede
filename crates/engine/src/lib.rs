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
//! - [`tables`]: the lake's tables, named, and their Arrow schemas;
//!   [`catalog`]: what a data catalog (Glue) holds of each.
//! - [`read`]: a change file read into Arrow, its newest change per key
//!   ([`parsed::Parsed`], a file of a load round); [`spill`]: one too large
//!   to read whole, read in pieces into sorted runs and merged back.
//! - [`changes`]: a round's changes with the file each comes from.
//! - [`keys`] and [`matching`]: the keys of changes, and which rows hold them.
//! - [`history`]: the versions of a key (SCD type 2), folded from its changes.
//! - [`snapshot`]: what a full export changes, and its high-water marks.

#![warn(missing_docs)]

pub mod aligned;
pub mod catalog;
pub mod changes;
pub mod decide;
pub mod error;
pub mod groups;
pub mod history;
pub mod keys;
pub mod matching;
pub mod meet;
pub mod newest;
pub mod order;
pub mod parsed;
pub mod picks;
pub mod read;
pub mod snapshot;
pub mod spill;
pub mod tables;
pub mod target;

pub use aligned::{positions, Aligned};
pub use decide::{decide, Action, Decider};
pub use error::EngineError;
pub use groups::{groups, Group};
pub use matching::ChangeKeys;
pub use meet::{meet, Met};
pub use newest::{newest_filled, newest_indices, Filled};
pub use order::Order;
pub use picks::{updated_mask, Picks, Take};
pub use tables::TableName;
pub use target::{FileRows, Target};

#[cfg(test)]
mod order_tests;

/// A pseudo-random number below `n`: a fixed sequence per `state` (tests).
#[cfg(test)]
pub(crate) fn test_random(state: &mut u64, n: u64) -> u64 {
    *state = state
        .wrapping_mul(6364136223846793005)
        .wrapping_add(1442695040888963407);
    (*state >> 33) % n
}
