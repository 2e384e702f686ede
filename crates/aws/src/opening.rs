//! The handler's lake: opened before the handler is built (`serve`, `replay`),
//! or, for the Lambda, in the background from its start, so that the runtime
//! fetches the first event and the handler reads its objects while the
//! tables' logs are read. A batch waits for the opening only when it loads;
//! an opening that failed is tried again by the next batch.

use crate::error::AwsError;
use deltaload_core::Spec;
use deltaload_lake::{AutoCompact, Engine, Lake, LakeError, LakeRoot, MemoryBudget};
use std::time::Instant;
use tokio::sync::{MappedMutexGuard, Mutex, MutexGuard};
use tokio::task::JoinHandle;

/// What a lake is opened from.
#[derive(Debug, Clone)]
pub(crate) struct Opening {
    pub root: LakeRoot,
    pub spec: Spec,
    pub engine: Engine,
    pub budget: MemoryBudget,
    pub auto_compact: AutoCompact,
}

impl Opening {
    /// Opens the lake (creating missing tables) with the engine, the memory
    /// budget and the auto-compaction set.
    pub async fn open(self) -> Result<Lake, LakeError> {
        let started = Instant::now();
        let mut lake = Lake::open_spec(&self.root, &self.spec).await?;
        lake.set_engine(self.engine);
        lake.set_memory_budget(self.budget);
        lake.set_auto_compact(self.auto_compact);
        tracing::info!(
            lake = %self.root,
            ms = started.elapsed().as_millis() as u64,
            "lake opened"
        );
        Ok(lake)
    }
}

enum State {
    Open(Box<Lake>),
    /// Being opened in the background, until a batch waits for it.
    Pending(JoinHandle<Result<Lake, LakeError>>, Opening),
    /// The last opening failed: the next batch opens it again.
    Failed(Opening),
}

/// The lake, open or being opened.
pub(crate) struct LakeSlot(Mutex<State>);

impl LakeSlot {
    /// A slot holding a lake already open.
    pub fn open(lake: Lake) -> Self {
        Self(Mutex::new(State::Open(Box::new(lake))))
    }

    /// A slot whose lake starts opening now, on the runtime's other tasks.
    pub fn in_background(opening: Opening) -> Self {
        let task = tokio::spawn(opening.clone().open());
        Self(Mutex::new(State::Pending(task, opening)))
    }

    /// The lake, waiting for its opening (or opening it again after a failure).
    pub async fn get(&self) -> Result<MappedMutexGuard<'_, Lake>, AwsError> {
        let mut state = self.0.lock().await;
        let opening = match &*state {
            State::Open(_) => None,
            State::Pending(_, opening) | State::Failed(opening) => Some(opening.clone()),
        };
        if let Some(opening) = opening {
            // Failed until it opens, whatever happens to this batch meanwhile.
            let opened = match std::mem::replace(&mut *state, State::Failed(opening.clone())) {
                // A panic in the opening: this batch fails, the next opens again.
                State::Pending(task, _) => task.await.map_err(|_| AwsError::Panicked)?,
                _ => opening.open().await,
            };
            *state = State::Open(Box::new(opened?));
        }
        MutexGuard::try_map(state, |s| match s {
            State::Open(lake) => Some(&mut **lake),
            _ => None,
        })
        .map_err(|_| AwsError::Panicked)
    }

    /// Commit retries of the lake's loads; 0 while it is not open.
    pub async fn commit_retries(&self) -> u64 {
        match &*self.0.lock().await {
            State::Open(lake) => lake.commit_retries(),
            _ => 0,
        }
    }
}
