//! Statistics readers can trust. delta-rs writes a decimal's minimum and
//! maximum through a 64-bit float, which holds 15 significant digits: past
//! them (a `decimal(18,2)` of 16 digits or more) the rounded minimum can
//! lie above the file's least value and the maximum below its greatest,
//! and a reader that skips files by them (polars, Python `deltalake`'s
//! SQL) drops rows that are there. A table with such a column names the
//! columns that get statistics (`delta.dataSkippingStatsColumns`, which
//! every writer follows, delta-rs's MERGE and optimize too): all but those
//! decimals, within Delta's default of the first 32 columns.

use crate::table::error::LakeError;
use deltalake::arrow::datatypes::{DataType, Schema};
use deltalake::DeltaTable;

/// The table property naming the columns that get statistics.
pub(crate) const STATS_COLUMNS: &str = "delta.dataSkippingStatsColumns";

/// The most significant digits a 64-bit float holds exactly.
const EXACT_DIGITS: u8 = 15;

/// The columns Delta gives statistics by default: the first 32.
const INDEXED_COLUMNS: usize = 32;

/// Whether a column's statistics may be rounded by the writer.
fn rounded(ty: &DataType) -> bool {
    match ty {
        DataType::Decimal128(precision, _) | DataType::Decimal256(precision, _) => {
            *precision > EXACT_DIGITS
        }
        _ => false,
    }
}

/// The value of [`STATS_COLUMNS`] for a table of `schema`: `None` when no
/// column's statistics would be rounded (Delta's default then holds).
pub(crate) fn stats_columns(schema: &Schema) -> Option<String> {
    let fields = &schema.fields()[..schema.fields().len().min(INDEXED_COLUMNS)];
    if !fields.iter().any(|f| rounded(f.data_type())) {
        return None;
    }
    let kept = (fields.iter())
        .filter(|f| !rounded(f.data_type()))
        .map(|f| quoted(f.name()));
    Some(kept.collect::<Vec<_>>().join(","))
}

/// A column's name as the property lists it, as the Delta kernel's
/// `ColumnName` writes one (deltalake does not export it): in backticks
/// (doubled inside) unless it is letters, digits and underscores not
/// starting with a digit.
fn quoted(name: &str) -> String {
    let simple = name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_');
    match simple && !name.starts_with(|c: char| c.is_ascii_digit()) && !name.is_empty() {
        true => name.to_string(),
        false => format!("`{}`", name.replace('`', "``")),
    }
}

/// Names the columns that get statistics on an existing `table` that has
/// a decimal whose statistics would be rounded, once (a metadata commit;
/// its earlier files keep theirs until rewritten).
pub(crate) async fn keep_exact(table: &mut DeltaTable, label: &str) -> Result<(), LakeError> {
    if crate::table::properties::property(table, label, STATS_COLUMNS)?.is_some() {
        return Ok(());
    }
    let snapshot = table
        .snapshot()
        .map_err(LakeError::delta(label, table.table_url()))?;
    let Some(columns) = stats_columns(&snapshot.snapshot().arrow_schema()) else {
        return Ok(());
    };
    tracing::info!(table = %label, columns = %columns, "statistics of wide decimals left out");
    crate::table::properties::set_property(table, label, STATS_COLUMNS, &columns).await
}

#[cfg(test)]
mod tests {
    use super::*;
    use deltalake::arrow::array::{Decimal128Array, Int64Array, RecordBatch};
    use deltalake::arrow::datatypes::Field;
    use deltalake::kernel::{Add, StructType};
    use std::sync::Arc;

    /// The minimum the statistics of the first of `adds` give each column.
    fn minimums(adds: &[Add]) -> serde_json::Value {
        let stats = adds[0].stats.as_deref().expect("statistics");
        serde_json::from_str::<serde_json::Value>(stats).expect("json")["minValues"].clone()
    }

    /// A table made before (no property) with a `decimal(18,2)`: delta-rs
    /// rounds its least value up; once opened, it names its columns and
    /// new files hold no decimal bounds.
    #[tokio::test]
    async fn a_table_made_before_stops_rounding_its_wide_decimals() {
        use deltalake::kernel::engine::arrow_conversion::TryIntoKernel;
        let dir = tempfile::tempdir().unwrap();
        let url = url::Url::from_directory_path(dir.path()).unwrap();
        let schema = Arc::new(Schema::new(vec![
            Field::new("id", DataType::Int64, false),
            Field::new("amount", DataType::Decimal128(18, 2), true),
        ]));
        let kernel: StructType = schema.as_ref().try_into_kernel().unwrap();
        let builder = deltalake::DeltaTableBuilder::from_url(url).unwrap();
        let create = builder.build().unwrap().create();
        let mut table = create.with_columns(kernel.fields().cloned()).await.unwrap();
        let least = -123_456_789_012_345_685_i128; // -1234567890123456.85
        let amounts = Decimal128Array::from(vec![least, 100]).with_precision_and_scale(18, 2);
        let columns: Vec<deltalake::arrow::array::ArrayRef> = vec![
            Arc::new(Int64Array::from(vec![1, 2])),
            Arc::new(amounts.unwrap()),
        ];
        let batch = RecordBatch::try_new(schema, columns).unwrap();
        let before = crate::write::upsert::write_files(&table, &batch, u64::MAX, "t").await;
        let rounded = minimums(&before.unwrap())["amount"].to_string();
        assert_ne!(rounded, "-1234567890123456.85", "delta-rs no longer rounds");
        keep_exact(&mut table, "t").await.unwrap();
        let named = crate::table::properties::property(&table, "t", STATS_COLUMNS).unwrap();
        assert_eq!(named.as_deref(), Some("id"));
        let after = crate::write::upsert::write_files(&table, &batch, u64::MAX, "t").await;
        let after = minimums(&after.unwrap());
        assert_eq!(after["id"], 1);
        assert!(after.get("amount").is_none(), "{after}");
    }

    #[test]
    fn only_a_table_with_a_wide_decimal_names_its_columns() {
        let field = |name: &str, ty: DataType| Field::new(name, ty, true);
        let narrow = Schema::new(vec![
            field("id", DataType::Int64),
            field("amount", DataType::Decimal128(15, 2)),
        ]);
        assert_eq!(stats_columns(&narrow), None);
        let wide = Schema::new(vec![
            field("id", DataType::Int64),
            field("amount", DataType::Decimal128(18, 2)),
            field("my col", DataType::Utf8),
            field("a`b", DataType::Utf8),
            field("2fa", DataType::Boolean),
        ]);
        let named = stats_columns(&wide);
        assert_eq!(named.as_deref(), Some("id,`my col`,`a``b`,`2fa`"));
        // Past the first 32 columns no statistics are kept anyway.
        let mut many: Vec<Field> = (0..32)
            .map(|i| field(&format!("c{i}"), DataType::Int32))
            .collect();
        many.push(field("late", DataType::Decimal128(38, 10)));
        assert_eq!(stats_columns(&Schema::new(many)), None);
    }
}
