//! The handler's lake: opened before the handler is built (`serve`, `replay`),
//! or, for the Lambda, in the background from its start, so that the runtime
//! fetches the first event and the handler reads its objects while the
//! tables' logs are read. A batch waits for the opening only when it loads;
//! an opening that failed is tried again by the next batch.

use crate::error::AwsError;
use deltaload_core::Spec;
use deltaload_lake::{Engine, Lake, LakeError, LakeRoot};
use std::time::Instant;
use tokio::sync::{MappedMutexGuard, Mutex, MutexGuard};
use tokio::task::JoinHandle;

/// What a lake is opened from.
#[derive(Debug, Clone)]
pub(crate) struct Opening {
    pub root: LakeRoot,
    pub spec: Spec,
    pub engine: Engine,
}

impl Opening {
    async fn open(self) -> Result<Lake, LakeError> {
        let started = Instant::now();
        let mut lake = Lake::open_spec(&self.root, &self.spec).await?;
        lake.set_engine(self.engine);
        tracing::info!(
            lake = %self.root,
            ms = started.elapsed().as_millis() as u64,
            "lake opened"
        );
        Ok(lake)
    }
}

/// The lake, open or being opened.
pub(crate) struct LakeSlot {
    lake: Mutex<Option<Lake>>,
    /// The opening started in the background, until a batch waits for it.
    pending: std::sync::Mutex<Option<JoinHandle<Result<Lake, LakeError>>>>,
    opening: Opening,
}

impl LakeSlot {
    /// A slot holding a lake already open.
    pub fn open(lake: Lake) -> Self {
        let opening = Opening {
            root: lake.root().clone(),
            spec: lake.spec().clone(),
            engine: lake.engine(),
        };
        Self {
            lake: Mutex::new(Some(lake)),
            pending: std::sync::Mutex::new(None),
            opening,
        }
    }

    /// A slot whose lake starts opening now, on the runtime's other tasks.
    pub fn in_background(opening: Opening) -> Self {
        let task = tokio::spawn(opening.clone().open());
        Self {
            lake: Mutex::new(None),
            pending: std::sync::Mutex::new(Some(task)),
            opening,
        }
    }

    /// The lake, waiting for its opening (or opening it again after a failure).
    pub async fn get(&self) -> Result<MappedMutexGuard<'_, Lake>, AwsError> {
        let mut slot = self.lake.lock().await;
        if slot.is_none() {
            let task = self.pending.lock().map(|mut p| p.take()).unwrap_or(None);
            let opened = match task {
                // A panic in the opening: this batch fails, the next opens again.
                Some(task) => task.await.map_err(|_| AwsError::Panicked)?,
                None => self.opening.clone().open().await,
            };
            *slot = Some(opened?);
        }
        MutexGuard::try_map(slot, Option::as_mut).map_err(|_| AwsError::Panicked)
    }

    /// Commit retries of the lake's loads; 0 while it is not open.
    pub async fn commit_retries(&self) -> u64 {
        self.lake
            .lock()
            .await
            .as_ref()
            .map_or(0, Lake::commit_retries)
    }
}
