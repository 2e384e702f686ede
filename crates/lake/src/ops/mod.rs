//! The operator's commands: `maintain` (compaction, checkpoints, vacuum),
//! the audits behind `status` and `reconcile`, and `show`. They use the
//! tables alone ([`crate::table`]), never a writer.

pub mod audit;
pub mod catalog;
pub mod maintain;
pub mod show;

use crate::table::sets::Tables;
use deltalake::datafusion::prelude::SessionContext;
use deltaload_core::{Dataset, Spec};
use std::sync::Arc;

/// What the operator's commands work on: a lake's tables, the session they
/// are queried in, and the spec they were opened with.
pub(crate) struct Ops<'a> {
    /// The lake's tables.
    pub tables: &'a mut Tables,
    /// The session the tables are queried in.
    pub ctx: &'a SessionContext,
    /// The spec the lake was opened with.
    pub spec: &'a Spec,
}

impl Ops<'_> {
    /// The datasets the lake was opened with.
    pub(crate) fn datasets(&self) -> Vec<Arc<Dataset>> {
        self.tables.sets.iter().map(|s| s.dataset.clone()).collect()
    }
}
