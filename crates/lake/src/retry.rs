//! Which Delta errors are lost commit races with concurrent writers, retried
//! with backoff and jitter (see [`deltaload_flow::retry`]).

use crate::error::LakeError;
use deltalake::kernel::transaction::TransactionError;
use deltalake::DeltaTableError;

pub(crate) use deltaload_flow::retry::{backoff, ATTEMPTS};

/// Whether another writer's commit made this one fail (worth running again).
pub(crate) fn is_conflict(error: &LakeError) -> bool {
    let LakeError::Delta { source, .. } = error else {
        return false;
    };
    matches!(
        source.as_ref(),
        DeltaTableError::VersionAlreadyExists(_)
            | DeltaTableError::Transaction {
                source: TransactionError::CommitConflict(_)
                    | TransactionError::MaxCommitAttempts(_)
                    | TransactionError::VersionAlreadyExists(_)
            }
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_conflicts_are_retried() {
        let url = url::Url::parse("file:///tmp/t/").unwrap();
        let conflict = LakeError::delta("orders", &url)(DeltaTableError::VersionAlreadyExists(3));
        assert!(is_conflict(&conflict));
        let other = LakeError::delta("orders", &url)(DeltaTableError::generic("disk full"));
        assert!(!is_conflict(&other));
        assert!(!is_conflict(&LakeError::Invariant {
            table: "orders".into(),
            detail: "x".into()
        }));
    }
}
