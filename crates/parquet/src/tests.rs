//! The conversion table: what the schema check accepts is exactly what the
//! conversion reads, and the table is the issue's.

use crate::convert::{cells, Skip};
use crate::schema::lossless;
use arrow_array::new_null_array;
use arrow_schema::{DataType, TimeUnit};
use deltaload_core::{Column, ColumnType};
use std::sync::Arc;

fn file_types() -> Vec<DataType> {
    use DataType as D;
    let utf8 = || Box::new(D::Utf8);
    vec![
        D::Utf8,
        D::LargeUtf8,
        D::Utf8View,
        D::Dictionary(Box::new(D::Int32), utf8()),
        D::Dictionary(Box::new(D::UInt8), Box::new(D::LargeUtf8)),
        D::Boolean,
        D::Int8,
        D::Int16,
        D::Int32,
        D::Int64,
        D::UInt8,
        D::UInt16,
        D::UInt32,
        D::UInt64,
        D::Float16,
        D::Float32,
        D::Float64,
        D::Decimal128(8, 2),
        D::Decimal128(12, 3),
        D::Decimal256(10, 0),
        D::Decimal64(3, 1),
        D::Date32,
        D::Date64,
        D::Timestamp(TimeUnit::Nanosecond, None),
        D::Timestamp(TimeUnit::Second, Some(Arc::from("+02:00"))),
        D::Binary,
        D::Null,
        D::Time64(TimeUnit::Microsecond),
        D::Dictionary(Box::new(D::Int32), Box::new(D::Int64)),
    ]
}

fn column(ty: ColumnType) -> Column {
    Column {
        name: "c".into(),
        ty,
        nullable: true,
        format: None,
        timezone: None,
    }
}

const COLUMN_TYPES: [ColumnType; 9] = [
    ColumnType::String,
    ColumnType::Boolean,
    ColumnType::Int,
    ColumnType::Bigint,
    ColumnType::Double,
    ColumnType::Decimal {
        precision: 10,
        scale: 2,
    },
    ColumnType::Decimal {
        precision: 38,
        scale: 0,
    },
    ColumnType::Date,
    ColumnType::Timestamp,
];

#[test]
fn the_schema_check_and_the_conversion_agree() {
    for ty in COLUMN_TYPES {
        for dt in file_types() {
            let array = new_null_array(&dt, 3);
            let read = cells(&column(ty), array.as_ref(), Skip(None));
            assert_eq!(read.is_ok(), lossless(ty, &dt), "{ty} <- {dt}: {read:?}");
        }
    }
}

#[test]
fn the_table_is_the_issues() {
    let text = "Utf8, LargeUtf8, Utf8View, Dictionary(Int32, Utf8), Dictionary(UInt8, LargeUtf8)";
    let expected = [
        "",
        "Boolean",
        "Int8, Int16, Int32, UInt8, UInt16",
        "Int8, Int16, Int32, Int64, UInt8, UInt16, UInt32",
        "Int8, Int16, Int32, UInt8, UInt16, UInt32, Float16, Float32, Float64",
        "Int8, Int16, UInt8, UInt16, Decimal128(8, 2), Decimal64(3, 1)",
        "Int8, Int16, Int32, Int64, UInt8, UInt16, UInt32, UInt64, Decimal256(10, 0)",
        "Date32, Date64",
        "Date32, Date64, Timestamp(ns), Timestamp(s, \"+02:00\")",
    ];
    for (ty, expected) in COLUMN_TYPES.iter().zip(expected) {
        let accepted: Vec<String> = file_types()
            .iter()
            .filter(|dt| lossless(*ty, dt))
            .map(|dt| dt.to_string())
            .collect();
        let expected = if expected.is_empty() {
            text.to_string()
        } else {
            format!("{text}, {expected}")
        };
        assert_eq!(accepted.join(", "), expected, "{ty}");
    }
}
