//! A round's changes as the upsert takes them: a batch of the dataset's
//! columns and the delete flag (`deltaload_ingest::changes_schema`), one
//! change per key, and the file each comes from.

use crate::tables::TableName;
use arrow_array::builder::StringBuilder;
use arrow_array::RecordBatch;
use arrow_array::{Array, ArrayRef, StringArray, TimestampMicrosecondArray};
use arrow_schema::{DataType, Field, Schema};
use deltaload_core::{Dataset, Row};
use deltaload_ingest::DataError;
use deltaload_ingest::DELETE_FLAG;
use std::sync::Arc;

/// The file each change comes from.
pub enum Files<'a> {
    /// All of them from this one.
    One(&'a str),
    /// Change `i` from file `i` of these.
    PerRow(Vec<&'a str>),
}

/// `values` as a text array allocated once at its size (a column of a
/// million file names grown by doubling held 64 MiB and, while growing,
/// the 32 MiB before).
fn texts<'v>(values: impl Iterator<Item = &'v str> + Clone) -> StringArray {
    let (rows, bytes) = values
        .clone()
        .fold((0, 0), |(n, b), v| (n + 1, b + v.len()));
    let mut builder = StringBuilder::with_capacity(rows, bytes);
    values.for_each(|v| builder.append_value(v));
    builder.finish()
}

/// Changes of a dataset, one per key, with their files.
pub struct Changes<'a> {
    /// Of `deltaload_ingest::changes_schema`.
    pub batch: RecordBatch,
    /// The file each change comes from.
    pub files: Files<'a>,
}

impl<'a> Changes<'a> {
    /// The changes of one file.
    pub fn of_file(batch: RecordBatch, location: &'a str) -> Self {
        Self {
            batch,
            files: Files::One(location),
        }
    }

    /// Rows of values (each ending in its delete flag when the dataset has
    /// `delete_when`), each with its file.
    pub fn of_rows(
        dataset: &Dataset,
        rows: &[(&[deltaload_core::Value], &'a str)],
    ) -> Result<Self, DataError> {
        let mut values = deltaload_core::Rows::new(dataset.width());
        for (row, _) in rows {
            values.values_mut().extend(row.iter().cloned());
        }
        let batches = deltaload_ingest::from_rows(dataset, &values)
            .finish()
            .map_err(|detail| DataError::Invariant {
                table: dataset.name.clone(),
                detail,
            })?;
        let schema = deltaload_ingest::changes_schema(dataset);
        let batch = arrow_select::concat::concat_batches(&schema, &batches)
            .map_err(DataError::arrow(&dataset.name))?;
        let width = dataset.columns.len();
        let whole = |row: &[deltaload_core::Value]| row.get(width).is_some_and(|f| f.is_null());
        let batch = match dataset.delete_when.is_some() && rows.iter().any(|(r, _)| whole(r)) {
            false => batch,
            true => {
                let flags = rows.iter().map(|(r, _)| match whole(r) {
                    true => None,
                    false => Some(dataset.is_delete(r)),
                });
                crate::read::with_flags(batch, width, flags.collect(), &dataset.name)?
            }
        };
        Ok(Self {
            batch,
            files: Files::PerRow(rows.iter().map(|(_, f)| *f).collect()),
        })
    }

    /// How many changes.
    pub fn len(&self) -> usize {
        self.batch.num_rows()
    }

    /// Whether there are none.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Dataset column `c`.
    pub fn column(&self, c: usize) -> &ArrayRef {
        self.batch.column(c)
    }

    /// The changes as rows of the dataset's table, in the spec's column
    /// order (the columns, `source_file`, `loaded_at`), every column
    /// nullable, then [`DELETE_FLAG`].
    pub fn target_batch(
        &self,
        dataset: &Arc<Dataset>,
        loaded_at: i64,
    ) -> Result<RecordBatch, DataError> {
        let n = self.len();
        let width = dataset.columns.len();
        let mut columns: Vec<ArrayRef> = (0..width).map(|c| self.column(c).clone()).collect();
        columns.push(Arc::new(match &self.files {
            Files::One(location) => texts(std::iter::repeat_n(*location, n)),
            Files::PerRow(files) => texts(files.iter().copied()),
        }));
        columns.push(Arc::new(
            TimestampMicrosecondArray::from_iter_values(std::iter::repeat_n(loaded_at, n))
                .with_timezone("UTC"),
        ));
        columns.push(self.batch.column(width).clone());
        let mut fields: Vec<Field> = TableName::Target(dataset.clone())
            .schema()
            .fields()
            .iter()
            .map(|f| f.as_ref().clone().with_nullable(true))
            .collect();
        fields.push(Field::new(DELETE_FLAG, DataType::Boolean, true));
        RecordBatch::try_new(Arc::new(Schema::new(fields)), columns)
            .map_err(DataError::arrow(&dataset.name))
    }

    /// The changes as rows of values, each ending in its delete flag when
    /// the dataset has `delete_when` (for the replay of a batch of files).
    pub fn rows(dataset: &Dataset, batch: &RecordBatch) -> Result<Vec<Row>, DataError> {
        let width = dataset.columns.len();
        let mut columns = Vec::with_capacity(width + 1);
        for (c, column) in dataset.columns.iter().enumerate() {
            columns.push(deltaload_ingest::values::read(
                batch.column(c),
                column.ty,
                &dataset.name,
            )?);
        }
        let flags = batch.column(width);
        let flags = flags
            .as_any()
            .downcast_ref::<arrow_array::BooleanArray>()
            .ok_or_else(|| DataError::Invariant {
                table: dataset.name.clone(),
                detail: "the changes' delete flag is not boolean".into(),
            })?;
        Ok((0..batch.num_rows())
            .map(|i| {
                let mut row: Row = columns.iter().map(|c| c[i].clone()).collect();
                if dataset.delete_when.is_some() {
                    // A null flag: an upsert that sets its row whole.
                    row.push(match flags.is_valid(i) {
                        true => deltaload_core::Value::Bool(flags.value(i)),
                        false => deltaload_core::Value::Null,
                    });
                }
                row
            })
            .collect())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The lineage column is allocated at its size: for a million rows of a
    /// file name, growing it by doubling held up to twice the bytes.
    #[test]
    fn a_text_column_is_allocated_at_its_size() {
        let array = texts(std::iter::repeat_n("/landing/a.csv", 1_000));
        assert_eq!(array.len(), 1_000);
        assert!(array.iter().all(|v| v == Some("/landing/a.csv")));
        // 14,000 value bytes and 1,001 offsets, each buffer rounded up to 64 bytes.
        let exact = 14_000 + 4 * 1_001;
        let held = array.get_buffer_memory_size();
        assert!(held <= exact + 128, "{held} bytes held for {exact}");
    }
}
