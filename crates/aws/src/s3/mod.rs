//! Objects read from S3 with the AWS SDK, with their ETag and version id.

mod body;

use crate::error::{describe, AwsError};
use crate::event::ObjectRef;
use aws_sdk_s3::error::ProvideErrorMetadata;
use aws_sdk_s3::operation::get_object::GetObjectOutput;
use body::{Body, ReadProblem, Room};
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
    /// What the batch's objects may take in memory and on disk, and the
    /// largest object read.
    room: Room,
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
            room: Room::new(max_bytes),
        }
    }

    /// Starts a batch: none of its objects is held in memory or on disk yet
    /// (the last batch's are gone with it).
    pub fn new_batch(&self) {
        self.room.new_batch();
    }

    /// Writes objects too large to read whole within `budget` to its spill
    /// directory (read from there a piece at a time) instead of memory.
    pub fn with_budget(mut self, budget: deltaload_lake::MemoryBudget) -> Self {
        self.room.budget = budget;
        self
    }

    /// The largest object read.
    pub fn max_bytes(&self) -> u64 {
        self.room.max_bytes
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
            .room
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
        match size > self.room.max_bytes {
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
            .room
            .budget
            .whole_limit()
            .saturating_sub(self.room.held.load(std::sync::atomic::Ordering::Relaxed))
            .saturating_add(size);
        let open = || Ok(bytes);
        let keep = |n: u64| self.room.hold(n.saturating_sub(size));
        let expanded = deltaload_lake::expand_gzip(
            open,
            (room, self.room.max_bytes),
            &self.room.budget.spill_dir,
            keep,
        );
        let expanded = expanded.map_err(|e| (e.to_string(), Box::new(e) as _))?;
        if let Ok(Expanded::Disk(on_disk)) = &expanded {
            self.room.give_back(size);
            self.reserve_expanded(on_disk)?;
        }
        Ok(expanded)
    }

    /// The refusal of an object of `size` bytes that must be spilled but
    /// would not fit the spill directory's space.
    fn no_room(&self, size: u64) -> Option<Fetched> {
        let space = self.room.budget.spill_space?;
        let needs = size.saturating_mul(deltaload_lake::budget::SPILL_FACTOR);
        (!self.room.budget.fits_whole(size) && needs > space)
            .then_some(Fetched::NoRoom { size, space })
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
        self.room
            .reserve(std::fs::metadata(&on_disk.path).map_or(0, |m| m.len()))
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
                    self.room.budget.spill_dir.display()
                ),
                Box::new(e),
            )
        };
        deltaload_lake::OnDisk::expanded(input, &self.room.budget.spill_dir, self.room.max_bytes)
            .map_err(io)
    }
}

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
