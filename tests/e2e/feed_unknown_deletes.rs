//! The change data feed of a dataset with no sequence whose files delete
//! keys the table does not hold: written alike by each engine (see
//! [`crate::change_feed`]).

use crate::change_feed::{change, follow};
use deltaload_core::Spec;
use deltaload_lake::Engine;

/// With no sequence, a file deleting a key the table does not hold, another
/// it holds, and inserting a third: the first delete changes nothing, and
/// the feed holds the other delete and the insert, written by the keyed
/// upsert, by delta-rs's MERGE, and by the MERGE of a partitioned table
/// (whose all-null feed row for the unknown key had failed the load; the
/// delete is now left out of its source, and counted).
#[tokio::test(flavor = "multi_thread")]
async fn a_delete_of_an_unknown_key_beside_an_insert_feeds_the_insert_alone() {
    let no_sequence = |extra: &str| {
        let text = (crate::upsert_engines::ITEMS.replace("sequence_by = [\"version\"]\n", ""))
            .replace(
                "update_columns = [\"version\", \"price\"]",
                &format!(
                    "change_data_feed = true\ndelete_when = {{ column = \"op\", in = [\"d\"] }}\n{extra}"
                ),
            );
        Spec::parse(&text, "items.toml").expect("items spec")
    };
    let first = vec![change(1, 1, Some(1), false), change(2, 1, Some(1), false)];
    let second = vec![
        change(9, 2, None, true),
        change(1, 2, None, true),
        change(3, 2, Some(3), false),
    ];
    let files = [first, second];
    let keyed = follow(&no_sequence(""), Engine::Keyed, &files, 1).await;
    let row = |r: [&str; 5]| r.map(str::to_string).to_vec();
    let expected = vec![
        (
            "delete".to_string(),
            row(["1", "1", "1", "n", "/landing/f0.jsonl"]),
        ),
        (
            "insert".to_string(),
            row(["3", "2", "3", "n", "/landing/f1.jsonl"]),
        ),
    ];
    assert_eq!(keyed.feed.len(), 2, "{:?}", keyed.feed);
    assert_eq!(keyed.feed[1], expected);
    assert_eq!(keyed.figures[1], (1, 0, 1));
    assert_eq!(keyed.left_out, 0);
    for (name, spec, engine) in [
        ("merge", no_sequence(""), Engine::Merge),
        (
            "partitioned",
            no_sequence("partition_by = [\"note\"]"),
            Engine::Keyed,
        ),
    ] {
        let merged = follow(&spec, engine, &files, 1).await;
        assert!(merged.merges > 0, "{name}: not written by the MERGE");
        assert_eq!(merged.left_out, 1, "{name}: the unknown key's delete");
        assert_eq!(merged.feed, keyed.feed, "{name}");
        assert_eq!(merged.figures, keyed.figures, "{name}");
    }
}
