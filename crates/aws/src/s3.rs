//! Objects read from S3 with the AWS SDK, with their ETag and version id.

use crate::error::{describe, AwsError};
use crate::event::ObjectRef;
use crate::s3_body::Body;
use aws_sdk_s3::error::ProvideErrorMetadata;
use aws_sdk_s3::operation::get_object::GetObjectOutput;
use deltaload_core::compression::Unreadable;
use deltaload_lake::{Expanded, SourceFile};

/// What reading an announced object gave.
#[derive(Debug)]
pub enum Fetched {
    /// The object, read (in memory or on disk).
    File(SourceFile),
    /// Deleted, or the version the event names does not exist (S3's words are
    /// kept): acknowledged, not retried.
    Missing(String),
    /// Larger than the configured limit: refused, not read.
    TooLarge(u64),
    /// Too large to read whole within the memory budget, and to spill into
    /// the spill directory's `space`: refused, not read.
    NoRoom {
        /// The object's size in bytes.
        size: u64,
        /// The spill directory's space in bytes.
        space: u64,
    },
    /// Gzip content that is damaged or expands beyond the limit: refused.
    Unreadable(deltaload_core::compression::Unreadable),
}

/// Whether S3's error `code` says the object, or the version the event names,
/// does not exist, so that no retry can ever read it: the object or bucket was
/// deleted (`NoSuchKey`, `NoSuchBucket`, `NotFound`), the version was deleted
/// (`NoSuchVersion`), or S3 rejects the version id itself (`InvalidArgument`,
/// which for a GetObject naming a version means "Invalid version id
/// specified": a made-up event, such as AWS's example with
/// `versionId: "version"`). Such a message is acknowledged like a deleted
/// object, with a warning; `deltaload reconcile` still finds any object of the
/// landing prefix that the lake never loaded.
fn gone(code: Option<&str>, names_version: bool) -> bool {
    match code {
        Some("NoSuchKey" | "NoSuchVersion" | "NotFound" | "NoSuchBucket") => true,
        Some("InvalidArgument") => names_version,
        _ => false,
    }
}

/// Reads objects from S3.
#[derive(Debug, Clone)]
pub struct S3Reader {
    client: aws_sdk_s3::Client,
    max_bytes: u64,
    /// Objects too large to read whole within it are written to its spill
    /// directory instead of memory.
    budget: deltaload_lake::MemoryBudget,
    /// Bytes of the batch's objects held in memory: beyond what the budget
    /// reads whole, objects go to the spill directory ([`S3Reader::new_batch`]).
    held: std::sync::Arc<std::sync::atomic::AtomicU64>,
    /// Bytes of the spill directory the batch's objects on disk may take
    /// (about three times each one's size): at most the budget's `spill_space`.
    spilled: std::sync::Arc<std::sync::atomic::AtomicU64>,
}

/// Counts `n` more against `counter` when that keeps it within `limit`.
fn take(counter: &std::sync::atomic::AtomicU64, limit: u64, n: u64) -> bool {
    use std::sync::atomic::Ordering;
    counter
        .fetch_update(Ordering::Relaxed, Ordering::Relaxed, |held| {
            (held.saturating_add(n) <= limit).then_some(held + n)
        })
        .is_ok()
}

/// Counts `n` less against `counter`.
fn give_back(counter: &std::sync::atomic::AtomicU64, n: u64) {
    use std::sync::atomic::Ordering;
    let _ = counter.fetch_update(Ordering::Relaxed, Ordering::Relaxed, |held| {
        Some(held.saturating_sub(n))
    });
}

/// An S3 client from the standard AWS configuration; path-style addressing when
/// a custom endpoint is set (S3-compatible stores rarely serve virtual hosts).
pub fn s3_client(config: &aws_config::SdkConfig, endpoint_url: Option<&str>) -> aws_sdk_s3::Client {
    let conf = aws_sdk_s3::config::Builder::from(config)
        .force_path_style(endpoint_url.is_some())
        .build();
    aws_sdk_s3::Client::from_conf(conf)
}

impl S3Reader {
    /// A reader refusing objects over `max_bytes`, holding every other in memory (see [`S3Reader::with_budget`]).
    pub fn new(client: aws_sdk_s3::Client, max_bytes: u64) -> Self {
        Self {
            client,
            max_bytes,
            budget: deltaload_lake::MemoryBudget::unlimited(),
            held: Default::default(),
            spilled: Default::default(),
        }
    }

    /// Starts a batch: none of its objects is held in memory or on disk yet
    /// (the last batch's are gone with it).
    pub fn new_batch(&self) {
        self.held.store(0, std::sync::atomic::Ordering::Relaxed);
        self.spilled.store(0, std::sync::atomic::Ordering::Relaxed);
    }

    /// Whether an object of `size` bytes may be held in memory, counting it
    /// held when it may: the batch's objects in memory together are at most
    /// what the budget reads whole.
    pub(crate) fn hold(&self, size: u64) -> bool {
        take(&self.held, self.budget.whole_limit(), size)
    }

    /// Reserves the spill space an object of `size` bytes needs on disk, or
    /// says why the message must wait: the batch's other objects take it.
    pub(crate) fn reserve(&self, size: u64) -> Result<(), ReadProblem> {
        let needs = size.saturating_mul(deltaload_lake::budget::SPILL_FACTOR);
        match take(
            &self.spilled,
            self.budget.spill_space.unwrap_or(u64::MAX),
            needs,
        ) {
            true => Ok(()),
            false => Err((
                format!(
                    "the spill directory {} is taken by this batch's other large objects: \
                     the message is left for redelivery",
                    self.budget.spill_dir.display()
                ),
                Box::new(std::io::Error::other("spill space reserved")),
            )),
        }
    }

    /// Writes objects too large to read whole within `budget` to its spill
    /// directory (read from there a piece at a time) instead of memory.
    pub fn with_budget(self, budget: deltaload_lake::MemoryBudget) -> Self {
        Self { budget, ..self }
    }

    /// Counts `size` bytes less held in memory.
    pub(crate) fn give_back(&self, size: u64) {
        give_back(&self.held, size)
    }

    /// The memory budget objects are read within.
    pub(crate) fn budget(&self) -> &deltaload_lake::MemoryBudget {
        &self.budget
    }

    /// The largest object read.
    pub fn max_bytes(&self) -> u64 {
        self.max_bytes
    }

    /// The S3 client, for listing and tests.
    pub fn client(&self) -> &aws_sdk_s3::Client {
        &self.client
    }

    /// Reads the announced object (the announced version when the event names one).
    pub async fn fetch(&self, obj: &ObjectRef) -> Result<Fetched, AwsError> {
        if let Some(fetched) = obj.size.and_then(|size| self.unfit(size)) {
            return Ok(fetched);
        }
        let read_err =
            |problem: String, source: Box<dyn std::error::Error + Send + Sync>| AwsError::Read {
                bucket: obj.bucket.clone(),
                key: obj.key.clone(),
                version: obj.version_id.clone(),
                problem,
                source,
            };
        let response = match self.get(obj).await {
            Ok(response) => response,
            Err(Ok(missing)) => return Ok(missing),
            Err(Err((problem, source))) => return Err(read_err(problem, source)),
        };
        // The size S3 declares decides up front where the body goes; the
        // bytes are counted as they come all the same (a declared size may be
        // missing, and is not trusted).
        let declared = response
            .content_length()
            .and_then(|n| u64::try_from(n).ok());
        if let Some(fetched) = declared.and_then(|size| self.unfit(size)) {
            return Ok(fetched);
        }
        let etag = response.e_tag().map(|e| e.trim_matches('"').to_string());
        let version_id = response.version_id().map(str::to_string);
        let location = format!("s3://{}/{}", obj.bucket, obj.key);
        let file = |bytes: Vec<u8>, on_disk| {
            Fetched::File(SourceFile {
                location: location.clone(),
                bytes: bytes.into(),
                on_disk,
                refused: None,
                etag: etag.clone(),
                version_id: version_id.clone(),
            })
        };
        let local = |(problem, source): ReadProblem| read_err(problem, source);
        let bytes = match self
            .take_body(response.body, declared)
            .await
            .map_err(local)?
        {
            Body::Over(counted) => return Ok(Fetched::TooLarge(counted)),
            Body::Disk(on_disk) => {
                return match self.expand_spooled(on_disk).map_err(local)? {
                    Ok(on_disk) => Ok(file(Vec::new(), Some(on_disk))),
                    Err(why) => Ok(Fetched::Unreadable(why)),
                }
            }
            Body::Memory(bytes) => bytes,
        };
        if !deltaload_core::compression::is_gzip(&bytes) {
            return Ok(file(bytes, None));
        }
        Ok(match self.expand_held(&bytes).map_err(local)? {
            Ok(Expanded::Memory(expanded)) => file(expanded, None),
            Ok(Expanded::Disk(on_disk)) => file(Vec::new(), Some(on_disk)),
            Err(why) => Fetched::Unreadable(why),
        })
    }

    /// S3's response to GetObject of `obj`; `Err(Ok(Missing))` when the
    /// object or its version is gone, `Err(Err(..))` for another failure.
    async fn get(&self, obj: &ObjectRef) -> Result<GetObjectOutput, Result<Fetched, ReadProblem>> {
        let response = self
            .client
            .get_object()
            .bucket(&obj.bucket)
            .key(&obj.key)
            .set_version_id(obj.version_id.clone())
            .send()
            .await;
        response.map_err(|e| {
            let problem = format!("S3 GetObject: {}", describe(&e));
            match gone(e.code(), obj.version_id.is_some()) {
                true => Ok(Fetched::Missing(problem)),
                false => Err((problem, Box::new(e) as _)),
            }
        })
    }

    /// An object of `size` bytes refused before its body is read: larger
    /// than --max-object-bytes, or needing more spill space than there is.
    fn unfit(&self, size: u64) -> Option<Fetched> {
        match size > self.max_bytes {
            true => Some(Fetched::TooLarge(size)),
            false => self.no_room(size),
        }
    }

    /// A gzip object's `bytes`, held in memory, expanded in memory as far as
    /// the batch's share allows (the compressed bytes make way for it), else
    /// onto disk (the compressed bytes given back, the expanded reserved).
    fn expand_held(&self, bytes: &[u8]) -> Result<Result<Expanded, Unreadable>, ReadProblem> {
        let size = bytes.len() as u64;
        let room = self
            .budget
            .whole_limit()
            .saturating_sub(self.held.load(std::sync::atomic::Ordering::Relaxed))
            .saturating_add(size);
        let open = || Ok(bytes);
        let keep = |n: u64| self.hold(n.saturating_sub(size));
        let expanded =
            deltaload_lake::expand_gzip(open, (room, self.max_bytes), &self.budget.spill_dir, keep);
        let expanded = expanded.map_err(|e| (e.to_string(), Box::new(e) as _))?;
        if let Ok(Expanded::Disk(on_disk)) = &expanded {
            give_back(&self.held, size);
            self.reserve_expanded(on_disk)?;
        }
        Ok(expanded)
    }

    /// The refusal of an object of `size` bytes that must be spilled but
    /// would not fit the spill directory's space.
    fn no_room(&self, size: u64) -> Option<Fetched> {
        let space = self.budget.spill_space?;
        let needs = size.saturating_mul(deltaload_lake::budget::SPILL_FACTOR);
        (!self.budget.fits_whole(size) && needs > space).then_some(Fetched::NoRoom { size, space })
    }

    /// A spooled object, expanded onto disk when it is gzip.
    fn expand_spooled(
        &self,
        on_disk: deltaload_lake::OnDisk,
    ) -> Result<Result<deltaload_lake::OnDisk, Unreadable>, ReadProblem> {
        use std::io::Read as _;
        let io = |e: std::io::Error| -> ReadProblem {
            (
                "reading a large object back from disk".to_string(),
                Box::new(e),
            )
        };
        let mut magic = [0u8; 2];
        let mut f = std::fs::File::open(&on_disk.path).map_err(io)?;
        if f.read_exact(&mut magic).is_err() || !deltaload_core::compression::is_gzip(&magic) {
            return Ok(Ok(on_disk));
        }
        let input = std::io::BufReader::new(std::fs::File::open(&on_disk.path).map_err(io)?);
        self.expand_to_disk(input)
    }

    /// Gzip `input` expanded into a file of its own under the spill
    /// directory, its spill space reserved.
    fn expand_to_disk(
        &self,
        input: impl std::io::Read,
    ) -> Result<Result<deltaload_lake::OnDisk, Unreadable>, ReadProblem> {
        let expanded = self.expand_onto_disk(input)?;
        if let Ok(on_disk) = &expanded {
            self.reserve_expanded(on_disk)?;
        }
        Ok(expanded)
    }

    /// Reserves the spill space an expansion on disk takes (its size).
    fn reserve_expanded(&self, on_disk: &deltaload_lake::OnDisk) -> Result<(), ReadProblem> {
        self.reserve(std::fs::metadata(&on_disk.path).map_or(0, |m| m.len()))
    }

    /// Gzip `input` expanded into a file of its own under the spill directory.
    fn expand_onto_disk(
        &self,
        input: impl std::io::Read,
    ) -> Result<Result<deltaload_lake::OnDisk, Unreadable>, ReadProblem> {
        let io = |e: std::io::Error| -> ReadProblem {
            (
                format!(
                    "expanding a large object into {} (check its free space)",
                    self.budget.spill_dir.display()
                ),
                Box::new(e),
            )
        };
        deltaload_lake::OnDisk::expanded(input, &self.budget.spill_dir, self.max_bytes).map_err(io)
    }
}

/// What went wrong reading an object, and its cause.
pub(crate) type ReadProblem = (String, Box<dyn std::error::Error + Send + Sync>);

#[cfg(test)]
mod tests {
    use super::gone;

    #[test]
    fn only_objects_and_versions_that_cannot_exist_are_gone() {
        for code in ["NoSuchKey", "NoSuchVersion", "NotFound", "NoSuchBucket"] {
            assert!(gone(Some(code), false), "{code}");
        }
        assert!(gone(Some("InvalidArgument"), true));
        assert!(!gone(Some("InvalidArgument"), false));
        for code in ["AccessDenied", "SlowDown", "InternalError"] {
            assert!(!gone(Some(code), true), "{code}");
        }
        assert!(!gone(None, true), "no answer at all is retried");
    }
}
