//! A table that Spark or Databricks also writes holds text statistics cut
//! to 32 characters: a file's `maxValues` is then a prefix of its real
//! greatest key. Keys sharing a 40-character prefix, in a file whose
//! statistics were cut so, are still found: an update updates, never inserts
//! the key a second time.

use deltaload_core::Spec;
use deltaload_lake::{LoadOutcome, TableName};
use deltaload_tests::Sandbox;

const SPEC: &str = r#"[[dataset]]
name = "things"
format = "jsonl"
keys = ["k"]
sequence_by = ["v"]
LAYOUT
[[dataset.columns]]
name = "k"
type = "string"
[[dataset.columns]]
name = "v"
type = "int"
"#;

/// Cuts the text statistics of every file the log adds to `len`
/// characters, as Spark writes them.
fn cut_statistics(table: &std::path::Path, len: usize) -> usize {
    let mut cut = 0;
    for entry in std::fs::read_dir(table.join("_delta_log")).unwrap() {
        let path = entry.unwrap().path();
        if path.extension().is_none_or(|e| e != "json") {
            continue;
        }
        let text = std::fs::read_to_string(&path).unwrap();
        let mut lines = Vec::new();
        for line in text.lines() {
            let mut action: serde_json::Value = serde_json::from_str(line).unwrap();
            if let Some(stats) = action["add"]["stats"].as_str() {
                let mut stats: serde_json::Value = serde_json::from_str(stats).unwrap();
                for side in ["minValues", "maxValues"] {
                    if let Some(s) = stats[side]["k"].as_str() {
                        let short: String = s.chars().take(len).collect();
                        cut += usize::from(short.len() < s.len());
                        stats[side]["k"] = serde_json::json!(short);
                    }
                }
                action["add"]["stats"] = serde_json::json!(stats.to_string());
            }
            lines.push(action.to_string());
        }
        std::fs::write(&path, lines.join("\n") + "\n").unwrap();
    }
    cut
}

fn lines(keys: &[String], v: i32) -> String {
    keys.iter()
        .map(|k| serde_json::json!({"k": k, "v": v}).to_string() + "\n")
        .collect()
}

#[tokio::test(flavor = "multi_thread")]
async fn keys_above_a_cut_maximum_are_updated_not_inserted_twice() {
    let shared = "p".repeat(40);
    let keys: Vec<String> = ["a", "m", "z"]
        .iter()
        .map(|s| format!("{shared}{s}"))
        .collect();
    for layout in ["", "merge_on_read = true"] {
        let spec = Spec::parse(&SPEC.replace("LAYOUT", layout), "things.toml").unwrap();
        let sb = Sandbox::with_spec(spec);
        sb.load(&sb.file("a.jsonl", lines(&keys, 1)), false).await;
        let table = sb.lake_dir().join("things");
        assert!(cut_statistics(&table, 32) >= 2, "the statistics were cut");
        // "…m" and "…z" sort above the cut maximum (32 p's).
        let changed = vec![keys[1].clone(), keys[2].clone()];
        let out = sb
            .load(&sb.file("b.jsonl", lines(&changed, 2)), false)
            .await;
        let LoadOutcome::Loaded(loaded) = out else {
            panic!("{out:?}")
        };
        assert_eq!(
            (loaded.figures.updated, loaded.figures.inserted),
            (2, 0),
            "{layout}: {:?}",
            loaded.figures
        );
        let d = sb.spec.datasets[0].clone();
        let rows = sb.rows(TableName::Target(d), "k, v").await;
        let expected: Vec<Vec<String>> = vec![
            vec![keys[0].clone(), "1".into()],
            vec![keys[1].clone(), "2".into()],
            vec![keys[2].clone(), "2".into()],
        ];
        assert_eq!(rows, expected, "{layout}: every key once, updated");
    }
}
