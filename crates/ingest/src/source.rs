//! A file to load: its location, its bytes (in memory, or in a file on
//! local disk), or why it was not read.

/// A file to load, wherever it came from.
#[derive(Debug, Clone)]
pub struct SourceFile {
    /// Canonical location: an absolute path, or `s3://bucket/key`.
    pub location: String,
    /// The whole content (empty when it is in `on_disk`), shared: a copy of
    /// the file costs no copy of its content, and a load lets its content
    /// go once read unless a copy still holds it.
    pub bytes: std::sync::Arc<Vec<u8>>,
    /// The file holding the content, when it is too large to hold in memory
    /// (see [`crate::MemoryBudget`]): read from there a piece at a time.
    pub on_disk: Option<OnDisk>,
    /// Why the file is refused unread (larger than the object size limit,
    /// or than the spill directory holds): the load records it refused.
    pub refused: Option<Unread>,
    /// The object's ETag, when the store has one.
    pub etag: Option<String>,
    /// The object's version id, when the store has one.
    pub version_id: Option<String>,
}

/// How the ledger's content id of a file refused unread starts.
pub const UNREAD: &str = "unread:";

/// Why a file is refused unread, and its size.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Unread {
    /// Why.
    pub reason: String,
    /// The object's size in bytes.
    pub size: u64,
}

/// A file's content on local disk: the user's own file, or a copy deltaload
/// made (an object downloaded), removed when the last handle on it goes.
#[derive(Debug, Clone)]
pub struct OnDisk {
    /// The file.
    pub path: std::path::PathBuf,
    _copy: Option<std::sync::Arc<crate::budget::SpillDir>>,
}

impl OnDisk {
    /// The file at `path`, left in place.
    pub fn at(path: std::path::PathBuf) -> Self {
        Self { path, _copy: None }
    }

    /// A new file `name` in a directory of its own under `parent`, removed
    /// with the directory when the last handle on it goes.
    pub fn copy_in(parent: &std::path::Path, name: &str) -> std::io::Result<Self> {
        let dir = crate::budget::SpillDir::new(parent)?;
        Ok(Self {
            path: dir.path.join(name),
            _copy: Some(std::sync::Arc::new(dir)),
        })
    }
}

impl OnDisk {
    /// Gzip `input` expanded into a file of its own under `parent`, at most
    /// `limit` bytes; `Ok(Err(_))` when the content is damaged or too large.
    pub fn expanded(
        input: impl std::io::Read,
        parent: &std::path::Path,
        limit: u64,
    ) -> std::io::Result<Result<Self, deltaload_core::compression::Unreadable>> {
        let out = Self::copy_in(parent, "expanded")?;
        let mut file = std::io::BufWriter::new(std::fs::File::create(&out.path)?);
        Ok(deltaload_core::compression::expand_into(input, &mut file, limit)?.map(|_| out))
    }
}

impl SourceFile {
    /// A file of `bytes` held in memory.
    pub fn in_memory(location: String, bytes: Vec<u8>) -> Self {
        Self {
            location,
            bytes: std::sync::Arc::new(bytes),
            on_disk: None,
            refused: None,
            etag: None,
            version_id: None,
        }
    }

    /// An object refused unread, of `size` bytes, for `reason`.
    pub fn refused_unread(
        location: String,
        size: u64,
        etag: Option<String>,
        version_id: Option<String>,
        reason: String,
    ) -> Self {
        Self {
            location,
            bytes: Default::default(),
            on_disk: None,
            refused: Some(Unread { reason, size }),
            etag,
            version_id,
        }
    }

    /// The content's identity (read from disk when it is there; of a file
    /// refused unread, its size only).
    pub fn content_id(&self) -> Result<deltaload_core::ContentId, crate::error::DataError> {
        if let Some(unread) = &self.refused {
            return Ok(deltaload_core::ContentId {
                size: unread.size,
                sha256: String::new(),
            });
        }
        match self.on_disk.as_ref().map(|d| &d.path) {
            None => Ok(deltaload_core::ContentId::of(&self.bytes)),
            Some(path) => std::fs::File::open(path)
                .and_then(deltaload_core::ContentId::of_reader)
                .map_err(crate::error::DataError::io(path)),
        }
    }

    /// The version's key in the ledger: its content identity; of a file
    /// refused unread, its ETag (or size), which names the version as well.
    pub fn content_key(&self, content: &deltaload_core::ContentId) -> String {
        match (&self.refused, &self.etag) {
            (None, _) => content.to_string(),
            (Some(_), Some(etag)) => format!("{UNREAD}etag:{etag}"),
            (Some(_), None) => format!("{UNREAD}size:{}", content.size),
        }
    }

    /// The content's size in bytes.
    pub fn size(&self) -> u64 {
        if let Some(unread) = &self.refused {
            return unread.size;
        }
        match self.on_disk.as_ref().map(|d| &d.path) {
            None => self.bytes.len() as u64,
            Some(path) => std::fs::metadata(path).map_or(0, |m| m.len()),
        }
    }
}
