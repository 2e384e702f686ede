//! A typed field value, and a record of a dataset as one value per column.

use std::cmp::Ordering;
use std::hash::{Hash, Hasher};

/// A 128-bit count held as two 64-bit halves: an `i128` would align the
/// whole [`Value`] to 16 bytes and make it 32 bytes long instead of 24, and a
/// load holds a value per field of every record. Ordered as the number.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Units {
    hi: i64,
    lo: u64,
}

impl Units {
    /// The decimal of `value` units of the column's scale.
    pub fn new(value: i128) -> Self {
        Self {
            hi: (value >> 64) as i64,
            lo: value as u64,
        }
    }

    /// The units.
    pub fn get(self) -> i128 {
        (i128::from(self.hi) << 64) | i128::from(self.lo)
    }
}

impl From<i128> for Units {
    fn from(value: i128) -> Self {
        Self::new(value)
    }
}

/// One field, typed as its column declares.
#[derive(Debug, Clone)]
pub enum Value {
    /// No value.
    Null,
    /// A boolean.
    Bool(bool),
    /// `int` and `bigint`.
    Int(i64),
    /// Always finite.
    Double(f64),
    /// A `decimal(P,S)` as a count of 10^-S.
    Decimal(Units),
    /// Days since 1970-01-01.
    Date(i32),
    /// Microseconds since the Unix epoch, UTC.
    Timestamp(i64),
    /// Text.
    Text(String),
}

impl Value {
    /// Whether this is [`Value::Null`].
    pub fn is_null(&self) -> bool {
        matches!(self, Value::Null)
    }

    fn rank(&self) -> u8 {
        match self {
            Value::Null => 0,
            Value::Bool(_) => 1,
            Value::Int(_) => 2,
            Value::Double(_) => 3,
            Value::Decimal(_) => 4,
            Value::Date(_) => 5,
            Value::Timestamp(_) => 6,
            Value::Text(_) => 7,
        }
    }

    /// The value as text, for messages and the rejected table's key column.
    pub fn as_text(&self) -> Option<String> {
        Some(match self {
            Value::Null => return None,
            Value::Bool(b) => b.to_string(),
            Value::Int(i) => i.to_string(),
            Value::Double(d) => d.to_string(),
            Value::Decimal(d) => d.get().to_string(),
            Value::Date(d) => d.to_string(),
            Value::Timestamp(t) => t.to_string(),
            Value::Text(s) => s.clone(),
        })
    }
}

/// Null lowest; text by its UTF-8 bytes; doubles by IEEE total order. Values of
/// one column always share a variant, so the order across variants is arbitrary.
impl Ord for Value {
    fn cmp(&self, other: &Self) -> Ordering {
        use Value::*;
        match (self, other) {
            (Bool(a), Bool(b)) => a.cmp(b),
            (Int(a), Int(b)) => a.cmp(b),
            (Double(a), Double(b)) => a.total_cmp(b),
            (Decimal(a), Decimal(b)) => a.cmp(b),
            (Date(a), Date(b)) => a.cmp(b),
            (Timestamp(a), Timestamp(b)) => a.cmp(b),
            (Text(a), Text(b)) => a.as_bytes().cmp(b.as_bytes()),
            (a, b) => a.rank().cmp(&b.rank()),
        }
    }
}

impl PartialOrd for Value {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}

impl PartialEq for Value {
    fn eq(&self, other: &Self) -> bool {
        self.cmp(other) == Ordering::Equal
    }
}

impl Eq for Value {}

impl Hash for Value {
    fn hash<H: Hasher>(&self, state: &mut H) {
        self.rank().hash(state);
        match self {
            Value::Null => {}
            Value::Bool(b) => b.hash(state),
            Value::Int(i) | Value::Timestamp(i) => i.hash(state),
            Value::Double(d) => d.to_bits().hash(state),
            Value::Decimal(d) => d.hash(state),
            Value::Date(d) => d.hash(state),
            Value::Text(s) => s.hash(state),
        }
    }
}

/// One record: a value per column of its dataset, in declared order.
pub type Row = Vec<Value>;

/// Many records of one dataset, their values side by side in one vector: no
/// allocation per record, and the records of a file lie together in memory.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Rows {
    width: usize,
    values: Vec<Value>,
}

impl Rows {
    /// Moves `other`'s records (of the same width) after these.
    pub fn append(&mut self, mut other: Rows) {
        self.values.append(&mut other.values);
    }

    /// No records yet, of `width` values each.
    pub fn new(width: usize) -> Self {
        Self {
            width,
            values: Vec::new(),
        }
    }

    /// How many rows.
    pub fn len(&self) -> usize {
        self.values.len().checked_div(self.width).unwrap_or(0)
    }

    /// Whether there are no rows.
    pub fn is_empty(&self) -> bool {
        self.values.is_empty()
    }

    /// Record `i`.
    pub fn row(&self, i: usize) -> &[Value] {
        &self.values[i * self.width..(i + 1) * self.width]
    }

    /// Every record, in order.
    pub fn iter(&self) -> impl Iterator<Item = &[Value]> {
        self.values.chunks_exact(self.width.max(1))
    }

    /// Drops the values of a record not complete (fewer than `width` after
    /// the last complete one).
    pub fn truncate_to_complete(&mut self) {
        let complete = self.len() * self.width;
        self.values.truncate(complete);
    }

    /// Where the next record's values go: push exactly `width` of them, or
    /// truncate back to the length this returns.
    pub fn values_mut(&mut self) -> &mut Vec<Value> {
        &mut self.values
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn null_is_lowest_and_text_goes_by_bytes() {
        assert!(Value::Null < Value::Text(String::new()));
        assert!(Value::Null < Value::Int(i64::MIN));
        assert!(Value::Text("Z".into()) < Value::Text("a".into()));
        assert!(Value::Double(-0.0) < Value::Double(0.0));
        assert_eq!(Value::Int(3), Value::Int(3));
        assert_eq!(Value::Null.as_text(), None);
        assert_eq!(
            std::mem::size_of::<Value>(),
            24,
            "a value per field of every record"
        );
        for (a, b) in [
            (-1i128, 0i128),
            (i128::MIN, -1),
            (1, i128::MAX),
            (-(1 << 64), -(1 << 63)),
        ] {
            assert!(
                Value::Decimal(a.into()) < Value::Decimal(b.into()),
                "{a} < {b}"
            );
            assert_eq!(Units::new(a).get(), a);
        }
    }
}
