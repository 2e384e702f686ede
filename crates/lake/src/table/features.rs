//! The protocol features of a table another writer made, held against what
//! deltaload's writes honour, before anything is written: a feature in use
//! that a write would break refuses the table, naming the feature and what
//! it would take. Pure over the table's [`Facts`]; [`facts`] reads them.

use crate::table::error::LakeError;
use deltalake::DeltaTable;
use deltaload_engine::tables::TableName;
use std::collections::HashMap;

/// What the protocol checks need of a table: its protocol, its properties,
/// and its columns' metadata keys.
#[derive(Debug, Default)]
pub(crate) struct Facts {
    /// `minWriterVersion`.
    pub writer_version: i64,
    /// `writerFeatures` (writer version 7), as the protocol names them.
    pub writer_features: Vec<String>,
    /// The table's properties.
    pub properties: HashMap<String, String>,
    /// Each column's metadata keys (`delta.invariants`, `delta.identity.*`, …).
    pub column_metadata: Vec<(String, Vec<String>)>,
}

/// Why deltaload will not write a table: the feature, what deltaload does
/// not do, and what it would take.
#[derive(Debug, PartialEq)]
pub(crate) struct Refusal {
    pub feature: String,
    pub does: String,
    pub remedy: String,
}

/// The features deltaload's writes honour whenever a table lists them:
/// deletion vectors (read with every file and kept: a deleted row stays
/// deleted), timestamps without a time zone (a column of that type is held
/// against the spec's types, which have none yet: refused by its type), v2
/// checkpoints (read by delta-rs, and written by the Delta kernel's
/// checkpoint writer to the V2 spec, with
/// their `checkpointMetadata`), CHECK constraints and invariants (every
/// record checked, one that breaks a rule rejected: [`crate::table::rules`]),
/// and the rest only while unused, which [`refusal`] checks one by one.
const HONOURED: [&str; 10] = [
    "deletionVectors",
    "timestampNtz",
    "v2Checkpoint",
    "appendOnly",
    "invariants",
    "checkConstraints",
    "changeDataFeed",
    "columnMapping",
    "generatedColumns",
    "identityColumns",
];

/// The first feature of `facts` deltaload's writes would break; `None` when
/// it may write. (A table with the change data feed on keeps it: the
/// writers follow the table's property, whatever the spec says.)
pub(crate) fn refusal(facts: &Facts) -> Option<Refusal> {
    let refuse = |feature: &str, does: &str, remedy: &str| {
        Some(Refusal {
            feature: feature.to_string(),
            does: does.to_string(),
            remedy: remedy.to_string(),
        })
    };
    let property = |key: &str| facts.properties.get(key).map(String::as_str);
    let listed = |f: &str| facts.writer_features.iter().any(|l| l == f);
    let column_has = |prefix: &str| {
        facts
            .column_metadata
            .iter()
            .find(|(_, keys)| keys.iter().any(|k| k.starts_with(prefix)))
            .map(|(c, _)| c.clone())
    };
    if facts.writer_version > 7 {
        let version = format!("writer version {}", facts.writer_version);
        return refuse(
            &version,
            "does not know (Delta's protocol ends at 7)",
            "keep writing this table with the engine that made it",
        );
    }
    if facts.writer_version == 7 {
        if let Some(f) = facts
            .writer_features
            .iter()
            .find(|f| !HONOURED.contains(&f.as_str()))
        {
            return refuse(f, "does not implement for writers (it would write the table without what the feature requires of every commit)", &format!("load into a table without {f:?}, or keep writing this one with the engine that made it"));
        }
    }
    if property("delta.appendOnly").is_some_and(|v| v.eq_ignore_ascii_case("true"))
        && (listed("appendOnly") || facts.writer_version >= 2)
    {
        return refuse("appendOnly", "would break: an upsert updates and deletes rows", "a keyed upsert cannot load an append-only table; set delta.appendOnly = false on it if updates are intended, or load into another table");
    }
    if !matches!(property("delta.columnMapping.mode"), None | Some("none")) {
        return refuse("columnMapping", "does not yet write (its files would need the columns' physical names)", "load into a table without column mapping, or keep writing this one with the engine that made it");
    }
    if let Some(column) = column_has("delta.generationExpression") {
        return refuse("generatedColumns", &format!("does not compute (column {column:?} is generated)"), "declare no generated column in the table, or keep writing it with the engine that made it");
    }
    if let Some(column) = column_has("delta.identity.") {
        return refuse("identityColumns", &format!("does not assign (column {column:?} is an identity column)"), "load into a table without an identity column, or keep writing this one with the engine that made it");
    }
    None
}

/// Refuses, before anything is written, an existing table deltaload would
/// break: a dataset's table with a protocol feature in use that a write
/// would break ([`refusal`]), or its rejects table of another layout.
pub(crate) fn refuse(table: &DeltaTable, name: &TableName) -> Result<(), LakeError> {
    if table.version().is_none() {
        return Ok(());
    }
    let label = name.as_str();
    match name {
        TableName::Target(_) => {}
        TableName::Rejected(d) => {
            let snapshot = table
                .snapshot()
                .map_err(LakeError::delta(&label, table.table_url()))?;
            let wanted = crate::table::evolve::kernel_schema(name)?;
            return crate::table::adopt::check_rejects_layout(d, &snapshot.schema(), &wanted);
        }
        _ => return Ok(()),
    }
    if let Some(r) = refusal(&facts(table, &label)?) {
        return Err(LakeError::Unsupported {
            table: label,
            feature: r.feature,
            does: r.does,
            remedy: r.remedy,
        });
    }
    if let TableName::Target(d) = name {
        // A rule a load could not check refuses it too (table::rules).
        crate::table::rules::read(table, d)?;
    }
    Ok(())
}

/// The [`Facts`] of a loaded table.
pub(crate) fn facts(table: &DeltaTable, label: &str) -> Result<Facts, LakeError> {
    let snapshot = table
        .snapshot()
        .map_err(LakeError::delta(label, table.table_url()))?;
    // Read as the log writes it; a protocol that does not read so is
    // refused rather than taken for one without features.
    let protocol = serde_json::to_value(snapshot.protocol()).unwrap_or_default();
    let Some(writer_version) = protocol["minWriterVersion"].as_i64() else {
        return Err(LakeError::Invariant {
            table: label.to_string(),
            detail: format!("its protocol does not read as Delta's: {protocol}"),
        });
    };
    let writer_features = protocol["writerFeatures"]
        .as_array()
        .map(|a| {
            a.iter()
                .filter_map(|v| v.as_str().map(String::from))
                .collect()
        })
        .unwrap_or_default();
    Ok(Facts {
        writer_version,
        writer_features,
        properties: snapshot.metadata().configuration().clone(),
        column_metadata: (snapshot.schema().fields())
            .map(|f| (f.name().clone(), f.metadata().keys().cloned().collect()))
            .collect(),
    })
}

#[cfg(test)]
#[path = "features_tests.rs"]
mod tests;
