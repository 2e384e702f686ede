use super::*;
use arrow_schema::{Field, Fields, TimeUnit};
use deltaload_core::Spec;

fn schema(fields: &[(&str, DataType)]) -> Schema {
    Schema::new(
        (fields.iter())
            .map(|(n, t)| Field::new(*n, t.clone(), true))
            .collect::<Vec<_>>(),
    )
}

fn column(name: &str, type_name: &str) -> CatalogColumn {
    CatalogColumn {
        name: name.into(),
        type_name: type_name.into(),
    }
}

#[test]
fn every_column_type_of_a_spec_has_its_athena_name() {
    let utc = Some("UTC".into());
    let s = schema(&[
        ("Id", DataType::Int64),
        ("n", DataType::Int32),
        ("name", DataType::Utf8),
        ("ok", DataType::Boolean),
        ("x", DataType::Float64),
        ("amount", DataType::Decimal128(12, 2)),
        ("day", DataType::Date32),
        ("at", DataType::Timestamp(TimeUnit::Microsecond, utc)),
        ("local", DataType::Timestamp(TimeUnit::Microsecond, None)),
    ]);
    let t = catalog_table("Orders", "s3://b/lake/Orders/", &s, &[]).unwrap();
    let names: Vec<_> = t.columns.iter().map(|c| c.type_name.as_str()).collect();
    assert_eq!(
        names,
        [
            "bigint",
            "int",
            "string",
            "boolean",
            "double",
            "decimal(12,2)",
            "date",
            "timestamp",
            "timestamp"
        ]
    );
    assert_eq!(t.columns[0], column("id", "bigint"));
    assert_eq!(
        (t.name.as_str(), t.location.as_str()),
        ("orders", "s3://b/lake/Orders/")
    );
    assert!(t.partition_keys.is_empty());
}

#[test]
fn nested_types_are_described_and_a_type_without_a_hive_name_refused() {
    let item = Arc::new(Field::new("item", DataType::Int64, true));
    let fields = Fields::from(vec![
        Field::new("A", DataType::Utf8, true),
        Field::new("b", DataType::List(item.clone()), true),
    ]);
    assert_eq!(
        hive_type(&DataType::List(item)).as_deref(),
        Some("array<bigint>")
    );
    assert_eq!(
        hive_type(&DataType::Struct(fields)).as_deref(),
        Some("struct<a:string,b:array<bigint>>")
    );
    let odd = Fields::from(vec![Field::new("a,b", DataType::Utf8, true)]);
    assert_eq!(hive_type(&DataType::Struct(odd)), None);
    let s = schema(&[
        ("id", DataType::Int64),
        ("span", DataType::Duration(TimeUnit::Second)),
    ]);
    let refused = catalog_table("t", "s3://b/t", &s, &[]).unwrap_err();
    assert!(matches!(refused, CatalogRefusal::Type { ref column, .. } if column == "span"));
}

#[test]
fn partition_columns_are_keys_in_the_partitioning_order_and_not_columns() {
    let s = schema(&[
        ("id", DataType::Int64),
        ("Day", DataType::Date32),
        ("region", DataType::Utf8),
    ]);
    let partitions = ["region".to_string(), "Day".to_string()];
    let t = catalog_table("t", "s3://b/t", &s, &partitions).unwrap();
    assert_eq!(t.columns, [column("id", "bigint")]);
    assert_eq!(
        t.partition_keys,
        [column("region", "string"), column("day", "date")]
    );
}

#[test]
fn names_glue_cannot_hold_are_refused_with_the_reason() {
    let long = "c".repeat(256);
    for (name, says) in [
        ("a\nb", "single-line"),
        ("", "1 to 255"),
        (long.as_str(), "256 characters"),
    ] {
        let s = schema(&[("id", DataType::Int64), (name, DataType::Utf8)]);
        let refused = catalog_table("t", "s3://b/t", &s, &[])
            .unwrap_err()
            .to_string();
        assert!(refused.contains(says), "{refused}");
    }
    // What Glue does hold: any other character, tabs, 255 characters.
    let fine = [
        "Ünïcode spaces-and \"quotes\"; drop",
        "a\tb",
        &"c".repeat(255),
    ];
    for name in fine {
        let s = schema(&[("id", DataType::Int64), (name, DataType::Utf8)]);
        assert!(catalog_table("t", "s3://b/t", &s, &[]).is_ok(), "{name:?}");
    }
    let s = schema(&[("ID", DataType::Int64), ("id", DataType::Utf8)]);
    let same = catalog_table("t", "s3://b/t", &s, &[]).unwrap_err();
    assert!(
        same.to_string().contains("\"ID\" and \"id\" are one name"),
        "{same}"
    );
    let bad_table = catalog_table("a\u{7}", "s3://b/t", &schema(&[]), &[]).unwrap_err();
    assert!(matches!(
        bad_table,
        CatalogRefusal::Name {
            what: "table name",
            ..
        }
    ));
}

#[test]
fn a_spec_s_refusals_name_every_table_that_breaks_a_rule() {
    let spec = |columns: &str| {
        Spec::parse(
            &format!("[[dataset]]\nname = \"shop\"\nkeys = [\"id\"]\n{columns}"),
            "spec.toml",
        )
        .unwrap()
    };
    let fine = spec("[[dataset.columns]]\nname = \"id\"\ntype = \"bigint\"\n");
    assert_eq!(refusals(&fine.datasets), []);
    // (The spec itself refuses two names that differ in case only.)
    let newline = spec(
        "[[dataset.columns]]\nname = \"id\"\ntype = \"bigint\"\n\
         [[dataset.columns]]\nname = \"two\\nlines\"\ntype = \"string\"\n",
    );
    let refused: Vec<_> = refusals(&newline.datasets)
        .iter()
        .map(|r| r.to_string())
        .collect();
    // The dataset's table, its history if it kept one; not the rejects,
    // whose columns are deltaload's own.
    assert_eq!(
        refused,
        ["table shop: column \"two\\nlines\" holds '\\n', and Glue's names are single-line strings: rename it in the spec"]
    );
}
