//! What reading a change file gives: the records that parsed, in a [`Sink`],
//! and the rejects, each with its line, raw text and reason. Every reader
//! (CSV, JSON Lines, Parquet) fills one.

use crate::record::RejectReason;
use crate::sink::Sink;
use crate::spec::Dataset;
use crate::value::Rows;

/// A record that did not parse, kept with its raw text.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Reject {
    /// 1-based line where the record starts in the file.
    pub line: u64,
    /// The record as written, without its line end (invalid UTF-8 replaced by U+FFFD).
    pub raw: String,
    /// The key's field texts when there are any, to help find the row.
    pub key: Option<String>,
    /// Why it was rejected (the rejected table holds its text).
    pub reason: RejectReason,
}

/// Everything a file holds once its header has passed the contract: its
/// records as values ([`Rows`]), or in another [`Sink`].
#[derive(Debug, Clone, Default, PartialEq)]
pub struct ParsedFile<S = Rows> {
    /// Records that parsed, in file order.
    pub changes: S,
    /// Records that did not.
    pub rejects: Vec<Reject>,
}

impl<S: Sink> ParsedFile<S> {
    /// Records read: every non-blank record after the header.
    pub fn records(&self) -> u64 {
        (self.changes.len() + self.rejects.len()) as u64
    }

    /// No records yet.
    pub fn empty(dataset: &Dataset) -> Self {
        Self {
            changes: S::empty(dataset),
            rejects: Vec::new(),
        }
    }
}
