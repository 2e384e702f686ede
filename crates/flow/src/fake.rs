//! The ports in memory, for the protocol's tests: a table of key → sequence
//! where a change wins when newer, commits that name their files, a ledger,
//! rejects and figures; a process that dies before a chosen write, and
//! writes that lose commit races.

use crate::ledger::{FileKey, LedgerRow, Recorded};
use crate::outcome::{Merged, Resume};
use crate::ports::{FileFigures, Identified, Intake, Port, ReadFile, Source, Step, Tables};
use deltaload_core::{HeaderMismatch, MergeCounts, Reconciliation};
use std::collections::{BTreeMap, HashMap};
use std::sync::{Arc, Weak};
use std::time::Duration;

/// A change file: its location and changes (key, sequence), and how many
/// records were rejected; `refused` breaks the contract. `content` stands
/// for its bytes: a test sees whether the load still holds them.
#[derive(Debug, Clone)]
pub struct FakeFile {
    pub location: String,
    pub changes: Vec<(u8, u8)>,
    pub rejects: u64,
    pub refused: bool,
    pub content: Arc<()>,
}

impl FakeFile {
    pub fn new(location: &str, changes: &[(u8, u8)]) -> Self {
        Self {
            location: location.to_string(),
            changes: changes.to_vec(),
            rejects: 0,
            refused: false,
            content: Arc::new(()),
        }
    }
}

/// A file read.
#[derive(Debug)]
pub struct FakeRead {
    key: FileKey,
    records: u64,
    rejected: u64,
    /// The newest sequence of each key.
    newest: BTreeMap<u8, u8>,
}

impl ReadFile for FakeRead {
    fn key(&self) -> &FileKey {
        &self.key
    }
    fn records(&self) -> u64 {
        self.records
    }
    fn rejected(&self) -> u64 {
        self.rejected
    }
    fn distinct(&self) -> u64 {
        self.newest.len() as u64
    }
}

/// Why a fake call failed.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum FakeError {
    #[error("the process died")]
    Died,
    #[error("lost a commit race")]
    Conflict,
}

/// What the tables hold: what a run's result is compared on.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Held {
    pub rows: BTreeMap<u8, u8>,
    /// Per file version: its status, figures and reason.
    pub ledger: BTreeMap<FileKey, (String, Reconciliation, Option<String>)>,
    pub rejects: BTreeMap<String, (String, u64)>,
    pub figures: BTreeMap<FileKey, Reconciliation>,
}

/// The tables and the source, in memory.
#[derive(Debug, Default)]
pub struct Fake {
    pub held: Held,
    pub ledger: HashMap<FileKey, LedgerRow>,
    /// The commits of the dataset's table: version, then each file's counts.
    pub commits: Vec<(u64, Vec<(FileKey, MergeCounts)>)>,
    /// Writes left before the process dies (`None`: it lives).
    pub writes_left: Option<usize>,
    /// Upserts that lose a commit race before one wins.
    pub conflicts: u32,
    /// Pauses taken after lost races.
    pub pauses: u32,
    /// Steps reached.
    pub steps: Vec<Step>,
    /// Files read whole together at most this many bytes (`None`: any).
    pub budget: Option<u64>,
    /// The content of each file read (one entry a read), watched: whether
    /// each upsert ran while any was still held.
    pub contents: Vec<Weak<()>>,
    pub held_at_upsert: Vec<bool>,
}

impl Fake {
    fn write(&mut self) -> Result<(), FakeError> {
        match &mut self.writes_left {
            Some(0) => Err(FakeError::Died),
            Some(n) => {
                *n -= 1;
                Ok(())
            }
            None => Ok(()),
        }
    }

    fn version(&self) -> Option<u64> {
        self.commits.last().map(|(v, _)| *v)
    }

    /// The commits after `from` that named `key`: its counts then.
    fn committed(&self, resume: Resume, key: &FileKey) -> Option<MergeCounts> {
        let Resume::After(from) = resume else {
            return None;
        };
        let after = |v: u64| from.is_none_or(|f| v > f);
        self.commits
            .iter()
            .filter(|(v, _)| after(*v))
            .flat_map(|(_, files)| files)
            .find(|(k, _)| k == key)
            .map(|(_, c)| *c)
    }
}

impl Port for Fake {
    type Error = FakeError;
    type File = FakeFile;
    type Read = FakeRead;
    fn is_conflict(error: &FakeError) -> bool {
        *error == FakeError::Conflict
    }
}

impl Source for Fake {
    fn identify(&self, file: &FakeFile) -> Result<Identified, FakeError> {
        Ok(Identified {
            key: FileKey {
                location: file.location.clone(),
                content_id: format!("{:?}/{}/{}", file.changes, file.rejects, file.refused),
            },
            size: file.changes.len() as u64,
            etag: None,
            version_id: None,
        })
    }

    fn fits_whole(&self, bytes: u64) -> bool {
        self.budget.is_none_or(|b| bytes <= b)
    }

    fn read(&mut self, file: &FakeFile, id: &Identified) -> Result<Intake<FakeRead>, FakeError> {
        self.contents.push(Arc::downgrade(&file.content));
        if file.refused {
            let problem = "no header".to_string();
            return Ok(Intake::Refused(HeaderMismatch {
                found: Vec::new(),
                problem,
                expected: vec!["k".into(), "s".into()],
                remedy: None,
            }));
        }
        let mut newest = BTreeMap::new();
        for &(k, s) in &file.changes {
            let seq = newest.entry(k).or_insert(s);
            *seq = (*seq).max(s);
        }
        Ok(Intake::Read(FakeRead {
            key: id.key.clone(),
            records: file.changes.len() as u64,
            rejected: file.rejects,
            newest,
        }))
    }
}

impl Tables for Fake {
    async fn recorded(
        &mut self,
        keys: &[FileKey],
    ) -> Result<HashMap<FileKey, Recorded>, FakeError> {
        Ok(keys
            .iter()
            .filter_map(|k| self.ledger.get(k).map(|r| (k, r)))
            .map(|(k, r)| {
                let recorded = Recorded {
                    status: r.status,
                    reason: r.reason.clone(),
                    orders_version: r.orders_version,
                };
                (k.clone(), recorded)
            })
            .collect())
    }

    async fn record(&mut self, rows: &[LedgerRow]) -> Result<(), FakeError> {
        if rows.is_empty() {
            return Ok(());
        }
        self.write()?;
        for row in rows {
            let held = (
                row.status.as_str().to_string(),
                row.figures,
                row.reason.clone(),
            );
            self.held.ledger.insert(row.key(), held);
            self.ledger.insert(row.key(), row.clone());
        }
        Ok(())
    }

    async fn refresh(&mut self) -> Result<Option<u64>, FakeError> {
        Ok(self.version())
    }

    async fn replace_rejects(
        &mut self,
        files: &[FakeRead],
        _loaded_at: i64,
    ) -> Result<Option<u64>, FakeError> {
        self.write()?;
        for f in files {
            let held = (f.key.content_id.clone(), f.rejected);
            self.held.rejects.insert(f.key.location.clone(), held);
        }
        Ok(Some(0))
    }

    async fn upsert(
        &mut self,
        files: &[FakeRead],
        (resume, _forced): (Resume, bool),
        _loaded_at: i64,
    ) -> Result<(Vec<Merged>, Option<u64>), FakeError> {
        let held = self.contents.iter().any(|c| c.strong_count() > 0);
        self.held_at_upsert.push(held);
        if self.conflicts > 0 {
            self.conflicts -= 1;
            return Err(FakeError::Conflict);
        }
        self.write()?;
        let mut merged = Vec::new();
        let mut named = Vec::new();
        for f in files {
            if let Some(counts) = self.committed(resume, &f.key) {
                merged.push(Merged {
                    counts,
                    recovered: true,
                });
                continue;
            }
            let mut counts = MergeCounts::default();
            for (&k, &s) in &f.newest {
                match self.held.rows.get(&k) {
                    None => counts.inserted += 1,
                    Some(&old) if s > old => counts.updated += 1,
                    Some(_) => continue,
                }
                self.held.rows.insert(k, s);
            }
            named.push((f.key.clone(), counts));
            merged.push(Merged {
                counts,
                recovered: false,
            });
        }
        if named.iter().any(|(_, c)| *c != MergeCounts::default()) {
            let version = self.version().map_or(0, |v| v + 1);
            self.commits.push((version, named));
        }
        Ok((merged, self.version()))
    }

    async fn replace_figures(
        &mut self,
        figures: &[FileFigures],
        _orders_version: Option<u64>,
        _loaded_at: i64,
    ) -> Result<(), FakeError> {
        self.write()?;
        for f in figures {
            self.held.figures.insert(f.key.clone(), f.figures);
        }
        Ok(())
    }

    fn reached(&mut self, step: Step) {
        self.steps.push(step);
    }

    async fn pause(&mut self, _attempt: u32, _wait: Duration) {
        self.pauses += 1;
    }
}
