//! Per-file reconciliation: records read = loaded + rejected, and every distinct
//! order inserted, updated or stale.

use crate::error::CoreError;

/// What the MERGE did with a file's distinct keys.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct MergeCounts {
    /// Rows inserted (keys new to the table).
    pub inserted: u64,
    /// Rows updated (the change newer than the row).
    pub updated: u64,
    /// Rows removed by a delete.
    pub deleted: u64,
    /// Rows removed because a snapshot no longer holds their key (not
    /// records of the file, so outside the balance).
    pub retired: u64,
    /// Versions the history (`history = true`) gained.
    pub opened: u64,
    /// Versions of the history whose end was set or moved.
    pub closed: u64,
}

/// The figures of one load of one file.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Reconciliation {
    /// Non-blank records after the header.
    pub records: u64,
    /// Records that parsed.
    pub loaded: u64,
    /// Records that did not.
    pub rejected: u64,
    /// Parsed records folded into a newer change of the same order in this file.
    pub duplicates: u64,
    /// Distinct orders inserted.
    pub inserted: u64,
    /// Distinct orders updated (strictly newer).
    pub updated: u64,
    /// Distinct keys whose change left the table as it was: not newer than
    /// what the table held (a row or a remembered delete), or a delete of a
    /// key the table does not hold.
    pub stale: u64,
    /// Distinct keys whose row a delete removed.
    pub deleted: u64,
    /// Rows a snapshot removed because it no longer holds their key.
    pub retired: u64,
    /// Versions the history gained (`history = true`; outside the balance).
    pub opened: u64,
    /// Versions of the history closed: their end set or moved.
    pub closed: u64,
}

/// One expectation's figures in a file: the records checked (every parsed
/// record but deletes), and those that broke it, whatever then became of them.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct ExpectationCount {
    /// Records checked.
    pub checked: u64,
    /// Records that broke it.
    pub failed: u64,
}

impl ExpectationCount {
    /// Adds `other`'s figures (another piece of the same file) to these.
    pub fn absorb(&mut self, other: ExpectationCount) {
        self.checked += other.checked;
        self.failed += other.failed;
    }
}

impl Reconciliation {
    /// Builds the figures and checks that they balance.
    pub fn build(
        file: &str,
        loaded: u64,
        rejected: u64,
        distinct: u64,
        merge: MergeCounts,
    ) -> Result<Self, CoreError> {
        let unbalanced = |detail: String| CoreError::Unbalanced {
            file: file.to_string(),
            detail,
        };
        let duplicates = loaded
            .checked_sub(distinct)
            .ok_or_else(|| unbalanced(format!("{distinct} distinct keys from {loaded} records")))?;
        let stale = distinct
            .checked_sub(merge.inserted + merge.updated + merge.deleted)
            .ok_or_else(|| {
                unbalanced(format!(
                    "{} inserted + {} updated + {} deleted exceed {distinct} distinct keys",
                    merge.inserted, merge.updated, merge.deleted
                ))
            })?;
        Ok(Self {
            records: loaded + rejected,
            loaded,
            rejected,
            duplicates,
            inserted: merge.inserted,
            updated: merge.updated,
            stale,
            deleted: merge.deleted,
            retired: merge.retired,
            opened: merge.opened,
            closed: merge.closed,
        })
    }

    /// records = loaded + rejected and
    /// loaded = duplicates + inserted + updated + deleted + stale.
    pub fn balances(&self) -> bool {
        self.records == self.loaded + self.rejected
            && self.loaded
                == self.duplicates + self.inserted + self.updated + self.deleted + self.stale
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn seed_day_one() {
        // 8 records: 1 reject, 7 parsed, 4 distinct keys, all new.
        let r = Reconciliation::build(
            "f",
            7,
            1,
            4,
            MergeCounts {
                inserted: 4,
                ..Default::default()
            },
        )
        .unwrap();
        assert_eq!((r.records, r.duplicates, r.stale), (8, 3, 0));
        assert!(r.balances());
    }

    #[test]
    fn refuses_impossible_figures() {
        assert!(Reconciliation::build("f", 2, 0, 3, MergeCounts::default()).is_err());
        let e = Reconciliation::build(
            "f",
            3,
            0,
            3,
            MergeCounts {
                inserted: 3,
                updated: 1,
                ..Default::default()
            },
        )
        .unwrap_err();
        assert!(e.to_string().contains("does not balance"));
    }
}
