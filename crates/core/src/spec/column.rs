//! A dataset's columns: their types and the names every table keeps for
//! itself.

use chrono_tz::Tz;
use std::fmt;

/// The lineage columns every target table carries after the declared ones.
pub const LINEAGE_COLUMNS: [&str; 2] = ["source_file", "loaded_at"];

/// A column's type.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ColumnType {
    /// Text.
    String,
    /// `true` or `false`.
    Boolean,
    /// A 32-bit integer.
    Int,
    /// A 64-bit integer.
    Bigint,
    /// A 64-bit float.
    Double,
    /// An exact decimal of `precision` digits, `scale` of them after the point.
    Decimal {
        /// Digits in all.
        precision: u8,
        /// Digits after the point.
        scale: u8,
    },
    /// A calendar date.
    Date,
    /// An instant, in microseconds (UTC).
    Timestamp,
}

impl fmt::Display for ColumnType {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::String => f.write_str("string"),
            Self::Boolean => f.write_str("boolean"),
            Self::Int => f.write_str("int"),
            Self::Bigint => f.write_str("bigint"),
            Self::Double => f.write_str("double"),
            Self::Decimal { precision, scale } => write!(f, "decimal({precision},{scale})"),
            Self::Date => f.write_str("date"),
            Self::Timestamp => f.write_str("timestamp"),
        }
    }
}

/// One declared column.
#[derive(Debug, Clone, PartialEq)]
pub struct Column {
    /// The header's name and the table's, verbatim.
    pub name: String,
    /// Its type.
    pub ty: ColumnType,
    /// False for keys, sequence columns and `nullable = false`.
    pub nullable: bool,
    /// strftime format of a date or timestamp; ISO-8601 when `None`.
    pub format: Option<String>,
    /// The zone of a timestamp written without one; UTC when `None`.
    pub timezone: Option<Tz>,
}
