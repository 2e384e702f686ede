//! Configuration, read once: the lake, the allowed sources and the limits.

use crate::error::AwsError;
use crate::listing::S3Prefix;
use deltaload_lake::{lake_url, LakeRoot};

/// Default largest object read, in bytes (1 GiB).
pub const DEFAULT_MAX_OBJECT_BYTES: u64 = 1 << 30;

/// Buckets and prefixes objects may be read from.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Sources(Vec<S3Prefix>);

impl Sources {
    /// Parses `s3://BUCKET[/PREFIX]` entries (empty ones are left out).
    pub fn parse<S: AsRef<str>>(entries: &[S]) -> Result<Self, AwsError> {
        entries
            .iter()
            .map(|e| e.as_ref().trim())
            .filter(|e| !e.is_empty())
            .map(|e| S3Prefix::parse_named(e, "source "))
            .collect::<Result<_, _>>()
            .map(Self)
    }

    /// No restriction configured.
    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    /// Whether `s3://bucket/key` may be read (everything when none is configured).
    pub fn allows(&self, bucket: &str, key: &str) -> bool {
        self.0.is_empty()
            || self
                .0
                .iter()
                .any(|s| s.bucket == bucket && key.starts_with(s.prefix.as_str()))
    }
}

/// Which program reads the settings. Three defaults differ between them, on
/// purpose; everything else is read and defaulted the same.
///
/// | setting | Lambda | `serve`, `replay` |
/// |---|---|---|
/// | `DELTALOAD_LAKE` | required | `./lake` |
/// | `DELTALOAD_SOURCES` | required | any bucket (the command says so) |
/// | `DELTALOAD_METRICS_NAMESPACE` | `deltaload` | none: no EMF lines among the command's output |
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Runner {
    /// The Lambda function.
    Lambda,
    /// `deltaload serve` and `deltaload replay`.
    Serve,
}

/// The settings of the event-driven loader, for the Lambda and `deltaload serve`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Settings {
    /// Lake root (directory or URI).
    pub lake: String,
    /// Allowed sources.
    pub sources: Sources,
    /// Largest object read; larger ones are refused.
    pub max_object_bytes: u64,
    /// `AWS_ENDPOINT_URL` (or `AWS_ENDPOINT_URL_S3`), when set.
    pub endpoint_url: Option<String>,
    /// Namespace of the CloudWatch EMF lines printed per batch; none printed when `None`.
    pub metrics_namespace: Option<String>,
    /// Time kept in hand before an invocation's deadline.
    pub deadline_margin: std::time::Duration,
    /// The spec file or S3 URI (`DELTALOAD_SPEC`); the built-in `orders` when `None`.
    pub spec: Option<String>,
    /// The engine writing the datasets' tables (`DELTALOAD_ENGINE`: `keyed`, the
    /// default, or `merge`).
    pub engine: deltaload_lake::Engine,
    /// The memory a load may use and where it spills (`DELTALOAD_MEMORY_BUDGET`,
    /// `DELTALOAD_SPILL_DIR`; see [`memory_budget`]).
    pub memory_budget: deltaload_lake::MemoryBudget,
    /// When loads compact the tables they wrote: at
    /// `DELTALOAD_AUTO_COMPACT_FILES` small files (50 by default; 0: never).
    pub auto_compact: deltaload_lake::AutoCompact,
    /// The AWS Glue database the lake's tables are registered in after loads
    /// (`DELTALOAD_GLUE_DATABASE`); none when `None`. Only with a lake on S3.
    pub glue_database: Option<String>,
}

/// The share of a Lambda function's memory a load may use: the rest holds
/// the runtime, the tables' logs and the batch's other objects.
pub const LAMBDA_BUDGET_SHARE: (u64, u64) = (3, 4);

/// The lake (`DELTALOAD_LAKE`; `./lake` for `serve`) and the allowed
/// sources (`DELTALOAD_SOURCES`, comma-separated; required in Lambda).
fn lake_and_sources(
    var: &impl Fn(&str) -> Option<String>,
    runner: Runner,
) -> Result<(String, Sources), AwsError> {
    let lake = match (var("DELTALOAD_LAKE"), runner) {
        (Some(lake), _) => lake,
        (None, Runner::Serve) => "./lake".to_string(),
        (None, Runner::Lambda) => {
            return Err(AwsError::Config(
                "DELTALOAD_LAKE is not set: give the lake URI, e.g. s3://bucket/lake".into(),
            ))
        }
    };
    let sources: Vec<String> = var("DELTALOAD_SOURCES")
        .map(|s| s.split(',').map(str::to_string).collect())
        .unwrap_or_default();
    let sources = Sources::parse(&sources)?;
    if sources.is_empty() && runner == Runner::Lambda {
        return Err(AwsError::Config(
            "DELTALOAD_SOURCES is not set: the handler reads only the buckets and prefixes \
             it names (s3://BUCKET[/PREFIX], comma-separated)"
                .into(),
        ));
    }
    Ok((lake, sources))
}

/// The whole number variable `name` holds (`what` it counts, for the
/// error), if set.
fn number(
    var: &impl Fn(&str) -> Option<String>,
    name: &str,
    what: &str,
) -> Result<Option<u64>, AwsError> {
    var(name)
        .map(|v| {
            v.parse()
                .map_err(|_| AwsError::Config(format!("{name}={v:?} is not a number of {what}")))
        })
        .transpose()
}

/// The memory budget: `explicit` (`DELTALOAD_MEMORY_BUDGET`, `--memory-budget`:
/// a size such as `512MiB`, or `none`) when given; else three quarters of a
/// Lambda function's memory (`lambda_mb`, `AWS_LAMBDA_FUNCTION_MEMORY_SIZE`);
/// else half the machine's memory (`machine_bytes`), when known. Spills go to
/// `spill_dir`, by default the system's temporary directory (Lambda's `/tmp`),
/// which holds `spill_space` (`DELTALOAD_SPILL_SPACE`, a size) when given.
pub fn memory_budget(
    explicit: Option<&str>,
    (spill_dir, spill_space): (Option<std::path::PathBuf>, Option<&str>),
    lambda_mb: Option<&str>,
    machine_bytes: Option<u64>,
) -> Result<deltaload_lake::MemoryBudget, AwsError> {
    let bytes = match (explicit, lambda_mb) {
        (Some(text), _) => deltaload_lake::MemoryBudget::parse_size(text).map_err(|e| {
            AwsError::Config(format!("DELTALOAD_MEMORY_BUDGET / --memory-budget: {e}"))
        })?,
        (None, Some(mb)) => {
            let mb: u64 = mb.trim().parse().map_err(|_| {
                AwsError::Config(format!(
                    "AWS_LAMBDA_FUNCTION_MEMORY_SIZE={mb:?} is not a number of megabytes"
                ))
            })?;
            Some((mb << 20) / LAMBDA_BUDGET_SHARE.1 * LAMBDA_BUDGET_SHARE.0)
        }
        (None, None) => machine_bytes.map(|b| b / 2),
    };
    Ok(deltaload_lake::MemoryBudget {
        bytes,
        spill_dir: spill_dir.unwrap_or_else(std::env::temp_dir),
        spill_space: match spill_space {
            Some(text) => deltaload_lake::MemoryBudget::parse_size(text).map_err(|e| {
                AwsError::Config(format!("DELTALOAD_SPILL_SPACE / --spill-space: {e}"))
            })?,
            None => None,
        },
    })
}

/// Auto-compaction at `files` small files (0: never), else the default.
fn auto_compact(files: Option<u64>) -> deltaload_lake::AutoCompact {
    files.map_or_else(deltaload_lake::AutoCompact::default, |n| {
        deltaload_lake::AutoCompact::at(usize::try_from(n).unwrap_or(usize::MAX))
    })
}

/// The Glue database `database` (`DELTALOAD_GLUE_DATABASE`,
/// `--glue-database`), refused with a local `lake` (Glue holds S3 locations)
/// or a name Glue cannot hold.
pub fn glue_database(database: Option<String>, lake: &str) -> Result<Option<String>, AwsError> {
    let Some(database) = database else {
        return Ok(None);
    };
    if let Some(why) = deltaload_lake::catalog::name_problem(&database) {
        return Err(AwsError::Config(format!(
            "DELTALOAD_GLUE_DATABASE / --glue-database {database:?} {why}"
        )));
    }
    if lake_url(lake)?.url.scheme() != "s3" {
        return Err(AwsError::Config(format!(
            "DELTALOAD_GLUE_DATABASE / --glue-database {database:?} registers tables on S3 \
             for Athena, and the lake {lake:?} is not on S3: give an s3:// lake, or leave \
             the Glue database unset"
        )));
    }
    Ok(Some(database))
}

/// This machine's memory (`MemTotal` of `/proc/meminfo`), when it can be read.
pub fn machine_memory() -> Option<u64> {
    let info = std::fs::read_to_string("/proc/meminfo").ok()?;
    let line = info.lines().find(|l| l.starts_with("MemTotal:"))?;
    let kib: u64 = line.split_whitespace().nth(1)?.parse().ok()?;
    Some(kib << 10)
}

/// The EMF namespace the Lambda uses when `DELTALOAD_METRICS_NAMESPACE` is not set.
pub const DEFAULT_METRICS_NAMESPACE: &str = "deltaload";

impl Settings {
    /// The Lambda's settings, from the process environment: see
    /// [`Settings::from_vars`].
    pub fn from_env() -> Result<Self, AwsError> {
        Self::from_vars(
            |name| std::env::var(name).ok(),
            machine_memory(),
            Runner::Lambda,
        )
    }

    /// The settings of `runner` from `vars` (a variable's value by name; empty
    /// counts as unset) and the machine's memory: `DELTALOAD_LAKE` and
    /// `DELTALOAD_SOURCES` (comma-separated), required by the Lambda (see
    /// [`Runner`]); `DELTALOAD_MAX_OBJECT_BYTES`,
    /// `DELTALOAD_METRICS_NAMESPACE` (the Lambda's default `deltaload`),
    /// `DELTALOAD_DEADLINE_MARGIN_SECONDS`, `DELTALOAD_SPEC`, `DELTALOAD_ENGINE`,
    /// `DELTALOAD_AUTO_COMPACT_FILES`, `DELTALOAD_GLUE_DATABASE`,
    /// the memory budget's variables ([`memory_budget`]) and the AWS endpoint
    /// (`AWS_ENDPOINT_URL_S3`, else `AWS_ENDPOINT_URL`) are read when set.
    pub fn from_vars(
        vars: impl Fn(&str) -> Option<String>,
        machine_bytes: Option<u64>,
        runner: Runner,
    ) -> Result<Self, AwsError> {
        let var = |name: &str| vars(name).filter(|v| !v.is_empty());
        let (lake, sources) = lake_and_sources(&var, runner)?;
        let max_object_bytes = number(&var, "DELTALOAD_MAX_OBJECT_BYTES", "bytes")?;
        let max_object_bytes = max_object_bytes.unwrap_or(DEFAULT_MAX_OBJECT_BYTES);
        let margin = number(&var, "DELTALOAD_DEADLINE_MARGIN_SECONDS", "seconds")?;
        let compact_files = number(&var, "DELTALOAD_AUTO_COMPACT_FILES", "files")?;
        let glue_database = glue_database(var("DELTALOAD_GLUE_DATABASE"), &lake)?;
        Ok(Self {
            lake,
            sources,
            max_object_bytes,
            endpoint_url: var("AWS_ENDPOINT_URL_S3").or_else(|| var("AWS_ENDPOINT_URL")),
            metrics_namespace: match runner {
                Runner::Lambda => Some(
                    var("DELTALOAD_METRICS_NAMESPACE")
                        .unwrap_or_else(|| DEFAULT_METRICS_NAMESPACE.to_string()),
                ),
                Runner::Serve => var("DELTALOAD_METRICS_NAMESPACE"),
            },
            deadline_margin: margin.map_or(
                crate::deadline::DEFAULT_DEADLINE_MARGIN,
                std::time::Duration::from_secs,
            ),
            spec: var("DELTALOAD_SPEC"),
            memory_budget: memory_budget(
                var("DELTALOAD_MEMORY_BUDGET").as_deref(),
                (
                    var("DELTALOAD_SPILL_DIR").map(std::path::PathBuf::from),
                    var("DELTALOAD_SPILL_SPACE").as_deref(),
                ),
                var("AWS_LAMBDA_FUNCTION_MEMORY_SIZE").as_deref(),
                machine_bytes,
            )?,
            auto_compact: auto_compact(compact_files),
            glue_database,
            engine: match var("DELTALOAD_ENGINE") {
                Some(v) => deltaload_lake::Engine::parse(&v).ok_or_else(|| {
                    AwsError::Config(format!(
                        "DELTALOAD_ENGINE={v:?} is not an engine: use keyed (the default) or merge"
                    ))
                })?,
                None => deltaload_lake::Engine::default(),
            },
        })
    }

    /// The lake root, with plain-HTTP access allowed when the endpoint is `http://`.
    pub fn lake_root(&self) -> Result<LakeRoot, AwsError> {
        lake_root(&self.lake, self.endpoint_url.as_deref())
    }
}

/// The S3 endpoint override of the standard AWS environment, if any.
pub fn endpoint_from_env() -> Option<String> {
    ["AWS_ENDPOINT_URL_S3", "AWS_ENDPOINT_URL"]
        .iter()
        .find_map(|k| std::env::var(k).ok().filter(|v| !v.is_empty()))
}

/// The lake root of `lake` (a directory or a URI) with the S3 endpoint of the
/// standard AWS environment: what every command and the Lambda open.
pub fn lake_root_from_env(lake: &str) -> Result<LakeRoot, AwsError> {
    lake_root(lake, endpoint_from_env().as_deref())
}

/// The AWS configuration of the standard environment, for the commands that
/// call AWS (never for a lake on local disk alone). The region comes from
/// `AWS_REGION`, `AWS_DEFAULT_REGION` or the profile, never from EC2's metadata
/// service: without one, one line says which variable to set.
pub async fn aws_config_from_env() -> Result<aws_config::SdkConfig, AwsError> {
    use aws_config::meta::region::RegionProviderChain;
    let region = RegionProviderChain::first_try(
        aws_config::environment::EnvironmentVariableRegionProvider::new(),
    )
    .or_else(aws_config::profile::ProfileFileRegionProvider::new())
    .region()
    .await;
    let region = required_region(region)?;
    Ok(aws_config::defaults(aws_config::BehaviorVersion::latest())
        .region(region)
        .load()
        .await)
}

fn required_region(region: Option<aws_config::Region>) -> Result<aws_config::Region, AwsError> {
    region.ok_or_else(|| {
        AwsError::Config(
            "no AWS region: set AWS_REGION (for example AWS_REGION=eu-west-1), \
             or `. localstack/stack.env` for LocalStack"
                .to_string(),
        )
    })
}

/// The lake root for `lake`; an `http://` endpoint allows plain HTTP to it.
pub fn lake_root(lake: &str, endpoint_url: Option<&str>) -> Result<LakeRoot, AwsError> {
    let root = lake_url(lake)?;
    Ok(match endpoint_url {
        Some(e) if e.starts_with("http://") && root.url.scheme() != "file" => {
            root.with_storage_option("AWS_ALLOW_HTTP", "true")
        }
        _ => root,
    })
}

#[cfg(test)]
#[path = "settings_tests.rs"]
mod tests;
