//! The upsert's work on Arrow batches, with no I/O and nothing of Delta.
//!
//! - [`order`]: the one definition of how keys and changes compare.
//! - [`newest`]: one change per key, the newest.

#![warn(missing_docs)]

pub mod newest;
pub mod order;

pub use newest::newest_indices;
pub use order::Order;

#[cfg(test)]
mod order_tests;
