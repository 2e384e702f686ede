//! History (SCD type 2) of a dataset with `history = true`: every change a
//! file brings is kept in `history_log_<name>`, and the versions of the
//! keys it touches are folded again from all their changes ([`fold`]) into
//! `history_<name>`, while the dataset's own table is written ([`task`]; a
//! snapshot's changes after it: `crate::snapshot::history`). A version
//! is a row of the dataset's columns with `__start_at` and `__end_at` (the
//! first sequence column of the changes that opened and closed it).
//!
//! Both writes can run again and change nothing: the log takes a file's
//! changes once, and the versions are a function of the log. So a load
//! stopped at any point loads again to the same tables, and any load order
//! of the same files gives the same history. Every history commit carries
//! the same application transaction: two processes writing the history at
//! once conflict, and the later one's round runs again on the newer log.

mod marked;
mod task;
mod write;

pub(crate) use write::FileChanges;

pub(crate) use crate::table::sets::HistoryTables;
