//! CloudWatch Embedded Metric Format: one JSON line per handled batch on stdout,
//! which CloudWatch Logs turns into metrics with no API call.

use crate::report::{BatchReport, DatasetFigures};
use serde_json::{json, Map, Value};

/// One EMF line per dataset the batch touched; the `table` dimension names
/// it. When the batch synced the Glue catalog, one more line, over the
/// whole lake: `CatalogSyncFailed`, the tables it could not register.
pub fn emf_lines(namespace: &str, report: &BatchReport, timestamp_ms: i64) -> Vec<String> {
    let datasets = (report.by_dataset.iter())
        .map(|(table, figures)| emf(namespace, table, figures, timestamp_ms));
    let catalog = (report.catalog_failed.iter()).map(|&n| {
        let figures = [("CatalogSyncFailed", "Count", n as u64)];
        document(namespace, None, &figures, timestamp_ms)
    });
    let expectations = (report.expectations.iter())
        .map(|((table, name), e)| expectation_emf(namespace, (table, name), *e, timestamp_ms));
    datasets.chain(expectations).chain(catalog).collect()
}

/// The EMF document of one expectation's figures in a batch: dimensions
/// `table` and `expectation`; `ExpectationFailed` (records that broke it)
/// and `ExpectationDropped` (those it sent to the rejects).
pub fn expectation_emf(
    namespace: &str,
    (table, expectation): (&str, &str),
    figures: crate::report::ExpectationFigures,
    timestamp_ms: i64,
) -> String {
    json!({
        "_aws": {
            "Timestamp": timestamp_ms,
            "CloudWatchMetrics": [{
                "Namespace": namespace,
                "Dimensions": [["table", "expectation"]],
                "Metrics": [
                    {"Name": "ExpectationFailed", "Unit": "Count"},
                    {"Name": "ExpectationDropped", "Unit": "Count"},
                ],
            }],
        },
        "table": table,
        "expectation": expectation,
        "ExpectationFailed": figures.failed,
        "ExpectationDropped": figures.dropped,
    })
    .to_string()
}

/// The EMF document of a dataset's figures in a batch, as one line of JSON.
pub fn emf(namespace: &str, table: &str, report: &DatasetFigures, timestamp_ms: i64) -> String {
    document(namespace, Some(table), &report.metrics(), timestamp_ms)
}

/// The EMF document of `figures` (name, unit, value), as one line of JSON:
/// per `table` and summed over all (what the alarms watch), or over all
/// alone without one.
pub fn document(
    namespace: &str,
    table: Option<&str>,
    figures: &[(&'static str, &'static str, u64)],
    timestamp_ms: i64,
) -> String {
    let definitions: Vec<Value> = figures
        .iter()
        .map(|(name, unit, _)| json!({"Name": name, "Unit": unit}))
        .collect();
    let dimensions = match table {
        Some(_) => json!([["table"], []]),
        None => json!([[]]),
    };
    let mut doc = Map::new();
    doc.insert(
        "_aws".into(),
        json!({
            "Timestamp": timestamp_ms,
            "CloudWatchMetrics": [{
                "Namespace": namespace,
                "Dimensions": dimensions,
                "Metrics": definitions,
            }],
        }),
    );
    if let Some(table) = table {
        doc.insert("table".into(), json!(table));
    }
    for &(name, _, value) in figures {
        doc.insert(name.into(), json!(value));
    }
    Value::Object(doc).to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Checks a line against the EMF specification's required structure.
    fn valid_emf(line: &str) -> Result<(), String> {
        let v: Value = serde_json::from_str(line).map_err(|e| e.to_string())?;
        let aws = v.get("_aws").ok_or("no _aws")?;
        aws["Timestamp"]
            .as_i64()
            .ok_or("Timestamp is not a number")?;
        let directives = aws["CloudWatchMetrics"]
            .as_array()
            .ok_or("no CloudWatchMetrics")?;
        for d in directives {
            d["Namespace"].as_str().ok_or("no Namespace")?;
            for set in d["Dimensions"].as_array().ok_or("no Dimensions")? {
                for key in set.as_array().ok_or("a dimension set is not an array")? {
                    let key = key.as_str().ok_or("a dimension is not text")?;
                    v.get(key)
                        .and_then(Value::as_str)
                        .ok_or("dimension value missing")?;
                }
            }
            for m in d["Metrics"].as_array().ok_or("no Metrics")? {
                let name = m["Name"].as_str().ok_or("metric without Name")?;
                v.get(name)
                    .and_then(Value::as_f64)
                    .ok_or_else(|| format!("no value for {name}"))?;
            }
        }
        Ok(())
    }

    #[test]
    fn expectations_and_the_catalog_add_valid_lines_after_the_datasets() {
        let mut batch = BatchReport::default();
        batch
            .by_dataset
            .insert("orders".into(), DatasetFigures::default());
        let e = crate::report::ExpectationFigures {
            failed: 3,
            dropped: 2,
        };
        batch
            .expectations
            .insert(("orders".into(), "amount_ok".into()), e);
        batch.catalog_failed = Some(1);
        let lines = emf_lines("deltaload", &batch, 1_790_000_000_000);
        assert_eq!(lines.len(), 3, "{lines:?}");
        for line in &lines {
            valid_emf(line).unwrap_or_else(|e| panic!("{e}: {line}"));
        }
        let v: Value = serde_json::from_str(&lines[1]).unwrap();
        assert_eq!(
            (v["table"].as_str(), v["expectation"].as_str()),
            (Some("orders"), Some("amount_ok"))
        );
        assert_eq!(
            (
                v["ExpectationFailed"].as_u64(),
                v["ExpectationDropped"].as_u64()
            ),
            (Some(3), Some(2))
        );
        let v: Value = serde_json::from_str(&lines[2]).unwrap();
        assert_eq!(v["CatalogSyncFailed"], 1);
    }

    #[test]
    fn batches_become_valid_emf_with_the_documented_names() {
        let report = DatasetFigures {
            loaded: 2,
            records: 13,
            rejected: 1,
            inserted: 5,
            updated: 2,
            stale: 1,
            load_ms: 250,
            ..DatasetFigures::default()
        };
        let mut batch = BatchReport::default();
        batch.by_dataset.insert("orders".into(), report.clone());
        batch
            .by_dataset
            .insert("subscribers".into(), DatasetFigures::default());
        let lines = emf_lines("deltaload", &batch, 1_790_000_000_000);
        assert_eq!(lines.len(), 2, "one line per dataset");
        assert!(
            lines[1].contains(r#""table":"subscribers""#),
            "{}",
            lines[1]
        );
        let line = emf("deltaload", "orders", &report, 1_790_000_000_000);
        assert!(!line.contains('\n'));
        valid_emf(&line).unwrap();
        let v: Value = serde_json::from_str(&line).unwrap();
        assert_eq!(v["RecordsRead"], 13);
        assert_eq!(v["table"], "orders");
        assert_eq!(v["_aws"]["CloudWatchMetrics"][0]["Namespace"], "deltaload");
        let names: Vec<&str> = v["_aws"]["CloudWatchMetrics"][0]["Metrics"]
            .as_array()
            .unwrap()
            .iter()
            .map(|m| m["Name"].as_str().unwrap())
            .collect();
        assert_eq!(
            names,
            [
                "FilesLoaded",
                "FilesSkipped",
                "FilesRefused",
                "RecordsRead",
                "RecordsRejected",
                "RowsInserted",
                "RowsUpdated",
                "RowsStale",
                "RowsDeleted",
                "RowsRetired",
                "VersionsOpened",
                "VersionsClosed",
                "LoadLatency",
                "CommitRetries"
            ]
        );
        assert!(valid_emf(r#"{"_aws":{"Timestamp":1,"CloudWatchMetrics":[{"Namespace":"n","Dimensions":[["table"]],"Metrics":[{"Name":"X"}]}]}}"#).is_err());
    }
}
