//! The AWS Glue Data Catalog kept in step with the lake's tables, so that
//! Athena, Redshift Spectrum, EMR and Lake Formation find them.
//!
//! After a load, every table of the lake whose schema the process has not
//! registered yet is registered: created when Glue has no such table, else
//! updated with the columns it lacks (none dropped, none retyped), passing
//! the version read so that a concurrent change is read again rather than
//! overwritten. A process remembers what it registered: a warm Lambda makes
//! no Glue call per batch. The catalog is metadata: a failure is logged
//! (once per table until it succeeds), counted and tried again by the next
//! load, and never fails a load.

mod glue;
pub mod plan;

use deltaload_lake::{CatalogRefusal, CatalogTable, Described, LakeError};
pub use glue::GlueClient;
use plan::{GlueTable, Plan};
use std::collections::{HashMap, HashSet};
use std::future::Future;
use std::sync::Mutex;

/// Attempts at updating a table that other writers keep changing.
pub const ATTEMPTS: usize = 5;

/// The Glue calls deltaload makes (a fake one in tests).
pub trait GlueApi: Send + Sync {
    /// Creates `database` unless it exists.
    fn ensure_database(&self, database: &str) -> impl Future<Output = Result<(), ApiError>> + Send;
    /// Table `name` of `database`, `None` when Glue has none.
    fn get_table(
        &self,
        database: &str,
        name: &str,
    ) -> impl Future<Output = Result<Option<GlueTable>, ApiError>> + Send;
    /// Creates `table`; [`ApiError::Conflict`] when it exists already.
    fn create_table(
        &self,
        database: &str,
        table: &GlueTable,
    ) -> impl Future<Output = Result<(), ApiError>> + Send;
    /// Replaces `table` if Glue's is still at `table.version_id`, without
    /// archiving the old version; [`ApiError::Conflict`] when it is not.
    fn update_table(
        &self,
        database: &str,
        table: &GlueTable,
    ) -> impl Future<Output = Result<(), ApiError>> + Send;
}

/// A Glue call that failed.
#[derive(Debug, thiserror::Error)]
pub enum ApiError {
    /// Another writer got there first (the table exists, or changed since
    /// it was read): read it again and retry.
    #[error("{0}")]
    Conflict(String),
    /// Any other failure.
    #[error("{message}")]
    Failed {
        /// Glue's error code (`AccessDeniedException`, ...), when it answered.
        code: Option<String>,
        /// What the SDK said.
        message: String,
        /// Whether Glue was reached at all.
        reached: bool,
    },
}

impl ApiError {
    /// What to do about it.
    fn advice(&self) -> &'static str {
        match self {
            Self::Failed { reached: false, .. } => "Glue could not be reached: check the network, the region and AWS_ENDPOINT_URL_GLUE; the next load tries again",
            Self::Failed { code: Some(c), .. } if c.contains("AccessDenied") => "give the role glue:GetDatabase, glue:CreateDatabase, glue:GetTable, glue:CreateTable and glue:UpdateTable on the catalog, the database and its tables (infra/template.yaml does); the next load tries again",
            Self::Failed { code: Some(c), .. } if c.contains("Throttl") => "Glue throttled the calls; the next load tries again",
            _ => "the next load tries again, or run `deltaload catalog sync`",
        }
    }
}

/// A table that could not be registered.
#[derive(Debug, thiserror::Error)]
pub enum CatalogError {
    /// A Glue call failed.
    #[error("Glue table {database}.{table}: {source} ({})", source.advice())]
    Api {
        /// The database.
        database: String,
        /// The table.
        table: String,
        /// The failure.
        #[source]
        source: ApiError,
    },
    /// Other writers changed the table between every read and update.
    #[error("Glue table {database}.{table} changed under each of {ATTEMPTS} updates; the next load tries again")]
    Contended {
        /// The database.
        database: String,
        /// The table.
        table: String,
    },
    /// Glue's table of that name is not this lake's.
    #[error("Glue table {database}.{table} is at {location}, not at this lake's {ours}: left alone; register this lake in another database (--glue-database), or drop that Glue table")]
    Elsewhere {
        /// The database.
        database: String,
        /// The table.
        table: String,
        /// Where Glue's table is.
        location: String,
        /// Where this lake's is.
        ours: String,
    },
    /// The catalog cannot hold the table.
    #[error("{0}; it is not registered in Glue")]
    Refused(#[from] CatalogRefusal),
    /// The table could not be read.
    #[error("{0}; it is not registered in Glue")]
    Lake(#[from] LakeError),
}

/// The table a lake's description (`Lake::catalog_tables`, `tables_under`)
/// asks the catalog to hold, or why there is none to register.
pub fn wanted(described: Result<Described, LakeError>) -> Result<CatalogTable, CatalogError> {
    Ok(described??)
}

/// What registering one table did.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Change {
    /// Glue had no such table: it was created.
    Created,
    /// Glue's table was updated.
    Updated,
    /// Glue's table was as it should be.
    Unchanged,
}

/// What a sync after a load did, table by table.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Synced {
    /// Tables created in Glue.
    pub created: usize,
    /// Tables updated.
    pub updated: usize,
    /// Tables read and found as they should be.
    pub unchanged: usize,
    /// Tables this process had registered as they are: no call made.
    pub remembered: usize,
    /// Tables that could not be registered.
    pub failed: usize,
}

#[derive(Default)]
struct Memory {
    database_ready: bool,
    /// What was registered, by table name.
    registered: HashMap<String, CatalogTable>,
    /// Tables whose failure was logged as a warning, until they succeed.
    warned: HashSet<String>,
}

/// A Glue database kept in step with a lake's tables.
pub struct Catalog<A = GlueClient> {
    api: A,
    database: String,
    memory: Mutex<Memory>,
}

impl Catalog<GlueClient> {
    /// The catalog of Glue database `database`, with the client of `aws`.
    pub fn new(aws: &aws_config::SdkConfig, database: &str) -> Self {
        Self::with_api(GlueClient::new(aws), database)
    }
}

impl<A: GlueApi> Catalog<A> {
    /// The catalog of `database` (lower-cased, as Glue keeps it) through `api`.
    pub fn with_api(api: A, database: &str) -> Self {
        Self {
            api,
            database: database.to_lowercase(),
            memory: Mutex::default(),
        }
    }

    /// The Glue database.
    pub fn database(&self) -> &str {
        &self.database
    }

    /// The API (tests).
    #[cfg(test)]
    pub(crate) fn api(&self) -> &A {
        &self.api
    }

    fn memory(&self) -> std::sync::MutexGuard<'_, Memory> {
        self.memory
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
    }

    fn api_error(&self, table: &str) -> impl FnOnce(ApiError) -> CatalogError {
        let (database, table) = (self.database.clone(), table.to_string());
        move |source| CatalogError::Api {
            database,
            table,
            source,
        }
    }

    /// Registers `wanted` in Glue (the database created first if missing),
    /// or repairs Glue's table of that name: see [`plan::plan`].
    pub async fn register(&self, wanted: &CatalogTable) -> Result<Change, CatalogError> {
        let ready = self.memory().database_ready;
        if !ready {
            let ensured = self.api.ensure_database(&self.database).await;
            ensured.map_err(self.api_error(&wanted.name))?;
            self.memory().database_ready = true;
        }
        for _ in 0..ATTEMPTS {
            let existing = self.api.get_table(&self.database, &wanted.name).await;
            let existing = existing.map_err(self.api_error(&wanted.name))?;
            let done = match plan::plan(wanted, existing.as_ref()) {
                Plan::Nothing => Ok(Change::Unchanged),
                Plan::Create(t) => self
                    .api
                    .create_table(&self.database, &t)
                    .await
                    .map(|()| Change::Created),
                Plan::Update(t) => self
                    .api
                    .update_table(&self.database, &t)
                    .await
                    .map(|()| Change::Updated),
                Plan::Elsewhere { location } => {
                    return Err(CatalogError::Elsewhere {
                        database: self.database.clone(),
                        table: wanted.name.clone(),
                        location,
                        ours: wanted.location.clone(),
                    })
                }
            };
            match done {
                Err(ApiError::Conflict(_)) => continue,
                done => return done.map_err(self.api_error(&wanted.name)),
            }
        }
        Err(CatalogError::Contended {
            database: self.database.clone(),
            table: wanted.name.clone(),
        })
    }

    /// Registers each of `tables` (a lake's, as [`deltaload_lake::Lake::catalog_tables`]
    /// gives them) that this process has not registered as it is now, all
    /// at once. Never fails: a table that could not be registered is logged
    /// (a warning the first time, until it succeeds), counted, and left for
    /// the next call.
    pub async fn sync(&self, tables: Vec<(String, Result<Described, LakeError>)>) -> Synced {
        let mut synced = Synced::default();
        let mut due = Vec::new();
        for (folder, described) in tables {
            match wanted(described) {
                Ok(t) if self.memory().registered.get(&t.name) == Some(&t) => {
                    synced.remembered += 1
                }
                Ok(t) => due.push((folder, t)),
                Err(e) => self.failed(&mut synced, &folder, &e),
            }
        }
        let registered = futures::future::join_all(due.into_iter().map(|(folder, t)| async move {
            let done = self.register(&t).await;
            (folder, t, done)
        }))
        .await;
        for (folder, t, done) in registered {
            match done {
                Ok(change) => self.succeeded(&mut synced, t, change),
                Err(e) => self.failed(&mut synced, &folder, &e),
            }
        }
        synced
    }

    fn succeeded(&self, synced: &mut Synced, table: CatalogTable, change: Change) {
        match change {
            Change::Created => synced.created += 1,
            Change::Updated => synced.updated += 1,
            Change::Unchanged => synced.unchanged += 1,
        }
        if change != Change::Unchanged {
            tracing::info!(database = %self.database, table = %table.name, change = ?change, "registered in Glue");
        }
        let mut memory = self.memory();
        memory.warned.remove(&table.name);
        memory.registered.insert(table.name.clone(), table);
    }

    fn failed(&self, synced: &mut Synced, folder: &str, e: &CatalogError) {
        synced.failed += 1;
        let first = self.memory().warned.insert(folder.to_lowercase());
        match first {
            true => {
                tracing::warn!(database = %self.database, table = %folder, error = %e, "catalog sync failed; the load is not affected")
            }
            false => {
                tracing::debug!(database = %self.database, table = %folder, error = %e, "catalog sync failed again")
            }
        }
    }
}

#[cfg(test)]
mod tests;
