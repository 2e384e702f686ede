//! Snapshot feeds (`mode = "snapshot"`): every file is the whole content of
//! the table, or of the scopes it holds (`snapshot_scope`), ordered by a
//! sequence column or by a date in the object key (`snapshot_key_date`).

use super::column::{Column, ColumnType};
use super::parse::{RawDataset, Source, SpecError};
use super::resolve::{optional, resolve};

/// A dataset whose files are snapshots, not changes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Snapshot {
    /// The columns whose values name the part of the table a file holds
    /// (indexes into the columns); empty: each file holds the whole table.
    pub scope: Vec<usize>,
    /// How snapshots are ordered.
    pub order: SnapshotOrder,
}

/// What orders a dataset's snapshots.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum SnapshotOrder {
    /// The greatest value in the file of this column (an `int`, `bigint`,
    /// `date` or `timestamp` of the columns; also its `sequence_by`).
    Column(usize),
    /// The date or time the object key holds, written as this strftime
    /// format writes it (`dt=%Y-%m-%d`).
    KeyDate(String),
}

impl Snapshot {
    /// How the order is named in the table's record of its snapshots: a
    /// table ordered one way is never compared with another.
    pub fn order_name(&self, columns: &[Column]) -> String {
        match &self.order {
            SnapshotOrder::Column(i) => format!("column {}", columns[*i].name),
            SnapshotOrder::KeyDate(format) => format!("key date {format}"),
        }
    }
}

/// The instant (microseconds since the epoch, UTC) of the date, or date and
/// time, that `format` reads in `location`'s object key: `None` when it
/// reads none, or several different ones ([`key_dates`] says which).
pub fn key_date(location: &str, format: &str) -> Option<i64> {
    match key_dates(location, format).as_slice() {
        [only] => Some(*only),
        _ => None,
    }
}

/// The different instants `format` reads in `location`'s object key (an
/// `s3://` location's bucket left out), left to right, each text read once:
/// a date reads as its midnight, an hour without minutes (`hr=%H`) as its
/// hour.
pub fn key_dates(location: &str, format: &str) -> Vec<i64> {
    let key = match location.strip_prefix("s3://") {
        Some(rest) => rest.split_once('/').map_or("", |(_, key)| key),
        None => location,
    };
    let mut found = Vec::new();
    let mut at = 0;
    while let Some(rest) = key.get(at..).filter(|r| !r.is_empty()) {
        match read_at(rest, format) {
            Some((instant, used)) => {
                if !found.contains(&instant) {
                    found.push(instant);
                }
                at += used;
            }
            None => at += rest.chars().next().map_or(1, char::len_utf8),
        }
    }
    found
}

/// The instant `format` reads at the start of `text`, and the bytes it read.
fn read_at(text: &str, format: &str) -> Option<(i64, usize)> {
    use chrono::format::{parse_and_remainder, Parsed, StrftimeItems};
    let mut parsed = Parsed::new();
    let rest = parse_and_remainder(&mut parsed, text, StrftimeItems::new(format)).ok()?;
    if parsed.hour_mod_12().is_some() && parsed.minute().is_none() {
        parsed.set_minute(0).ok()?;
    }
    let at = match parsed.to_naive_datetime_with_offset(0) {
        Ok(at) => at,
        Err(_) => parsed.to_naive_date().ok()?.and_hms_opt(0, 0, 0)?,
    };
    let used = text.len() - rest.len();
    (used > 0).then(|| (at.and_utc().timestamp_micros(), used))
}

/// The options a snapshot dataset cannot take: its files hold rows, not changes.
const CHANGES_ONLY: [&str; 7] = [
    "delete_when",
    "preset",
    "ignore_null_updates",
    "tie_break",
    "update_columns",
    "except_columns",
    "partition_by",
];

/// The checked `mode`, `snapshot_scope` and `snapshot_key_date`: `None` for
/// a dataset of changes.
pub(super) fn snapshot(
    src: &Source<'_>,
    d: &RawDataset,
    columns: &[Column],
    sequence_by: &[usize],
) -> Result<Option<Snapshot>, SpecError> {
    let name = d.name.get_ref();
    let err = |span: std::ops::Range<usize>, m: String| src.error(Some(span), m);
    let is_snapshot = match d.mode.as_ref() {
        None => false,
        Some(m) => match m.get_ref().as_str() {
            "changes" => false,
            "snapshot" => true,
            other => return Err(err(m.span(), format!("mode {other:?} is not known: write \"changes\" (each file holds changes, the default) or \"snapshot\" (each file holds the whole table)"))),
        },
    };
    if !is_snapshot {
        let stray = (d
            .snapshot_scope
            .as_ref()
            .map(|s| ("snapshot_scope", s.span())))
        .or(d
            .snapshot_key_date
            .as_ref()
            .map(|s| ("snapshot_key_date", s.span())));
        return match stray {
            Some((option, span)) => Err(err(span, format!("{option} applies to a dataset of snapshots: add mode = \"snapshot\" to dataset {name:?}, or remove it"))),
            None => Ok(None),
        };
    }
    if let Some((option, span)) = d.first_set(&CHANGES_ONLY) {
        return Err(err(span, format!("dataset {name:?} has mode = \"snapshot\": {option} applies to a dataset of changes; remove it")));
    }
    let scope = optional(&d.snapshot_scope, |n| {
        resolve(src, name, columns, n, "snapshot_scope")
    })?;
    let order = match (sequence_by, &d.snapshot_key_date) {
        ([only], None) => match columns[*only].ty {
            ColumnType::Int | ColumnType::Bigint | ColumnType::Date | ColumnType::Timestamp => {
                SnapshotOrder::Column(*only)
            }
            other => return Err(src.error(d.sequence_by.as_ref().map(|s| s.span()), format!("the snapshots of dataset {name:?} are ordered by {:?}, a {other}: order them by an int, bigint, date or timestamp column, or by snapshot_key_date", columns[*only].name))),
        },
        ([], Some(format)) => {
            let text = format.get_ref();
            let sample = chrono::DateTime::from_timestamp(1_796_051_427, 0)
                .unwrap_or_default()
                .naive_utc();
            let written = sample.format(text).to_string();
            // Read back and written again the same: no field is dropped (an hour
            // of a 12-hour clock without its AM/PM would be).
            let again = key_date(&written, text)
                .and_then(chrono::DateTime::from_timestamp_micros)
                .map(|t| t.naive_utc().format(text).to_string());
            if again.as_deref() != Some(written.as_str()) {
                return Err(err(format.span(), format!("snapshot_key_date {text:?} cannot be read back as a date: write a strftime format with the year, month and day (such as \"dt=%Y-%m-%d\" or \"%Y%m%d\")")));
            }
            SnapshotOrder::KeyDate(text.clone())
        }
        _ => return Err(err(d.name.span(), format!("dataset {name:?} has mode = \"snapshot\": order its snapshots by one sequence column (sequence_by = [\"exported_on\"]) or by the date in the object key (snapshot_key_date = \"dt=%Y-%m-%d\"), one of the two"))),
    };
    Ok(Some(Snapshot { scope, order }))
}

#[cfg(test)]
mod tests {
    use super::{key_date, key_dates};
    use crate::spec::{SnapshotOrder, Spec};

    fn spec(options: &str) -> Result<Spec, String> {
        let text = format!(
            "[[dataset]]\nname = \"s\"\nkeys = [\"id\"]\n{options}\n\
             [[dataset.columns]]\nname = \"id\"\ntype = \"bigint\"\n\
             [[dataset.columns]]\nname = \"region\"\ntype = \"string\"\n\
             [[dataset.columns]]\nname = \"day\"\ntype = \"date\"\n"
        );
        Spec::parse(&text, "s.toml").map_err(|e| e.to_string())
    }

    #[test]
    fn a_snapshot_dataset_is_ordered_one_way_and_takes_no_option_of_changes() {
        let by_key = "mode = \"snapshot\"\nsnapshot_key_date = \"dt=%Y-%m-%d\"";
        let d = spec(&format!("{by_key}\nsnapshot_scope = [\"region\"]")).unwrap();
        let snapshot = d.datasets[0].snapshot.clone().unwrap();
        assert_eq!(snapshot.scope, vec![1]);
        assert_eq!(snapshot.order, SnapshotOrder::KeyDate("dt=%Y-%m-%d".into()));
        let d = spec("mode = \"snapshot\"\nsequence_by = [\"day\"]").unwrap();
        let order = d.datasets[0].snapshot.clone().unwrap().order;
        assert_eq!(order, SnapshotOrder::Column(2));
        let refused = [
            ("mode = \"snapshot\"", "one of the two"),
            (
                &format!("{by_key}\nsequence_by = [\"day\"]"),
                "one of the two",
            ),
            (
                "mode = \"snapshot\"\nsequence_by = [\"region\"]",
                "a string",
            ),
            (
                "mode = \"snapshot\"\nsnapshot_key_date = \"%H\"",
                "cannot be read back",
            ),
            (
                &format!("{by_key}\ndelete_when = {{ column = \"op\", in = [\"d\"] }}"),
                "delete_when applies to a dataset of changes",
            ),
            (
                &format!("{by_key}\npartition_by = [\"region\"]"),
                "partition_by applies",
            ),
            ("snapshot_scope = [\"region\"]", "add mode = \"snapshot\""),
            ("mode = \"snapshots\"", "is not known"),
        ];
        for (options, says) in refused {
            let e = spec(options).unwrap_err();
            assert!(e.contains(says), "{options}: {e}");
        }
    }

    #[test]
    fn a_keys_date_is_found_where_the_format_reads_it() {
        let day = |d: &str| {
            chrono::NaiveDate::parse_from_str(d, "%Y-%m-%d")
                .unwrap()
                .and_hms_opt(0, 0, 0)
                .unwrap()
                .and_utc()
                .timestamp_micros()
        };
        let key = "s3://b/exports/dt=2026-12-01/part-1.csv";
        assert_eq!(key_date(key, "dt=%Y-%m-%d"), Some(day("2026-12-01")));
        assert_eq!(
            key_date("/x/subscribers_20261202.csv", "_%Y%m%d"),
            Some(day("2026-12-02"))
        );
        let at = key_date("/x/s_2026-12-02T06:30:00.csv", "_%Y-%m-%dT%H:%M:%S");
        assert_eq!(
            at,
            Some(day("2026-12-02") + 6 * 3_600_000_000 + 1_800_000_000)
        );
        assert_eq!(key_date("/x/latest.csv", "dt=%Y-%m-%d"), None);
    }

    #[test]
    fn an_hour_without_minutes_orders_snapshots_by_the_hour() {
        let hour = |h: i64| {
            key_date(
                &format!("s3://b/dt=2026-12-01/hr={h:02}/x.csv"),
                "dt=%Y-%m-%d/hr=%H",
            )
        };
        assert_eq!(hour(10).unwrap() - hour(9).unwrap(), 3_600_000_000);
        // Kinesis Data Firehose's folders.
        let firehose = |h: &str| key_date(&format!("/in/2026/12/01/{h}/s-1.gz"), "/%Y/%m/%d/%H/");
        assert_eq!(
            firehose("13").unwrap() - firehose("00").unwrap(),
            13 * 3_600_000_000
        );
        assert!(spec("mode = \"snapshot\"\nsnapshot_key_date = \"dt=%Y-%m-%d/hr=%H\"").is_ok());
        // An hour of a 12-hour clock without AM/PM cannot be read back.
        let e = spec("mode = \"snapshot\"\nsnapshot_key_date = \"%Y%m%d-%I\"").unwrap_err();
        assert!(e.contains("cannot be read back"), "{e}");
    }

    #[test]
    fn a_key_with_two_different_dates_has_no_date() {
        let format = "_%Y%m%d";
        let two = "/x/run_20250101/subs_20261201.csv";
        assert_eq!(key_dates(two, format).len(), 2);
        assert_eq!(key_date(two, format), None);
        // The same date twice is one date; the bucket is not the object key.
        let same = "s3://exports_20250101/run_20261201/subs_20261201.csv";
        assert_eq!(key_dates(same, format).len(), 1);
        assert_eq!(key_date(same, format), key_date("/subs_20261201", format));
    }
}
