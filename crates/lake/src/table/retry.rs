//! Which Delta errors are lost commit races with concurrent writers, and
//! which storage errors may pass, retried with backoff and jitter (see
//! [`deltaload_flow::retry`]).

use crate::table::error::LakeError;
use deltalake::kernel::transaction::{CommitConflictError, TransactionError};
use deltalake::DeltaTableError;

pub(crate) use deltaload_flow::retry::{backoff, ATTEMPTS};

/// Whether another writer's commit made this one fail (worth running again):
/// a lost race, not a conflict checker's own failure (a corrupted snapshot,
/// a predicate it cannot evaluate, an unsupported protocol version), which
/// fails the same way every time.
pub(crate) fn is_conflict(error: &LakeError) -> bool {
    match error {
        LakeError::Delta { source, .. } => is_race(source),
        _ => false,
    }
}

/// Whether delta-rs's error is a commit lost to another writer.
pub(crate) fn is_race(source: &DeltaTableError) -> bool {
    match source {
        DeltaTableError::VersionAlreadyExists(_) => true,
        DeltaTableError::Transaction { source } => match source {
            TransactionError::MaxCommitAttempts(_) | TransactionError::VersionAlreadyExists(_) => {
                true
            }
            TransactionError::CommitConflict(conflict) => is_checked_race(conflict),
            _ => false,
        },
        _ => false,
    }
}

/// Whether the conflict checker found another writer's commit in the way.
fn is_checked_race(conflict: &CommitConflictError) -> bool {
    use CommitConflictError as C;
    matches!(
        conflict,
        C::ConcurrentAppend
            | C::ConcurrentDeleteRead
            | C::ConcurrentDeleteDelete
            | C::MetadataChanged
            | C::ConcurrentTransaction
            | C::ProtocolChanged(_)
    )
}

/// Whether a storage error may pass if the operation runs again: the
/// store's own error of a request (an HTTP failure it did not or could not
/// retry, such as a response body cut off), not a missing object, a refused
/// precondition or a permission.
pub(crate) fn is_transient_storage(error: &LakeError) -> bool {
    use deltalake::logstore::object_store::Error as StoreError;
    let mut cause: Option<&(dyn std::error::Error + 'static)> = Some(error);
    while let Some(e) = cause {
        if let Some(store) = e.downcast_ref::<StoreError>() {
            return matches!(store, StoreError::Generic { .. });
        }
        // The Delta kernel's error holds the store's without naming it as
        // its source, and its crate is not ours to match on: its variant
        // shows in its Debug form.
        let delta = (e.downcast_ref::<DeltaTableError>())
            .or_else(|| e.downcast_ref::<Box<DeltaTableError>>().map(AsRef::as_ref));
        if let Some(DeltaTableError::KernelError(kernel)) = delta {
            return format!("{kernel:?}").starts_with("ObjectStore(Generic {");
        }
        cause = e.source();
    }
    false
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_generic_store_error_may_pass_a_missing_object_not() {
        use deltalake::logstore::object_store::Error as StoreError;
        let url = url::Url::parse("file:///tmp/t/").unwrap();
        let store = |e: StoreError| LakeError::delta("ledger", &url)(DeltaTableError::from(e));
        let cut = StoreError::Generic {
            store: "S3",
            source: "request or response body error".into(),
        };
        assert!(is_transient_storage(&store(cut)));
        let missing = StoreError::NotFound {
            path: "x".into(),
            source: "gone".into(),
        };
        assert!(!is_transient_storage(&store(missing)));
        let other = LakeError::delta("orders", &url)(DeltaTableError::generic("disk full"));
        assert!(!is_transient_storage(&other));
    }

    #[test]
    fn only_conflicts_are_retried() {
        let url = url::Url::parse("file:///tmp/t/").unwrap();
        let conflict = LakeError::delta("orders", &url)(DeltaTableError::VersionAlreadyExists(3));
        assert!(is_conflict(&conflict));
        let other = LakeError::delta("orders", &url)(DeltaTableError::generic("disk full"));
        assert!(!is_conflict(&other));
        let checked = |c: CommitConflictError| {
            let source = TransactionError::CommitConflict(c);
            is_conflict(&LakeError::delta("orders", &url)(source.into()))
        };
        assert!(checked(CommitConflictError::ConcurrentDeleteRead));
        assert!(checked(CommitConflictError::ProtocolChanged("x".into())));
        let corrupted = CommitConflictError::CorruptedState {
            source: "a log file cut short".into(),
        };
        assert!(!checked(corrupted), "a corrupted snapshot is no race");
        assert!(!checked(CommitConflictError::UnsupportedWriterVersion(9)));
        // A race says so, without delta-rs's help on isolation levels.
        let lost = TransactionError::CommitConflict(CommitConflictError::ConcurrentAppend);
        let said = LakeError::delta("ledger", &url)(lost.into()).to_string();
        assert!(
            said.contains("another writer committed to this table first"),
            "{said}"
        );
        assert!(
            !said.contains("Isolation") && !said.contains("reachable"),
            "{said}"
        );
        assert!(
            other.to_string().contains("reachable and writable"),
            "{other}"
        );
        assert!(!is_conflict(&LakeError::Invariant {
            table: "orders".into(),
            detail: "x".into()
        }));
    }
}
