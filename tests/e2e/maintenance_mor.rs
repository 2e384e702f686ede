//! `deltaload maintain` on merge-on-read tables and their history: files
//! whose rows deletion vectors mark deleted are compacted without those
//! rows, and loads go on to the rows of a lake never compacted.

use deltaload_tests::Sandbox;

/// Whether any commit of the table at `dir` added a file with a deletion vector.
fn has_deletion_vectors(dir: &std::path::Path) -> bool {
    let log = std::fs::read_dir(dir.join("_delta_log")).expect("log");
    log.filter_map(Result::ok)
        .filter(|e| e.path().extension().is_some_and(|x| x == "json"))
        .any(|e| {
            let text = std::fs::read_to_string(e.path()).expect("commit");
            text.contains("\"deletionVector\":{")
        })
}

/// A sandbox of the customers dataset, merge-on-read with a history and a
/// feed, and the `show --format csv` of its table and history.
fn customers() -> (Sandbox, impl Fn(&Sandbox) -> [String; 2]) {
    let text = crate::history::spec_text("merge_on_read = true\nchange_data_feed = true");
    let sb = crate::example_sandbox(&text, ("history", "changes"), &[]);
    let shown = |sb: &Sandbox| {
        ["customers", "history_customers"]
            .map(|t| crate::with_spec_ok(sb, &["show", t, "--format", "csv"]))
    };
    (sb, shown)
}

/// Loads `raw/c{n}.csv`: customers `n..n + 4` changed at `10 * n`, the first deleted.
fn load_customers(sb: &Sandbox, n: i64) -> String {
    let tiers = ["gold", "silver", "bronze"];
    let events: Vec<crate::history::Event> = (0..4u8)
        .map(|i| {
            (
                n as u8 + i,
                10 * n,
                i == 0 && n > 1,
                tiers[(n as usize + i as usize) % 3],
                "x@y",
            )
        })
        .collect();
    sb.file(&format!("c{n}.csv"), crate::history::csv(&events));
    let out = crate::with_spec_ok(sb, &["load", &format!("raw/c{n}.csv")]);
    // Maintain's commits move the table's version on.
    out.split(", table version")
        .next()
        .unwrap_or_default()
        .to_string()
}

/// A merge-on-read table and its history, rows of both marked deleted in
/// deletion vectors, compacted by maintain: not a row of either changes,
/// and the next load gives the figures and history it gives without it.
#[tokio::test(flavor = "multi_thread")]
async fn maintain_compacts_merge_on_read_tables_and_their_history_without_changing_a_row() {
    let (sb, shown) = customers();
    let (clean, _) = customers();
    for n in 1..=5 {
        assert_eq!(load_customers(&sb, n), load_customers(&clean, n));
    }
    for table in ["customers", "history_customers"] {
        assert!(has_deletion_vectors(&sb.lake_dir().join(table)), "{table}");
    }
    let before = shown(&sb);
    let out = crate::with_spec_ok(&sb, &["maintain"]);
    for table in ["customers", "history_customers"] {
        let line = (out.lines())
            .find(|l| l.starts_with(&format!("{table}: ")))
            .unwrap_or_else(|| panic!("{out}"));
        assert!(!line.contains("(0 compacted"), "{line}");
    }
    assert_eq!(shown(&sb), before);
    assert_eq!(load_customers(&sb, 6), load_customers(&clean, 6));
    let [table, history] = shown(&sb);
    let [clean_table, clean_history] = shown(&clean);
    let rows = crate::shown_versions(&history);
    assert_eq!(rows, crate::shown_versions(&clean_history));
    assert!(rows.len() > 5, "{history}");
    assert_eq!(crate::shown_rows(&table), crate::shown_rows(&clean_table));
}
