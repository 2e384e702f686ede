//! The pure core of deltaload: what a dataset's files must look like and what
//! a load of one means, with no storage, AWS or Arrow types.
//!
//! - [`spec`]: datasets declared in a spec file; `orders` is the built-in one.
//! - [`contract`]: the header every file must carry, checked before anything is written.
//! - [`encoding`]: a file decoded from its dataset's encoding, with hints for refusals.
//! - [`record`]: one CSV record parsed into a typed [`Row`] or refused with a [`RejectReason`].
//! - [`fields`] and [`time`]: the strict parsers of numbers, booleans, dates and timestamps.
//! - [`reader`]: a whole file read into rows and rejects, with line numbers and raw text.
//! - [`jsonl`]: a JSON Lines file read the same way, fields by column name.
//! - [`newest`]: one change per key, the newest, with a tie rule that does not depend on order.
//! - [`pieces`]: a file cut into pieces of whole records, to read one larger than memory.
//! - [`compression`]: gzip-compressed files expanded, within a size limit.
//! - [`identity`]: the content identity (size and SHA-256) the ledger keys files by.
//! - [`reconcile`]: the per-file figures and the balance check.
//! - [`attribution`]: several files merged at once, with each file's own figures.
//! - [`ranges`]: a few ranges covering a batch's integer keys, for skipping data files.
//!
//! Nothing here touches a disk or a network; the `deltaload-lake` crate owns storage.

#![warn(missing_docs)]

pub mod attribution;
pub mod avro_container;
mod chunks;
pub mod compression;
pub mod contract;
pub mod encoding;
pub mod error;
pub mod fields;
pub mod identity;
pub mod jsonl;
mod layout;
pub mod lines;
pub mod newest;
mod parsed;
pub mod pieces;
mod quotes;
pub mod ranges;
pub mod reader;
pub mod reconcile;
pub mod record;
pub mod sink;
pub mod spec;
pub mod time;
pub mod value;

pub use attribution::{attribute, Attribution, Tombstone};
pub use contract::{check_header, HeaderMismatch};
pub use error::CoreError;
pub use identity::ContentId;
pub use jsonl::{read_jsonl, read_jsonl_into};
pub use newest::{newest_of, newest_per_key};
pub use reader::{read_file, read_file_into, ParsedFile, Reject};
pub use reconcile::{ExpectationCount, MergeCounts, Reconciliation};
pub use record::RejectReason;
pub use sink::{Scalar, Sink};
pub use spec::{
    key_date, key_dates, Column, ColumnType, Dataset, History, Snapshot, SnapshotOrder, Spec,
    SpecError,
};
pub use value::{Row, Rows, Units, Value};
