//! Per-file reconciliation: records read = loaded + rejected, and every distinct
//! order inserted, updated or stale.

use crate::error::CoreError;

/// What the MERGE did with a file's distinct keys.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct MergeCounts {
    pub inserted: u64,
    pub updated: u64,
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
    /// Distinct orders whose change was not newer than the table's.
    pub stale: u64,
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
            .checked_sub(merge.inserted + merge.updated)
            .ok_or_else(|| {
                unbalanced(format!(
                    "{} inserted + {} updated exceed {distinct} distinct keys",
                    merge.inserted, merge.updated
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
        })
    }

    /// records = loaded + rejected and loaded = duplicates + inserted + updated + stale.
    pub fn balances(&self) -> bool {
        self.records == self.loaded + self.rejected
            && self.loaded == self.duplicates + self.inserted + self.updated + self.stale
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
                updated: 0,
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
            },
        )
        .unwrap_err();
        assert!(e.to_string().contains("does not balance"));
    }
}
