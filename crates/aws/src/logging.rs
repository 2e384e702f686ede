//! The log filter of the CLI and the Lambda: the user's directives, with the
//! dependencies' noise about what deltaload handles itself kept out.

use tracing_subscriber::EnvFilter;

/// Directives put before the user's:
/// - the Delta kernel logs an ERROR for every table that does not exist yet
///   (normal on first use);
/// - delta-rs logs an ERROR for every commit conflict with another writer
///   ("conflict detected, aborting transaction"), which deltaload retries and
///   logs once itself, at the level its outcome deserves (`deltaload_lake::retry`);
///   every real failure of delta-rs reaches deltaload as an error, logged where
///   it is handled;
/// - aws-config warns at length when no region is found in EC2's metadata
///   service; commands that need AWS say in one line which variable to set.
pub const QUIET_DEPENDENCIES: &str = "buoyant_kernel=off,deltalake_core=error,\
deltalake_core::kernel::transaction=off,aws_config::imds=off";

/// The filter for `directives` (`warn`, `info`, a tracing filter...); an invalid
/// one falls back to `fallback`.
pub fn filter(directives: &str, fallback: &str) -> EnvFilter {
    EnvFilter::try_new(format!("{QUIET_DEPENDENCIES},{directives}"))
        .unwrap_or_else(|_| EnvFilter::new(format!("{QUIET_DEPENDENCIES},{fallback}")))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_users_level_applies_and_bad_directives_fall_back() {
        assert_eq!(
            filter("debug", "warn").max_level_hint(),
            Some(tracing::level_filters::LevelFilter::DEBUG)
        );
        assert_eq!(
            filter("deltaload=[", "warn").max_level_hint(),
            Some(tracing::level_filters::LevelFilter::WARN)
        );
    }
}
