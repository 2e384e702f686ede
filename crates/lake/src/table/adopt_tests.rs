use super::{plan, Plan};
use deltalake::arrow::datatypes::{DataType, Field, Schema, TimeUnit};
use deltalake::kernel::engine::arrow_conversion::TryIntoKernel;
use deltalake::kernel::StructType;
use deltaload_engine::tables::TableName;

fn schema(fields: &[(&str, DataType, bool)]) -> StructType {
    let fields: Vec<Field> = fields
        .iter()
        .map(|(n, t, null)| Field::new(*n, t.clone(), *null))
        .collect();
    (&Schema::new(fields)).try_into_kernel().unwrap()
}

fn names(fields: &[deltalake::kernel::StructField]) -> Vec<&str> {
    fields.iter().map(|f| f.name().as_str()).collect()
}

#[test]
fn only_new_nullable_columns_are_added_and_every_other_change_is_named() {
    let ledger = TableName::Ledger;
    let table = schema(&[
        ("id", DataType::Int64, false),
        ("v", DataType::Float64, true),
    ]);
    let grown = schema(&[
        ("id", DataType::Int64, false),
        ("v", DataType::Float64, true),
        ("email", DataType::Utf8, true),
    ]);
    let added = plan(&ledger, &table, &grown, false).unwrap().added;
    assert_eq!(names(&added), ["email"]);
    assert_eq!(
        plan(&ledger, &table, &table, false).unwrap(),
        Plan::default()
    );
    let retyped = schema(&[("id", DataType::Int64, false), ("v", DataType::Utf8, true)]);
    assert_eq!(
        plan(&ledger, &table, &retyped, false).unwrap_err(),
        "column \"v\" is double, nullable in the table and string, nullable in the spec"
    );
    let dropped = schema(&[("id", DataType::Int64, false)]);
    assert!(plan(&ledger, &table, &dropped, false)
        .unwrap_err()
        .contains("in the table but not in the spec"));
    let required = schema(&[
        ("id", DataType::Int64, false),
        ("v", DataType::Float64, true),
        ("n", DataType::Int64, false),
    ]);
    assert!(plan(&ledger, &table, &required, false)
        .unwrap_err()
        .contains("may not be null"));
    // deltaload's own tables keep their nullability exactly.
    let relaxed = schema(&[
        ("id", DataType::Int64, true),
        ("v", DataType::Float64, true),
    ]);
    assert!(plan(&ledger, &relaxed, &table, false)
        .unwrap_err()
        .contains("long, nullable in the table and long, not null in the spec"));
}

/// The seed's Spark job's `orders`: every column nullable, no lineage
/// columns, and one column of its own.
#[test]
fn a_table_another_writer_made_is_adopted_with_its_keys_counted() {
    let orders = TableName::Target(deltaload_core::Dataset::orders());
    let ts = DataType::Timestamp(TimeUnit::Microsecond, Some("UTC".into()));
    let spark = schema(&[
        ("order_id", DataType::Int64, true),
        ("customer_id", DataType::Utf8, true),
        ("status", DataType::Utf8, true),
        ("amount", DataType::Decimal128(10, 2), true),
        ("currency", DataType::Utf8, true),
        ("ordered_at", ts.clone(), true),
        ("updated_at", ts.clone(), true),
        ("note", DataType::Utf8, true),
    ]);
    let wanted = crate::table::evolve::kernel_schema(&orders).unwrap();
    let plan = plan(&orders, &spark, &wanted, true).unwrap();
    assert_eq!(plan.to_count, ["order_id", "updated_at"]);
    assert_eq!(plan.kept, ["note"]);
    assert_eq!(names(&plan.added), ["source_file", "loaded_at"]);
    assert!(plan.added.iter().all(|f| f.is_nullable()));

    // A column of its own that may not be null: an insert could not fill it.
    let mut fields: Vec<_> = spark.fields().cloned().collect();
    fields.push(deltalake::kernel::StructField::new(
        "region",
        deltalake::kernel::DataType::STRING,
        false,
    ));
    let strict = StructType::try_new(fields).unwrap();
    let refused = super::plan(&orders, &strict, &wanted, true).unwrap_err();
    assert!(
        refused.contains("\"region\"") && refused.contains("declare it in the spec"),
        "{refused}"
    );

    // deltaload's own orders table keeps its definition exactly: the same
    // table is refused.
    let own = super::plan(&orders, &spark, &wanted, false).unwrap_err();
    assert!(
        own.contains("column \"order_id\" is long, nullable in the table"),
        "{own}"
    );

    // A type that differs is refused as before.
    let retyped = schema(&[("order_id", DataType::Utf8, true)]);
    assert!(super::plan(&orders, &retyped, &wanted, true)
        .unwrap_err()
        .contains("column \"order_id\" is string, nullable in the table"));
}
