//! Reading a data file of a table: chosen columns, by name, in the table's types.

use crate::error::LakeError;
use deltalake::arrow::array::{new_null_array, ArrayRef, UInt32Array};
use deltalake::arrow::compute::{cast, concat_batches};
use deltalake::arrow::datatypes::{Schema, SchemaRef};
use deltalake::arrow::record_batch::RecordBatch;
use deltalake::kernel::DeletionVectorDescriptor;
use deltalake::parquet::arrow::arrow_reader::ParquetRecordBatchReaderBuilder;
use deltalake::parquet::arrow::ProjectionMask;
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
    let failed = |detail: String| {
        LakeError::Invariant {
        table: table.to_string(),
        detail: format!("reading data file {path}: {detail}; check that the table's files are intact (deltaload audit)"),
    }
    };
    // One GET of the whole file (at most the target file size): fewer round
    // trips on S3 than reading the column chunks one by one.
    let bytes = store
        .get(path)
        .await
        .map_err(|e| failed(e.to_string()))?
        .bytes()
        .await
        .map_err(|e| failed(e.to_string()))?;
    let builder =
        ParquetRecordBatchReaderBuilder::try_new(bytes).map_err(|e| failed(e.to_string()))?;
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
    let reader = builder
        .with_projection(mask)
        .with_batch_size(batch_rows)
        .build()
        .map_err(|e| failed(e.to_string()))?;
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
    let Some(dv) = dv else {
        return Ok(FileRows {
            batch,
            rows: rows as u64,
            live: None,
        });
    };
    let deleted = super::dv::read(&store, &dv).await.map_err(failed)?;
    let live: Vec<u32> = (0..rows as u32)
        .filter(|&r| !deleted.contains(u64::from(r)))
        .collect();
    let batch =
        deltalake::arrow::compute::take_record_batch(&batch, &UInt32Array::from(live.clone()))
            .map_err(LakeError::arrow(table))?;
    Ok(FileRows {
        batch,
        rows: rows as u64,
        live: Some(live),
    })
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
    use futures::StreamExt;
    let jobs: Vec<(Path, Option<DeletionVectorDescriptor>)> = files
        .map(|f| (f.path.clone(), f.add.deletion_vector.clone()))
        .collect();
    let (schema, wanted, table) = (schema.clone(), wanted.to_vec(), table.to_string());
    futures::stream::iter(jobs)
        .map(move |(path, dv)| {
            let (store, schema) = (store.clone(), schema.clone());
            let (wanted, table) = (wanted.clone(), table.clone());
            tokio::spawn(
                async move { read_columns(store, &path, dv, &schema, &wanted, &table).await },
            )
        })
        .buffered(READ_AHEAD)
        .map(|joined| match joined {
            Ok(read) => read,
            Err(e) => Err(LakeError::Invariant {
                table: "data file".into(),
                detail: format!("a read of a data file failed: {e}"),
            }),
        })
}
