//! S3 listings, page by page (never the whole listing in memory), and the
//! selection `backfill` and `reconcile` apply to them.

use crate::error::AwsError;
use chrono::{DateTime, NaiveDate, Utc};

/// `s3://BUCKET[/PREFIX]`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct S3Prefix {
    /// The bucket.
    pub bucket: String,
    /// The key prefix (empty for the whole bucket).
    pub prefix: String,
}

impl S3Prefix {
    /// Parses `s3://BUCKET[/PREFIX]`.
    pub fn parse(uri: &str) -> Result<Self, AwsError> {
        Self::parse_named(uri, "")
    }

    /// [`S3Prefix::parse`], its errors naming the URI after `what` (e.g. `source `).
    pub fn parse_named(uri: &str, what: &str) -> Result<Self, AwsError> {
        let uri = uri.trim();
        let rest = uri.strip_prefix("s3://").ok_or_else(|| {
            AwsError::Config(format!("{what}{uri:?} is not s3://BUCKET[/PREFIX]"))
        })?;
        let (bucket, prefix) = rest.split_once('/').unwrap_or((rest, ""));
        if bucket.is_empty() {
            return Err(AwsError::Config(format!("{what}{uri:?} names no bucket")));
        }
        Ok(Self {
            bucket: bucket.to_string(),
            prefix: prefix.to_string(),
        })
    }

    /// The ledger location of a key in this bucket.
    pub fn location(&self, key: &str) -> String {
        format!("s3://{}/{key}", self.bucket)
    }
}

impl std::fmt::Display for S3Prefix {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "s3://{}/{}", self.bucket, self.prefix)
    }
}

/// One listed object.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Listed {
    /// Its key.
    pub key: String,
    /// Its size in bytes.
    pub size: u64,
    /// Without the quotes S3 puts around it.
    pub etag: Option<String>,
    /// When it was last written.
    pub last_modified: Option<DateTime<Utc>>,
}

/// Which listed objects a command takes.
#[derive(Debug, Clone, Default)]
pub struct Selection {
    /// Modified at or after.
    pub since: Option<DateTime<Utc>>,
    /// Modified before.
    pub until: Option<DateTime<Utc>>,
    /// Matched against the whole key; `*` stays within one `/` level, `**` crosses them.
    pub pattern: Option<glob::Pattern>,
}

impl Selection {
    /// Whether the selection takes `object`.
    pub fn keeps(&self, object: &Listed) -> bool {
        let at = object.last_modified;
        let after_since = self.since.is_none_or(|s| at.is_some_and(|t| t >= s));
        let before_until = self.until.is_none_or(|u| at.is_some_and(|t| t < u));
        let options = glob::MatchOptions {
            require_literal_separator: true,
            ..glob::MatchOptions::new()
        };
        let matches = self
            .pattern
            .as_ref()
            .is_none_or(|p| p.matches_with(&object.key, options));
        after_since && before_until && matches
    }
}

/// Parses `--since`/`--until`: an RFC 3339 time or a date (midnight UTC).
pub fn parse_time(text: &str) -> Result<DateTime<Utc>, String> {
    if let Ok(t) = DateTime::parse_from_rfc3339(text) {
        return Ok(t.with_timezone(&Utc));
    }
    NaiveDate::parse_from_str(text, "%Y-%m-%d")
        .ok()
        .and_then(|d| d.and_hms_opt(0, 0, 0))
        .map(|t| t.and_utc())
        .ok_or_else(|| format!("{text:?} is neither a date (2026-10-01) nor an RFC 3339 time"))
}

/// Parses `--match`.
pub fn parse_glob(text: &str) -> Result<glob::Pattern, String> {
    glob::Pattern::new(text).map_err(|e| format!("{text:?} is not a glob pattern: {e}"))
}

/// Lists a prefix one page (up to 1,000 objects) at a time.
pub struct Lister<'a> {
    client: &'a aws_sdk_s3::Client,
    at: &'a S3Prefix,
    token: Option<String>,
    done: bool,
}

impl<'a> Lister<'a> {
    /// The listing of `at`, from its first page.
    pub fn new(client: &'a aws_sdk_s3::Client, at: &'a S3Prefix) -> Self {
        Self {
            client,
            at,
            token: None,
            done: false,
        }
    }

    /// The next page, or `None` after the last.
    pub async fn next_page(&mut self) -> Result<Option<Vec<Listed>>, AwsError> {
        if self.done {
            return Ok(None);
        }
        let page = self
            .client
            .list_objects_v2()
            .bucket(&self.at.bucket)
            .prefix(&self.at.prefix)
            .set_continuation_token(self.token.take())
            .send()
            .await
            .map_err(|e| AwsError::List {
                at: self.at.to_string(),
                detail: crate::error::describe(&e),
                source: Box::new(e),
            })?;
        self.token = page.next_continuation_token().map(str::to_string);
        self.done = self.token.is_none() || page.is_truncated() != Some(true);
        let objects = page
            .contents()
            .iter()
            .filter_map(|o| {
                Some(Listed {
                    key: o.key()?.to_string(),
                    size: o.size().unwrap_or(0).max(0) as u64,
                    etag: o.e_tag().map(|e| e.trim_matches('"').to_string()),
                    last_modified: o
                        .last_modified()
                        .and_then(|t| DateTime::from_timestamp(t.secs(), t.subsec_nanos())),
                })
            })
            .collect();
        Ok(Some(objects))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn listed(key: &str, day: u32) -> Listed {
        Listed {
            key: key.into(),
            size: 1,
            etag: None,
            last_modified: parse_time(&format!("2026-10-{day:02}")).ok(),
        }
    }

    #[test]
    fn selection_by_time_window_and_glob() {
        let s = Selection {
            since: parse_time("2026-10-02").ok(),
            until: parse_time("2026-10-04T00:00:00Z").ok(),
            pattern: parse_glob("raw/*/*.csv").ok(),
        };
        assert!(s.keeps(&listed("raw/a/x.csv", 2)));
        assert!(s.keeps(&listed("raw/a/x.csv", 3)));
        assert!(!s.keeps(&listed("raw/a/x.csv", 1)), "before since");
        assert!(!s.keeps(&listed("raw/a/x.csv", 4)), "until is exclusive");
        assert!(
            !s.keeps(&listed("raw/a/b/x.csv", 2)),
            "* stays in one level"
        );
        assert!(!s.keeps(&listed("raw/a/x.txt", 2)));
        assert!(Selection::default().keeps(&listed("anything", 1)));
        assert!(parse_time("yesterday").is_err());
    }

    #[test]
    fn prefixes() {
        let p = S3Prefix::parse("s3://landing/raw/").unwrap();
        assert_eq!((p.bucket.as_str(), p.prefix.as_str()), ("landing", "raw/"));
        assert_eq!(p.location("raw/a.csv"), "s3://landing/raw/a.csv");
        assert!(S3Prefix::parse("landing/raw").is_err());
        assert!(S3Prefix::parse("s3:///raw").is_err());
    }
}
