//! A change file too large to read whole within the memory budget, read a
//! piece at a time (see [`deltaload_core::pieces`]): each piece's newest change
//! per key, as rows of the table sorted by key, is written to a run on local
//! disk (Arrow IPC). [`Merge`] reads the runs back in key order, a slice at a
//! time, keeping the newest change per key across runs. Every piece is read
//! before anything is written, so a file refused by its last line is refused
//! whole, as when it is read whole.

mod merge;
mod runs;

use arrow_array::RecordBatch;
use arrow_ipc::writer::FileWriter;
use arrow_schema::SchemaRef;
use deltaload_core::ExpectationCount;
use deltaload_core::{pieces, Dataset, HeaderMismatch, Reject};
use deltaload_ingest::rules::Check;
use deltaload_ingest::DataError;
use deltaload_ingest::{MemoryBudget, SpillDir};
pub use merge::Merge;
use runs::RunWriter;
use std::io::{Read, Seek, SeekFrom};
use std::path::{Path, PathBuf};
use std::sync::Arc;

/// Rows per batch of a run at most: what the merge holds of each run at a
/// time ([`run_batch_rows`] takes fewer of wide rows).
const RUN_BATCH_ROWS: usize = 8_192;

/// Rows per batch of a run whose changes take `row_bytes` each in memory,
/// for runs made of `share` bytes of changes: the merge holds a batch of up
/// to [`FAN_IN`] runs at once, so their batches take at most `share` in all.
/// (Batches of 8,192 rows of a kilobyte each held 8 times the budget.)
fn run_batch_rows(share: u64, row_bytes: u64) -> usize {
    let rows = share / FAN_IN as u64 / row_bytes.max(1);
    rows.clamp(1, RUN_BATCH_ROWS as u64) as usize
}

/// A file's changes spilled to sorted runs, and its figures so far.
pub struct Spilled {
    /// Removed with the runs when the load is done.
    _dir: SpillDir,
    /// The sorted runs, in the spill directory.
    pub runs: Vec<PathBuf>,
    /// The runs' schema: the table's columns, then the delete flag.
    pub schema: SchemaRef,
    /// Records that parsed.
    pub loaded: u64,
    /// Per expectation of the dataset, over every piece: records checked,
    /// and those that broke it.
    pub expectations: Vec<deltaload_core::ExpectationCount>,
    /// Rows written to the runs, and their bytes in memory.
    written: (u64, u64),
    /// Sorted runs written while the file was read (before any were merged).
    pub runs_written: u64,
    /// The most bytes of changes held in memory at once before a run was
    /// written (measured Arrow bytes).
    pub most_held: u64,
    /// Distinct keys, once the runs have been merged.
    pub distinct: std::sync::OnceLock<u64>,
}

/// The file text between `at` and the end of the last whole record (or
/// header, per `cut`) in a window of at least `start` bytes, the window
/// doubled until one fits; `None` when a record exceeds `most` bytes.
fn next_cut(
    file: &mut std::fs::File,
    at: u64,
    size: u64,
    (start, most): (usize, usize),
    cut: impl Fn(&[u8], bool) -> Option<usize>,
) -> std::io::Result<Option<Vec<u8>>> {
    let mut len = start;
    loop {
        let want = (size - at).min(len as u64) as usize;
        let mut window = vec![0u8; want];
        file.seek(SeekFrom::Start(at))?;
        file.read_exact(&mut window)?;
        let eof = at + want as u64 == size;
        if let Some(end) = cut(&window, eof) {
            window.truncate(end);
            return Ok(Some(window));
        }
        if len >= most {
            return Ok(None);
        }
        len = len.saturating_mul(2).min(most);
    }
}

/// The change file being read in pieces, and the sizes a piece may take.
struct Source<'a> {
    dataset: &'a Dataset,
    file: std::fs::File,
    size: u64,
    /// The first window tried, and the most a record may take.
    sizes: (usize, usize),
    path: &'a Path,
}

impl<'a> Source<'a> {
    /// The file at `path`, opened, its pieces starting at `piece` bytes and
    /// growing to eight times that for a long record.
    fn open(dataset: &'a Dataset, path: &'a Path, piece: usize) -> Result<Self, DataError> {
        let file = std::fs::File::open(path).map_err(DataError::io(path))?;
        let size = file.metadata().map_err(DataError::io(path))?.len();
        let sizes = (piece, piece.saturating_mul(8));
        Ok(Self {
            dataset,
            file,
            size,
            sizes,
            path,
        })
    }

    /// The refusal of a record (or header) longer than a piece may grow.
    fn too_long(&self, at: u64) -> HeaderMismatch {
        HeaderMismatch::new(
            self.dataset,
            Vec::new(),
            match self.dataset.format {
                deltaload_core::spec::Format::Avro => format!(
                    "an Avro block (or the header) at byte {} is longer than {} bytes, more \
                     than the memory budget lets a piece of the file hold (or its stated size \
                     is damaged)",
                    at, self.sizes.1
                ),
                _ => format!(
                    "a record (or the header) is longer than {} bytes, more than the memory \
                     budget lets a piece of the file hold",
                    self.sizes.1
                ),
            },
        )
        .with_remedy("raise the memory budget, then load it again")
    }

    /// The text from `at` to the end of the last whole piece, per `cut`.
    fn cut(
        &mut self,
        at: u64,
        cut: impl Fn(&[u8], bool) -> Option<usize>,
    ) -> Result<Result<Vec<u8>, HeaderMismatch>, DataError> {
        match next_cut(&mut self.file, at, self.size, self.sizes, cut) {
            Ok(Some(text)) => Ok(Ok(text)),
            Ok(None) => Ok(Err(self.too_long(at))),
            Err(e) => Err(DataError::io(self.path)(e)),
        }
    }
}

/// Reads the file at `path` a piece at a time into sorted runs under the
/// budget's spill directory; `Ok(Err(_))` when the file is refused.
pub fn spill(
    dataset: &Arc<Dataset>,
    table: SchemaRef,
    path: &Path,
    location: &str,
    budget: &MemoryBudget,
    check: &dyn Check,
) -> Result<Result<(Spilled, Vec<Reject>), HeaderMismatch>, DataError> {
    let rank = match crate::read::file_rank(dataset, location) {
        Ok(rank) => rank,
        Err(refused) => return Ok(Err(refused)),
    };
    let mut source = Source::open(dataset, path, budget.piece_bytes())?;
    let head = match source.cut(0, |w, eof| pieces::header_end(dataset, w, eof))? {
        Ok(head) => head,
        Err(refused) => return Ok(Err(refused)),
    };
    let dir = SpillDir::new(&budget.spill_dir).map_err(DataError::io(&budget.spill_dir))?;
    let mut writer = RunWriter::new(dataset, table, (location, &dir), budget.run_bytes());
    let read = read_pieces(&mut source, (&head, check), rank.as_deref(), &mut writer)?;
    let (rejects, loaded, expectations) = match read {
        Ok(read) => read,
        Err(refused) => return Ok(Err(refused)),
    };
    writer.flush()?;
    let schema = writer.schema()?;
    let (runs, written, most_held) = (writer.runs, writer.written, writer.most_held);
    let runs_written = runs.len() as u64;
    let rows = run_batch_rows(budget.run_bytes(), written.1 / written.0.max(1));
    let runs = narrowed(dataset, &dir, (runs, rows), &schema)?;
    let spilled = Spilled {
        _dir: dir,
        runs_written,
        most_held,
        runs,
        schema,
        loaded,
        expectations,
        written,
        distinct: std::sync::OnceLock::new(),
    };
    Ok(Ok((spilled, rejects)))
}

/// Every piece after the header `head` parsed and handed to `writer`, in
/// the feed at `rank` when the dataset has a preset's order: the rejects
/// (lines counted from the file's start) and the records loaded.
fn read_pieces(
    source: &mut Source<'_>,
    (head, check): (&[u8], &dyn Check),
    rank: Option<&str>,
    writer: &mut RunWriter<'_>,
) -> Result<Result<PiecesRead, HeaderMismatch>, DataError> {
    let dataset = source.dataset;
    let head_lines = pieces::line_ends(dataset, head);
    let (mut rejects, mut loaded) = (Vec::new(), 0u64);
    let mut expectations = vec![ExpectationCount::default(); dataset.expectations.len()];
    let (mut at, mut lines) = (head.len() as u64, head_lines);
    // At least one piece: a file of only a header still yields its figures.
    loop {
        let text = match source.cut(at, |w, eof| pieces::piece_end(dataset, w, eof))? {
            Ok(text) => text,
            Err(refused) => return Ok(Err(refused)),
        };
        at += text.len() as u64;
        let piece_lines = pieces::line_ends(dataset, &text);
        let mut part = match crate::read::ingest(dataset, &pieces::with_header(head, &text), check)?
        {
            Ok(part) => part,
            Err(refused) => {
                let shifted = match dataset.format {
                    // An Avro file's refusals name bytes, of the piece read after its header.
                    deltaload_core::spec::Format::Avro => {
                        let start = at - text.len() as u64;
                        pieces::shifted_bytes(refused, head.len() as u64, start)
                    }
                    _ => pieces::shifted(refused, lines - head_lines),
                };
                return Ok(Err(shifted));
            }
        };
        drop(text);
        for r in &mut part.rejects {
            r.line = r.line - head_lines + lines;
        }
        if let Some(rank) = rank {
            let before = lines - head_lines;
            part.batches = (part.batches.into_iter())
                .map(|b| crate::read::in_feed(dataset, b, rank, before))
                .collect::<Result<_, _>>()?;
        }
        lines += piece_lines;
        rejects.append(&mut part.rejects);
        loaded += part.changes();
        for (sum, piece) in expectations.iter_mut().zip(&part.expectations) {
            sum.absorb(*piece);
        }
        writer.add(part.batches)?;
        tracing::debug!(
            read = at,
            of = source.size,
            runs = writer.runs.len(),
            "file read in pieces"
        );
        if at >= source.size {
            break;
        }
    }
    Ok(Ok((rejects, loaded, expectations)))
}

/// What the pieces of a file gave: its rejects, the records loaded, and
/// per expectation the records checked and those that broke it.
type PiecesRead = (Vec<Reject>, u64, Vec<ExpectationCount>);

impl Spilled {
    /// The bytes in memory of a change of the runs, on average.
    pub fn row_bytes(&self) -> u64 {
        self.written.1 / self.written.0.max(1)
    }
}

/// Runs merged at once: what the merge holds is a batch of each.
const FAN_IN: usize = 64;

/// `runs` merged a group of [`FAN_IN`] at a time into fewer runs (in
/// batches of `rows`), in order, until at most [`FAN_IN`] are left (a file
/// dozens of times the budget).
fn narrowed(
    dataset: &Dataset,
    dir: &SpillDir,
    (mut runs, rows): (Vec<PathBuf>, usize),
    schema: &SchemaRef,
) -> Result<Vec<PathBuf>, DataError> {
    let label = dataset.name.as_str();
    let position = crate::aligned::positions(dataset, schema).map_err(DataError::arrow(label))?;
    let mut pass = 0;
    while runs.len() > FAN_IN {
        pass += 1;
        let mut fewer = Vec::with_capacity(runs.len().div_ceil(FAN_IN));
        for (g, group) in runs.chunks(FAN_IN).enumerate() {
            let mut merge = Merge::new(dataset, (schema, group), &position, 0, rows)?;
            let path = dir.path.join(format!("pass-{pass}-{g}.arrow"));
            let failed = |source: arrow_schema::ArrowError| DataError::Spill {
                table: label.to_string(),
                path: path.display().to_string(),
                source,
            };
            let file = std::fs::File::create(&path).map_err(|e| failed(e.into()))?;
            let mut writer =
                FileWriter::try_new(std::io::BufWriter::new(file), schema).map_err(failed)?;
            while let Some(slice) = merge.next_slice(label)? {
                writer.write(&slice).map_err(failed)?;
            }
            writer.finish().map_err(failed)?;
            for run in group {
                let _ = std::fs::remove_file(run);
            }
            fewer.push(path);
        }
        tracing::debug!(pass, runs = fewer.len(), "sorted runs merged");
        runs = fewer;
    }
    Ok(runs)
}

/// Writes `batch` to a run file at `path`, in batches of `rows`.
fn write_run(
    path: &Path,
    batch: &RecordBatch,
    rows: usize,
) -> Result<(), arrow_schema::ArrowError> {
    let file = std::io::BufWriter::new(std::fs::File::create(path)?);
    let mut writer = FileWriter::try_new(file, &batch.schema())?;
    let mut from = 0;
    while from < batch.num_rows() {
        let len = rows.max(1).min(batch.num_rows() - from);
        writer.write(&batch.slice(from, len))?;
        from += len;
    }
    writer.finish()
}

#[cfg(test)]
mod tests;
