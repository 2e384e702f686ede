//! The presets' spec rules and file names.

use super::*;
use crate::spec::Spec;

fn spec(extra: &str, columns: &str) -> Result<Spec, SpecError> {
    let text = format!(
        "[[dataset]]\nname = \"t\"\npreset = \"aws_dms\"\nkeys = [\"id\"]\n{extra}\n\
         [[dataset.columns]]\nname = \"id\"\ntype = \"int\"\n\
         [[dataset.columns]]\nname = \"{columns}\"\ntype = \"string\"\n"
    );
    Spec::parse(&text, "t.toml")
}

#[test]
fn the_dms_preset_orders_by_file_and_line_unless_a_sequence_is_declared() {
    let d = spec("", "v").unwrap().datasets.remove(0);
    assert_eq!(d.names(&d.sequence_by), [FEED_FILE, FEED_LINE]);
    assert_eq!((d.generated, d.declared().len()), (2, 2));
    assert_eq!(
        d.delete_when.as_ref().map(|w| w.column.as_str()),
        Some(DMS_OP)
    );
    assert!(d.keeps_tombstones());
    let own = spec("sequence_by = [\"v\"]", "v")
        .unwrap()
        .datasets
        .remove(0);
    assert_eq!((own.generated, own.names(&own.sequence_by)), (0, vec!["v"]));
    assert_eq!(own.file_rank("anything.csv"), Ok(None));
    assert_eq!(
        d.file_rank("a/LOAD00000001.csv"),
        Ok(Some("0 LOAD00000001".into()))
    );
}

#[test]
fn the_dms_preset_refuses_what_contradicts_it() {
    let refused = |extra: &str, column: &str| spec(extra, column).unwrap_err().to_string();
    let cases = [
        (
            "format = \"jsonl\"",
            "v",
            "AWS DMS writes CSV or Parquet files",
        ),
        (
            "delete_when = { column = \"Op\", in = [\"D\"] }",
            "v",
            "remove delete_when",
        ),
        ("[dataset.csv]\nheader = \"none\"", "v", "remove header"),
        ("update_columns = [\"v\"]", "v", "remove update_columns"),
        ("", "op", "column \"op\" is a name the preset uses"),
        ("", "_feed_line", "is a name the preset uses"),
    ];
    for (extra, column, expected) in cases {
        let e = refused(extra, column);
        assert!(e.contains(expected), "{extra}: {e}");
    }
    let e = Spec::parse("[[dataset]]\nname = \"t\"\npreset = \"dms\"\nkeys = [\"id\"]\n[[dataset.columns]]\nname = \"id\"\ntype = \"int\"\n", "t.toml").unwrap_err();
    assert!(
        e.to_string()
            .contains("preset \"dms\" is not one deltaload knows"),
        "{e}"
    );
}

#[test]
fn dms_names_rank_full_load_first_then_changes_by_time() {
    let rank = |n: &str| Preset::AwsDms.file_rank(n).unwrap();
    let names = [
        "s3://b/hr/employee/LOAD00000001.csv",
        "hr/employee/LOAD00000009.csv",
        "LOAD0000000a.csv.gz",
        "LOAD0000000B.parquet",
        "2014/10/29/20141029-113401000.csv",
        "20141029-1134010001.csv",
        "20141029-113402.csv",
        "20221023-013830913.parquet",
    ];
    let ranks: Vec<String> = names.iter().map(|n| rank(n)).collect();
    let mut sorted = ranks.clone();
    sorted.sort();
    assert_eq!(ranks, sorted, "{ranks:?}");
    assert_eq!(ranks[2], "0 LOAD0000000A");
    assert_eq!(ranks[4], "1 20141029-113401000000");
    for bad in [
        "LOAD1.csv",
        "LOAD0000000G.csv",
        "CDC_TXN-20201117153046033.csv",
        "2024-10-23.csv",
        "orders.csv",
        "20141029-11340.csv",
    ] {
        let e = Preset::AwsDms.file_rank(bad).unwrap_err();
        assert!(e.contains("not one AWS DMS writes"), "{bad}: {e}");
    }
}

fn debezium(extra: &str, column: &str) -> Result<Spec, SpecError> {
    let text = format!(
        "[[dataset]]\nname = \"t\"\npreset = \"debezium\"\nkeys = [\"id\"]\n{extra}\n\
         [[dataset.columns]]\nname = \"id\"\ntype = \"int\"\n\
         [[dataset.columns]]\nname = \"{column}\"\ntype = \"string\"\n"
    );
    Spec::parse(&text, "t.toml")
}

#[test]
fn the_debezium_preset_reads_json_lines_by_offset_and_refuses_what_contradicts_it() {
    let d = debezium("", "v").unwrap().datasets.remove(0);
    assert_eq!(d.format, Format::Jsonl);
    assert_eq!(d.names(&d.sequence_by), [FEED_FILE, FEED_LINE]);
    let op = d.delete_when.as_ref().unwrap();
    assert_eq!(
        (op.column.as_str(), op.values.as_slice()),
        (DEBEZIUM_OP, &["d".to_string()][..])
    );
    let cases = [
        (
            "format = \"csv\"",
            "v",
            "set format = \"jsonl\", \"avro\" or",
        ),
        (
            "delete_when = { column = \"op\", in = [\"d\"] }",
            "v",
            "remove delete_when",
        ),
        ("except_columns = [\"v\"]", "v", "remove update_columns"),
        ("", "__op", "column \"__op\" is a name the preset uses"),
        ("", "_feed_file", "is a name the preset uses"),
    ];
    for format in ["avro", "parquet"] {
        let d = debezium(&format!("format = \"{format}\""), "v").unwrap();
        assert_eq!(d.datasets[0].format.as_str(), format);
    }
    for (extra, column, expected) in cases {
        let e = debezium(extra, column).unwrap_err().to_string();
        assert!(e.contains(expected), "{extra}: {e}");
        assert!(e.contains("has preset = \"debezium\""), "{e}");
    }
}

#[test]
fn sink_names_rank_by_start_offset() {
    let rank = |n: &str| Preset::Debezium.file_rank(n);
    assert_eq!(
        rank("topics/db.inv.customers/partition=0/db.inv.customers+0+0000000042.json").as_deref(),
        Ok("00000000000000000042")
    );
    assert_eq!(
        rank("s3://b/t+12+0000001000.json.gz").as_deref(),
        Ok("00000000000000001000")
    );
    // Padded to 20 digits (filename.offset.zero.pad.width = 20) or 30.
    assert_eq!(
        rank("t+0+00000000000000000042.json").as_deref(),
        Ok("00000000000000000042")
    );
    assert_eq!(
        rank(&format!("t+0+{:0>30}.json", 0)).as_deref(),
        Ok("00000000000000000000")
    );
    let ranks: Vec<String> = [
        "t+0+0000000009.json",
        "t+0+00000000000000000010.json",
        "t+0+12345678901.json",
    ]
    .iter()
    .map(|n| rank(n).unwrap())
    .collect();
    assert!(ranks.windows(2).all(|w| w[0] < w[1]), "{ranks:?}");
    for bad in [
        "customers.json",
        "+0+0000000001.json",
        "t+x+0000000001.json",
        "t+0+.json",
        "t+0+123456789012345678901.json",
    ] {
        let e = rank(bad).unwrap_err();
        assert!(
            e.contains("not one the Kafka Connect S3 sink writes"),
            "{bad}: {e}"
        );
    }
}
