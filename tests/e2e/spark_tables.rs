//! The seven tables Spark and Databricks wrote (`tests/data/spark-tables`),
//! each loaded with changes through a spec of its columns: the result equals
//! a model as DuckDB's delta extension and Python deltalake's SQL read it, or
//! the load is refused with the protocol feature named and every file of the
//! table byte for byte as it was.

use crate::adoption::{copy_tree, files};
use crate::deltaload;
use crate::other_engines::run_python;
use crate::readers::READERS_PY;
use deltaload_tests::{stderr, stdout, Sandbox};
use serde_json::Value;
use std::collections::BTreeMap;
use std::path::PathBuf;

/// The readers the models are checked with.
const READERS: [&str; 2] = ["duckdb.delta_scan", "deltalake.QueryBuilder"];

/// A Spark table, a spec of its columns, and one file of changes.
struct Case {
    /// Its folder under `tests/data/spark-tables`.
    table: &'static str,
    /// The dataset's keys and partitions (TOML lines).
    spec: &'static str,
    /// Its columns: name and type.
    columns: &'static [(&'static str, &'static str)],
    /// The changes, as JSON Lines (`"op": "d"` deletes).
    changes: &'static str,
    /// Its key columns, to sort rows by.
    keys: &'static [&'static str],
}

impl Case {
    /// A sandbox holding a copy of the table as the lake's dataset `spark`,
    /// the spec, and the changes as `raw/changes.jsonl`.
    fn sandbox(&self) -> Sandbox {
        let sb = Sandbox::new();
        let from = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("data/spark-tables");
        copy_tree(&from.join(self.table), &sb.lake_dir().join(self.table));
        let mut spec = format!(
            "[[dataset]]\nname = \"spark\"\ntable = \"{}\"\nformat = \"jsonl\"\n\
             delete_when = {{ column = \"op\", in = [\"d\"] }}\n{}\n",
            self.table, self.spec
        );
        for (name, ty) in self.columns {
            spec += &format!("[[dataset.columns]]\nname = \"{name}\"\ntype = \"{ty}\"\n");
        }
        std::fs::write(sb.dir.path().join("spec.toml"), spec).expect("spec");
        sb.file("changes.jsonl", self.changes);
        sb
    }

    fn load(&self, sb: &Sandbox) -> std::process::Output {
        deltaload(
            sb,
            &["--spec", "spec.toml", "load", "raw/changes.jsonl"],
            None,
        )
    }

    /// Each reader's rows of the table in `sb`'s lake, `columns` only, by key.
    fn read(&self, sb: &Sandbox, columns: &[&str]) -> BTreeMap<String, Vec<Vec<Value>>> {
        let path = sb.lake_dir().join(self.table);
        let mut args = vec![path.to_str().expect("utf-8").to_string()];
        args.extend(self.keys.iter().map(|k| k.to_string()));
        let args: Vec<&str> = args.iter().map(String::as_str).collect();
        let out = run_python(READERS_PY, &args);
        let read: Value = serde_json::from_slice(&out.stdout).expect("the readers' JSON");
        READERS
            .iter()
            .map(|reader| {
                let r = &read[*reader];
                assert!(
                    r["error"].is_null(),
                    "{}: {reader}: {}",
                    self.table,
                    r["error"]
                );
                let names: Vec<&str> = (r["columns"].as_array().expect("columns").iter())
                    .map(|c| c.as_str().expect("a name"))
                    .collect();
                let at: Vec<usize> = (columns.iter())
                    .map(|c| names.iter().position(|n| n == c).expect("a column"))
                    .collect();
                let rows = (r["rows"].as_array().expect("rows").iter())
                    .map(|row| at.iter().map(|&i| row[i].clone()).collect())
                    .collect();
                (reader.to_string(), rows)
            })
            .collect()
    }

    /// Loads the changes: the table then reads, with every reader, as the
    /// rows it read before with `model` applied.
    fn loads(&self, columns: &[&str], model: impl Fn(&mut Vec<Vec<Value>>)) {
        self.loads_in(&self.sandbox(), columns, model)
    }

    /// [`Case::loads`] in `sb`, made by [`Case::sandbox`].
    fn loads_in(&self, sb: &Sandbox, columns: &[&str], model: impl Fn(&mut Vec<Vec<Value>>)) {
        let before = self.read(sb, columns);
        let out = self.load(sb);
        assert_eq!(
            out.status.code(),
            Some(0),
            "{}: {}",
            self.table,
            stderr(&out)
        );
        let after = self.read(sb, columns);
        for (reader, mut rows) in before {
            model(&mut rows);
            assert_eq!(after[&reader], rows, "{}: {reader}", self.table);
        }
    }

    /// The load is refused naming `feature`, and the table is unchanged.
    fn refused(&self, feature: &str) {
        let sb = self.sandbox();
        let table = sb.lake_dir().join(self.table);
        let before = files(&table);
        let out = self.load(&sb);
        assert_eq!(
            out.status.code(),
            Some(1),
            "{}: {}",
            self.table,
            stdout(&out)
        );
        let said = stderr(&out);
        assert!(
            said.contains(&format!("uses the Delta feature {feature:?}"))
                && said.contains("the table is unchanged"),
            "{}: {said}",
            self.table
        );
        assert_eq!(files(&table), before, "{}", self.table);
        // maintain opens the table the same way, and is refused the same way.
        let out = deltaload(&sb, &["--spec", "spec.toml", "maintain"], None);
        assert_ne!(out.status.code(), Some(0), "{}: maintain", self.table);
        assert!(
            stderr(&out).contains(&format!("uses the Delta feature {feature:?}")),
            "{}: {}",
            self.table,
            stderr(&out)
        );
        assert_eq!(files(&table), before, "{}: maintain", self.table);
    }
}

fn int(v: i64) -> Value {
    Value::String(v.to_string())
}

/// Sorts rows as the readers do, by their first value as a number.
fn by_number(rows: &mut [Vec<Value>]) {
    rows.sort_by_key(|r| r[0].as_str().and_then(|s| s.parse::<i64>().ok()));
}

#[test]
fn spark_deletion_vectors_are_kept_and_a_rewritten_file_keeps_deleted_rows_deleted() {
    let case = Case {
        table: "table-with-dv-small",
        spec: "keys = [\"value\"]",
        columns: &[("value", "int")],
        changes: "{\"value\": 20}\n{\"value\": 3, \"op\": \"d\"}\n",
        keys: &["value"],
    };
    // Spark deleted 0 and 9 with a deletion vector: the file that held 3 is
    // rewritten without them.
    case.loads(&["value"], |rows| {
        assert_eq!(rows.len(), 8, "Spark's table reads 1 to 8");
        rows.retain(|r| r[0] != int(3));
        rows.push(vec![int(20)]);
        by_number(rows);
    });
}

#[test]
fn a_table_upgraded_to_deletion_vectors_with_append_only_and_invariants_listed_loads() {
    let case = Case {
        table: "table_with_deletion_logs",
        spec: "keys = [\"id\"]",
        columns: &[
            ("address", "string"),
            ("age", "double"),
            ("company", "string"),
            ("id", "bigint"),
            ("name", "string"),
            ("nbr", "bigint"),
            ("phone_number", "string"),
        ],
        changes: "{\"id\": 10, \"name\": \"Holly Wade-Smith\", \"nbr\": 1111}\n\
                  {\"id\": 5000, \"name\": \"New\", \"nbr\": 7}\n",
        keys: &["id"],
    };
    case.loads(&["id", "name", "nbr", "address"], |rows| {
        assert_eq!(rows.len(), 98);
        let ten = rows.iter_mut().find(|r| r[0] == int(10)).expect("id 10");
        // An update sets every column the change has; the others read null.
        *ten = vec![int(10), "Holly Wade-Smith".into(), int(1111), Value::Null];
        rows.push(vec![int(5000), "New".into(), int(7), Value::Null]);
        by_number(rows);
    });
}

#[test]
fn a_table_partitioned_by_an_int_and_a_string_loads() {
    let case = Case {
        table: "delta-2.2.0-partitioned-types",
        spec: "keys = [\"c3\"]\npartition_by = [\"c1\", \"c2\"]",
        columns: &[("c1", "int"), ("c2", "string"), ("c3", "int")],
        changes: "{\"c1\": 7, \"c2\": \"d\", \"c3\": 7}\n{\"c1\": 5, \"c2\": \"b\", \"c3\": 6, \"op\": \"d\"}\n",
        keys: &["c3"],
    };
    case.loads(&["c3", "c1", "c2"], |rows| {
        rows.retain(|r| r[0] != int(6));
        rows.push(vec![int(7), int(7), "d".into()]);
        by_number(rows);
    });
}

#[test]
fn a_table_of_timestamps_near_the_ends_of_the_range_loads() {
    let case = Case {
        table: "table_with_edge_timestamps",
        spec: "keys = [\"SOME_VALUE\"]",
        columns: &[("BIG_DATE", "timestamp"), ("NORMAL_DATE", "timestamp"), ("SOME_VALUE", "int")],
        changes: "{\"BIG_DATE\": \"1816-03-27T05:56:08.066278Z\", \"NORMAL_DATE\": \"2022-03-01T00:00:00Z\", \"SOME_VALUE\": 3}\n\
                  {\"BIG_DATE\": \"9999-12-30T00:00:00Z\", \"NORMAL_DATE\": \"2022-02-02T00:00:00Z\", \"SOME_VALUE\": 2}\n",
        keys: &["SOME_VALUE"],
    };
    case.loads(&["SOME_VALUE", "BIG_DATE", "NORMAL_DATE"], |rows| {
        // Spark wrote 9999-12-31 and 9999-12-30 as INT96 (Python deltalake's
        // SQL reads them wrapped around to 1816; each reader's own view of the
        // untouched row is the model's). The update writes 9999-12-30 again.
        let two = rows.iter_mut().find(|r| r[0] == int(2)).expect("value 2");
        two[1] = "9999-12-30T00:00:00Z".into();
        two[2] = "2022-02-02T00:00:00Z".into();
        rows.push(vec![
            int(3),
            "1816-03-27T05:56:08.066278Z".into(),
            "2022-03-01T00:00:00Z".into(),
        ]);
        by_number(rows);
    });
}

#[test]
fn column_mapping_identity_columns_and_liquid_clustering_are_refused_untouched() {
    Case {
        table: "table_with_column_mapping",
        spec: "keys = [\"Super Name\"]\npartition_by = [\"Company Very Short\"]",
        columns: &[("Company Very Short", "string"), ("Super Name", "string")],
        changes: "{\"Company Very Short\": \"BMS\", \"Super Name\": \"New\"}\n",
        keys: &["Super Name"],
    }
    .refused("columnMapping");
    V2_CHECKPOINTS.refused("identityColumns");
    Case {
        table: "table_with_liquid_clustering",
        spec: "keys = [\"id\"]",
        columns: &[("id", "bigint")],
        changes: "{\"id\": 100}\n",
        keys: &["id"],
    }
    .refused("domainMetadata");
}

/// Databricks' table with v2 checkpoints and an identity column.
const V2_CHECKPOINTS: Case = Case {
    table: "checkpoint-v2-table",
    spec: "keys = [\"id\"]",
    columns: &[
        ("id", "bigint"),
        ("name", "string"),
        ("created_at", "timestamp"),
    ],
    changes: "{\"id\": 1000, \"name\": \"New\", \"created_at\": \"2025-08-10T00:00:00Z\"}\n",
    keys: &["id"],
};

/// Databricks' v2-checkpoint table without its identity column: a commit
/// of the test's own drops the column's identity and the feature, and
/// leaves `v2Checkpoint` with `delta.checkpointInterval = 2`.
const WITHOUT_IDENTITY: &str = r#"
import json, os, sys
log = os.path.join(sys.argv[1], "_delta_log")
with open(os.path.join(log, "00000000000000000009.json")) as f:
    meta = next(json.loads(l) for l in f if '"metaData"' in l)["metaData"]
schema = json.loads(meta["schemaString"])
for field in schema["fields"]:
    field["metadata"] = {}
meta["schemaString"] = json.dumps(schema)
protocol = {"minReaderVersion": 3, "minWriterVersion": 7, "readerFeatures": ["v2Checkpoint"],
            "writerFeatures": ["v2Checkpoint", "appendOnly", "invariants"]}
with open(os.path.join(log, "00000000000000000010.json"), "w") as f:
    f.write(json.dumps({"protocol": protocol}) + "\n" + json.dumps({"metaData": meta}) + "\n")
sys.stdout.flush()
os._exit(0)
"#;

/// What the table's newest checkpoint is and holds.
const CHECKPOINT: &str = r#"
import json, os, sys, glob
import pyarrow.parquet as pq
log = os.path.join(sys.argv[1], "_delta_log")
last = json.load(open(os.path.join(log, "_last_checkpoint")))
files = glob.glob(os.path.join(log, "%020d.checkpoint*.parquet" % last["version"]))
names = set()
for f in files:
    names |= set(pq.read_table(f).column_names)
print(json.dumps({"version": last["version"], "checkpointMetadata": "checkpointMetadata" in names}))
sys.stdout.flush()
os._exit(0)
"#;

#[test]
fn a_table_with_v2_checkpoints_loads_and_its_checkpoints_follow_the_v2_spec() {
    let sb = V2_CHECKPOINTS.sandbox();
    let table = sb.lake_dir().join(V2_CHECKPOINTS.table);
    run_python(WITHOUT_IDENTITY, &[table.to_str().expect("utf-8")]);
    V2_CHECKPOINTS.loads_in(&sb, &["id", "name"], |rows| {
        assert_eq!(rows.len(), 44);
        rows.push(vec![int(1000), "New".into()]);
        by_number(rows);
    });
    // Every second commit writes a checkpoint (the table's interval): one
    // of deltaload's, to the V2 spec the table's policy asks for.
    let found = run_python(CHECKPOINT, &[table.to_str().expect("utf-8")]);
    let found: Value = serde_json::from_slice(&found.stdout).expect("JSON");
    assert!(
        found["version"].as_u64().expect("a version") > 10,
        "{found}"
    );
    assert_eq!(found["checkpointMetadata"], true, "{found}");
}
