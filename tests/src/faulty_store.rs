//! A local object store that fails chosen writes and reads, or holds a
//! write back until another is made, registered for `faulty://` URLs:
//! storage errors in the middle of a load, and writes in a chosen order,
//! for the tests.

use deltalake::logstore::object_store::{
    self, path::Path, GetOptions, GetResult, ListResult, MultipartUpload, ObjectMeta, ObjectStore,
    PutMultipartOptions, PutOptions, PutPayload, PutResult,
};
use deltalake::logstore::{
    default_logstore, logstore_factories, object_store_factories, LogStore, LogStoreFactory,
    ObjectStoreFactory, ObjectStoreRef, StorageConfig,
};
use deltalake::DeltaResult;
use futures::stream::BoxStream;
use std::sync::{Arc, Mutex, OnceLock};
use url::Url;

/// Writes to fail: each entry is a path fragment and how many more writes whose
/// path contains it fail.
fn plan() -> &'static Mutex<Vec<(String, usize)>> {
    static PLAN: OnceLock<Mutex<Vec<(String, usize)>>> = OnceLock::new();
    PLAN.get_or_init(|| Mutex::new(Vec::new()))
}

/// Makes the next `times` writes whose path contains `fragment` fail, as S3
/// failing a request would.
pub fn fail_writes(fragment: &str, times: usize) {
    plan()
        .lock()
        .expect("fault plan")
        .push((fragment.to_string(), times));
}

/// Reads to fail, as [`plan`] (a read's failures are planned apart, so that
/// a planned write failure never fails a read of the same path).
fn read_plan() -> &'static Mutex<Vec<(String, usize)>> {
    static PLAN: OnceLock<Mutex<Vec<(String, usize)>>> = OnceLock::new();
    PLAN.get_or_init(|| Mutex::new(Vec::new()))
}

/// Makes the next `times` reads whose path contains `fragment` fail, as an
/// S3 response cut off in its body would.
pub fn fail_reads(fragment: &str, times: usize) {
    read_plan()
        .lock()
        .expect("fault plan")
        .push((fragment.to_string(), times));
}

/// How many of the planned read failures of `fragment` have not happened.
pub fn reads_left_to_fail(fragment: &str) -> usize {
    (read_plan().lock().expect("fault plan").iter())
        .filter(|(f, _)| f == fragment)
        .map(|(_, left)| left)
        .sum()
}

fn should_fail(location: &Path) -> bool {
    fails(plan(), location)
}

fn fails(plan: &Mutex<Vec<(String, usize)>>, location: &Path) -> bool {
    let mut plan = plan.lock().expect("fault plan");
    for (fragment, left) in plan.iter_mut() {
        if *left > 0 && location.as_ref().contains(fragment.as_str()) {
            *left -= 1;
            return true;
        }
    }
    false
}

/// A write held back until another one is made.
struct Hold {
    /// The held write's path fragment.
    fragment: String,
    /// The fragment of the write that releases it.
    until: String,
    /// Whether a write is (or was) held.
    caught: bool,
    released: tokio::sync::watch::Sender<bool>,
}

/// How long a held write waits for the write that releases it before it
/// fails.
const HOLD_LIMIT: std::time::Duration = std::time::Duration::from_secs(60);

fn holds() -> &'static Mutex<Vec<Hold>> {
    static HOLDS: OnceLock<Mutex<Vec<Hold>>> = OnceLock::new();
    HOLDS.get_or_init(|| Mutex::new(Vec::new()))
}

/// Holds the next write whose path contains `fragment` until a write whose
/// path contains `until` has been made (since this call): a write made in
/// one order only when the two run side by side. A held write not released
/// within a minute fails.
pub fn hold_writes(fragment: &str, until: &str) {
    let (released, _) = tokio::sync::watch::channel(false);
    holds().lock().expect("holds").push(Hold {
        fragment: fragment.to_string(),
        until: until.to_string(),
        caught: false,
        released,
    });
}

/// Whether a hold of `fragment` held a write that its releasing write let go.
pub fn hold_released(fragment: &str) -> bool {
    (holds().lock().expect("holds").iter())
        .any(|h| h.fragment == fragment && h.caught && *h.released.borrow())
}

/// Waits while a hold holds the write to `location`; an error when the
/// write releasing it is not made in time.
async fn wait_if_held(location: &Path) -> object_store::Result<()> {
    let waiting = {
        let mut holds = holds().lock().expect("holds");
        let hold =
            (holds.iter_mut()).find(|h| !h.caught && location.as_ref().contains(&h.fragment));
        hold.map(|h| {
            h.caught = true;
            h.released.subscribe()
        })
    };
    let Some(mut released) = waiting else {
        return Ok(());
    };
    let came = matches!(
        tokio::time::timeout(HOLD_LIMIT, released.wait_for(|r| *r)).await,
        Ok(Ok(_))
    );
    if !came {
        return Err(object_store::Error::Generic {
            store: "faulty",
            source: format!("held write on {location}: the write releasing it never came").into(),
        });
    }
    Ok(())
}

/// Releases the holds that a write to `location` releases.
fn release(location: &Path) {
    for hold in holds().lock().expect("holds").iter() {
        if location.as_ref().contains(&hold.until) {
            hold.released.send_replace(true);
        }
    }
}

#[derive(Debug)]
struct FaultyStore {
    inner: Arc<dyn ObjectStore>,
}

impl std::fmt::Display for FaultyStore {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "FaultyStore({})", self.inner)
    }
}

fn injected(location: &Path) -> object_store::Error {
    object_store::Error::Generic {
        store: "faulty",
        source: format!("injected write failure on {location} (as an S3 503)").into(),
    }
}

#[async_trait::async_trait]
impl ObjectStore for FaultyStore {
    async fn put_opts(
        &self,
        location: &Path,
        payload: PutPayload,
        opts: PutOptions,
    ) -> object_store::Result<PutResult> {
        wait_if_held(location).await?;
        if should_fail(location) {
            return Err(injected(location));
        }
        let put = self.inner.put_opts(location, payload, opts).await;
        if put.is_ok() {
            release(location);
        }
        put
    }

    async fn put_multipart_opts(
        &self,
        location: &Path,
        opts: PutMultipartOptions,
    ) -> object_store::Result<Box<dyn MultipartUpload>> {
        wait_if_held(location).await?;
        if should_fail(location) {
            return Err(injected(location));
        }
        self.inner.put_multipart_opts(location, opts).await
    }

    async fn get_opts(
        &self,
        location: &Path,
        options: GetOptions,
    ) -> object_store::Result<GetResult> {
        if fails(read_plan(), location) {
            return Err(object_store::Error::Generic {
                store: "faulty",
                source: format!(
                    "injected read failure on {location}: request or response body error"
                )
                .into(),
            });
        }
        self.inner.get_opts(location, options).await
    }

    fn delete_stream(
        &self,
        locations: BoxStream<'static, object_store::Result<Path>>,
    ) -> BoxStream<'static, object_store::Result<Path>> {
        self.inner.delete_stream(locations)
    }

    fn list(&self, prefix: Option<&Path>) -> BoxStream<'static, object_store::Result<ObjectMeta>> {
        sorted(self.inner.list(prefix))
    }

    fn list_with_offset(
        &self,
        prefix: Option<&Path>,
        offset: &Path,
    ) -> BoxStream<'static, object_store::Result<ObjectMeta>> {
        sorted(self.inner.list_with_offset(prefix, offset))
    }

    async fn list_with_delimiter(&self, prefix: Option<&Path>) -> object_store::Result<ListResult> {
        self.inner.list_with_delimiter(prefix).await
    }

    async fn copy_opts(
        &self,
        from: &Path,
        to: &Path,
        options: object_store::CopyOptions,
    ) -> object_store::Result<()> {
        self.inner.copy_opts(from, to, options).await
    }
}

/// A listing in path order, as S3 gives it (the local file system does not, and
/// Delta readers expect the log's files in order from every store but `file://`).
fn sorted(
    list: BoxStream<'static, object_store::Result<ObjectMeta>>,
) -> BoxStream<'static, object_store::Result<ObjectMeta>> {
    use futures::{StreamExt, TryStreamExt};
    futures::stream::once(async move {
        let mut items: Vec<ObjectMeta> = list.try_collect().await?;
        items.sort_by(|a, b| a.location.cmp(&b.location));
        Ok::<_, object_store::Error>(futures::stream::iter(items.into_iter().map(Ok)))
    })
    .try_flatten()
    .boxed()
}

struct Factory;

impl ObjectStoreFactory for Factory {
    fn parse_url_opts(
        &self,
        url: &Url,
        _config: &StorageConfig,
    ) -> DeltaResult<(ObjectStoreRef, Path)> {
        let store: ObjectStoreRef = Arc::new(FaultyStore {
            inner: Arc::new(object_store::local::LocalFileSystem::new()),
        });
        let path = Path::from_url_path(url.path())?;
        Ok((store, path))
    }
}

impl LogStoreFactory for Factory {
    fn with_options(
        &self,
        prefixed_store: ObjectStoreRef,
        root_store: ObjectStoreRef,
        location: &Url,
        options: &StorageConfig,
    ) -> DeltaResult<Arc<dyn LogStore>> {
        Ok(default_logstore(
            prefixed_store,
            root_store,
            location,
            options,
        ))
    }
}

/// Registers the `faulty://` scheme with delta-rs (once per process).
pub fn register() {
    static ONCE: std::sync::Once = std::sync::Once::new();
    ONCE.call_once(|| {
        let scheme = Url::parse("faulty://").expect("scheme URL");
        object_store_factories().insert(scheme.clone(), Arc::new(Factory));
        logstore_factories().insert(scheme, Arc::new(Factory));
    });
}

/// The `faulty://` URL of a local directory.
pub fn url_of(dir: &std::path::Path) -> Url {
    Url::parse(&format!("faulty://{}/", dir.display())).expect("faulty URL")
}
