//! Commit conflicts with concurrent writers, retried with backoff and jitter.
//!
//! delta-rs already retries a commit whose version was taken when the winner's
//! changes do not conflict with its own; a real conflict (both rewrote the same
//! files) fails the operation. A load round is safe to run again from the start
//! (see the `load` module), so the round is what is retried.

use crate::error::LakeError;
use deltalake::kernel::transaction::TransactionError;
use deltalake::DeltaTableError;
use std::time::Duration;

/// Attempts of a round, the first included.
pub(crate) const ATTEMPTS: u32 = 6;

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

/// The wait before attempt `attempt` (1 for the first retry): 100 ms doubling,
/// at most 3.2 s, plus up to as much again of jitter so racing writers spread out.
pub(crate) fn backoff(attempt: u32) -> Duration {
    let base = 100u64 << attempt.saturating_sub(1).min(5);
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.subsec_nanos())
        .unwrap_or(0);
    let jitter = u64::from(nanos) % (base + 1);
    Duration::from_millis(base + jitter)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn backoff_doubles_with_jitter_and_is_capped() {
        for attempt in 1..10 {
            let base = 100u64 << (attempt - 1).min(5);
            let wait = backoff(attempt).as_millis() as u64;
            assert!((base..=2 * base).contains(&wait), "{attempt}: {wait}");
        }
    }

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
