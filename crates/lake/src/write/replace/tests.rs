use super::*;
use crate::{lake_url, Lake, SourceFile};
use deltaload_core::{Reconciliation, Reject, RejectReason, Value};
use deltaload_flow::{LedgerRow, LedgerStatus};

/// Locations with the characters that break a predicate built from text.
const LOCATIONS: [&str; 6] = [
    "s3://b/a'b.csv",
    "s3://b/100%.csv",
    "s3://b/new\nline.csv",
    "s3://b/ünï.csv",
    "s3://b/back\\slash \"q\".csv",
    "s3://b/z.csv",
];

/// A small deterministic generator (xorshift), so a failure replays.
struct Rng(u64);

impl Rng {
    fn below(&mut self, n: usize) -> usize {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        (self.0 % n as u64) as usize
    }

    /// 1 to `most` distinct picks of `0..n`.
    fn some(&mut self, n: usize, most: usize) -> Vec<usize> {
        let mut picked: Vec<usize> = (0..1 + self.below(most)).map(|_| self.below(n)).collect();
        picked.sort_unstable();
        picked.dedup();
        picked
    }
}

fn ledger_row(location: &str, content_id: &str, size: u64, loaded: bool) -> LedgerRow {
    LedgerRow {
        dataset: "orders".into(),
        location: location.into(),
        content_id: content_id.into(),
        size,
        etag: None,
        version_id: None,
        status: match loaded {
            true => LedgerStatus::Loaded,
            false => LedgerStatus::Loading,
        },
        reason: None,
        figures: Reconciliation::default(),
        orders_version: Some(size),
        rejected_version: None,
        loaded_at: 1,
    }
}

/// One random replacement: of ledger rows (by file version) or of rejects
/// (by file, sometimes with no rows left).
fn replacement(
    rng: &mut Rng,
    lake: &Lake,
    step: u64,
) -> (TableName, Vec<RecordBatch>, Selection<'static>) {
    let ids = ["c0", "c1"];
    if rng.below(2) == 0 {
        let versions: Vec<(&'static str, &'static str)> = rng
            .some(LOCATIONS.len() * 2, 3)
            .into_iter()
            .map(|i| (LOCATIONS[i / 2], ids[i % 2]))
            .collect();
        let rows: Vec<LedgerRow> = (versions.iter())
            .map(|(l, c)| ledger_row(l, c, step, rng.below(2) == 0))
            .collect();
        let batch = crate::table::arrow_rows::ledger(&rows).unwrap();
        (
            TableName::Ledger,
            vec![batch],
            Selection::file_versions(versions),
        )
    } else {
        let dataset = lake.tables.sets[0].dataset.clone();
        let files: Vec<&'static str> = (rng.some(LOCATIONS.len(), 2).into_iter())
            .map(|i| LOCATIONS[i])
            .collect();
        let mut rows = Vec::new();
        for file in &files {
            let rejects: Vec<Reject> = (0..rng.below(3) as u64)
                .map(|line| Reject {
                    line: line + 2,
                    raw: format!("{step},x"),
                    key: Some(step.to_string()),
                    reason: RejectReason::FieldCount {
                        found: 2,
                        expected: 7,
                    },
                })
                .collect();
            if !rejects.is_empty() {
                let batch = crate::table::arrow_rows::rejects(&dataset, &rejects, file, "c0", 1);
                rows.push(batch.unwrap());
            }
        }
        let name = TableName::Rejected(dataset);
        (name, rows, Selection::is_in("source_file", files))
    }
}

fn table_of<'a>(lake: &'a mut Lake, name: &TableName) -> &'a mut DeltaTable {
    match name {
        TableName::Ledger => &mut lake.tables.ledger,
        _ => &mut lake.tables.sets[0].rejected,
    }
}

/// The rows of some random locations, as [`own_rows`] reads them from
/// `own` and as DataFusion reads them from `theirs`: sorted lines of text.
async fn select_both(
    rng: &mut Rng,
    own: &Lake,
    theirs: &Lake,
    name: &TableName,
) -> (Vec<String>, Vec<String>) {
    let (column, table, other) = match name {
        TableName::Ledger => ("location", &own.tables.ledger, &theirs.tables.ledger),
        _ => (
            "source_file",
            &own.tables.sets[0].rejected,
            &theirs.tables.sets[0].rejected,
        ),
    };
    let wanted = rng
        .some(LOCATIONS.len(), 3)
        .into_iter()
        .map(|i| LOCATIONS[i]);
    let selection = Selection::is_in(column, wanted);
    let columns = [column, "content_id"];
    let ours = own_rows(table, name, &columns, &selection)
        .await
        .unwrap()
        .unwrap();
    let filter = selection.predicate.clone();
    let expected = crate::table::select_where(&theirs.ctx, other, name, &columns, filter);
    (lines(&ours), lines(&expected.await.unwrap()))
}

/// The rows of `batches` as sorted lines of text (no header, no borders).
fn lines(batches: &[RecordBatch]) -> Vec<String> {
    let text = deltalake::arrow::util::pretty::pretty_format_batches(batches).unwrap();
    let mut lines: Vec<String> = (text.to_string().lines())
        .filter(|l| l.starts_with('|'))
        .skip(1)
        .map(String::from)
        .collect();
    lines.sort();
    lines
}

/// The table's rows as sorted lines of text.
async fn rows_of(lake: &Lake, name: &TableName) -> Vec<String> {
    let columns = match name {
        TableName::Ledger => "location, content_id, size, status, orders_version",
        _ => "source_file, content_id, line_number, raw_line, reason",
    };
    let found = crate::table::open::select_all(&lake.root, name, columns).await;
    let (_, batches) = found.unwrap().unwrap();
    lines(&batches)
}

async fn lake_in(dir: &tempfile::TempDir) -> Lake {
    let root = lake_url(dir.path().to_str().unwrap()).unwrap();
    Lake::open(&root).await.unwrap()
}

/// For random sequences of replacements of ledger rows and rejects, with
/// locations holding quotes, `%`, newlines and non-ASCII text, the tables
/// hold what delta-rs's `replaceWhere` (and delete) leaves. The run must
/// also have skipped every file once (a new location, outside all files'
/// statistics) and rewritten a file it read.
#[tokio::test]
async fn replacing_rows_leaves_what_replace_where_leaves() {
    let (mut seen, mut read_back) = (Vec::new(), 0);
    for seed in 1..=3u64 {
        let (dir_own, dir_theirs) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
        let (mut own, mut theirs) = (lake_in(&dir_own).await, lake_in(&dir_theirs).await);
        let mut rng = Rng(seed.wrapping_mul(0x9E37_79B9_7F4A_7C15));
        for step in 0..14 {
            let (name, rows, selection) = replacement(&mut rng, &own, step);
            let files = table_of(&mut own, &name).get_file_uris().unwrap().count();
            let table = table_of(&mut own, &name);
            let (after, written) = replace_rows(table, &name, rows.clone(), selection.clone())
                .await
                .unwrap();
            *table = after;
            let other = table_of(&mut theirs, &name);
            *other = delta_rs(other, &name, rows, selection.predicate)
                .await
                .unwrap()
                .0;
            let (ours, expected) = (rows_of(&own, &name).await, rows_of(&theirs, &name).await);
            assert_eq!(ours, expected, "seed {seed}, step {step}: {written:?}");
            seen.push((files, written));
            let (ours, expected) = select_both(&mut rng, &own, &theirs, &name).await;
            assert_eq!(ours, expected, "seed {seed}, step {step}: selected rows");
            read_back += usize::from(!ours.is_empty());
        }
    }
    let pruned = |&(files, w): &(usize, Written)| {
        files > 0
            && w == Written::Own {
                read: 0,
                committed: true,
            }
    };
    let rewrote = |(_, w): &(usize, Written)| matches!(w, Written::Own { read, committed: true } if *read > 0);
    assert!(
        seen.iter().any(pruned),
        "no step skipped every file: {seen:?}"
    );
    assert!(seen.iter().any(rewrote), "no step rewrote a file: {seen:?}");
    assert!(read_back > 10, "selections found rows {read_back} times");
    assert!(
        seen.iter().all(|(_, w)| *w != Written::DeltaRs),
        "these tables need no fallback: {seen:?}"
    );
}

/// Replacing the same rows again commits nothing new when there is nothing
/// to replace and no rows: a file's second load with no rejects.
#[tokio::test]
async fn nothing_selected_and_no_rows_commits_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let mut lake = lake_in(&dir).await;
    let name = TableName::Rejected(lake.tables.sets[0].dataset.clone());
    let before = lake.tables.sets[0].rejected.version();
    let selection = Selection::is_in("source_file", ["s3://b/none.csv"]);
    let (after, written) = replace_rows(&lake.tables.sets[0].rejected, &name, vec![], selection)
        .await
        .unwrap();
    assert_eq!(
        written,
        Written::Own {
            read: 0,
            committed: false
        }
    );
    assert_eq!(after.version(), before);
    lake.tables.sets[0].rejected = after;
}

const MERGE_ON_READ: &str = "[[dataset]]\nname = \"t\"\nkeys = [\"k\"]\nsequence_by = [\"s\"]\n\
    merge_on_read = true\n\
    [[dataset.columns]]\nname = \"k\"\ntype = \"string\"\n\
    [[dataset.columns]]\nname = \"s\"\ntype = \"int\"\n";

/// A file with a deletion vector is not read by this module (it would bring
/// back the rows the vector deletes): delta-rs replaces its rows.
#[tokio::test]
async fn a_file_with_a_deletion_vector_is_left_to_delta_rs() {
    let (_dir, mut lake) = crate::test_lake(MERGE_ON_READ).await;
    let file = |name: &str, text: &str| SourceFile::in_memory(name.into(), text.into());
    let first = file("/landing/f1.csv", "k,s\na,1\nb,1\nc,1\nd,1\n");
    lake.load(&first, Default::default()).await.unwrap();
    let second = file("/landing/f2.csv", "k,s\na,2\n");
    lake.load(&second, Default::default()).await.unwrap();
    let target = lake.tables.sets[0].target.clone();
    let (files, _) = candidates(&target, "k", &KeyBounds::None, usize::MAX)
        .await
        .unwrap();
    assert!(
        files.iter().any(|f| f.add.deletion_vector.is_some()),
        "the second load marks a row of the first file deleted"
    );
    let name = TableName::Target(lake.tables.sets[0].dataset.clone());
    let selection = Selection::is_in("k", ["b"]);
    let (after, written) = replace_rows(&target, &name, vec![], selection)
        .await
        .unwrap();
    assert_eq!(written, Written::DeltaRs);
    lake.tables.sets[0].target = after;
    let keys: Vec<Vec<Value>> = ["a", "b", "c", "d"]
        .iter()
        .map(|k| vec![Value::Text(k.to_string())])
        .collect();
    let rows = lake.writer(0).current_rows(&keys).await.unwrap();
    let mut left: Vec<(Value, Value)> = rows.iter().map(|r| (r[0].clone(), r[1].clone())).collect();
    left.sort_by_key(|(k, _)| format!("{k:?}"));
    let text = |k: &str| Value::Text(k.to_string());
    let expected = vec![
        (text("a"), Value::Int(2)),
        (text("c"), Value::Int(1)),
        (text("d"), Value::Int(1)),
    ];
    assert_eq!(left, expected);
}
