//! The conversion table: what the schema check accepts is exactly what the
//! conversion reads, and the table is the issue's.

use super::convert::{cells, Skip};
use super::schema::lossless;
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

/// Date64 and seconds reach the reader only through an embedded Arrow
/// schema, which it does not read; their conversions are checked here.
#[test]
fn date64_and_second_conversions() {
    use arrow_array::{Date64Array, TimestampSecondArray};
    use deltaload_core::Value;
    let date = column(ColumnType::Date);
    let days = Date64Array::from(vec![Some(86_400_000), Some(1), None]);
    let read = cells(&date, &days, Skip(None)).unwrap();
    assert_eq!(read[0], Ok(Value::Date(1)));
    assert_eq!(
        read[1],
        Err("\"1970-01-01T00:00:00.001Z\" is not a whole day".into())
    );
    assert_eq!(read[2], Ok(Value::Null));
    let ts = column(ColumnType::Timestamp);
    let secs = TimestampSecondArray::from(vec![1, i64::MAX]);
    let read = cells(&ts, &secs, Skip(None)).unwrap();
    assert_eq!(read[0], Ok(Value::Timestamp(1_000_000)));
    assert!(
        read[1]
            .as_ref()
            .is_err_and(|e| e.ends_with("is out of range")),
        "{read:?}"
    );
    let read = cells(&ts, &days, Skip(Some(&[false, true, false]))).unwrap();
    assert_eq!(
        read,
        [
            Ok(Value::Timestamp(86_400_000_000)),
            Ok(Value::Null),
            Ok(Value::Null)
        ]
    );
}

#[test]
fn dictionaries_convert_each_value_once() {
    use arrow_array::builder::StringDictionaryBuilder;
    use arrow_array::types::Int8Type;
    use deltaload_core::Value;
    let mut b = StringDictionaryBuilder::<Int8Type>::new();
    for v in [Some("1.5"), None, Some("x"), Some("1.5")] {
        b.append_option(v);
    }
    let dict = b.finish();
    let read = cells(&column(ColumnType::Double), &dict, Skip(None)).unwrap();
    assert_eq!(read[0], Ok(Value::Double(1.5)));
    assert_eq!(read[1], Ok(Value::Null));
    assert!(read[2].is_err());
    assert_eq!(read[3], Ok(Value::Double(1.5)));
    let empty = arrow_array::DictionaryArray::<Int8Type>::try_new(
        arrow_array::Int8Array::from(vec![None, None]),
        Arc::new(arrow_array::StringArray::from(Vec::<&str>::new())),
    )
    .unwrap();
    let read = cells(&column(ColumnType::String), &empty, Skip(None)).unwrap();
    assert_eq!(
        read,
        [Ok(Value::Null), Ok(Value::Null)],
        "no values, all null"
    );
    let flags = super::convert::delete_flags(
        &deltaload_core::spec::DeleteWhen {
            column: "op".into(),
            values: vec!["x".into()],
            upserts: Vec::new(),
        },
        &dict,
    )
    .unwrap();
    assert_eq!(flags, [false, false, true, false]);
}
