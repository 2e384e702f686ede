//! Writers racing on one history: four processes' worth of lakes load
//! files of the same keys at once, late changes and deletes among them.
//! Their history commits conflict and run again on the newer log, so the
//! history ends as a sequential model of every change gives it, and the
//! table holds its current versions.

use crate::history::{csv, model, spec, Event, VERSIONS};
use deltaload_lake::{Lake, SourceFile, TableName};

/// Writer `w`'s file `n`: a change of each of the keys 0..4, their
/// sequences spread over every writer's files (so that most files hold
/// changes older than another writer's: late), a delete now and then.
fn events(w: usize, n: usize) -> Vec<Event> {
    (0..4u8)
        .map(|id| {
            let slot = (n * 4 + w) as i64;
            let at = 10 * ((slot * 7 + i64::from(id) * 5) % 61) + i64::from(id);
            let delete = (slot + i64::from(id)) % 5 == 0;
            let tier = ["gold", "silver"][(slot as usize + usize::from(id)) % 2];
            (id, at, delete, tier, ["a@x", "b@x"][n % 2])
        })
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn four_writers_racing_on_one_history_give_the_models_history() {
    for (name, spec, tier_only) in [
        ("tier tracked", spec("history_columns = [\"tier\"]"), true),
        (
            "merge-on-read, feed",
            spec("merge_on_read = true\nchange_data_feed = true"),
            false,
        ),
    ] {
        let (_dir, root, lake) = crate::snapshots::fresh(&spec).await;
        drop(lake); // the tables exist before the race
        let mut writers = Vec::new();
        for w in 0..4 {
            let mut lake = Lake::open_spec(&root, &spec).await.expect("lake opens");
            writers.push(async move {
                let files = (0..4).map(|n| {
                    let location = format!("/landing/w{w}/{n}.csv");
                    SourceFile::in_memory(location, csv(&events(w, n)))
                });
                let loaded = deltaload_tests::load_one_by_one(&mut lake, w as u64, files).await;
                (loaded, lake.commit_retries())
            });
        }
        // Polled together: their commits interleave at every await.
        let mut retries = 0;
        for (loaded, r) in futures::future::join_all(writers).await {
            assert_eq!(loaded, 4, "{name}");
            retries += r;
        }
        assert!(retries > 0, "{name}: the writers never conflicted");
        let all: Vec<Event> = (0..4)
            .flat_map(|w| (0..4).flat_map(move |n| events(w, n)))
            .collect();
        let history = TableName::History(spec.datasets[0].clone());
        let history = deltaload_lake::table_rows(&root, &history, VERSIONS).await;
        let history = history.expect("history");
        assert_eq!(
            history,
            model(&all.iter().collect::<Vec<_>>(), tier_only),
            "{name}"
        );
        let target = TableName::Target(spec.datasets[0].clone());
        let current = deltaload_lake::table_rows(&root, &target, "id, tier, email").await;
        let open: Vec<Vec<String>> = (history.iter())
            .filter(|r| r[4] == "NULL")
            .map(|r| r[..3].to_vec())
            .collect();
        assert_eq!(
            current.expect("table"),
            open,
            "{name}: the current versions"
        );
    }
}
