//! An existing table held against what the spec declares: a nullable column
//! the spec added is added to the table (older rows read null, nothing is
//! rewritten); any other difference refuses to start, naming both definitions.

use crate::table::error::LakeError;
use crate::table::nulls::{ADOPTED, NULLS_COUNTED};
use deltalake::kernel::engine::arrow_conversion::TryIntoKernel;
use deltalake::kernel::StructType;
use deltalake::DeltaTable;
use deltaload_engine::tables::TableName;

/// The table property recording a dataset's keys, written when its table is created.
// (Not under `delta`: Delta readers parse every property named so.)
const KEYS_PROPERTY: &str = "io.deltaload.keys";

/// The table property setting how many commits separate two checkpoints.
pub(crate) const CHECKPOINT_INTERVAL_PROPERTY: &str = "delta.checkpointInterval";

/// Commits between two checkpoints of every table deltaload creates (Delta's
/// default is 100). Opening a table reads its last checkpoint and every
/// commit after it, one request each on S3: with small files committing four
/// times each, a Lambda's cold start read up to 99 commits per table (550 ms
/// on LocalStack with 60). Every tenth commit writes the checkpoint instead.
pub(crate) const CHECKPOINT_INTERVAL: u64 = 10;

/// The table properties deltaload records at creation: the checkpoint
/// interval, a dataset's keys and its change data feed.
pub(crate) fn configuration(name: &TableName) -> Vec<(String, Option<String>)> {
    let mut properties = vec![(
        CHECKPOINT_INTERVAL_PROPERTY.to_string(),
        Some(CHECKPOINT_INTERVAL.to_string()),
    )];
    if let Some(keys) = keys_property(name) {
        properties.push((KEYS_PROPERTY.to_string(), Some(keys)));
    }
    // From its first version: a reader refuses a feed from a version
    // where it was off.
    if matches!(name, TableName::Target(d) if d.change_data_feed) {
        properties.push((
            crate::table::properties::CHANGE_DATA_FEED.to_string(),
            Some("true".into()),
        ));
    }
    if let Some(columns) = crate::table::stats::stats_columns(&name.schema()) {
        let key = crate::table::stats::STATS_COLUMNS.to_string();
        properties.push((key, Some(columns)));
    }
    properties
}

/// The value of the keys property of a dataset's table: its key columns,
/// comma-separated; none for the other tables.
fn keys_property(name: &TableName) -> Option<String> {
    match name {
        TableName::Target(d) => Some(d.names(&d.keys).join(",")),
        _ => None,
    }
}

/// The table's schema as Delta writes it.
pub(crate) fn kernel_schema(name: &TableName) -> Result<StructType, LakeError> {
    name.schema()
        .as_ref()
        .try_into_kernel()
        .map_err(|e| LakeError::Invariant {
            table: name.as_str(),
            detail: format!("schema does not convert to Delta: {e}"),
        })
}

/// The table, with the columns the spec added; an error for any other
/// change. A table another writer made is adopted: its key and sequence
/// columns counted for nulls once, its own columns kept
/// ([`adopt::plan`](crate::table::adopt::plan)).
pub(crate) async fn conform(table: DeltaTable, name: &TableName) -> Result<DeltaTable, LakeError> {
    let label = name.as_str();
    let url = table.table_url().clone();
    let snapshot = table.snapshot().map_err(LakeError::delta(&label, &url))?;
    let refuse = |detail: String| LakeError::SpecChange {
        table: label.clone(),
        detail,
    };
    let metadata = snapshot.metadata();
    let config = metadata.configuration();
    check_keys_and_partitions(name, config, metadata.partition_columns()).map_err(refuse)?;
    let existing = snapshot.schema();
    let adopting = matches!(name, TableName::Target(_)) && adopted(config, &existing);
    let mut marks = Vec::new();
    if adopting && !config.contains_key(ADOPTED) {
        marks.push((ADOPTED.to_string(), "true".to_string()));
        if let Some(keys) = keys_property(name) {
            marks.push((KEYS_PROPERTY.to_string(), keys));
        }
    }
    let plan = crate::table::adopt::plan(name, &existing, &kernel_schema(name)?, adopting)
        .map_err(|detail| match name {
            TableName::Tombstones(_) => format!(
                "{detail} (it holds the dataset's keys and sequence_by columns: a change of \
                 either changes it)"
            ),
            _ => detail,
        })
        .map_err(refuse)?;
    if !plan.kept.is_empty() {
        tracing::debug!(table = %label, columns = ?plan.kept, "columns the spec does not declare: inserts write them null, updates keep them");
    }
    if let Some(counted) = crate::table::nulls::count_nulls(&table, name, &plan.to_count).await? {
        marks.push((NULLS_COUNTED.to_string(), counted));
    }
    let mut table = table;
    if !marks.is_empty() {
        tracing::info!(table = %label, "taking over a table another writer made");
        crate::table::properties::set_properties(&mut table, &label, marks).await?;
    }
    if plan.added.is_empty() {
        return Ok(table);
    }
    let names: Vec<String> = plan.added.iter().map(|f| f.name().to_string()).collect();
    tracing::info!(table = %label, columns = ?names, "adding the spec's new nullable columns to the table");
    table = table
        .add_columns()
        .with_fields(plan.added)
        .await
        .map_err(LakeError::delta(&label, &url))?;
    Ok(table)
}

/// Whether a dataset's table of these properties and columns is one
/// another writer made: taken over before, or without the record of its keys
/// deltaload writes at creation and without deltaload's lineage columns
/// (which its tables of every release have, not null).
pub(crate) fn adopted(
    config: &std::collections::HashMap<String, String>,
    schema: &StructType,
) -> bool {
    let own = ["source_file", "loaded_at"]
        .iter()
        .all(|c| schema.field(c).is_some_and(|f| !f.is_nullable()));
    config.contains_key(ADOPTED) || (!config.contains_key(KEYS_PROPERTY) && !own)
}

/// The keys recorded in the table's properties and its partition columns
/// against the spec's; what differs, in words.
fn check_keys_and_partitions(
    name: &TableName,
    properties: &std::collections::HashMap<String, String>,
    partitioned_by: &[String],
) -> Result<(), String> {
    // Only the keys: other properties (the checkpoint interval) are the
    // table owner's to change.
    if let (Some(held), Some(value)) = (properties.get(KEYS_PROPERTY), keys_property(name)) {
        if held != &value {
            return Err(format!(
                "the table's keys are [{held}] and the spec's are [{value}]"
            ));
        }
    }
    let partitions = name.partition_columns();
    if matches!(name, TableName::Target(_)) && partitioned_by != partitions {
        return Err(format!(
            "the table is partitioned by [{}] and the spec says partition_by = [{}]",
            partitioned_by.join(", "),
            partitions.join(", ")
        ));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use crate::{lake_url, Lake};
    use deltalake::kernel::engine::arrow_conversion::TryIntoKernel;
    use deltalake::kernel::StructType;
    use deltaload_engine::tables::TableName;

    // A checkpoint interval set by hand (or by another tool) is the table
    // owner's choice, not a change of its definition.
    #[test]
    fn only_the_keys_property_is_held_against_the_spec() {
        use super::{check_keys_and_partitions, KEYS_PROPERTY};
        let spec = deltaload_core::Spec::builtin();
        let orders = TableName::Target(spec.datasets[0].clone());
        let held = |pairs: &[(&str, &str)]| {
            pairs
                .iter()
                .map(|(k, v)| (k.to_string(), v.to_string()))
                .collect::<std::collections::HashMap<_, _>>()
        };
        let interval = ("delta.checkpointInterval", "100");
        for name in [orders.clone(), TableName::Ledger] {
            let props = held(&[interval, (KEYS_PROPERTY, "order_id")]);
            let partitions: &[String] = &[];
            assert_eq!(check_keys_and_partitions(&name, &props, partitions), Ok(()));
        }
        let other_keys = held(&[(KEYS_PROPERTY, "customer_id")]);
        let refused = check_keys_and_partitions(&orders, &other_keys, &[]).unwrap_err();
        assert!(refused.contains("keys are [customer_id]"), "{refused}");
    }

    /// A table is another writer's without deltaload's record of its keys
    /// and lineage columns; deltaload's own of any release is not.
    #[test]
    fn a_table_is_adopted_only_when_another_writer_made_it() {
        use super::{adopted, KEYS_PROPERTY};
        use crate::table::nulls::ADOPTED;
        let config = |pairs: &[(&str, &str)]| {
            (pairs.iter())
                .map(|(k, v)| (k.to_string(), v.to_string()))
                .collect::<std::collections::HashMap<_, _>>()
        };
        let schema = |null: bool| -> StructType {
            let fields = ["order_id", "source_file", "loaded_at"].map(|n| {
                deltalake::kernel::StructField::new(n, deltalake::kernel::DataType::STRING, null)
            });
            StructType::try_new(fields).unwrap()
        };
        // Spark's: every column nullable, no properties.
        assert!(adopted(&config(&[]), &schema(true)));
        // deltaload's own, before it recorded its keys, and after.
        assert!(!adopted(&config(&[]), &schema(false)));
        assert!(!adopted(
            &config(&[(KEYS_PROPERTY, "order_id")]),
            &schema(true)
        ));
        // Taken over before: lineage added nullable, keys recorded.
        let marked = config(&[(KEYS_PROPERTY, "order_id"), (ADOPTED, "true")]);
        assert!(adopted(&marked, &schema(true)));
    }

    /// A lake written before datasets had no `dataset` column in its ledger:
    /// opening it adds the column, and the old rows read null.
    #[tokio::test]
    async fn a_ledger_of_an_earlier_release_gains_the_dataset_column() {
        let dir = tempfile::tempdir().unwrap();
        let root = lake_url(dir.path().to_str().unwrap()).unwrap();
        let full = TableName::Ledger.schema();
        let old: Vec<_> = full
            .fields()
            .iter()
            .filter(|f| f.name() != "dataset")
            .cloned()
            .collect();
        let old = deltalake::arrow::datatypes::Schema::new(old);
        let old: StructType = (&old).try_into_kernel().unwrap();
        let url = crate::table::open::table_url(&root, &TableName::Ledger).unwrap();
        std::fs::create_dir_all(url.to_file_path().unwrap()).unwrap();
        deltalake::DeltaTableBuilder::from_url(url)
            .unwrap()
            .build()
            .unwrap()
            .create()
            .with_columns(old.fields().cloned())
            .await
            .unwrap();
        let lake = Lake::open(&root).await.unwrap();
        let schema = lake.tables.ledger.snapshot().unwrap().schema();
        let names: Vec<&str> = schema.fields().map(|f| f.name().as_str()).collect();
        assert_eq!(names.last(), Some(&"dataset"), "{names:?}");
        assert_eq!(
            lake.tables.ledger.version(),
            Some(1),
            "one commit adds the column"
        );
    }
}
