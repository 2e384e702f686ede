//! The memory a load may use, and the local directory where it writes what
//! does not fit: a file whose whole-file read would not fit is read a piece
//! at a time into sorted runs on disk (the `spill` module), and a load whose
//! rewrite would not fit rewrites its table a slice of keys at a time.

use std::path::PathBuf;

/// Peak memory of reading a file whole and upserting it, per byte of the
/// file (measured: a 220 MB file of 3,000,000 changes peaks at 1,887 MiB).
pub const WHOLE_FILE_FACTOR: u64 = 10;

/// Memory of rewriting a data file whole, per byte of its Parquet (decoded
/// columns, their gathered copy and the new file's encoder; measured: 5.7 MB
/// files of 174,000 orders take about 60 MB each).
pub const REWRITE_FACTOR: u64 = 12;

/// Spill space a file read in pieces needs, per byte of it: the downloaded
/// object, and its sorted runs (measured: 1.4 bytes per byte of CSV).
pub const SPILL_FACTOR: u64 = 3;

/// How much memory a load may use, and where it spills.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MemoryBudget {
    /// Bytes a load may use; `None`: no limit, every file read whole.
    pub bytes: Option<u64>,
    /// Where a load writes its sorted runs (Lambda: `/tmp`).
    pub spill_dir: PathBuf,
    /// Bytes the spill directory holds, when known (Lambda's ephemeral
    /// storage): an object needing more is refused unread.
    pub spill_space: Option<u64>,
}

impl Default for MemoryBudget {
    fn default() -> Self {
        Self {
            bytes: None,
            spill_dir: std::env::temp_dir(),
            spill_space: None,
        }
    }
}

impl MemoryBudget {
    /// No limit; spills (none) would go to the system's temporary directory.
    pub fn unlimited() -> Self {
        Self::default()
    }

    /// A budget of `bytes`, spilling under `spill_dir`.
    pub fn of(bytes: u64, spill_dir: PathBuf) -> Self {
        Self {
            bytes: Some(bytes),
            spill_dir,
            spill_space: None,
        }
    }

    /// The largest file read whole.
    pub fn whole_limit(&self) -> u64 {
        self.bytes.map_or(u64::MAX, |b| b / WHOLE_FILE_FACTOR)
    }

    /// Whether a file of `size` bytes may be read whole.
    pub fn fits_whole(&self, size: u64) -> bool {
        self.bytes
            .is_none_or(|b| size.saturating_mul(WHOLE_FILE_FACTOR) <= b)
    }

    /// Whether rewriting data files of `parquet_bytes` in all, beside changes
    /// of `change_bytes` in memory, fits.
    pub fn fits_rewrite(&self, parquet_bytes: u64, change_bytes: u64) -> bool {
        self.bytes.is_none_or(|b| {
            parquet_bytes
                .saturating_mul(REWRITE_FACTOR)
                .saturating_add(change_bytes.saturating_mul(2))
                <= b
        })
    }

    /// The Parquet bytes of data files a load by slices rewrites at a time.
    pub fn rewrite_group_bytes(&self) -> u64 {
        self.bytes.map_or(u64::MAX, |b| b / 3 / REWRITE_FACTOR)
    }

    /// The bytes of file text read at a time when a file is read in pieces.
    pub fn piece_bytes(&self) -> usize {
        let share = self.bytes.map_or(64 << 20, |b| b / 32);
        share.clamp(1 << 10, 32 << 20) as usize
    }

    /// The bytes of parsed changes (Arrow arrays, measured) a file read in
    /// pieces holds before it writes them to a sorted run: an eighth of the
    /// budget, so that cutting them to the newest change per key (a copy),
    /// the run's encoding, the next piece's text and the allocator's slack
    /// fit beside them (a quarter peaked at 337 MiB within 256 MiB on the
    /// 3,000,000-row file, an eighth at 226 MiB).
    pub fn run_bytes(&self) -> u64 {
        self.bytes.map_or(256 << 20, |b| b / 8).max(1)
    }

    /// The changes (rows of `row_bytes` each in memory) upserted at a time
    /// when a load goes by slices.
    pub fn slice_rows(&self, row_bytes: u64) -> usize {
        let share = self.bytes.map_or(1 << 30, |b| b / 12);
        (share / row_bytes.max(1)).clamp(16, 1_000_000) as usize
    }

    /// Parses a size: bytes, or a number with `KiB`, `MiB`, `GiB` (or `K`,
    /// `M`, `G`, `KB`, `MB`, `GB`, all powers of 1024); `none` for no limit.
    pub fn parse_size(text: &str) -> Result<Option<u64>, String> {
        let t = text.trim();
        if t.eq_ignore_ascii_case("none") || t.eq_ignore_ascii_case("unlimited") {
            return Ok(None);
        }
        let digits = t.find(|c: char| !c.is_ascii_digit()).unwrap_or(t.len());
        let (number, unit) = t.split_at(digits);
        let unit_bytes: u64 = match unit.trim().to_ascii_lowercase().as_str() {
            "" | "b" => 1,
            "k" | "kb" | "kib" => 1 << 10,
            "m" | "mb" | "mib" => 1 << 20,
            "g" | "gb" | "gib" => 1 << 30,
            _ => {
                return Err(format!(
                    "{text:?} is not a size: write e.g. 512MiB, 2GiB or none"
                ))
            }
        };
        let n: u64 = number
            .parse()
            .map_err(|_| format!("{text:?} is not a size: write e.g. 512MiB, 2GiB or none"))?;
        match n.checked_mul(unit_bytes) {
            Some(0) => Err(format!(
                "{text:?}: a memory budget must be above zero (or none)"
            )),
            Some(b) => Ok(Some(b)),
            None => Err(format!("{text:?} is too large a size")),
        }
    }
}

/// Caps glibc's allocator at two arenas (as `MALLOC_ARENA_MAX=2` does),
/// unless `MALLOC_ARENA_MAX` is set. glibc gives each thread that contends
/// an arena of its own, up to eight per core, and keeps what a freed arena
/// held: a load by slices of 10,000,000 changes peaked at 1,060 MiB with the
/// default and at 449 MiB with two arenas, in the same time. The binaries
/// call it first thing; elsewhere it does nothing.
pub fn cap_allocator_arenas() {
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    if std::env::var_os("MALLOC_ARENA_MAX").is_none() {
        unsafe extern "C" {
            fn mallopt(param: i32, value: i32) -> i32;
        }
        const M_ARENA_MAX: i32 = -8;
        // SAFETY: mallopt only sets a parameter of glibc's allocator, and
        // M_ARENA_MAX with a positive value is one it documents.
        unsafe {
            mallopt(M_ARENA_MAX, 2);
        }
    }
}

/// The most memory this process has held resident so far, in MiB (`VmHWM`
/// of `/proc/self/status`; `None` where that cannot be read): a field of the
/// load's debug events, so that a phase's memory shows beside its time.
pub fn peak_mib() -> Option<u64> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    let line = status.lines().find(|l| l.starts_with("VmHWM:"))?;
    let kib: u64 = line.split_whitespace().nth(1)?.parse().ok()?;
    Some(kib >> 10)
}

/// A directory of one load's spilled runs, removed with everything in it
/// when the load is done (or fails).
#[derive(Debug)]
pub struct SpillDir {
    /// The directory.
    pub path: PathBuf,
}

/// How a spill directory's name starts; the process id follows.
const SPILL_PREFIX: &str = "deltaload-spill-";

impl SpillDir {
    /// A new directory under `parent`, named after this process and a
    /// random id (never one another process, or a container with the same
    /// process id, uses).
    pub fn new(parent: &std::path::Path) -> std::io::Result<Self> {
        std::fs::create_dir_all(parent)?;
        let name = format!(
            "{SPILL_PREFIX}{}-{}",
            std::process::id(),
            uuid::Uuid::new_v4().simple()
        );
        let path = parent.join(name);
        std::fs::create_dir(&path)?;
        Ok(Self { path })
    }
}

impl MemoryBudget {
    /// Removes the spill directories under `spill_dir` that processes which
    /// are gone left behind (killed in the middle of a load); with `all`,
    /// every one but this process's (a Lambda sandbox runs one process at a
    /// time). Returns how many were removed.
    pub fn sweep_spills(&self, all: bool) -> usize {
        let Ok(entries) = std::fs::read_dir(&self.spill_dir) else {
            return 0;
        };
        let own = std::process::id().to_string();
        let mut removed = 0;
        for entry in entries.flatten() {
            let name = entry.file_name().to_string_lossy().into_owned();
            let Some(pid) = name
                .strip_prefix(SPILL_PREFIX)
                .and_then(|r| r.split('-').next())
            else {
                continue;
            };
            let alive = std::path::Path::new("/proc").join(pid).exists();
            if pid == own || (!all && alive) {
                continue;
            }
            match std::fs::remove_dir_all(entry.path()) {
                Ok(()) => removed += 1,
                Err(e) => {
                    tracing::warn!(dir = %entry.path().display(), error = %e, "could not remove a stale spill directory")
                }
            }
        }
        if removed > 0 {
            tracing::info!(removed, dir = %self.spill_dir.display(), "stale spill directories removed");
        }
        removed
    }
}

impl Drop for SpillDir {
    fn drop(&mut self) {
        if let Err(e) = std::fs::remove_dir_all(&self.path) {
            tracing::warn!(dir = %self.path.display(), error = %e, "could not remove a spill directory");
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sizes_parse_with_binary_units_and_none() {
        assert_eq!(MemoryBudget::parse_size("256MiB"), Ok(Some(256 << 20)));
        assert_eq!(MemoryBudget::parse_size("2G"), Ok(Some(2 << 30)));
        assert_eq!(MemoryBudget::parse_size("1000"), Ok(Some(1000)));
        assert_eq!(MemoryBudget::parse_size("none"), Ok(None));
        assert!(MemoryBudget::parse_size("0").is_err());
        assert!(MemoryBudget::parse_size("12 parsecs").is_err());
        assert!(MemoryBudget::parse_size("-5").is_err());
    }

    #[test]
    fn a_file_is_read_whole_only_within_the_budget() {
        let budget = MemoryBudget::of(256 << 20, std::env::temp_dir());
        assert!(budget.fits_whole(20 << 20));
        assert!(!budget.fits_whole(30 << 20));
        assert!(MemoryBudget::unlimited().fits_whole(u64::MAX));
        assert_eq!(budget.piece_bytes(), 8 << 20);
    }

    #[test]
    fn stale_spill_directories_of_gone_processes_are_swept() {
        let parent = tempfile::tempdir().unwrap();
        let budget = MemoryBudget::of(1 << 20, parent.path().to_path_buf());
        let ours = SpillDir::new(parent.path()).unwrap();
        let gone = parent.path().join(format!("{SPILL_PREFIX}{}-x", u32::MAX));
        std::fs::create_dir(&gone).unwrap();
        let other = parent.path().join("not-ours");
        std::fs::create_dir(&other).unwrap();
        assert_eq!(budget.sweep_spills(false), 1);
        assert!(!gone.exists() && ours.path.exists() && other.exists());
    }

    #[test]
    fn a_spill_directory_goes_with_its_load() {
        let parent = tempfile::tempdir().unwrap();
        let dir = SpillDir::new(parent.path()).unwrap();
        std::fs::write(dir.path.join("run"), b"x").unwrap();
        let path = dir.path.clone();
        drop(dir);
        assert!(!path.exists());
    }
}
