//! One record of a change file parsed into a dataset's typed row, or refused
//! with a reason naming the column.

use crate::fields::{parse_boolean, parse_decimal, parse_double, parse_integer, shown};
use crate::sink::{Scalar, Sink};
use crate::spec::{Column, ColumnType, Dataset};
use crate::time::{parse_day, parse_instant};
use crate::value::{Row, Rows, Value};
use std::borrow::Cow;
use std::fmt;

/// Why a record was rejected.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum RejectReason {
    /// The record has another number of fields than the header.
    FieldCount {
        /// Fields in the record.
        found: usize,
        /// Fields the header has.
        expected: usize,
    },
    /// A field is not valid UTF-8.
    NotUtf8,
    /// An AWS DMS record with neither the declared columns' count of fields
    /// nor one more (its `Op` first).
    DmsFieldCount {
        /// Fields in the record.
        found: usize,
        /// Columns declared.
        columns: usize,
    },
    /// A field that does not parse as its column's type.
    Column {
        /// The column.
        name: String,
        /// What is wrong with it.
        detail: String,
    },
    /// Null (empty, or a `null_if` text) in a column that may not be null.
    Null {
        /// The column.
        name: String,
        /// The field's text (cut when long).
        text: String,
    },
    /// A JSON Lines line that is JSON, but not an object.
    NotJsonObject {
        /// The JSON parser's message.
        detail: String,
    },
    /// A JSON Lines line that is not JSON.
    NotJson {
        /// The JSON parser's message.
        detail: String,
        /// Where in the line, when the parser says.
        column: Option<usize>,
    },
    /// A JSON Lines field written twice in one line.
    FieldTwice {
        /// The field.
        name: String,
    },
    /// A line of a Debezium dataset that is not one of Debezium's events.
    NotDebezium {
        /// What the line is instead, and what was expected.
        detail: String,
    },
    /// The rest of a CSV file, which the CSV reader could not read.
    UnreadableCsv {
        /// The CSV reader's message.
        detail: String,
    },
    /// A record that parsed, but breaks rules of the table it goes to (a
    /// CHECK constraint, an invariant).
    Broken {
        /// Each rule broken, with its expression ([`crate::spec::Rule::breach`]).
        rules: Vec<String>,
    },
}

/// A reason reads as the text the rejected table holds.
impl PartialEq<str> for RejectReason {
    fn eq(&self, text: &str) -> bool {
        self.to_string().as_str() == text
    }
}

impl PartialEq<&str> for RejectReason {
    fn eq(&self, text: &&str) -> bool {
        self == *text
    }
}

impl PartialEq<String> for RejectReason {
    fn eq(&self, text: &String) -> bool {
        self == text.as_str()
    }
}

impl fmt::Display for RejectReason {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::FieldCount { found, expected } => {
                write!(f, "has {found} fields, expected {expected}")
            }
            Self::DmsFieldCount { found, columns } => write!(
                f,
                "has {found} fields, expected {columns} (a full-load row) or {} (AWS DMS's Op first)",
                columns + 1
            ),
            Self::NotUtf8 => write!(f, "is not valid UTF-8"),
            Self::Column { name, detail } => write!(f, "{name} {detail}"),
            Self::Null { name, text } if text.is_empty() => write!(f, "{name} is empty"),
            Self::Null { name, text } => {
                write!(f, "{name} is null ({} is in null_if)", shown(text))
            }
            Self::NotJsonObject { detail } => write!(f, "is not a JSON object: {detail}"),
            Self::NotJson {
                detail,
                column: Some(column),
            } => write!(f, "is not valid JSON: {detail} at column {column}"),
            Self::NotJson {
                detail,
                column: None,
            } => write!(f, "is not valid JSON: {detail}"),
            Self::FieldTwice { name } => write!(f, "field {} appears twice", shown(name)),
            Self::UnreadableCsv { detail } => write!(f, "unreadable CSV: {detail}"),
            Self::NotDebezium { detail } => write!(f, "is not a Debezium change event: {detail}"),
            Self::Broken { rules } => write!(f, "{}", rules.join("; ")),
        }
    }
}

impl Column {
    /// Parses a field's text (not a null text) as this column's type.
    pub fn parse(&self, text: &str) -> Result<Value, String> {
        self.parse_text(Cow::Borrowed(text)).map(Scalar::into_value)
    }

    /// [`Column::parse`], the text of a string column kept as given (borrowed
    /// from the record, or owned when it had to be unescaped).
    pub fn parse_text<'a>(&self, text: Cow<'a, str>) -> Result<Scalar<'a>, String> {
        Ok(match self.ty {
            ColumnType::String => Scalar::Text(text),
            ColumnType::Boolean => Scalar::Bool(parse_boolean(&text)?),
            ColumnType::Int => Scalar::Int(parse_integer(&text, 32)?),
            ColumnType::Bigint => Scalar::Int(parse_integer(&text, 64)?),
            ColumnType::Double => Scalar::Double(parse_double(&text)?),
            ColumnType::Decimal { precision, scale } => {
                Scalar::Decimal(parse_decimal(&text, precision, scale)?)
            }
            ColumnType::Date => Scalar::Date(parse_day(&text, self.format.as_deref())?),
            ColumnType::Timestamp => {
                Scalar::Timestamp(parse_instant(&text, self.format.as_deref(), self.timezone)?)
            }
        })
    }
}

/// Parses a record's fields into a row: column `i` reads `fields[positions[i]]`.
/// The first column that fails, in declared order, names the reason.
pub fn parse_record(
    dataset: &Dataset,
    fields: &[&str],
    positions: &[usize],
) -> Result<Row, RejectReason> {
    let mut rows = Rows::new(dataset.width());
    parse_into(dataset, fields, positions, 0, &mut rows)?;
    Ok(rows.row(0).to_vec())
}

/// [`parse_record`] giving the record's fields to `out`, then ending it; on
/// error some fields may have been given (the caller drops the record).
pub fn parse_into<S: Sink>(
    dataset: &Dataset,
    fields: &[&str],
    positions: &[usize],
    line: u64,
    out: &mut S,
) -> Result<(), RejectReason> {
    if fields.len() != positions.len() {
        return Err(RejectReason::FieldCount {
            found: fields.len(),
            expected: positions.len(),
        });
    }
    let declared = dataset.declared();
    // A delete needs its key and sequence alone: the other fields are not
    // read. A file without the delete column (AWS DMS's full load) upserts.
    let delete = match (&dataset.delete_when, positions.get(declared.len())) {
        (Some(d), Some(&at)) => {
            Some(
                d.classify(fields[at])
                    .map_err(|detail| RejectReason::Column {
                        name: d.column.clone(),
                        detail,
                    })?,
            )
        }
        (Some(_), None) => Some(false),
        (None, _) => None,
    };
    for (i, (column, &at)) in declared.iter().zip(positions).enumerate() {
        if delete == Some(true) && !dataset.is_key_or_sequence(i) {
            out.field(Scalar::Null);
            continue;
        }
        let text = fields[at];
        if dataset.csv.null_if.iter().any(|n| n == text) {
            if !column.nullable {
                return Err(RejectReason::Null {
                    name: column.name.clone(),
                    text: text.to_string(),
                });
            }
            out.field(Scalar::Null);
            continue;
        }
        out.field(column.parse_text(Cow::Borrowed(text)).map_err(|detail| {
            RejectReason::Column {
                name: column.name.clone(),
                detail,
            }
        })?);
    }
    crate::spec::fill_generated(dataset.generated_columns(), line, out);
    out.end(delete, line);
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    const IN_ORDER: [usize; 7] = [0, 1, 2, 3, 4, 5, 6];

    #[test]
    fn orders_fields() {
        let orders = Dataset::orders();
        let parse = |f: &[&str]| parse_record(&orders, f, &IN_ORDER[..f.len().min(7)]);
        let ok = parse(&[
            "1001",
            "C01",
            "placed",
            "25.50",
            "EUR",
            "2026-10-01T09:15:00",
            "2026-10-01T09:15:00",
        ])
        .unwrap();
        assert_eq!(ok[0], Value::Int(1001));
        assert_eq!(ok[3], Value::Decimal(2550.into()));
        let empty = parse(&["1", "", "", "", "", "", "2026-10-01T09:15:00"]).unwrap();
        assert_eq!(
            &empty[1..6],
            &[
                Value::Null,
                Value::Null,
                Value::Null,
                Value::Null,
                Value::Null
            ]
        );
        let short = parse_record(&orders, &["1", "", "", "", "", ""], &IN_ORDER);
        assert_eq!(short.unwrap_err().to_string(), "has 6 fields, expected 7");
        let reason = |f: &[&str]| parse(f).unwrap_err().to_string();
        assert_eq!(
            reason(&["1", "", "", "", "", "", ""]),
            "updated_at is empty"
        );
        assert_eq!(
            reason(&["", "", "", "", "", "", "2026-10-01T09:15:00"]),
            "order_id is empty"
        );
        assert!(reason(&["1", "", "", "abc", "", "", "2026-10-01T09:15:00"])
            .starts_with("amount \"abc\" is not plain decimal notation"));
        assert!(reason(&[
            "1",
            "",
            "",
            "",
            "",
            "2026-02-30T00:00:00",
            "2026-10-01T09:15:00"
        ])
        .starts_with("ordered_at "));
    }
}
