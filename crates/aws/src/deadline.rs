//! The invocation's deadline as the Lambda runtime API gives it, and the margin
//! kept before it.
//!
//! The runtime API sends `lambda-runtime-deadline-ms`, the deadline in
//! milliseconds since the Unix epoch. A deadline already past when the
//! invocation arrives is not one an invocation can have: emulators send other
//! things there (cargo-lambda 1.9 sends the timeout, 600000, which read as a
//! date is 1970). Taken at its word, every message would be left for
//! redelivery, silently, until the dead-letter queue; it is reported instead,
//! and the invocation runs with no deadline.

use std::time::{Duration, Instant, SystemTime};

/// The deadline of one invocation.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Deadline {
    /// The runtime gave none (0).
    Unknown,
    /// This much time is left.
    In(Duration),
    /// Already past on arrival: the runtime's value is not a deadline.
    AlreadyPast {
        /// The deadline, in milliseconds since the epoch.
        epoch_ms: u64,
    },
}

impl Deadline {
    /// Reads `lambda-runtime-deadline-ms` at `now`.
    pub fn from_epoch_ms(epoch_ms: u64, now: SystemTime) -> Self {
        if epoch_ms == 0 {
            return Self::Unknown;
        }
        let now = now
            .duration_since(SystemTime::UNIX_EPOCH)
            .unwrap_or_default();
        match Duration::from_millis(epoch_ms).checked_sub(now) {
            Some(left) if !left.is_zero() => Self::In(left),
            _ => Self::AlreadyPast { epoch_ms },
        }
    }

    /// The deadline as an instant from `now`, when there is a usable one.
    pub fn instant(self, now: Instant) -> Option<Instant> {
        match self {
            Self::In(left) => Some(now + left),
            Self::Unknown | Self::AlreadyPast { .. } => None,
        }
    }
}

/// Time kept in hand before an invocation's deadline: enough for one batch load
/// to finish its commits.
pub const DEFAULT_DEADLINE_MARGIN: Duration = Duration::from_secs(30);

/// The margin kept before a deadline `left` away at the start of a batch: the
/// configured one, but never more than a quarter of the time the invocation
/// has, so that a short function timeout still leaves three quarters of it for
/// loading (a margin of 30 s would swallow all of a 30 s timeout).
pub fn margin_for(configured: Duration, left: Duration) -> Duration {
    configured.min(left / 4)
}

#[cfg(test)]
mod tests {
    use super::*;

    const NOW_MS: u64 = 1_790_000_000_000;

    fn at(ms: u64) -> SystemTime {
        SystemTime::UNIX_EPOCH + Duration::from_millis(ms)
    }

    #[test]
    fn a_deadline_ahead_is_the_time_left() {
        assert_eq!(
            Deadline::from_epoch_ms(NOW_MS + 120_000, at(NOW_MS)),
            Deadline::In(Duration::from_secs(120))
        );
        assert_eq!(Deadline::from_epoch_ms(0, at(NOW_MS)), Deadline::Unknown);
    }

    #[test]
    fn a_deadline_past_on_arrival_is_no_deadline() {
        // cargo-lambda's emulator: the timeout in milliseconds, not a date.
        let emulator = Deadline::from_epoch_ms(600_000, at(NOW_MS));
        assert_eq!(emulator, Deadline::AlreadyPast { epoch_ms: 600_000 });
        assert_eq!(emulator.instant(Instant::now()), None);
        assert_eq!(
            Deadline::from_epoch_ms(NOW_MS, at(NOW_MS)),
            Deadline::AlreadyPast { epoch_ms: NOW_MS }
        );
    }

    #[test]
    fn the_margin_never_takes_more_than_a_quarter() {
        let configured = Duration::from_secs(30);
        assert_eq!(margin_for(configured, Duration::from_secs(900)), configured);
        assert_eq!(
            margin_for(configured, Duration::from_secs(30)),
            Duration::from_millis(7_500)
        );
        assert_eq!(margin_for(configured, Duration::ZERO), Duration::ZERO);
    }
}
