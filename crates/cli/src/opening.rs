//! The lake a command works on, opened the same way by every command.

use deltaload_core::Spec;

/// The lake root of `--lake`, resolved the same way by every command (and by the
/// Lambda): an S3 lake behind an `http://` endpoint is reached over plain HTTP.
pub(crate) fn lake_root(lake: &str) -> anyhow::Result<deltaload_lake::LakeRoot> {
    Ok(deltaload_aws::settings::lake_root_from_env(lake)?)
}

/// The lake at `--lake` with the spec's datasets, its tables created when missing.
pub(crate) async fn open_lake(lake: &str, spec: &Spec) -> anyhow::Result<deltaload_lake::Lake> {
    use anyhow::Context;
    let root = lake_root(lake)?;
    deltaload_lake::Lake::open_spec(&root, spec)
        .await
        .with_context(|| format!("opening the lake at {root}"))
}
