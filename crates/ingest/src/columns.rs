//! The Arrow sink: the records a reader gives, written field by field into
//! one builder per column, cut into record batches of at most
//! [`BATCH_ROWS`] rows.

use crate::{changes_schema, CHANGE_BATCH_ROWS as BATCH_ROWS};
use arrow_array::builder::{
    BooleanBuilder, Date32Builder, Decimal128Builder, Float64Builder, Int32Builder, Int64Builder,
    StringBuilder, TimestampMicrosecondBuilder,
};
use arrow_array::{ArrayRef, BooleanArray, RecordBatch};
use arrow_schema::{DataType, SchemaRef};
use deltaload_core::{ColumnType, Dataset, Scalar, Sink};
use std::sync::Arc;

/// One column's builder, of its column's Arrow type.
enum Builder {
    Text(StringBuilder),
    Bool(BooleanBuilder),
    Int(Int32Builder),
    Bigint(Int64Builder),
    Double(Float64Builder),
    Decimal(Decimal128Builder, DataType),
    Date(Date32Builder),
    Timestamp(TimestampMicrosecondBuilder),
}

impl Builder {
    fn new(ty: ColumnType) -> Self {
        match ty {
            ColumnType::String => Self::Text(StringBuilder::new()),
            ColumnType::Boolean => Self::Bool(BooleanBuilder::new()),
            ColumnType::Int => Self::Int(Int32Builder::new()),
            ColumnType::Bigint => Self::Bigint(Int64Builder::new()),
            ColumnType::Double => Self::Double(Float64Builder::new()),
            ColumnType::Decimal { .. } => {
                Self::Decimal(Decimal128Builder::new(), crate::arrow_type(ty))
            }
            ColumnType::Date => Self::Date(Date32Builder::new()),
            ColumnType::Timestamp => Self::Timestamp(TimestampMicrosecondBuilder::new()),
        }
    }

    /// Appends `value`; `Err` when it is not of the column's type (the
    /// reader's mistake: a null is appended in its place).
    fn append(&mut self, value: Scalar<'_>) -> Result<(), String> {
        match (self, value) {
            (b, Scalar::Null) => b.append_null(),
            (Self::Text(b), Scalar::Text(s)) => b.append_value(&s),
            (Self::Bool(b), Scalar::Bool(v)) => b.append_value(v),
            (Self::Int(b), Scalar::Int(v)) => match i32::try_from(v) {
                Ok(v) => b.append_value(v),
                Err(_) => {
                    b.append_null();
                    return Err(format!("{v} does not fit a 32-bit int column"));
                }
            },
            (Self::Bigint(b), Scalar::Int(v)) => b.append_value(v),
            (Self::Double(b), Scalar::Double(v)) => b.append_value(v),
            (Self::Decimal(b, _), Scalar::Decimal(v)) => b.append_value(v),
            (Self::Date(b), Scalar::Date(v)) => b.append_value(v),
            (Self::Timestamp(b), Scalar::Timestamp(v)) => b.append_value(v),
            (b, other) => {
                b.append_null();
                return Err(format!("a {other:?} given to a column of another type"));
            }
        }
        Ok(())
    }

    fn append_null(&mut self) {
        match self {
            Self::Text(b) => b.append_null(),
            Self::Bool(b) => b.append_null(),
            Self::Int(b) => b.append_null(),
            Self::Bigint(b) => b.append_null(),
            Self::Double(b) => b.append_null(),
            Self::Decimal(b, _) => b.append_null(),
            Self::Date(b) => b.append_null(),
            Self::Timestamp(b) => b.append_null(),
        }
    }

    fn finish(&mut self) -> ArrayRef {
        match self {
            Self::Text(b) => Arc::new(b.finish()),
            Self::Bool(b) => Arc::new(b.finish()),
            Self::Int(b) => Arc::new(b.finish()),
            Self::Bigint(b) => Arc::new(b.finish()),
            Self::Double(b) => Arc::new(b.finish()),
            Self::Decimal(b, ty) => Arc::new(b.finish().with_data_type(ty.clone())),
            Self::Date(b) => Arc::new(b.finish()),
            Self::Timestamp(b) => Arc::new(b.finish().with_timezone("UTC")),
        }
    }
}

/// A dataset's records as Arrow arrays: the declared columns, then the
/// delete flag ([`crate::DELETE_FLAG`]), in batches of the changes' schema.
pub struct Columns {
    schema: SchemaRef,
    builders: Vec<Builder>,
    deletes: BooleanBuilder,
    /// The next column of the record being read.
    at: usize,
    /// Rows in the builders, dropped records included.
    rows: usize,
    /// Rows of the builders whose record was dropped.
    dead: Vec<u32>,
    done: Vec<RecordBatch>,
    live: usize,
    /// What went wrong that the reader should never have let happen.
    broken: Option<String>,
    /// Batches taken whole (no value converted) rather than built.
    whole: usize,
    /// The line each record starts on, in record order, kept while the
    /// dataset has rules (a record breaking one is rejected by its line).
    lines: Option<Vec<u64>>,
}

impl Columns {
    /// The record batches, in record order; `Err` when the reader gave a
    /// value of the wrong type (a defect, never the data's fault).
    pub fn finish(self) -> Result<Vec<RecordBatch>, String> {
        self.finish_counted().map(|(batches, _)| batches)
    }

    /// [`Columns::finish`], with how many batches came in whole.
    pub fn finish_counted(mut self) -> Result<(Vec<RecordBatch>, usize), String> {
        self.flush()?;
        match self.broken {
            Some(problem) => Err(problem),
            None => Ok((self.done, self.whole)),
        }
    }

    /// The line each record starts on, in record order, when the dataset
    /// has rules; `None` for the others.
    pub fn take_lines(&mut self) -> Option<Vec<u64>> {
        self.lines.take()
    }

    /// Moves the builders' rows, less the dropped ones, into a batch.
    fn flush(&mut self) -> Result<(), String> {
        if self.rows == 0 {
            return Ok(());
        }
        let mut columns: Vec<ArrayRef> = self.builders.iter_mut().map(Builder::finish).collect();
        columns.push(Arc::new(self.deletes.finish()));
        let mut batch =
            RecordBatch::try_new(self.schema.clone(), columns).map_err(|e| e.to_string())?;
        if !self.dead.is_empty() {
            let mut keep = vec![true; self.rows];
            for &d in &self.dead {
                keep[d as usize] = false;
            }
            batch = arrow_select::filter::filter_record_batch(&batch, &BooleanArray::from(keep))
                .map_err(|e| e.to_string())?;
        }
        self.done.push(batch);
        self.rows = 0;
        self.dead.clear();
        Ok(())
    }

    fn flush_or_break(&mut self) {
        if let Err(e) = self.flush() {
            self.broken.get_or_insert(e);
        }
    }
}

impl Sink for Columns {
    fn empty(dataset: &Dataset) -> Self {
        Self {
            schema: changes_schema(dataset),
            builders: dataset.columns.iter().map(|c| Builder::new(c.ty)).collect(),
            deletes: BooleanBuilder::new(),
            at: 0,
            rows: 0,
            dead: Vec::new(),
            done: Vec::new(),
            live: 0,
            broken: None,
            whole: 0,
            lines: (!dataset.rules.is_empty()).then(Vec::new),
        }
    }

    fn field(&mut self, value: Scalar<'_>) {
        let Some(builder) = self.builders.get_mut(self.at) else {
            self.broken
                .get_or_insert_with(|| "a record with more fields than columns".into());
            return;
        };
        if let Err(problem) = builder.append(value) {
            self.broken.get_or_insert(problem);
        }
        self.at += 1;
    }

    fn end(&mut self, delete: Option<bool>, line: u64) {
        if let Some(lines) = &mut self.lines {
            lines.push(line);
        }
        for b in self.builders.iter_mut().skip(self.at) {
            b.append_null();
            self.broken
                .get_or_insert_with(|| "a record ended before its last column".into());
        }
        self.deletes.append_value(delete.unwrap_or(false));
        self.rows += 1;
        self.live += 1;
        self.at = 0;
        if self.rows >= BATCH_ROWS {
            self.flush_or_break();
        }
    }

    fn drop_record(&mut self) {
        for b in self.builders.iter_mut().skip(self.at) {
            b.append_null();
        }
        self.deletes.append_value(false);
        self.dead.push(self.rows as u32);
        self.rows += 1;
        self.at = 0;
    }

    fn len(&self) -> usize {
        self.live
    }

    fn append(&mut self, later: Self) {
        self.flush_or_break();
        let mut later = later;
        later.flush_or_break();
        self.done.append(&mut later.done);
        self.live += later.live;
        self.whole += later.whole;
        if let (Some(lines), Some(mut more)) = (&mut self.lines, later.lines) {
            lines.append(&mut more);
        }
        if let Some(problem) = later.broken {
            self.broken.get_or_insert(problem);
        }
    }
}

/// Parquet batches whose columns already hold the dataset's types come in
/// whole, unless each record's line is kept.
impl crate::parquet::ParquetSink for Columns {
    fn batch_schema(&self) -> Option<SchemaRef> {
        // A record kept by its line (the dataset has rules) comes in a row
        // at a time, with its row number.
        match self.lines {
            Some(_) => None,
            None => Some(self.schema.clone()),
        }
    }

    fn push_batch(&mut self, batch: RecordBatch) {
        self.flush_or_break();
        self.live += batch.num_rows();
        self.whole += 1;
        if batch.num_rows() > 0 {
            self.done.push(batch);
        }
    }
}
