//! Reading a data file of a table: chosen columns, by name, in the table's types.

use crate::table::error::LakeError;
use deltalake::arrow::array::{new_null_array, ArrayRef, UInt32Array};
use deltalake::arrow::compute::{cast, concat_batches};
use deltalake::arrow::datatypes::{Schema, SchemaRef};
use deltalake::arrow::record_batch::RecordBatch;
use deltalake::kernel::DeletionVectorDescriptor;
use deltalake::parquet::arrow::arrow_reader::{ParquetRecordBatchReaderBuilder, RowSelection};
use deltalake::parquet::arrow::ProjectionMask;
use deltalake::parquet::file::reader::ChunkReader;
use deltalake::{ObjectStore, Path};
use object_store::ObjectStoreExt as _;
use std::sync::Arc;

pub(crate) use deltaload_engine::FileRows;

/// Columns `wanted` (indexes into the table's `schema`) of the file at `path`
/// (its live rows: those deletion vector `dv` leaves),
/// in that order and in the table's types; a column the file lacks (added to
/// the table after the file was written) reads as nulls.
pub(crate) async fn read_columns(
    store: Arc<dyn ObjectStore>,
    path: &Path,
    dv: Option<DeletionVectorDescriptor>,
    schema: &SchemaRef,
    wanted: &[usize],
    table: &str,
) -> Result<FileRows, LakeError> {
    let failed = failure(path, table);
    let builder = open(&store, path, &failed).await?;
    let (batch, rows) = decode(builder, (schema, wanted), None, (table, &failed))?;
    let Some(dv) = dv else {
        return Ok(FileRows {
            batch,
            rows,
            live: None,
        });
    };
    let deleted = super::dv::read(&store, &dv).await.map_err(failed)?;
    let live = live_rows(rows, &deleted);
    let batch =
        deltalake::arrow::compute::take_record_batch(&batch, &UInt32Array::from(live.clone()))
            .map_err(LakeError::arrow(table))?;
    Ok(FileRows {
        batch,
        rows,
        live: Some(live),
    })
}

/// Columns `wanted` of the live rows `at` (ascending positions among the
/// file's live rows, as [`read_columns`] numbers them) of the file at
/// `path`, in that order: only those rows are kept (where they lie dense,
/// Parquet's reader decodes a page's other values and drops them).
pub(crate) async fn read_columns_at(
    store: Arc<dyn ObjectStore>,
    (path, dv): (&Path, Option<DeletionVectorDescriptor>),
    (schema, wanted): (&SchemaRef, &[usize]),
    at: &[u32],
    table: &str,
) -> Result<RecordBatch, LakeError> {
    let failed = failure(path, table);
    let builder = open(&store, path, &failed).await?;
    let rows = builder.metadata().file_metadata().num_rows();
    let rows = u64::try_from(rows).unwrap_or(0);
    if at.windows(2).any(|w| w[0] >= w[1]) {
        return Err(failed("live rows asked for twice or out of order".into()));
    }
    let deleted = match dv {
        Some(dv) => Some(super::dv::read(&store, &dv).await.map_err(&failed)?),
        None => None,
    };
    let live = deleted.map(|deleted| live_rows(rows, &deleted));
    let physical = (at.iter())
        .map(|&r| match &live {
            Some(live) => live.get(r as usize).map(|&p| p as usize),
            None => (u64::from(r) < rows).then_some(r as usize),
        })
        .collect::<Option<Vec<usize>>>()
        .ok_or_else(|| {
            failed(format!(
                "a row asked for lies past the file's live rows ({rows} with the deleted)"
            ))
        })?;
    let ranges = physical.iter().map(|&r| r..r + 1);
    let selection = RowSelection::from_consecutive_ranges(ranges, rows as usize);
    let (batch, _) = decode(builder, (schema, wanted), Some(selection), (table, &failed))?;
    Ok(batch)
}

/// The positions of the live rows of a file of `rows` rows: those the
/// deletion vector's `deleted` leaves.
fn live_rows(rows: u64, deleted: &roaring::RoaringTreemap) -> Vec<u32> {
    (0..rows as u32)
        .filter(|&r| !deleted.contains(u64::from(r)))
        .collect()
}

/// What a failed read of the data file at `path` says.
fn failure<'a>(path: &'a Path, table: &'a str) -> impl Fn(String) -> LakeError + 'a {
    move |detail: String| {
        LakeError::Invariant {
        table: table.to_string(),
        detail: format!(
            "reading data file {path}: {detail}; check that the table's files are intact (deltaload audit)"
        ),
    }
    }
}

/// A reader of the file at `path`, fetched in one GET of the whole file
/// (at most the target file size): fewer round trips on S3 than reading
/// the column chunks one by one.
async fn open(
    store: &Arc<dyn ObjectStore>,
    path: &Path,
    failed: &impl Fn(String) -> LakeError,
) -> Result<ParquetRecordBatchReaderBuilder<impl ChunkReader + 'static>, LakeError> {
    let got = store.get(path).await.map_err(|e| failed(e.to_string()))?;
    let bytes = got.bytes().await.map_err(|e| failed(e.to_string()))?;
    ParquetRecordBatchReaderBuilder::try_new(bytes).map_err(|e| failed(e.to_string()))
}

/// Columns `wanted` of the rows of `builder`'s file (those `selection`
/// keeps, if given) as one batch in the table's types, and how many rows
/// the file holds.
fn decode<T: ChunkReader + 'static>(
    builder: ParquetRecordBatchReaderBuilder<T>,
    (schema, wanted): (&SchemaRef, &[usize]),
    selection: Option<RowSelection>,
    (table, failed): (&str, &impl Fn(String) -> LakeError),
) -> Result<(RecordBatch, u64), LakeError> {
    let file_schema = builder.schema().clone();
    // Batches of the file's rows (at most 16M), so that a file of one row
    // group (as the table's writers make them) comes in one batch and is
    // not copied into one below.
    let file_rows = builder.metadata().file_metadata().num_rows();
    let batch_rows = usize::try_from(file_rows).unwrap_or(0).clamp(1, 1 << 24);
    let roots: Vec<usize> = wanted
        .iter()
        .filter_map(|&i| file_schema.index_of(schema.field(i).name()).ok())
        .collect();
    let mask = ProjectionMask::roots(builder.parquet_schema(), roots);
    let mut builder = builder.with_projection(mask).with_batch_size(batch_rows);
    if let Some(selection) = selection {
        builder = builder.with_row_selection(selection);
    }
    let reader = builder.build().map_err(|e| failed(e.to_string()))?;
    let batches: Vec<RecordBatch> = reader
        .collect::<Result<_, _>>()
        .map_err(|e| failed(e.to_string()))?;
    let read_schema = match batches.first() {
        Some(b) => b.schema(),
        None => Arc::new(Schema::empty()),
    };
    let rows = batches.iter().map(RecordBatch::num_rows).sum();
    let whole = match &batches[..] {
        [] => None,
        [one] => Some(one.clone()),
        many => Some(concat_batches(&read_schema, many).map_err(LakeError::arrow(table))?),
    };
    let mut columns: Vec<ArrayRef> = Vec::with_capacity(wanted.len());
    for &i in wanted {
        let field = schema.field(i);
        let column = whole
            .as_ref()
            .and_then(|b| b.column_by_name(field.name()).cloned());
        columns.push(match column {
            Some(c) if c.data_type() == field.data_type() => c,
            Some(c) => cast(&c, field.data_type()).map_err(LakeError::arrow(table))?,
            None => new_null_array(field.data_type(), rows),
        });
    }
    let fields: Vec<_> = wanted
        .iter()
        .map(|&i| schema.field(i).clone().with_nullable(true))
        .collect();
    let options =
        deltalake::arrow::record_batch::RecordBatchOptions::new().with_row_count(Some(rows));
    let batch = RecordBatch::try_new_with_options(Arc::new(Schema::new(fields)), columns, &options)
        .map_err(LakeError::arrow(table))?;
    Ok((batch, u64::try_from(file_rows).unwrap_or(0)))
}

/// A decision on a row of a table's file: its row, the change, the action.
pub(super) type Hit = (u32, u32, deltaload_engine::Action);

/// The positions `hits` name, ascending and each once (as
/// [`read_columns_at`] takes them), and `hits` with each position replaced
/// by its place among them.
pub(super) fn in_order(mut hits: Vec<Hit>) -> (Vec<u32>, Vec<Hit>) {
    let mut at: Vec<u32> = hits.iter().map(|h| h.0).collect();
    at.sort_unstable();
    at.dedup();
    for h in &mut hits {
        h.0 = at.partition_point(|&p| p < h.0) as u32;
    }
    (at, hits)
}

/// Target files read at once.
const READ_AHEAD: usize = 4;

/// Columns `wanted` of each of `files`, in their order, as [`read_columns`]
/// reads them. Each read is a task of its own (the cores decode side by side)
/// and owns what it uses, so the load's future stays `Send`.
pub(crate) fn read_files<'a>(
    store: Arc<dyn ObjectStore>,
    files: impl Iterator<Item = &'a super::files::TargetFile>,
    schema: &SchemaRef,
    wanted: &[usize],
    table: &str,
) -> impl futures::Stream<Item = Result<FileRows, LakeError>> + Send + 'static {
    let jobs: Vec<(Path, Option<DeletionVectorDescriptor>)> = files
        .map(|f| (f.path.clone(), f.add.deletion_vector.clone()))
        .collect();
    let (schema, wanted, table) = (schema.clone(), wanted.to_vec(), table.to_string());
    spawned(jobs, move |(path, dv)| {
        let (store, schema) = (store.clone(), schema.clone());
        let (wanted, table) = (wanted.clone(), table.clone());
        async move { read_columns(store, &path, dv, &schema, &wanted, &table).await }
    })
}

/// Columns `wanted` of the live rows `at` of each file of `files`, in their
/// order, as [`read_columns_at`] reads them, each a task of its own.
pub(crate) fn read_files_at(
    store: Arc<dyn ObjectStore>,
    files: Vec<(&super::files::TargetFile, Vec<u32>)>,
    schema: &SchemaRef,
    wanted: &[usize],
    table: &str,
) -> impl futures::Stream<Item = Result<RecordBatch, LakeError>> + Send + 'static {
    let jobs: Vec<(Path, Option<DeletionVectorDescriptor>, Vec<u32>)> = (files.into_iter())
        .map(|(f, at)| (f.path.clone(), f.add.deletion_vector.clone(), at))
        .collect();
    let (schema, wanted, table) = (schema.clone(), wanted.to_vec(), table.to_string());
    spawned(jobs, move |(path, dv, at)| {
        let (store, schema) = (store.clone(), schema.clone());
        let (wanted, table) = (wanted.clone(), table.clone());
        async move { read_columns_at(store, (&path, dv), (&schema, &wanted), &at, &table).await }
    })
}

/// `read` of each of `jobs`, a task each, [`READ_AHEAD`] at a time, in
/// the jobs' order.
fn spawned<J, T, F, R>(
    jobs: Vec<J>,
    read: F,
) -> impl futures::Stream<Item = Result<T, LakeError>> + Send + 'static
where
    J: Send + 'static,
    T: Send + 'static,
    F: Fn(J) -> R + Send + 'static,
    R: std::future::Future<Output = Result<T, LakeError>> + Send + 'static,
{
    use futures::StreamExt;
    futures::stream::iter(jobs)
        .map(move |job| tokio::spawn(read(job)))
        .buffered(READ_AHEAD)
        .map(|joined| match joined {
            Ok(read) => read,
            Err(e) => Err(LakeError::Invariant {
                table: "data file".into(),
                detail: format!("a read of a data file failed: {e}"),
            }),
        })
}

#[cfg(test)]
mod tests {
    use super::*;
    use deltalake::arrow::array::{AsArray, Int64Array, StringArray};
    use deltalake::arrow::datatypes::Int64Type;
    use deltalake::parquet::arrow::ArrowWriter;
    use deltalake::parquet::file::properties::WriterProperties;
    use deltaload_engine::Action;
    use roaring::RoaringTreemap;

    /// A file of `id` 0..100 and its text, in row groups of 16 rows, and
    /// a deletion vector of every third row, in `store`.
    async fn file(store: &Arc<dyn ObjectStore>) -> (Path, DeletionVectorDescriptor, SchemaRef) {
        let ids = Int64Array::from_iter_values(0..100);
        let texts = StringArray::from_iter_values((0..100).map(|i| format!("row {i}")));
        let batch = RecordBatch::try_from_iter([
            ("id", Arc::new(ids) as ArrayRef),
            ("text", Arc::new(texts) as ArrayRef),
        ])
        .unwrap();
        let properties = WriterProperties::builder()
            .set_max_row_group_row_count(Some(16))
            .build();
        let mut bytes = Vec::new();
        let mut writer =
            ArrowWriter::try_new(&mut bytes, batch.schema(), Some(properties)).unwrap();
        writer.write(&batch).unwrap();
        writer.close().unwrap();
        let path = Path::from("part-0.parquet");
        store.put(&path, bytes.into()).await.unwrap();
        let deleted: RoaringTreemap = (0..100u64).step_by(3).collect();
        let (dv_path, dv_bytes, mut dvs) = crate::write::upsert::dv::write(&[deleted]).unwrap();
        store.put(&dv_path, dv_bytes.into()).await.unwrap();
        (path, dvs.remove(0), batch.schema())
    }

    fn ids(batch: &RecordBatch) -> Vec<i64> {
        batch
            .column(0)
            .as_primitive::<Int64Type>()
            .values()
            .to_vec()
    }

    /// Live rows asked for by their place among the live rows are the rows
    /// a whole read gives there, over several row groups, with and without
    /// the deletion vector; rows asked for twice or out of order are refused.
    #[tokio::test]
    async fn the_rows_asked_for_are_those_of_a_whole_read() {
        let store: Arc<dyn ObjectStore> = Arc::new(object_store::memory::InMemory::new());
        let (path, dv, schema) = file(&store).await;
        let at = [0u32, 1, 2, 15, 16, 40, 65];
        for dv in [None, Some(dv.clone())] {
            let whole = read_columns(store.clone(), &path, dv.clone(), &schema, &[0, 1], "t");
            let whole = whole.await.unwrap().batch;
            let some = read_columns_at(store.clone(), (&path, dv), (&schema, &[1, 0]), &at, "t");
            let some = some.await.unwrap();
            let expected: Vec<i64> = at.iter().map(|&r| ids(&whole)[r as usize]).collect();
            assert_eq!(
                some.column(1).as_primitive::<Int64Type>().values().to_vec(),
                expected
            );
            let texts = some.column(0).as_string::<i32>();
            assert_eq!(texts.value(3), format!("row {}", expected[3]));
        }
        // Every third row deleted: live row 1 is row 2 of the file.
        let read = read_columns_at(
            store.clone(),
            (&path, Some(dv.clone())),
            (&schema, &[0]),
            &[1],
            "t",
        );
        assert_eq!(ids(&read.await.unwrap()), [2]);
        let wrongs = [(&[3u32, 2][..], true), (&[2, 2], true), (&[66], true)];
        let wrongs =
            wrongs
                .into_iter()
                .chain([(&[3u32, 2][..], false), (&[2, 2], false), (&[100], false)]);
        for (wrong, with_dv) in wrongs {
            let dv = with_dv.then(|| dv.clone());
            let read = read_columns_at(store.clone(), (&path, dv), (&schema, &[0]), wrong, "t");
            assert!(read.await.is_err(), "{wrong:?}, deletion vector: {with_dv}");
        }
    }

    // The rows read are the positions named, ascending and each once, and
    // every decision names its row by its place among them.
    #[test]
    fn each_decision_names_its_row_among_the_rows_read() {
        let hits = vec![
            (40, 0, Action::Update),
            (7, 1, Action::Delete),
            (40, 2, Action::Update),
            (12, 3, Action::Update),
        ];
        let (at, local) = in_order(hits.clone());
        assert_eq!(at, [7, 12, 40]);
        for (h, l) in hits.iter().zip(&local) {
            assert_eq!(at[l.0 as usize], h.0);
            assert_eq!((l.1, l.2), (h.1, h.2));
        }
    }
}
