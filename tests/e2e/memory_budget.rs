//! Loads within a tiny memory budget (files read in pieces into many sorted
//! runs, tables rewritten by slices of a few keys) give exactly what loads
//! with no budget give: every table, every figure, every outcome.

use deltaload_core::Spec;
use deltaload_lake::{
    lake_url, Lake, LakeRoot, LoadOptions, LoadOutcome, MemoryBudget, SourceFile, Spills,
};
use deltaload_tests::lake_state_of;
use proptest::prelude::*;
use std::path::Path;

/// A budget of 16 KiB: files over 1.6 KB are read in 1 KiB pieces, and
/// tables are rewritten by slices of 16 keys.
pub(crate) const TINY: u64 = 16 << 10;

/// One line of an orders file: keys from a small range (updates, stale
/// changes, ties on `updated_at`), text needing quotes, and rejects.
fn line() -> impl Strategy<Value = String> {
    (0u32..120, 1u32..4, 0usize..3, 0u32..10).prop_map(|(id, day, status, kind)| {
        let status = ["placed", "shipped", "paid"][status];
        let at = format!("2026-10-0{day}T00:00:00");
        match kind {
            0 => format!("{id},\"C,{id}\r\nx\",{status},1.00,EUR,{at},{at}"),
            1 => format!("{id},C{id},{status},abc,EUR,{at},{at}"),
            2 => String::new(),
            _ => format!("{id},C{id},{status},{day}.50,EUR,{at},{at}"),
        }
    })
}

fn file() -> impl Strategy<Value = Vec<u8>> {
    (prop::collection::vec(line(), 0..150), any::<bool>()).prop_map(|(lines, crlf)| {
        let end = if crlf { "\r\n" } else { "\n" };
        let mut text =
            format!("order_id,customer_id,status,amount,currency,ordered_at,updated_at{end}");
        for l in lines {
            text.push_str(&l);
            text.push_str(end);
        }
        text.into_bytes()
    })
}

pub(crate) fn source(dir: &Path, name: &str, bytes: &[u8], on_disk: bool) -> SourceFile {
    let path = dir.join(name);
    std::fs::write(&path, bytes).unwrap();
    let location = deltaload_lake::local_source(path.to_str().unwrap()).unwrap();
    match on_disk {
        true => SourceFile {
            on_disk: Some(deltaload_lake::OnDisk::at(path)),
            ..SourceFile::in_memory(location, Vec::new())
        },
        false => SourceFile::in_memory(location, bytes.to_vec()),
    }
}

/// An orders file of `ids`, each with `status` on day `day` of October.
fn orders(ids: impl IntoIterator<Item = u32>, status: &str, day: u32) -> String {
    let mut csv = String::from(deltaload_tests::HEADER);
    for id in ids {
        csv.push_str(&format!(
            "{id},C{id},{status},1.00,EUR,,2026-10-0{day}T00:00:00\n"
        ));
    }
    csv
}

/// Loads `files` (the last two as one batch) into a lake at `root`, within
/// `budget`; returns the outcomes and what went through the spill directory.
pub(crate) async fn load_all(
    root: &LakeRoot,
    spec: &Spec,
    budget: MemoryBudget,
    files: &[SourceFile],
) -> (Vec<LoadOutcome>, Spills) {
    let mut lake = Lake::open_spec(root, spec).await.unwrap();
    lake.set_memory_budget(budget);
    let mut outcomes = Vec::new();
    let split = files.len().saturating_sub(2);
    for file in &files[..split] {
        outcomes.push(lake.load(file, LoadOptions::default()).await.unwrap());
    }
    outcomes.extend(
        lake.load_batch(files[split..].to_vec(), LoadOptions::default())
            .await
            .unwrap(),
    );
    (outcomes, lake.spills())
}

/// The outcomes without table versions (slices and one pass may commit at
/// different versions when nothing changes).
fn figures(outcomes: &[LoadOutcome]) -> Vec<String> {
    outcomes
        .iter()
        .map(|o| match o {
            LoadOutcome::Loaded(done) => format!("loaded {:?}", done.figures),
            LoadOutcome::Skipped { .. } => "skipped".to_string(),
            LoadOutcome::Refused(m) => format!("refused {}", m.problem),
        })
        .collect()
}

async fn same_with_and_without_a_budget(merge_on_read: bool, files: Vec<Vec<u8>>) {
    let text = deltaload_core::spec::ORDERS_SPEC.replacen(
        "keys = [\"order_id\"]",
        &format!("merge_on_read = {merge_on_read}\nkeys = [\"order_id\"]"),
        1,
    );
    let spec = Spec::parse(&text, "orders.toml").unwrap();
    let dir = tempfile::tempdir().unwrap();
    let landing = dir.path().join("landing");
    std::fs::create_dir_all(&landing).unwrap();
    let sources: Vec<SourceFile> = files
        .iter()
        .enumerate()
        .map(|(i, bytes)| source(&landing, &format!("f{i}.csv"), bytes, i % 2 == 0))
        .collect();
    let root = |name: &str| lake_url(dir.path().join(name).to_str().unwrap()).unwrap();
    let spill = dir.path().join("spill");
    std::fs::create_dir_all(&spill).unwrap();
    let (free, no_spills) =
        load_all(&root("free"), &spec, MemoryBudget::unlimited(), &sources).await;
    let tiny = MemoryBudget::of(TINY, spill.clone());
    let large = files
        .iter()
        .filter(|f| !tiny.fits_whole(f.len() as u64))
        .count();
    let (bounded, spills) = load_all(&root("tiny"), &spec, tiny, &sources).await;
    assert_eq!(figures(&bounded), figures(&free), "figures");
    // The path under test ran: every file over the budget was read in pieces.
    assert_eq!(no_spills, Spills::default());
    assert_eq!(spills.files_in_pieces, large as u64, "{spills:?}");
    let free = lake_state_of(&root("free"), &spec, "", "").await;
    let bounded = lake_state_of(&root("tiny"), &spec, "", "").await;
    assert_eq!(bounded, free, "tables");
    assert_eq!(
        std::fs::read_dir(&spill).unwrap().count(),
        0,
        "spills removed"
    );
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 12, ..ProptestConfig::default() })]

    #[test]
    fn loads_within_a_tiny_budget_equal_loads_without_one(
        merge_on_read in any::<bool>(),
        files in prop::collection::vec(file(), 1..5),
    ) {
        deltaload_tests::runtime().block_on(same_with_and_without_a_budget(merge_on_read, files));
    }
}

/// Loads `file` into a lake of `spec` at `root` within the tiny budget
/// (spilling under `dir`), which must refuse it; the lake and the refusal.
async fn refused_within_tiny(
    root: &LakeRoot,
    spec: &Spec,
    dir: &Path,
    file: &SourceFile,
) -> (Lake, String) {
    let mut lake = Lake::open_spec(root, spec).await.unwrap();
    lake.set_memory_budget(MemoryBudget::of(TINY, dir.to_path_buf()));
    let outcome = lake.load(file, LoadOptions::default()).await.unwrap();
    let LoadOutcome::Refused(refused) = outcome else {
        panic!("not refused: {outcome:?}");
    };
    (lake, refused.to_string())
}

/// A file too large for the budget that cannot be read in pieces (a dataset
/// with deletes) is refused up front, the reason in the ledger, nothing
/// written; within a larger budget the same file loads.
#[tokio::test]
async fn a_file_that_cannot_load_within_the_budget_is_refused_with_the_reason_in_the_ledger() {
    let text = deltaload_core::spec::ORDERS_SPEC.replacen(
        "keys = [\"order_id\"]",
        "delete_when = { column = \"op\", in = [\"D\"] }\nkeys = [\"order_id\"]",
        1,
    );
    let spec = Spec::parse(&text, "orders.toml").unwrap();
    let dir = tempfile::tempdir().unwrap();
    let mut csv =
        String::from("order_id,customer_id,status,amount,currency,ordered_at,updated_at,op\n");
    for id in 0..100 {
        csv.push_str(&format!("{id},C,placed,1.00,EUR,,2026-10-01T00:00:00,U\n"));
    }
    let file = source(dir.path(), "big.csv", csv.as_bytes(), true);
    let root = lake_url(dir.path().join("lake").to_str().unwrap()).unwrap();
    let (mut lake, said) = refused_within_tiny(&root, &spec, dir.path(), &file).await;
    for words in ["memory budget", "delete_when", "raise the memory budget"] {
        assert!(said.contains(words), "{said}");
    }
    // The file is not wrong: it ended "fix the file and upload it again".
    assert!(!said.contains("fix the file"), "{said}");
    let state = lake_state_of(&root, &spec, "", "").await;
    let ledger = &state[state.len() - 2];
    assert_eq!(ledger.len(), 1);
    assert_eq!(ledger[0][3], "refused");
    assert!(ledger[0][4].contains("memory budget"), "{:?}", ledger[0]);
    assert!(state[0].is_empty(), "nothing written");

    lake.set_memory_budget(MemoryBudget::of(64 << 20, dir.path().to_path_buf()));
    let outcome = lake.load(&file, LoadOptions::default()).await.unwrap();
    assert!(matches!(outcome, LoadOutcome::Loaded(_)), "{outcome:?}");
}

/// An AWS DMS file beyond the budget is refused for its preset's deletes,
/// not for a delete_when the spec does not have.
#[tokio::test]
async fn a_dms_file_beyond_the_budget_is_refused_for_its_presets_deletes() {
    let text = "[[dataset]]\nname = \"employees\"\npreset = \"aws_dms\"\nkeys = [\"id\"]\n\
        [[dataset.columns]]\nname = \"id\"\ntype = \"bigint\"\n\
        [[dataset.columns]]\nname = \"city\"\ntype = \"string\"\n";
    let spec = Spec::parse(text, "employees.toml").unwrap();
    let dir = tempfile::tempdir().unwrap();
    let csv: String = (0..1_000).map(|id| format!("I,{id},Denver\n")).collect();
    let file = source(dir.path(), "20261201-101600456.csv", csv.as_bytes(), true);
    let root = lake_url(dir.path().join("lake").to_str().unwrap()).unwrap();
    let (_, said) = refused_within_tiny(&root, &spec, dir.path(), &file).await;
    assert!(
        said.contains("the dataset has deletes (its preset's)"),
        "{said}"
    );
}

/// A file of 2,000 orders within the tiny budget: read in pieces into many
/// runs, upserted by many slices, and the table the same as without a budget.
#[tokio::test]
async fn a_large_file_is_read_in_pieces_into_runs_and_upserted_by_slices() {
    let spec = Spec::parse(deltaload_core::spec::ORDERS_SPEC, "orders.toml").unwrap();
    let dir = tempfile::tempdir().unwrap();
    let csv = orders(0..2_000, "placed", 1);
    let file = source(dir.path(), "big.csv", csv.as_bytes(), true);
    let root = |name: &str| lake_url(dir.path().join(name).to_str().unwrap()).unwrap();
    let (_, none) = load_all(
        &root("free"),
        &spec,
        MemoryBudget::unlimited(),
        std::slice::from_ref(&file),
    )
    .await;
    let tiny = MemoryBudget::of(TINY, dir.path().to_path_buf());
    let (outcomes, spills) = load_all(&root("tiny"), &spec, tiny, &[file]).await;
    assert!(
        matches!(outcomes[..], [LoadOutcome::Loaded(_)]),
        "{outcomes:?}"
    );
    assert_eq!(none, Spills::default());
    assert_eq!(spills.files_in_pieces, 1, "{spills:?}");
    assert!(spills.runs_written > 10, "{spills:?}");
    assert!(spills.slices > 10, "{spills:?}");
    assert_eq!(
        lake_state_of(&root("tiny"), &spec, "", "").await,
        lake_state_of(&root("free"), &spec, "", "").await
    );
}

/// Within a 4 MiB budget the pieces (128 KiB of text each) are held in
/// Arrow until the bytes they take, measured, reach the budget's share for
/// them (512 KiB): fewer runs than pieces, each cut by that measure.
#[tokio::test]
async fn pieces_are_held_until_their_measured_bytes_reach_the_share() {
    let spec = Spec::parse(deltaload_core::spec::ORDERS_SPEC, "orders.toml").unwrap();
    let dir = tempfile::tempdir().unwrap();
    let csv = orders(0..40_000, "placed", 1);
    let file = source(dir.path(), "big.csv", csv.as_bytes(), true);
    let budget = MemoryBudget::of(4 << 20, dir.path().to_path_buf());
    let (share, piece) = (budget.run_bytes(), budget.piece_bytes() as u64);
    let pieces = csv.len() as u64 / piece;
    let root = lake_url(dir.path().join("lake").to_str().unwrap()).unwrap();
    let (outcomes, spills) = load_all(&root, &spec, budget, &[file]).await;
    assert!(
        matches!(outcomes[..], [LoadOutcome::Loaded(_)]),
        "{outcomes:?}"
    );
    assert_eq!(spills.files_in_pieces, 1, "{spills:?}");
    assert!(spills.most_held >= share, "{spills:?}, share {share}");
    assert!(
        spills.runs_written > 1 && spills.runs_written < pieces,
        "{spills:?}, {pieces} pieces"
    );
}

/// Loads `files` one by one into a lake at `root` whose copy-on-write
/// upserts read `group_bytes` of Parquet at a time; the lake's write figures.
async fn load_grouped(
    root: &LakeRoot,
    spec: &Spec,
    files: &[SourceFile],
    group_bytes: u64,
) -> (deltaload_lake::EngineWrites, deltaload_lake::OrdersFiles) {
    let mut lake = Lake::open_spec(root, spec).await.unwrap();
    lake.set_rewrite_group_bytes(group_bytes);
    for file in files {
        lake.load(file, LoadOptions::default()).await.unwrap();
    }
    (lake.writes_by_engine(), lake.orders_files())
}

/// Four files of orders in disjoint key ranges, then changes that update
/// rows of each and insert keys between and after them. Rewritten a file at
/// a time (groups of one file), the table is that of a rewrite in one group,
/// and the rows that do not fill a new file move on to the next group: the
/// load adds as few files as in one group.
#[tokio::test]
async fn a_rewrite_by_groups_of_files_writes_what_one_group_writes() {
    let spec = Spec::parse(deltaload_core::spec::ORDERS_SPEC, "orders.toml").unwrap();
    let dir = tempfile::tempdir().unwrap();
    let mut files: Vec<SourceFile> = [0u32, 1000, 2000, 3000]
        .iter()
        .map(|&start| {
            let csv = orders(start..start + 500, "placed", 1);
            source(
                dir.path(),
                &format!("book{start}.csv"),
                csv.as_bytes(),
                false,
            )
        })
        .collect();
    let csv = orders((0..4000).step_by(7), "shipped", 2);
    files.push(source(dir.path(), "changes.csv", csv.as_bytes(), false));
    let root = |name: &str| lake_url(dir.path().join(name).to_str().unwrap()).unwrap();
    let default = deltaload_lake::REWRITE_GROUP_BYTES;
    let (one, one_files) = load_grouped(&root("one"), &spec, &files, default).await;
    let (by_file, by_file_files) = load_grouped(&root("by_file"), &spec, &files, 1).await;
    // Each load is one group; the last, rewriting four files, four by file.
    assert_eq!((one.groups, by_file.groups), (5, 8), "{one:?} {by_file:?}");
    assert_eq!(by_file_files.rewritten, 4, "{by_file_files:?}");
    assert_eq!(by_file_files.added, one_files.added, "{by_file_files:?}");
    assert_eq!(
        lake_state_of(&root("by_file"), &spec, "", "").await,
        lake_state_of(&root("one"), &spec, "", "").await
    );
}
