//! A file of a load round once read: the newest change of each key in
//! Arrow and its rejects, whole or in spilled runs ([`Parsed`], the load's
//! [`deltaload_flow::ReadFile`]).

use crate::spill::Spilled;
use arrow_array::RecordBatch;
use deltaload_core::Reject;
use deltaload_flow::{FileKey, ReadFile};

/// A file of a round that parsed: its rejects and its newest change per key.
pub struct Parsed {
    /// The file version: its location and content.
    pub key: FileKey,
    /// The newest change of each key, sorted by key (empty when the file
    /// was read in pieces).
    pub changes: RecordBatch,
    /// Its records that did not parse.
    pub rejects: Vec<Reject>,
    /// Its records that parsed.
    pub loaded: u64,
    /// The changes, when the file was read in pieces.
    pub spilled: Option<Spilled>,
    /// Every change of the file, of a dataset that keeps history.
    pub all: Option<RecordBatch>,
    /// Per expectation of the dataset: records checked, and those that broke it.
    pub expectations: Vec<deltaload_core::ExpectationCount>,
}

impl ReadFile for Parsed {
    fn key(&self) -> &FileKey {
        &self.key
    }

    fn records(&self) -> u64 {
        self.loaded
    }

    fn rejected(&self) -> u64 {
        self.rejects.len() as u64
    }

    /// Distinct keys among the changes (of a spilled file: once merged).
    fn distinct(&self) -> u64 {
        match &self.spilled {
            None => self.changes.num_rows() as u64,
            Some(s) => s.distinct.get().copied().unwrap_or(0),
        }
    }

    fn expectations(&self) -> Vec<deltaload_core::ExpectationCount> {
        self.expectations.clone()
    }
}
