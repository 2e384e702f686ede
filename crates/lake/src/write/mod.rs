//! The writers of a dataset's tables: the keyed upsert ([`upsert`]) with
//! delta-rs's MERGE as its fallback ([`merge`], [`merge_source`]), rows
//! replaced by file ([`replace`], [`rejects`]), the remembered deletes
//! ([`tombstones`], [`settle`]) and the look-ups by key they share
//! ([`keys`]). A writer takes the tables it writes ([`Writer`]) and returns
//! what it did ([`Made`]): nothing a write computes is left in a field for
//! a later step to read.

pub(crate) mod keys;
pub(crate) mod merge;
pub(crate) mod merge_source;
pub(crate) mod rejects;
pub(crate) mod replace;
pub(crate) mod settle;
pub(crate) mod tombstones;
pub(crate) mod upsert;

use crate::table::location::LakeRoot;
use crate::table::sets::DatasetTables;
use deltalake::datafusion::prelude::SessionContext;
use deltaload_ingest::MemoryBudget;

/// The Parquet bytes of rewritten files a copy-on-write upsert reads at once
/// by default (fewer when the memory budget asks it): two files of the
/// default size. On the large load (1,000,000 changes into 2,000,000 orders)
/// groups of 16 MiB peaked at 935 MiB, groups of 32 MiB at 1,198 MiB, the
/// whole rewrite at once at 1,373 MiB (docs/memory.md).
pub const REWRITE_GROUP_BYTES: u64 = 16 << 20;

/// What the writers of a lake's datasets are given: the engine, the memory
/// budget, and the Parquet bytes a copy-on-write upsert rewrites at once.
#[derive(Debug, Clone)]
pub(crate) struct Settings {
    /// The engine writing the datasets' tables.
    pub engine: Engine,
    /// The memory a load may use, and where it spills.
    pub budget: MemoryBudget,
    /// The Parquet bytes of rewritten files a copy-on-write upsert reads at
    /// once (fewer when the memory budget asks it).
    pub rewrite_group_bytes: u64,
}

impl Default for Settings {
    fn default() -> Self {
        Self {
            engine: Engine::default(),
            budget: MemoryBudget::default(),
            rewrite_group_bytes: REWRITE_GROUP_BYTES,
        }
    }
}

/// What the writes into a lake's datasets did since it was opened.
#[derive(Debug, Clone, Copy, Default)]
pub(crate) struct Tally {
    /// What went through the spill directory.
    pub spills: Spills,
    /// What the MERGEs into the datasets' tables read and wrote.
    pub orders_files: OrdersFiles,
    /// Writes into datasets' tables by the keyed upsert and by delta-rs's MERGE.
    pub writes: EngineWrites,
}

/// A writer of one dataset's tables: the tables it writes, and what every
/// write is given (the lake's session, root and settings, the tally it adds
/// to).
pub(crate) struct Writer<'a> {
    /// The dataset's tables (its rules: `set.dataset`).
    pub set: &'a mut DatasetTables,
    /// The session the writers query the tables in.
    pub ctx: &'a SessionContext,
    /// The lake's root (the history opens its tables there).
    pub root: &'a LakeRoot,
    /// The engine and the memory budget.
    pub settings: &'a Settings,
    /// What the writes did, since the lake was opened.
    pub tally: &'a mut Tally,
}

/// What the writes of a round did to the dataset's table, besides their
/// counts: what the round records, and what it still checks.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(crate) struct Made {
    /// The version of the last commit naming the round's files (made, or
    /// found by recovery).
    pub commit: Option<u64>,
    /// Whether delta-rs's MERGE wrote: its result's keys are checked for
    /// doubles before the round is recorded (the keyed upsert checks them
    /// before it commits).
    pub unchecked: bool,
}

impl Made {
    /// What this write and a `later` one made together.
    pub(crate) fn then(self, later: Made) -> Made {
        Made {
            commit: later.commit.or(self.commit),
            unchecked: self.unchecked || later.unchecked,
        }
    }
}

/// Which engine writes the changes into a dataset's table.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum Engine {
    /// deltaload's keyed upsert (delta-rs's MERGE for tables it does not handle).
    #[default]
    Keyed,
    /// delta-rs's MERGE, always.
    Merge,
}

impl Engine {
    /// The engine of a command-line or setting value: `keyed` or `merge`.
    pub fn parse(text: &str) -> Option<Self> {
        match text {
            "keyed" => Some(Self::Keyed),
            "merge" => Some(Self::Merge),
            _ => None,
        }
    }

    /// The engine's name, as [`Engine::parse`] reads it.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Keyed => "keyed",
            Self::Merge => "merge",
        }
    }
}

/// What loads did to stay within the memory budget.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Spills {
    /// Files too large to read whole, read in pieces into sorted runs.
    pub files_in_pieces: u64,
    /// Sorted runs written to the spill directory.
    pub runs_written: u64,
    /// The most bytes of parsed changes (measured Arrow arrays) a file read
    /// in pieces held in memory at once, before writing them to a run.
    pub most_held: u64,
    /// Slices of keys upserted one at a time (a file read in pieces, or a
    /// rewrite that would not fit at once).
    pub slices: u64,
}

/// Writes into datasets' tables by each engine.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct EngineWrites {
    /// By the keyed upsert.
    pub keyed: u64,
    /// By delta-rs's MERGE (chosen, or for a table the keyed upsert leaves to it).
    pub merge: u64,
    /// Groups of files a copy-on-write keyed upsert read, rewrote and wrote
    /// one after another (a write with inserts alone counts one).
    pub groups: u64,
    /// Changes replayed row by row against their keys' rows and tombstones
    /// before a write: every change of a round of several files; of one
    /// file with deletes, its deletes and the changes of keys with a tombstone.
    pub replayed: u64,
    /// Deletes of keys the table does not hold, left out of a MERGE that
    /// writes the change data feed with no sequence (see `merge_source.rs`).
    pub unknown_deletes_left_out: u64,
}

/// The data files MERGEs into the datasets' tables scanned, skipped by their
/// statistics, rewrote (removed) and added, summed since the lake was opened.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct OrdersFiles {
    /// Files whose statistics could hold a changed key (read).
    pub scanned: u64,
    /// Files skipped by their statistics.
    pub skipped: u64,
    /// Files rewritten (removed).
    pub rewritten: u64,
    /// Files added.
    pub added: u64,
    /// Files read a second time, for their tie-break columns: a change met
    /// a row of its own sequence there (keyed upsert, read whole).
    pub reread: u64,
}
