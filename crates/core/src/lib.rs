//! The pure core of deltaload: what a change file must look like and what a
//! load of it means, with no storage, AWS or Arrow types.
//!
//! - [`contract`]: the header every file must carry, checked before anything is written.
//! - [`record`]: one CSV record parsed into an [`OrderChange`] or refused with a [`RejectReason`].
//! - [`reader`]: a whole file read into changes and rejects, with line numbers and raw text.
//! - [`newest`]: one change per order, the newest, with a tie rule that does not depend on order.
//! - [`compression`]: gzip-compressed files expanded, within a size limit.
//! - [`identity`]: the content identity (size and SHA-256) the ledger keys files by.
//! - [`reconcile`]: the per-file figures and the balance check.
//! - [`attribution`]: several files merged at once, with each file's own figures.
//! - [`ranges`]: a few id ranges covering a batch, for skipping `orders` files.
//!
//! Nothing here touches a disk or a network; the `deltaload-lake` crate owns storage.

pub mod attribution;
pub mod compression;
pub mod contract;
pub mod error;
pub mod identity;
pub mod newest;
pub mod ranges;
pub mod reader;
pub mod reconcile;
pub mod record;

pub use attribution::{attribute, Attribution};
pub use contract::{check_header, HeaderMismatch, COLUMNS};
pub use error::CoreError;
pub use identity::ContentId;
pub use newest::{newest_per_order, NEWEST_WINS_RULE};
pub use reader::{read_changes, ParsedFile, Reject};
pub use reconcile::{MergeCounts, Reconciliation};
pub use record::{OrderChange, RejectReason};
