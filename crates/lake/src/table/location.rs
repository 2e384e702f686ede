//! Lake roots and source files: local paths or URIs, made absolute and canonical.

use crate::table::error::LakeError;
use deltaload_ingest::DataError;
use std::collections::HashMap;
use std::path::Path;
use url::Url;

/// Where a lake lives and how to reach its storage.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LakeRoot {
    /// The root URL, ending in `/`.
    pub url: Url,
    /// Object-store options (for S3: `AWS_ALLOW_HTTP` and the like); empty locally.
    pub storage_options: HashMap<String, String>,
}

impl LakeRoot {
    /// Adds an object-store option.
    pub fn with_storage_option(mut self, key: &str, value: &str) -> Self {
        self.storage_options
            .insert(key.to_string(), value.to_string());
        self
    }
}

impl std::fmt::Display for LakeRoot {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        self.url.fmt(f)
    }
}

/// Turns `--lake` (a directory or a URI such as `s3://bucket/prefix`) into a URL
/// ending in `/`. A local directory is made absolute; it need not exist yet.
pub fn lake_url(lake: &str) -> Result<LakeRoot, LakeError> {
    let err = |reason: String| LakeError::Location {
        location: lake.to_string(),
        reason,
    };
    let mut url = match Url::parse(lake) {
        Ok(url) if url.scheme().len() > 1 && url.scheme() != "file" => url,
        Ok(url) if url.scheme() == "file" => {
            let path = url
                .to_file_path()
                .map_err(|_| err("not a local path".to_string()))?;
            local_dir_url(&path).map_err(err)?
        }
        _ => local_dir_url(Path::new(lake)).map_err(err)?,
    };
    if !url.path().ends_with('/') {
        let path = format!("{}/", url.path());
        url.set_path(&path);
    }
    Ok(LakeRoot {
        url,
        storage_options: HashMap::new(),
    })
}

fn local_dir_url(path: &Path) -> Result<Url, String> {
    let abs = match path.canonicalize() {
        Ok(abs) => abs,
        Err(_) => {
            std::path::absolute(path).map_err(|e| format!("cannot resolve the directory: {e}"))?
        }
    };
    Url::from_directory_path(&abs).map_err(|_| "not an absolute path".to_string())
}

/// The canonical location of a local source file: its absolute path, symlinks resolved.
pub fn local_source(path: &str) -> Result<String, LakeError> {
    let abs = Path::new(path)
        .canonicalize()
        .map_err(DataError::io(Path::new(path)))?;
    Ok(abs.to_string_lossy().into_owned())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn local_dirs_become_absolute_urls_with_a_slash() {
        let dir = tempfile::tempdir().unwrap();
        let lake = dir.path().join("a/b");
        let url = lake_url(lake.to_str().unwrap()).unwrap().url;
        assert_eq!(url.scheme(), "file");
        assert!(url.path().ends_with("/a/b/"));
        assert!(!lake.exists(), "resolving a lake creates nothing");
        assert_eq!(
            lake_url("s3://bucket/prefix").unwrap().url.as_str(),
            "s3://bucket/prefix/"
        );
    }
}
