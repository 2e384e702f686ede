//! What a load takes and gives: the files, the options, the outcomes.

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
    pub fn content_id(&self) -> Result<deltaload_core::ContentId, crate::LakeError> {
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
                .map_err(|source| crate::LakeError::ReadSource {
                    path: path.display().to_string(),
                    source,
                }),
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

/// Where a test can stop a load dead (compiled only with the `faults` feature).
#[cfg(feature = "faults")]
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FaultPoint {
    /// After the files are read, before anything is written.
    AfterRead,
    /// After the rejects are replaced.
    AfterRejected,
    /// After the dataset's table is written.
    AfterOrders,
    /// After the figures are written.
    AfterReconciliation,
    /// After the ledger marks the files loaded.
    AfterLedger,
    /// Between the new tombstones' MERGE and the dataset table's (datasets with deletes).
    AfterTombstones,
    /// After the batch loaded and before its messages are deleted (`serve`).
    BeforeDelete,
    /// After the files are read, the thread held for [`FaultPoint::STALL`]
    /// without yielding, as a long parse holds it (the load then goes on).
    StallAfterRead,
}

#[cfg(feature = "faults")]
impl FaultPoint {
    /// How long [`FaultPoint::StallAfterRead`] holds the thread.
    pub const STALL: std::time::Duration = std::time::Duration::from_secs(8);

    /// The load's step this point is at the end of (`None`: a point of the
    /// upsert or of `serve`).
    pub fn step(self) -> Option<deltaload_flow::Step> {
        use deltaload_flow::Step;
        Some(match self {
            Self::AfterRead => Step::AfterRead,
            Self::AfterRejected => Step::AfterRejected,
            Self::AfterOrders => Step::AfterOrders,
            Self::AfterReconciliation => Step::AfterReconciliation,
            Self::AfterLedger => Step::AfterLedger,
            Self::AfterTombstones | Self::BeforeDelete | Self::StallAfterRead => return None,
        })
    }

    /// Parses the names used by `DELTALOAD_FAULT`.
    pub fn parse(name: &str) -> Option<Self> {
        Some(match name {
            "after-read" => Self::AfterRead,
            "after-rejected" => Self::AfterRejected,
            "after-orders" => Self::AfterOrders,
            "after-reconciliation" => Self::AfterReconciliation,
            "after-ledger" => Self::AfterLedger,
            "after-tombstones" => Self::AfterTombstones,
            "before-delete" => Self::BeforeDelete,
            "stall-after-read" => Self::StallAfterRead,
            _ => return None,
        })
    }
}

/// Options of a load.
#[derive(Debug, Clone, Copy, Default)]
pub struct LoadOptions {
    /// Reprocess files the ledger has seen.
    pub force: bool,
    /// Abort the process at this point (tests only).
    #[cfg(feature = "faults")]
    pub fault: Option<FaultPoint>,
}
