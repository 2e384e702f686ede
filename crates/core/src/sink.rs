//! Where a reader puts the records that parse: a field at a time, each
//! record ended or dropped as a whole. The readers ([`crate::reader`],
//! [`crate::jsonl`]) hold every parse rule and reject reason; a sink only
//! stores what they give it, as [`Rows`] of [`Value`]s here or as columnar
//! arrays elsewhere (the ingest crate's Arrow builders), so both hold exactly
//! the same records.

use crate::value::{Rows, Value};
use std::borrow::Cow;

/// One parsed field, its text borrowed from the record where it can be.
#[derive(Debug, Clone, PartialEq)]
pub enum Scalar<'a> {
    /// No value.
    Null,
    /// A boolean.
    Bool(bool),
    /// `int` and `bigint`.
    Int(i64),
    /// Always finite.
    Double(f64),
    /// A `decimal(P,S)` as a count of 10^-S.
    Decimal(i128),
    /// Days since 1970-01-01.
    Date(i32),
    /// Microseconds since the Unix epoch, UTC.
    Timestamp(i64),
    /// Text.
    Text(Cow<'a, str>),
}

impl Scalar<'_> {
    /// The field as an owned [`Value`].
    pub fn into_value(self) -> Value {
        match self {
            Scalar::Null => Value::Null,
            Scalar::Bool(b) => Value::Bool(b),
            Scalar::Int(i) => Value::Int(i),
            Scalar::Double(d) => Value::Double(d),
            Scalar::Decimal(d) => Value::Decimal(d.into()),
            Scalar::Date(d) => Value::Date(d),
            Scalar::Timestamp(t) => Value::Timestamp(t),
            Scalar::Text(s) => Value::Text(s.into_owned()),
        }
    }
}

/// A value as a reader gives it, its text borrowed.
impl<'a> From<&'a Value> for Scalar<'a> {
    fn from(value: &'a Value) -> Self {
        match value {
            Value::Null => Scalar::Null,
            Value::Bool(b) => Scalar::Bool(*b),
            Value::Int(i) => Scalar::Int(*i),
            Value::Double(d) => Scalar::Double(*d),
            Value::Decimal(d) => Scalar::Decimal(d.get()),
            Value::Date(d) => Scalar::Date(*d),
            Value::Timestamp(t) => Scalar::Timestamp(*t),
            Value::Text(s) => Scalar::Text(Cow::Borrowed(s)),
        }
    }
}

/// Takes the records of one file (or one span of it), in file order.
///
/// A reader calls [`Sink::field`] once per declared column, in declared
/// order, then [`Sink::end`] with the delete flag (`None` for a dataset
/// without `delete_when`) and the line the record starts on (a Parquet
/// file's row number), or [`Sink::drop_record`] when a later field turns
/// the record into a reject.
pub trait Sink: Sized {
    /// A sink for records of `dataset`, empty.
    fn empty(dataset: &crate::spec::dataset::Dataset) -> Self;
    /// The next field of the record being read.
    fn field(&mut self, value: Scalar<'_>);
    /// The record being read, which starts on `line`, is complete.
    fn end(&mut self, delete: Option<bool>, line: u64);
    /// The record being read is a reject: forget its fields so far.
    fn drop_record(&mut self);
    /// Records held.
    fn len(&self) -> usize;
    /// Whether no record is held.
    fn is_empty(&self) -> bool {
        self.len() == 0
    }
    /// Moves `later`'s records (of the span after this one) after these.
    fn append(&mut self, later: Self);
}

/// Records as values, as [`crate::read_file`] gives them: each record
/// ends in one `Value::Bool` more when the dataset has `delete_when`.
impl Sink for Rows {
    fn empty(dataset: &crate::spec::dataset::Dataset) -> Self {
        Rows::new(dataset.width())
    }

    fn field(&mut self, value: Scalar<'_>) {
        self.values_mut().push(value.into_value());
    }

    fn end(&mut self, delete: Option<bool>, _line: u64) {
        self.values_mut().extend(delete.map(Value::Bool));
    }

    fn drop_record(&mut self) {
        self.truncate_to_complete();
    }

    fn len(&self) -> usize {
        Rows::len(self)
    }

    fn append(&mut self, later: Self) {
        Rows::append(self, later)
    }
}
