//! The spec a deployment loads with, read once at start: a local file or an
//! S3 object (`--spec` / `DELTALOAD_SPEC`); the built-in `orders` without one.

use crate::error::{describe, AwsError};
use deltaload_core::Spec;

/// Reads and checks the spec at `location`; `None` is the built-in `orders` dataset.
pub async fn read_spec(location: Option<&str>) -> Result<Spec, AwsError> {
    let Some(location) = location.map(str::trim).filter(|l| !l.is_empty()) else {
        return Ok(Spec::builtin());
    };
    let text = match location.strip_prefix("s3://") {
        Some(rest) => read_object(location, rest).await?,
        None => std::fs::read_to_string(location).map_err(|e| {
            AwsError::Config(format!(
                "cannot read the spec {location}: {e}; give a readable TOML file or an s3:// URI"
            ))
        })?,
    };
    Ok(Spec::parse(&text, location)?)
}

async fn read_object(location: &str, rest: &str) -> Result<String, AwsError> {
    let (bucket, key) = rest.split_once('/').unwrap_or((rest, ""));
    if bucket.is_empty() || key.is_empty() {
        return Err(AwsError::Config(format!(
            "spec {location} is not s3://BUCKET/KEY"
        )));
    }
    let aws = crate::settings::aws_config_from_env().await?;
    let endpoint = crate::settings::endpoint_from_env();
    let client = crate::s3::s3_client(&aws, endpoint.as_deref());
    let object = client
        .get_object()
        .bucket(bucket)
        .key(key)
        .send()
        .await
        .map_err(|e| {
            AwsError::Config(format!(
                "cannot read the spec {location}: {}; check the URI and the s3:GetObject permission on it",
                describe(&e)
            ))
        })?;
    let bytes = object
        .body
        .collect()
        .await
        .map_err(|e| AwsError::Config(format!("reading the spec {location}: {e}")))?;
    String::from_utf8(bytes.into_bytes().to_vec())
        .map_err(|_| AwsError::Config(format!("the spec {location} is not UTF-8 text")))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn no_spec_is_orders_and_a_bad_file_names_itself() {
        let builtin = read_spec(None).await.unwrap();
        assert_eq!(builtin.datasets[0].name, "orders");
        let err = read_spec(Some("/no/such/spec.toml"))
            .await
            .unwrap_err()
            .to_string();
        assert!(err.contains("/no/such/spec.toml"), "{err}");
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("bad.toml");
        std::fs::write(
            &path,
            "[[dataset]]\nname = \"x\"\nkeys = [\"k\"]\nwho = 1\n",
        )
        .unwrap();
        let err = read_spec(path.to_str()).await.unwrap_err().to_string();
        assert!(err.contains("line 4"), "{err}");
    }
}
