//! The tables of a lake: per dataset its table, its rejects and, as the
//! dataset asks, its tombstones and history; the shared ledger and
//! reconciliation. All are opened at once and created when missing.

use crate::table::error::LakeError;
use crate::table::features::refuse;
use crate::table::location::LakeRoot;
use crate::table::open::{load_or_mkdir, open_or_create, settle};
use crate::table::rules::TableRules;
use deltalake::DeltaTable;
use deltaload_core::{Dataset, Spec};
use deltaload_engine::TableName;
use std::sync::Arc;

/// The tables of a lake.
pub(crate) struct Tables {
    /// Per dataset of the spec, in its order.
    pub sets: Vec<DatasetTables>,
    /// `ledger`: a row per file version.
    pub ledger: DeltaTable,
    /// `reconciliation`: each file's figures.
    pub reconciliation: DeltaTable,
    /// `expectations`: each file's figures per expectation, when a dataset
    /// of the spec declares any.
    pub expectations: Option<DeltaTable>,
}

/// A dataset and its tables.
pub(crate) struct DatasetTables {
    pub dataset: Arc<Dataset>,
    pub target: DeltaTable,
    pub rejected: DeltaTable,
    /// The remembered deletes, for datasets that keep them.
    pub tombstones: Option<DeltaTable>,
    /// The versions and the changes they were made of, for datasets that
    /// keep history.
    pub history: Option<HistoryTables>,
    /// What checks the table's rules (CHECK constraints, invariants) on
    /// each record, when it has any; `dataset` then lists them.
    pub rules: Option<Arc<TableRules>>,
}

impl Tables {
    /// Opens the tables of `spec`'s datasets and the shared ones at `root`,
    /// creating any missing table, adding the columns the spec added, and
    /// refusing a table whose definition the spec changed otherwise.
    pub(crate) async fn open(root: &LakeRoot, spec: &Spec) -> Result<Self, LakeError> {
        // The tables are opened at once: on S3 each is a few round trips,
        // and a Lambda's cold start waits for all of them. Each opening runs
        // to its end before an error is returned: one still replaying its
        // log when the process exits panics in the Delta kernel's executor.
        let sets =
            futures::future::join_all((spec.datasets.iter()).map(|d| DatasetTables::open(root, d)));
        let expecting = spec.datasets.iter().any(|d| !d.expectations.is_empty());
        let (sets, ledger, reconciliation, expectations) = futures::join!(
            sets,
            open_or_create(root, &TableName::Ledger),
            open_or_create(root, &TableName::Reconciliation),
            async {
                match expecting {
                    true => open_or_create(root, &TableName::Expectations)
                        .await
                        .map(Some),
                    false => Ok(None),
                }
            },
        );
        Ok(Self {
            sets: sets.into_iter().collect::<Result<Vec<_>, _>>()?,
            ledger: ledger?,
            reconciliation: reconciliation?,
            expectations: expectations?,
        })
    }
}

impl Tables {
    /// The table `name` of this lake, when it has one.
    pub(crate) fn table_mut(&mut self, name: &TableName) -> Option<&mut DeltaTable> {
        let set = |d: &Dataset| self.sets.iter().position(|s| s.dataset.name == d.name);
        match name {
            TableName::Target(d) => set(d).map(|i| &mut self.sets[i].target),
            TableName::Rejected(d) => set(d).map(|i| &mut self.sets[i].rejected),
            TableName::Tombstones(d) => set(d).and_then(|i| self.sets[i].tombstones.as_mut()),
            TableName::History(d) => {
                set(d).and_then(|i| self.sets[i].history.as_mut().map(|h| &mut h.versions))
            }
            TableName::HistoryLog(d) => {
                set(d).and_then(|i| self.sets[i].history.as_mut().map(|h| &mut h.log))
            }
            TableName::Ledger => Some(&mut self.ledger),
            TableName::Reconciliation => Some(&mut self.reconciliation),
            TableName::Expectations => self.expectations.as_mut(),
        }
    }
}

impl DatasetTables {
    /// Opens dataset `d`'s tables at `root`, creating them when missing.
    async fn open(root: &LakeRoot, d: &Arc<Dataset>) -> Result<Self, LakeError> {
        let (target, rejected) = (TableName::Target(d.clone()), TableName::Rejected(d.clone()));
        // Both at once; the table's own error first (a changed key also
        // renames the rejects' key column).
        let tombstones = TableName::Tombstones(d.clone());
        // Both loaded, and both refused when deltaload would break them (a
        // protocol feature, a rejects table another writer made), before
        // either is written: adopting a table writes to it.
        let (loaded_target, loaded_rejected) =
            futures::join!(load_or_mkdir(root, &target), load_or_mkdir(root, &rejected),);
        let (loaded_target, loaded_rejected) = (loaded_target?, loaded_rejected?);
        refuse(&loaded_target, &target)?;
        refuse(&loaded_rejected, &rejected)?;
        let (target, rejected, tombstones) = futures::join!(
            settle(root, &target, loaded_target),
            settle(root, &rejected, loaded_rejected),
            async {
                match d.keeps_tombstones() {
                    true => open_or_create(root, &tombstones).await.map(Some),
                    false => Ok(None),
                }
            },
        );
        let (target, rejected, tombstones) = (target?, rejected?, tombstones?);
        // The rules of the table as settled (another writer may have made
        // or changed it meanwhile).
        let (d, rules) = match crate::table::rules::read(&target, d)? {
            Some((with_rules, rules)) => (with_rules, Some(Arc::new(rules))),
            None => (d.clone(), None),
        };
        let d = &d;
        crate::table::properties::check_marks(&target, d)?;
        let history = match d.history {
            Some(_) => Some(HistoryTables::open(root, d).await?),
            None => None,
        };
        Ok(Self {
            dataset: d.clone(),
            target,
            rejected,
            tombstones,
            history,
            rules,
        })
    }
}

/// A dataset's versions and the changes they were made of.
pub(crate) struct HistoryTables {
    /// `history_<name>`.
    pub versions: DeltaTable,
    /// `history_log_<name>`.
    pub log: DeltaTable,
}

impl HistoryTables {
    /// Opens both tables of `dataset`, creating them when missing.
    pub(crate) async fn open(root: &LakeRoot, dataset: &Arc<Dataset>) -> Result<Self, LakeError> {
        let names = (
            TableName::History(dataset.clone()),
            TableName::HistoryLog(dataset.clone()),
        );
        // Both to their end, as the lake's other tables (`Lake::open_spec`).
        let (versions, log) = futures::join!(
            open_or_create(root, &names.0),
            open_or_create(root, &names.1),
        );
        Ok(Self {
            versions: versions?,
            log: log?,
        })
    }

    /// Reloads both to their latest versions.
    pub(crate) async fn refresh(&mut self, dataset: &Arc<Dataset>) -> Result<(), LakeError> {
        crate::table::refresh(&mut self.versions, &TableName::History(dataset.clone())).await?;
        crate::table::refresh(&mut self.log, &TableName::HistoryLog(dataset.clone())).await
    }
}
