//! Rounds that lost a commit race, run again with backoff and jitter.
//!
//! A Delta commit whose version was taken is retried by delta-rs when the
//! winner's changes do not conflict with its own; a real conflict (both
//! rewrote the same files) fails the operation. A round is safe to run again
//! from the start (see [`crate::load`]), so the round is what is retried.

use std::time::Duration;

/// Attempts of a round, the first included.
pub const ATTEMPTS: u32 = 6;

/// The wait before attempt `attempt` (1 for the first retry): 100 ms doubling,
/// at most 3.2 s, plus up to as much again of jitter so racing writers spread out.
pub fn backoff(attempt: u32) -> Duration {
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
}
