//! A file of a load round once read: its changes and rejects, whole or in
//! spilled runs ([`Parsed`], the lake's [`deltaload_flow::ReadFile`]).

use deltaload_core::{ParsedFile, Value};
use deltaload_flow::{FileKey, ReadFile};

/// A file of a round that parsed: its rejects and its newest change per key.
pub(crate) struct Parsed {
    pub key: FileKey,
    pub file: ParsedFile,
    pub loaded: u64,
    /// The newest change of each key: indexes into `file.changes`, by key.
    pub newest: Vec<usize>,
    /// The changes, when the file was read in pieces (`file.changes` is then empty).
    pub spilled: Option<crate::spill::Spilled>,
}

impl Parsed {
    /// The newest change of each key, by key.
    pub fn rows(&self) -> impl Iterator<Item = &[Value]> {
        self.newest.iter().map(|&i| self.file.changes.row(i))
    }
}

impl ReadFile for Parsed {
    fn key(&self) -> &FileKey {
        &self.key
    }

    fn records(&self) -> u64 {
        self.loaded
    }

    fn rejected(&self) -> u64 {
        self.file.rejects.len() as u64
    }

    /// Distinct keys among the changes (of a spilled file: once merged).
    fn distinct(&self) -> u64 {
        match &self.spilled {
            None => self.newest.len() as u64,
            Some(s) => s.distinct.get().copied().unwrap_or(0),
        }
    }
}
