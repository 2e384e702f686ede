//! `table` and `rejected_table`: the folders a dataset's table and its
//! rejects live in, when they are not the dataset's own names (a table
//! another writer made, or a rejects table of its own layout).

use super::parse::{RawDataset, Source, SpecError};
use toml::Spanned;

/// Names a dataset or a table may not take: the shared tables.
pub const RESERVED_NAMES: [&str; 3] = ["ledger", "reconciliation", "expectations"];

/// The dataset's `table` and `rejected_table`, each checked as a folder name.
pub(crate) fn table_names(
    src: &Source<'_>,
    d: &RawDataset,
) -> Result<(Option<String>, Option<String>), SpecError> {
    let check =
        |option: &str, raw: &Option<Spanned<String>>| -> Result<Option<String>, SpecError> {
            let Some(raw) = raw else { return Ok(None) };
            folder_name(raw.get_ref())
                .map(|()| Some(raw.get_ref().clone()))
                .map_err(|why| {
                    src.error(
                        Some(raw.span()),
                        format!("{option} = {:?} {why}", raw.get_ref()),
                    )
                })
        };
    let table = check("table", &d.table)?;
    let rejected = check("rejected_table", &d.rejected_table)?;
    if let (Some(t), Some(r)) = (&table, &rejected) {
        if t == r {
            let span = d.rejected_table.as_ref().map(Spanned::span);
            return Err(src.error(span, format!("table and rejected_table are both {t:?}: the rejects need a table of their own")));
        }
    }
    Ok((table, rejected))
}

/// Why `name` cannot be a table's folder under the lake root; `Ok` when it can.
fn folder_name(name: &str) -> Result<(), String> {
    if name.is_empty() || name.len() > 255 {
        return Err("must be 1 to 255 characters: it names a folder under the lake root".into());
    }
    if name.starts_with(['_', '.']) {
        return Err(
            "may not start with _ or . (Delta and object stores treat such folders as hidden)"
                .into(),
        );
    }
    if let Some(c) = name
        .chars()
        .find(|c| c.is_control() || ['/', '\\', '"', '#', '?', '%'].contains(c))
    {
        return Err(format!(
            "may not hold {c:?}: it names one folder directly under the lake root, in a URL"
        ));
    }
    if RESERVED_NAMES.contains(&name) {
        return Err(
            "is one of deltaload's shared tables (ledger, reconciliation, expectations): choose another".into(),
        );
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::folder_name;
    use crate::Spec;

    fn spec(extra: &str) -> Result<Spec, String> {
        let text = format!(
            "[[dataset]]\nname = \"orders\"\n{extra}\nkeys = [\"id\"]\n\
             [[dataset.columns]]\nname = \"id\"\ntype = \"bigint\"\n"
        );
        Spec::parse(&text, "spec.toml").map_err(|e| e.to_string())
    }

    #[test]
    fn table_and_rejected_table_name_the_folders_and_the_others_keep_the_name() {
        let s = spec("table = \"Orders v2\"\nrejected_table = \"orders_rejects\"").unwrap();
        let d = &s.datasets[0];
        assert_eq!(d.table_name(), "Orders v2");
        assert_eq!(d.rejected_table(), "orders_rejects");
        assert_eq!(d.tombstones_table(), "tombstones_orders");
        let plain = spec("").unwrap();
        assert_eq!(plain.datasets[0].table_name(), "orders");
        assert_eq!(plain.datasets[0].rejected_table(), "rejected_orders");
    }

    #[test]
    fn a_folder_name_that_is_hidden_shared_or_taken_twice_is_a_spec_error() {
        let hidden = spec("table = \"_delta_log\"").unwrap_err();
        assert!(
            hidden.contains("table = \"_delta_log\" may not start with _"),
            "{hidden}"
        );
        let shared = spec("rejected_table = \"ledger\"").unwrap_err();
        assert!(shared.contains("shared tables"), "{shared}");
        let same = spec("table = \"t\"\nrejected_table = \"t\"").unwrap_err();
        assert!(same.contains("both \"t\""), "{same}");
        let twice = spec("rejected_table = \"tombstones_orders\"").unwrap_err();
        assert!(
            twice.contains("would write table \"tombstones_orders\" twice"),
            "{twice}"
        );
    }

    #[test]
    fn folder_names_are_one_visible_folder_of_no_shared_table() {
        for ok in [
            "orders",
            "Orders Table",
            "orders-v2",
            "rejected_orders_deltaload",
        ] {
            assert_eq!(folder_name(ok), Ok(()), "{ok}");
        }
        for bad in [
            "",
            "orders#2",
            "a?b",
            "a%2Fb",
            "_delta_log",
            ".hidden",
            "a/b",
            "a\\b",
            "q\"uote",
            "tab\tle",
            "ledger",
            "reconciliation",
        ] {
            assert!(folder_name(bad).is_err(), "{bad}");
        }
        assert!(folder_name(&"x".repeat(256)).is_err());
    }
}
