//! An object's body taken off the wire within the limits: the bytes counted
//! as they stream (the Content-Length S3 declares is not trusted, and may be
//! missing), kept in memory while the batch's share of the budget allows and
//! written to the spill directory beyond it, and cut off once past the
//! largest object read. The limits, and what the batch's objects take of
//! them, are the reader's [`Room`].

use deltaload_lake::OnDisk;
use std::io::Write as _;

/// Where a body went.
#[derive(Debug)]
pub(super) enum Body {
    /// Held in memory (counted held against the batch's share).
    Memory(Vec<u8>),
    /// Written to a file of its own under the spill directory.
    Disk(OnDisk),
    /// More than the largest object read: reading stopped after this many bytes.
    Over(u64),
}

/// The body being taken: in memory until it does not fit, then on disk.
enum Sink {
    Memory(Vec<u8>),
    Disk(OnDisk, std::io::BufWriter<std::fs::File>),
}

/// What went wrong reading an object, and its cause.
pub(super) type ReadProblem = (String, Box<dyn std::error::Error + Send + Sync>);

/// What a reader's batch of objects may take: memory up to what the budget
/// reads whole, the spill directory up to the budget's `spill_space`; and
/// the largest object read.
#[derive(Debug, Clone)]
pub(super) struct Room {
    /// The largest object read.
    pub(super) max_bytes: u64,
    /// Objects too large to read whole within it are written to its spill
    /// directory instead of memory.
    pub(super) budget: deltaload_lake::MemoryBudget,
    /// Bytes of the batch's objects held in memory: beyond what the budget
    /// reads whole, objects go to the spill directory ([`Room::new_batch`]).
    pub(super) held: std::sync::Arc<std::sync::atomic::AtomicU64>,
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

impl Room {
    /// Room for objects of at most `max_bytes`, every one held in memory.
    pub(super) fn new(max_bytes: u64) -> Self {
        Self {
            max_bytes,
            budget: deltaload_lake::MemoryBudget::unlimited(),
            held: Default::default(),
            spilled: Default::default(),
        }
    }

    /// Starts a batch: none of its objects is held in memory or on disk yet
    /// (the last batch's are gone with it).
    pub(super) fn new_batch(&self) {
        self.held.store(0, std::sync::atomic::Ordering::Relaxed);
        self.spilled.store(0, std::sync::atomic::Ordering::Relaxed);
    }

    /// Whether an object of `size` bytes may be held in memory, counting it
    /// held when it may: the batch's objects in memory together are at most
    /// what the budget reads whole.
    pub(super) fn hold(&self, size: u64) -> bool {
        take(&self.held, self.budget.whole_limit(), size)
    }

    /// Reserves the spill space an object of `size` bytes needs on disk, or
    /// says why the message must wait: the batch's other objects take it.
    pub(super) fn reserve(&self, size: u64) -> Result<(), ReadProblem> {
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

    /// Counts `size` bytes less held in memory.
    pub(super) fn give_back(&self, size: u64) {
        give_back(&self.held, size)
    }

    /// Takes `body`, of `declared` bytes when S3 said so. A declared size is
    /// held (in memory) or reserved (on disk) up front, as before the first
    /// byte; an unknown one a chunk at a time. Either way the bytes are
    /// counted, and reading stops past [`Room::max_bytes`].
    pub(super) async fn take_body(
        &self,
        mut body: aws_sdk_s3::primitives::ByteStream,
        declared: Option<u64>,
    ) -> Result<Body, ReadProblem> {
        let mut sink = match declared {
            Some(size) if self.hold(size) => Sink::Memory(Vec::with_capacity(size as usize)),
            Some(size) => {
                self.reserve(size)?;
                let (on_disk, file) = self.spill_file()?;
                Sink::Disk(on_disk, file)
            }
            None => Sink::Memory(Vec::new()),
        };
        let mut counted = 0u64;
        while let Some(chunk) = body.try_next().await.map_err(|e| -> ReadProblem {
            (format!("S3 GetObject: body interrupted: {e}"), Box::new(e))
        })? {
            counted += chunk.len() as u64;
            if counted > self.max_bytes {
                return Ok(Body::Over(counted));
            }
            sink = self.keep(sink, &chunk, declared.is_none())?;
        }
        match sink {
            Sink::Memory(bytes) => Ok(Body::Memory(bytes)),
            Sink::Disk(on_disk, mut file) => {
                file.flush()
                    .map_err(|e| self.spill_problem("writing a large object", e))?;
                Ok(Body::Disk(on_disk))
            }
        }
    }

    /// Adds `chunk` to `sink`; of a body of unknown size, counting it held
    /// (or, once on disk, reserved) first, moving to disk when it is not held.
    fn keep(&self, sink: Sink, chunk: &[u8], unknown: bool) -> Result<Sink, ReadProblem> {
        let n = chunk.len() as u64;
        let write = |file: &mut std::io::BufWriter<std::fs::File>, bytes: &[u8]| {
            file.write_all(bytes)
                .map_err(|e| self.spill_problem("writing a large object", e))
        };
        match sink {
            Sink::Memory(mut bytes) if !unknown || self.hold(n) => {
                bytes.extend_from_slice(chunk);
                Ok(Sink::Memory(bytes))
            }
            Sink::Memory(bytes) => {
                // Beyond the batch's share of memory: what was held goes to disk.
                self.give_back(bytes.len() as u64);
                self.reserve(bytes.len() as u64 + n)?;
                let (on_disk, mut file) = self.spill_file()?;
                write(&mut file, &bytes)?;
                write(&mut file, chunk)?;
                Ok(Sink::Disk(on_disk, file))
            }
            Sink::Disk(on_disk, mut file) => {
                if unknown {
                    self.reserve(n)?;
                }
                write(&mut file, chunk)?;
                Ok(Sink::Disk(on_disk, file))
            }
        }
    }

    /// A new file of its own under the spill directory.
    fn spill_file(&self) -> Result<(OnDisk, std::io::BufWriter<std::fs::File>), ReadProblem> {
        let create = |e| self.spill_problem("creating a file for a large object", e);
        let on_disk = OnDisk::copy_in(&self.budget.spill_dir, "object").map_err(create)?;
        let file = std::fs::File::create(&on_disk.path).map_err(create)?;
        Ok((on_disk, std::io::BufWriter::with_capacity(1 << 20, file)))
    }

    fn spill_problem(&self, what: &str, e: std::io::Error) -> ReadProblem {
        (
            format!(
                "{what} in {} (the spill directory: check its free space, Lambda's EphemeralStorage)",
                self.budget.spill_dir.display()
            ),
            Box::new(e),
        )
    }
}

#[cfg(test)]
mod tests {
    use crate::s3::{Fetched, S3Reader};
    use deltaload_event::ObjectRef;
    use std::io::{BufRead, Write};

    /// An S3 endpoint on loopback that answers every request with `body`,
    /// sent in chunks of 100 bytes (`Transfer-Encoding: chunked`) and no
    /// Content-Length; answers `requests` requests, then stops.
    fn chunked_server(body: Vec<u8>, requests: usize) -> String {
        let listener = std::net::TcpListener::bind("127.0.0.1:0").expect("bind");
        let url = format!("http://{}", listener.local_addr().expect("address"));
        std::thread::spawn(move || {
            for stream in listener.incoming().take(requests) {
                let mut stream = stream.expect("connection");
                let mut reader = std::io::BufReader::new(stream.try_clone().expect("clone"));
                let mut line = String::new();
                while reader.read_line(&mut line).is_ok_and(|n| n > 2) {
                    line.clear();
                }
                let mut out = b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\nETag: \"e1\"\r\nConnection: close\r\n\r\n".to_vec();
                for chunk in body.chunks(100) {
                    out.extend(format!("{:x}\r\n", chunk.len()).into_bytes());
                    out.extend(chunk);
                    out.extend(b"\r\n");
                }
                out.extend(b"0\r\n\r\n");
                let _ = stream.write_all(&out);
            }
        });
        url
    }

    fn reader(url: &str, max_bytes: u64) -> S3Reader {
        let conf = aws_sdk_s3::config::Builder::new()
            .behavior_version(aws_sdk_s3::config::BehaviorVersion::latest())
            .region(aws_sdk_s3::config::Region::new("us-east-1"))
            .credentials_provider(aws_sdk_s3::config::Credentials::new(
                "test", "test", None, None, "test",
            ))
            .endpoint_url(url)
            .force_path_style(true)
            .build();
        S3Reader::new(aws_sdk_s3::Client::from_conf(conf), max_bytes)
    }

    fn object() -> ObjectRef {
        ObjectRef {
            bucket: "landing".into(),
            key: "in/f.csv".into(),
            size: None,
            etag: None,
            version_id: None,
        }
    }

    fn text(n: usize) -> Vec<u8> {
        (0..n).map(|i| b'a' + (i % 26) as u8).collect()
    }

    #[tokio::test]
    async fn a_body_without_a_length_is_counted_and_cut_off_past_the_limit() {
        let url = chunked_server(text(2_000), 1);
        let fetched = reader(&url, 1_000).fetch(&object()).await.expect("fetch");
        match fetched {
            Fetched::TooLarge(counted) => assert!((1_001..=1_100).contains(&counted), "{counted}"),
            Fetched::File(file) => panic!("read past the limit: {} bytes", file.size()),
            other => panic!("{other:?}"),
        }
    }

    #[tokio::test]
    async fn a_body_without_a_length_within_the_limit_is_read_whole() {
        let url = chunked_server(text(1_000), 1);
        match reader(&url, 1_000).fetch(&object()).await.expect("fetch") {
            Fetched::File(file) => {
                assert_eq!(*file.bytes, text(1_000));
                assert!(file.on_disk.is_none());
                assert_eq!(file.etag.as_deref(), Some("e1"));
            }
            other => panic!("{other:?}"),
        }
    }

    /// Beyond the batch's share of memory, a body of unknown size moves to
    /// the spill directory, what was held in memory first.
    #[tokio::test]
    async fn a_body_without_a_length_beyond_the_memory_share_goes_to_disk() {
        let spill = tempfile::tempdir().expect("spill directory");
        let budget = deltaload_lake::MemoryBudget::of(10_000, spill.path().to_path_buf());
        let share = budget.whole_limit() as usize;
        let url = chunked_server(text(share * 3), 1);
        let reader = reader(&url, 1 << 20).with_budget(budget);
        match reader.fetch(&object()).await.expect("fetch") {
            Fetched::File(file) => {
                let on_disk = file.on_disk.expect("spilled to disk");
                assert!(file.bytes.is_empty());
                assert_eq!(
                    std::fs::read(&on_disk.path).expect("spilled"),
                    text(share * 3)
                );
            }
            other => panic!("{other:?}"),
        }
    }
}
