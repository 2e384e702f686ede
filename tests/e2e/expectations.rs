//! Expectations (`[[dataset.expect]]`) against a model: random records,
//! three rules each of a random action, files loaded in any order with
//! repeats, one by one or in batches. The table, the rejects and their
//! reasons, the figures per rule and the refused files are what the model
//! says: a rule holds only where it is true, `drop` sends a record to the
//! rejects as if it never arrived, `fail` refuses its file, `warn` counts.

use deltaload_core::Spec;
use deltaload_lake::{LoadOutcome, SourceFile, TableName};
use deltaload_tests::Sandbox;
use proptest::prelude::*;
use std::collections::{BTreeMap, BTreeSet};

/// The rules: (name, SQL, what the model says of a record).
type Model = fn(&Item) -> Option<bool>;
const RULES: [(&str, &str, Model); 3] = [
    ("amount_not_negative", "amount >= 0", |r| {
        r.amount.map(|a| a >= 0)
    }),
    ("code_known", "code IN ('a', 'b')", |r| {
        r.code.map(|c| c == "a" || c == "b")
    }),
    ("id_small", "id < 5", |r| Some(r.id < 5)),
];

#[derive(Debug, Clone)]
struct Item {
    id: i64,
    seq: i64,
    amount: Option<i64>,
    code: Option<&'static str>,
}

impl Item {
    fn csv(&self) -> String {
        let amount = self.amount.map_or(String::new(), |a| a.to_string());
        format!(
            "{},{},{amount},{}",
            self.id,
            self.seq,
            self.code.unwrap_or("")
        )
    }
}

fn spec(actions: &[&str; 3]) -> String {
    let mut text =
        "[[dataset]]\nname = \"items\"\nkeys = [\"id\"]\nsequence_by = [\"seq\"]\n".to_string();
    for (name, ty) in [
        ("id", "bigint"),
        ("seq", "bigint"),
        ("amount", "bigint"),
        ("code", "string"),
    ] {
        text.push_str(&format!(
            "[[dataset.columns]]\nname = \"{name}\"\ntype = \"{ty}\"\n"
        ));
    }
    for ((name, rule, _), action) in RULES.iter().zip(actions) {
        text.push_str(&format!(
            "[[dataset.expect]]\nname = \"{name}\"\nrule = \"{rule}\"\non_fail = \"{action}\"\n"
        ));
    }
    text
}

/// Files of records; each record's sequence is unique, so that the newest
/// change of a key is never a tie.
fn files() -> impl Strategy<Value = Vec<Vec<Item>>> {
    let item = (
        1i64..7,
        prop::sample::select(vec![None, Some(-1), Some(0), Some(3)]),
        prop::sample::select(vec![None, Some("a"), Some("b"), Some("z")]),
    );
    prop::collection::vec(prop::collection::vec(item, 0..5), 1..4).prop_map(|files| {
        (files.into_iter().enumerate())
            .map(|(f, items)| {
                (items.into_iter().enumerate())
                    .map(|(i, (id, amount, code))| Item {
                        id,
                        seq: (f * 10 + i) as i64,
                        amount,
                        code,
                    })
                    .collect()
            })
            .collect()
    })
}

/// Files, actions, a load order over all files with some again, and the
/// sizes of the batches it is cut into.
type Scenario = (Vec<Vec<Item>>, [&'static str; 3], Vec<usize>, Vec<usize>);

fn scenario() -> impl Strategy<Value = Scenario> {
    let action = prop::sample::select(vec!["warn", "drop", "fail"]);
    (files(), [action.clone(), action.clone(), action]).prop_flat_map(|(files, actions)| {
        let n = files.len();
        let order = deltaload_tests::load_order(n);
        let cuts = prop::collection::vec(1usize..4, 1..8);
        (Just(files), Just(actions), order, cuts)
    })
}

/// What the model expects: the table's (id, seq) rows; the rejects (file,
/// line, reason); per loaded file and rule (records, failed); the files
/// refused.
#[derive(Debug, PartialEq)]
struct Expected {
    rows: Vec<Vec<String>>,
    rejects: BTreeSet<(usize, u64, String)>,
    figures: BTreeMap<(usize, String), (u64, u64)>,
    refused: BTreeSet<usize>,
}

fn expected(files: &[Vec<Item>], actions: &[&str; 3]) -> Expected {
    let mut e = Expected {
        rows: Vec::new(),
        rejects: BTreeSet::new(),
        figures: BTreeMap::new(),
        refused: BTreeSet::new(),
    };
    let mut newest: BTreeMap<i64, i64> = BTreeMap::new();
    for (f, items) in files.iter().enumerate() {
        let holds = |r: &Item, k: usize| RULES[k].2(r) == Some(true);
        if items
            .iter()
            .any(|r| (0..3).any(|k| actions[k] == "fail" && !holds(r, k)))
        {
            e.refused.insert(f);
            continue;
        }
        for (k, (name, _, _)) in RULES.iter().enumerate() {
            let failed = items.iter().filter(|r| !holds(r, k)).count() as u64;
            e.figures
                .insert((f, name.to_string()), (items.len() as u64, failed));
        }
        for (i, r) in items.iter().enumerate() {
            let dropped: Vec<String> = (0..3)
                .filter(|&k| actions[k] == "drop" && !holds(r, k))
                .map(|k| format!("expectation {} failed: {}", RULES[k].0, RULES[k].1))
                .collect();
            match dropped.is_empty() {
                true => {
                    let seq = newest.entry(r.id).or_insert(r.seq);
                    *seq = (*seq).max(r.seq);
                }
                false => {
                    e.rejects.insert((f, i as u64 + 2, dropped.join("; ")));
                }
            }
        }
    }
    e.rows = newest
        .into_iter()
        .map(|(id, seq)| vec![id.to_string(), seq.to_string()])
        .collect();
    e
}

/// The file index of a location `.../f{i}.csv`.
fn index(location: &str) -> usize {
    let name = location.rsplit('/').next().unwrap_or_default();
    name.trim_start_matches('f')
        .trim_end_matches(".csv")
        .parse()
        .expect("a file of the test")
}

async fn got(sb: &Sandbox, spec: &Spec) -> Expected {
    let d = spec.datasets[0].clone();
    let rows = sb.rows(TableName::Target(d.clone()), "id, seq").await;
    let rejects = sb
        .rows(TableName::Rejected(d), "source_file, line_number, reason")
        .await;
    let figures = sb
        .rows(
            TableName::Expectations,
            "location, expectation, records, failed",
        )
        .await;
    let ledger = sb.rows(TableName::Ledger, "location, status").await;
    let number = |s: &str| s.parse::<u64>().expect("a number");
    Expected {
        rows,
        rejects: rejects
            .iter()
            .map(|r| (index(&r[0]), number(&r[1]), r[2].clone()))
            .collect(),
        figures: figures
            .iter()
            .map(|r| ((index(&r[0]), r[1].clone()), (number(&r[2]), number(&r[3]))))
            .collect(),
        refused: ledger
            .iter()
            .filter(|r| r[1] == "refused")
            .map(|r| index(&r[0]))
            .collect(),
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 16, ..ProptestConfig::default() })]
    #[test]
    fn expectations_hold_as_the_model_says_in_any_order_and_batching(
        (files, actions, order, cuts) in scenario(),
    ) {
        let text = spec(&actions);
        let spec = Spec::parse(&text, "items.toml").unwrap();
        let runtime = deltaload_tests::runtime();
        let got = runtime.block_on(async {
            let sb = Sandbox::with_spec(spec.clone());
            let paths: Vec<_> = (files.iter().enumerate())
                .map(|(i, items)| {
                    let body: String = items.iter().map(|r| r.csv() + "\n").collect();
                    sb.file(&format!("f{i}.csv"), format!("id,seq,amount,code\n{body}"))
                })
                .collect();
            let source = |i: usize| SourceFile::in_memory(
                deltaload_lake::local_source(paths[i].to_str().unwrap()).unwrap(),
                std::fs::read(&paths[i]).unwrap(),
            );
            let mut at = 0;
            for cut in cuts.iter().copied().chain(std::iter::repeat(1)) {
                if at >= order.len() {
                    break;
                }
                let batch: Vec<SourceFile> = order[at..(at + cut).min(order.len())].iter().map(|&i| source(i)).collect();
                at += cut;
                let outcomes = sb.load_batch(&batch).await;
                assert!(outcomes.iter().all(|o| !matches!(o, LoadOutcome::Loaded(l) if l.expectations.len() != 3)));
            }
            got(&sb, &spec).await
        });
        prop_assert_eq!(got, expected(&files, &actions));
    }
}
