//! An existing table's columns held against the spec's, column by column:
//! what to add, what to count before the first write into a table another
//! writer made, and what to keep as it is. Pure: the table's and the spec's
//! Delta schemas in, a [`Plan`] or the difference in words out.

use deltalake::kernel::{StructField, StructType};
use deltaload_core::spec::LINEAGE_COLUMNS;
use deltaload_engine::tables::TableName;

/// What opening an existing table does to its columns.
#[derive(Debug, Default, PartialEq)]
pub(crate) struct Plan {
    /// The spec's columns the table lacks, all nullable: added (older rows
    /// read null).
    pub added: Vec<StructField>,
    /// Key and sequence columns the table lets be null and the spec does
    /// not: the table is written only once a count finds no null in them.
    pub to_count: Vec<String>,
    /// The table's columns the spec does not declare (a dataset's table
    /// only): inserts write them null, updates keep them.
    pub kept: Vec<String>,
}

/// The plan for a table of `existing` columns to hold `wanted`'s; the first
/// difference deltaload cannot take, in words. `adopting`: a dataset's
/// table another writer made, held by the rules of adoption (nullable keys
/// counted, its own columns kept, deltaload's lineage columns added
/// nullable); deltaload's own tables keep their definition exactly.
pub(crate) fn plan(
    name: &TableName,
    existing: &StructType,
    wanted: &StructType,
    adopting: bool,
) -> Result<Plan, String> {
    let mut plan = Plan::default();
    let key_or_sequence = |column: &str| match name {
        TableName::Target(d) => d
            .column_index(column)
            .is_some_and(|i| d.is_key_or_sequence(i)),
        _ => false,
    };
    for field in existing.fields() {
        let Some(want) = wanted.fields().find(|w| w.name() == field.name()) else {
            if adopting && field.is_nullable() {
                plan.kept.push(field.name().clone());
                continue;
            }
            return Err(not_in_spec(field, adopting));
        };
        if want.data_type() != field.data_type() {
            return Err(differs(field, want, ""));
        }
        match (field.is_nullable(), want.is_nullable()) {
            // A table another writer made: its columns may all be
            // nullable. deltaload writes no null where the spec has none;
            // only the keys and sequences it matches on must hold no null
            // already.
            (true, false) if adopting && key_or_sequence(field.name()) => {
                plan.to_count.push(field.name().clone());
            }
            (true, false) if adopting => {}
            (false, true) if adopting => {
                let hint = " (the table may not hold a null there: declare the column \
                            nullable = false in the spec)";
                return Err(differs(field, want, hint));
            }
            (a, b) if a != b => {
                // Keys and sequence columns are not null whatever the spec
                // says: a nullability alone that differs mostly means they changed.
                let hint = " (keys and sequence_by columns are stored not null whatever the spec \
                            says: a change of keys or sequence_by changes that)";
                return Err(differs(field, want, hint));
            }
            _ => {}
        }
    }
    for want in wanted.fields() {
        if existing.fields().any(|f| f.name() == want.name()) {
            continue;
        }
        let lineage = adopting && LINEAGE_COLUMNS.contains(&want.name().as_str());
        if !want.is_nullable() && !lineage {
            return Err(format!(
                "column {:?} ({}) is new and may not be null: rows already in the table have no \
                 value for it; declare it nullable (the default), or, when it is a key or \
                 sequence_by column (never null), restore the earlier keys and sequence_by",
                want.name(),
                describe(want)
            ));
        }
        // deltaload's own columns, added to a table another writer made:
        // the rows it did not load read null there.
        plan.added.push(StructField::new(
            want.name().clone(),
            want.data_type().clone(),
            true,
        ));
    }
    Ok(plan)
}

/// Refuses a rejects table another writer made (the seed's Spark job's
/// `rejected_orders`: the orders' columns, `_bad`, `source_file`): one that
/// lacks the columns every deltaload rejects table has had. Any other
/// difference (an earlier release's table, a key column renamed with the
/// keys) is the spec's to judge, after the dataset's table's own check.
pub(crate) fn check_rejects_layout(
    dataset: &deltaload_core::Dataset,
    existing: &StructType,
    wanted: &StructType,
) -> Result<(), crate::table::error::LakeError> {
    let lacks_ours = ["raw_line", "reason", "line_number"]
        .iter()
        .any(|c| existing.field(c).is_none());
    if !lacks_ours {
        return Ok(());
    }
    let names = |s: &StructType| s.fields().map(|f| f.name().clone()).collect();
    Err(crate::table::error::LakeError::ForeignRejects {
        table: dataset.rejected_table(),
        dataset: dataset.name.clone(),
        columns: names(existing),
        ours: names(wanted),
    })
}

fn not_in_spec(field: &StructField, adopting: bool) -> String {
    let why = match adopting {
        // Not null: an insert would have no value to write.
        true => ": it may not be null, so an insert could not leave it out; declare it in the spec",
        false => "",
    };
    format!(
        "column {:?} ({}) is in the table but not in the spec{why}",
        field.name(),
        describe(field)
    )
}

fn differs(field: &StructField, want: &StructField, hint: &str) -> String {
    format!(
        "column {:?} is {} in the table and {} in the spec{hint}",
        field.name(),
        describe(field),
        describe(want)
    )
}

/// A column's type and nullability in words.
pub(crate) fn describe(field: &StructField) -> String {
    let null = if field.is_nullable() {
        "nullable"
    } else {
        "not null"
    };
    format!("{}, {null}", field.data_type())
}

#[cfg(test)]
#[path = "adopt_tests.rs"]
mod tests;
