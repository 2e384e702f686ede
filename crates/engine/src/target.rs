//! The target table as the upsert sees it: data files it can read, a few
//! columns or all of them. The Delta adapter implements it (files listed
//! from the table's log, read from its object store, deletion vectors
//! applied); the engine's tests implement it in memory.

use arrow_array::RecordBatch;
use arrow_schema::SchemaRef;
use futures::stream::BoxStream;

/// A data file's live rows (those its deletion vector, if any, leaves).
pub struct FileRows {
    /// The columns asked for, of the live rows.
    pub batch: RecordBatch,
    /// Rows in the file, deleted ones included.
    pub rows: u64,
    /// The position in the file of each live row, when some are deleted.
    pub live: Option<Vec<u32>>,
}

impl FileRows {
    /// The position in the file of live row `r`.
    pub fn physical(&self, r: u32) -> u64 {
        u64::from(self.live.as_ref().map_or(r, |l| l[r as usize]))
    }
}

/// The data files of the table an upsert writes into.
#[allow(async_fn_in_trait)]
pub trait Target {
    /// A data file.
    type File;
    /// What a read fails with.
    type Error: std::error::Error + 'static;

    /// The columns `wanted` (positions in `schema`, the table's) of each of
    /// `files`, in their order, a few read at once.
    fn read_all<'a>(
        &'a self,
        files: Vec<&'a Self::File>,
        schema: &SchemaRef,
        wanted: &[usize],
    ) -> BoxStream<'a, Result<FileRows, Self::Error>>;

    /// The columns `wanted` of one file.
    async fn read(
        &self,
        file: &Self::File,
        schema: &SchemaRef,
        wanted: &[usize],
    ) -> Result<FileRows, Self::Error>;

    /// How messages name `file`.
    fn name(file: &Self::File) -> String;
}
