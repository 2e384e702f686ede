//! Statistics readers can trust: delta-rs writes a decimal's minimum and
//! maximum through a 64-bit float, so past 15 digits a file's bounds could
//! leave out its own extreme values, and the readers that skip files by
//! them (polars, Python `deltalake`'s SQL) found no row where there was one.
//! A table with such a column names the columns that get statistics
//! without it (`delta.dataSkippingStatsColumns`;
//! `crates/lake/src/exact_stats.rs` tests a table made before).

use crate::other_engines::run_python;
use deltaload_core::Spec;
use deltaload_lake::{LoadOptions, LoadOutcome, SourceFile};

const SPEC: &str = r#"[[dataset]]
name = "amounts"
keys = ["id"]
sequence_by = ["seq"]
[[dataset.columns]]
name = "id"
type = "bigint"
[[dataset.columns]]
name = "seq"
type = "int"
[[dataset.columns]]
name = "amount"
type = "decimal(18,2)"
"#;

/// The extremes of the file, then per reader how many rows equal each.
const FILTERS: &str = r#"
import decimal, json, os, sys
import polars as pl, polars_deltalake, pyarrow
from deltalake import DeltaTable, QueryBuilder
p, found = sys.argv[1], []
for v in sys.argv[2:]:
    lit = pl.lit(decimal.Decimal(v), dtype=pl.Decimal(18, 2))
    sql = f"select count(*) n from t where amount = CAST('{v}' AS DECIMAL(18,2))"
    by_sql = pyarrow.table(QueryBuilder().register("t", DeltaTable(p)).execute(sql).read_all())
    found.append([
        pl.scan_delta(p).filter(pl.col("amount") == lit).collect().height,
        polars_deltalake.scan_delta(p).filter(pl.col("amount") == lit).collect().height,
        by_sql["n"][0].as_py(),
    ])
print(json.dumps(found))
sys.stdout.flush()
os._exit(0)
"#;

#[tokio::test(flavor = "multi_thread")]
async fn readers_filtering_a_wide_decimal_find_its_extreme_values() {
    let spec = Spec::parse(SPEC, "spec.toml").expect("spec");
    let dir = tempfile::tempdir().expect("temp dir");
    let root = deltaload_lake::lake_url(dir.path().to_str().expect("utf-8")).expect("url");
    let mut lake = deltaload_lake::Lake::open_spec(&root, &spec)
        .await
        .expect("lake");
    let extremes = ["-1234567890123456.85", "1234567890123456.85"];
    let rows = format!(
        "id,seq,amount\n1,1,{}\n2,1,1.00\n3,1,{}\n",
        extremes[0], extremes[1]
    );
    let file = SourceFile::in_memory("/in/amounts.csv".into(), rows.into());
    let outcome = lake
        .load(&file, LoadOptions::default())
        .await
        .expect("load");
    assert!(matches!(outcome, LoadOutcome::Loaded(_)), "{outcome:?}");
    let table = dir.path().join("amounts");
    let mut args = vec![table.to_str().expect("utf-8")];
    args.extend(extremes);
    let out = run_python(FILTERS, &args);
    let found: serde_json::Value = serde_json::from_slice(&out.stdout).expect("json");
    // polars.scan_delta, polars_deltalake.scan_delta, QueryBuilder: one row each.
    assert_eq!(found, serde_json::json!([[1, 1, 1], [1, 1, 1]]));
}
