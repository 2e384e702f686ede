//! History (SCD type 2, `history = true`): a dataset (of changes, or of
//! snapshots ordered by a column) that also keeps every version of each key
//! in `history_<name>`, with the sequence that opened and closed it.

use super::column::Column;
use super::parse::{Names, RawDataset, Source, SpecError};
use super::resolve::{optional, resolve};

/// A dataset that keeps the versions of its keys.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct History {
    /// The columns whose change opens a new version (indexes into the
    /// columns); a change to any other column updates the version it falls in.
    pub tracked: Vec<usize>,
}

/// The history table's column holding the sequence that opened a version.
pub const START_AT: &str = "__start_at";
/// The history table's column holding the sequence that closed a version
/// (null: the key's current version).
pub const END_AT: &str = "__end_at";

/// The columns of a dataset that a version's start and values leave out
/// of what it tracks.
pub(super) struct Roles<'a> {
    /// The key columns.
    pub keys: &'a [usize],
    /// The sequence columns (a preset's generated ones included).
    pub sequence_by: &'a [usize],
    /// How many of the last columns deltaload fills.
    pub generated: usize,
}

/// The options of changes a history dataset cannot take: a version holds
/// whole rows, so a change must carry its row whole.
const PARTIAL_ROWS: [&str; 3] = ["ignore_null_updates", "update_columns", "except_columns"];

/// The checked `history`, `history_columns` and `history_except_columns`:
/// `None` for a dataset that keeps no history.
pub(super) fn history(
    src: &Source<'_>,
    d: &RawDataset,
    columns: &[Column],
    roles: Roles<'_>,
) -> Result<Option<History>, SpecError> {
    let name = d.name.get_ref();
    let err = |span: std::ops::Range<usize>, m: String| src.error(Some(span), m);
    let on = d.history.as_ref().is_some_and(|h| *h.get_ref());
    let lists = (d.history_columns.as_ref().map(|s| ("history_columns", s))).or(d
        .history_except_columns
        .as_ref()
        .map(|s| ("history_except_columns", s)));
    if !on {
        return match lists {
            Some((option, s)) => Err(err(s.span(), format!("{option} applies to a dataset that keeps history: add history = true to dataset {name:?}, or remove it"))),
            None => Ok(None),
        };
    }
    let span = d.history.as_ref().map(|h| h.span()).unwrap_or_default();
    if let (Some(_), Some(both)) = (&d.history_columns, &d.history_except_columns) {
        return Err(err(
            both.span(),
            format!(
                "dataset {name:?} names both history_columns and history_except_columns: keep one"
            ),
        ));
    }
    if let Some((option, s)) = d.first_set(&PARTIAL_ROWS) {
        return Err(err(
            s,
            format!("dataset {name:?} has history = true: {option} makes changes that carry part of a row, and a version holds its row whole; remove {option} or the history"),
        ));
    }
    if roles.sequence_by.is_empty() {
        let add = match d.snapshot_key_date.is_some() {
            true => "order its snapshots by a sequence column (sequence_by = [\"exported_on\"]) instead of snapshot_key_date",
            false => "add sequence_by (or a preset, whose files give the order)",
        };
        return Err(err(span, format!("dataset {name:?} has history = true but no sequence: a version opens and closes at a change's sequence, so {add}")));
    }
    let tracked = tracked(src, d, columns, roles)?;
    Ok(Some(History { tracked }))
}

/// The columns whose change opens a new version, from `history_columns` or
/// `history_except_columns`.
fn tracked(
    src: &Source<'_>,
    d: &RawDataset,
    columns: &[Column],
    roles: Roles<'_>,
) -> Result<Vec<usize>, SpecError> {
    let name = d.name.get_ref();
    let err = |span: std::ops::Range<usize>, m: String| src.error(Some(span), m);
    let Roles {
        keys,
        sequence_by,
        generated,
    } = roles;
    // By default every column but the keys, the sequence and the columns
    // deltaload fills tracks: a row sent again with a new sequence alone
    // opens no version.
    let trackable = |i: &usize| !keys.contains(i) && !sequence_by.contains(i);
    let data = (0..columns.len() - generated).filter(trackable);
    // A key or sequence column named in either list is a mistake: it never
    // opens a version (nor could it be left out of one).
    let named = |option: &str, list: &Option<Names>| {
        let found = optional(list, |n| resolve(src, name, columns, n, option))?;
        match (found.iter().find(|i| !trackable(i)), list) {
            (Some(&i), Some(n)) => Err(err(n.span(), format!("{option} names {:?}, a key or sequence column, which never opens a version: name only columns whose change {}", columns[i].name, match option {
                "history_columns" => "opens a new version",
                _ => "would open one",
            }))),
            _ => Ok(found),
        }
    };
    let tracked = match (&d.history_columns, &d.history_except_columns) {
        (Some(_), _) => named("history_columns", &d.history_columns)?,
        (None, Some(_)) => {
            let except = named("history_except_columns", &d.history_except_columns)?;
            data.filter(|i| !except.contains(i)).collect()
        }
        (None, None) => data.collect(),
    };
    Ok(tracked)
}

#[cfg(test)]
mod tests {
    use crate::spec::Spec;

    fn spec(options: &str) -> Result<Spec, String> {
        let text = format!(
            "[[dataset]]\nname = \"p\"\nkeys = [\"id\"]\n{options}\n\
             [[dataset.columns]]\nname = \"id\"\ntype = \"bigint\"\n\
             [[dataset.columns]]\nname = \"tier\"\ntype = \"string\"\n\
             [[dataset.columns]]\nname = \"email\"\ntype = \"string\"\n\
             [[dataset.columns]]\nname = \"at\"\ntype = \"timestamp\"\n"
        );
        Spec::parse(&text, "p.toml").map_err(|e| e.to_string())
    }

    #[test]
    fn history_tracks_the_columns_it_is_told_and_needs_whole_rows_in_order() {
        let tracked = |options: &str| spec(options).unwrap().datasets[0].history.clone();
        let on = "history = true\nsequence_by = [\"at\"]";
        assert_eq!(tracked(on).unwrap().tracked, vec![1, 2]);
        let only = format!("{on}\nhistory_columns = [\"tier\"]");
        assert_eq!(tracked(&only).unwrap().tracked, vec![1]);
        let except = format!("{on}\nhistory_except_columns = [\"tier\"]");
        assert_eq!(tracked(&except).unwrap().tracked, vec![2]);
        assert_eq!(
            tracked(&format!("{on}\nmode = \"changes\""))
                .unwrap()
                .tracked,
            vec![1, 2]
        );
        let of_snapshots = format!("{on}\nmode = \"snapshot\"");
        assert_eq!(tracked(&of_snapshots).unwrap().tracked, vec![1, 2]);
        assert_eq!(tracked("sequence_by = [\"at\"]"), None);
        let refused = [
            ("history = true", "no sequence"),
            (
                &format!("{on}\nhistory_columns = [\"id\"]"),
                "a key or sequence column",
            ),
            (
                &format!("{on}\nhistory_except_columns = [\"at\"]"),
                "history_except_columns names \"at\", a key or sequence column",
            ),
            (
                &format!(
                    "{on}\nhistory_columns = [\"tier\"]\nhistory_except_columns = [\"email\"]"
                ),
                "keep one",
            ),
            (
                &format!("{on}\nignore_null_updates = true"),
                "remove ignore_null_updates",
            ),
            (
                &format!("{on}\nupdate_columns = [\"tier\"]"),
                "remove update_columns",
            ),
            (
                "history = true\nmode = \"snapshot\"\nsnapshot_key_date = \"%Y%m%d\"",
                "instead of snapshot_key_date",
            ),
            ("history_columns = [\"tier\"]", "add history = true"),
        ];
        for (options, says) in refused {
            let e = spec(options).unwrap_err();
            assert!(e.contains(says), "{options}: {e}");
        }
    }

    // `x`'s log and `log_x`'s versions would both be `history_log_x`.
    #[test]
    fn two_datasets_may_not_write_one_table() {
        let one = |name: &str| {
            format!(
                "[[dataset]]\nname = \"{name}\"\nkeys = [\"id\"]\nsequence_by = [\"at\"]\n\
                 history = true\n[[dataset.columns]]\nname = \"id\"\ntype = \"bigint\"\n\
                 [[dataset.columns]]\nname = \"at\"\ntype = \"bigint\"\n"
            )
        };
        let text = format!("{}{}", one("x"), one("log_x"));
        let e = Spec::parse(&text, "p.toml").unwrap_err().to_string();
        assert!(
            e.contains("table \"history_log_x\", which is also a table of dataset \"x\""),
            "{e}"
        );
        assert!(Spec::parse(&format!("{}{}", one("x"), one("y")), "p.toml").is_ok());
    }
}
