//! A snapshot dataset's high-water marks: for each scope, the sequence of
//! the newest snapshot loaded, kept in a table property that each snapshot's
//! commit sets with its rows.

use serde::{Deserialize, Serialize};
use serde_json::Value as Json;
use std::collections::BTreeMap;

/// The table property holding the marks, as JSON.
// (Not under `delta`: Delta readers parse every property named so.)
pub const MARKS_PROPERTY: &str = "io.deltaload.snapshots";

/// The newest snapshot loaded of each scope.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Marks {
    /// How the snapshots are ordered ([`deltaload_core::Snapshot::order_name`]).
    pub order: String,
    /// The `snapshot_scope` columns the marks were taken by (empty: the
    /// whole table); absent from marks written before it was recorded.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub scope: Option<Vec<String>>,
    /// The sequence of the newest snapshot of each scope (the scope's
    /// values as a JSON array of texts; `[]` for the whole table).
    pub scopes: BTreeMap<String, i64>,
}

/// What a snapshot does in one of its scopes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Verdict {
    /// As new as the mark or newer: the scope's rows become the snapshot's.
    Applies,
    /// Older than the mark: nothing changes.
    Superseded(i64),
}

impl Marks {
    /// The marks of the property's text (none yet: `None`), for snapshots
    /// ordered by `order` of the scope columns `scope`. `Err` names the order
    /// or the scope the table's marks were taken by when it is another one:
    /// a snapshot of one scope would then undo a newer one of another.
    pub fn read(text: Option<&str>, order: &str, scope: &[String]) -> Result<Self, String> {
        let Some(text) = text else {
            return Ok(Self {
                order: order.to_string(),
                scope: Some(scope.to_vec()),
                scopes: BTreeMap::new(),
            });
        };
        let mut marks: Marks = serde_json::from_str(text)
            .map_err(|e| format!("the table property {MARKS_PROPERTY} is not readable: {e}"))?;
        if marks.order != order {
            return Err(format!(
                "the table's snapshots were ordered by {} and the spec orders them by {order}: \
                 loading would compare sequences of two kinds; restore the spec's order, or \
                 load into a new table",
                marks.order
            ));
        }
        // Marks written before the scope was recorded tell its width alone.
        let width = |key: &String| serde_json::from_str::<Vec<Json>>(key).map(|v| v.len()).ok();
        let same = match &marks.scope {
            Some(taken) => taken == scope,
            None => marks.scopes.keys().all(|k| width(k) == Some(scope.len())),
        };
        if !same {
            return Err(format!(
                "the table's snapshots were loaded with {} and the spec has {}: a snapshot of \
                 one scope could undo a newer one of another; restore the spec's \
                 snapshot_scope, or load into a new table",
                scoped(marks.scope.as_deref()),
                scoped(Some(scope))
            ));
        }
        marks.scope = Some(scope.to_vec());
        Ok(marks)
    }

    /// What a snapshot of sequence `at` does in `scope`, and the mark taken.
    pub fn admit(&mut self, scope: &str, at: i64) -> Verdict {
        match self.scopes.get(scope) {
            Some(&mark) if mark > at => Verdict::Superseded(mark),
            _ => {
                self.scopes.insert(scope.to_string(), at);
                Verdict::Applies
            }
        }
    }

    /// The property's text.
    pub fn text(&self) -> String {
        serde_json::to_string(self).unwrap_or_default()
    }
}

/// A scope as the refusal names it.
fn scoped(scope: Option<&[String]>) -> String {
    match scope {
        Some([]) => "no snapshot_scope (each file the whole table)".to_string(),
        Some(columns) => format!("snapshot_scope = {columns:?}"),
        None => "another snapshot_scope".to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every sequence of up to five snapshots of one scope, of three
    /// sequences: a snapshot applies exactly when no snapshot before it was
    /// newer, and the mark ends at the greatest sequence, whatever the order.
    #[test]
    fn a_snapshot_applies_when_none_before_it_was_newer() {
        for n in 1..=5u32 {
            for code in 0..3i64.pow(n) {
                let ats: Vec<i64> = (0..n).map(|i| code / 3i64.pow(i) % 3).collect();
                let mut marks = Marks::read(None, "column day", &[]).unwrap();
                for (i, &at) in ats.iter().enumerate() {
                    let expected = match ats[..i].iter().max() {
                        Some(&m) if m > at => Verdict::Superseded(m),
                        _ => Verdict::Applies,
                    };
                    assert_eq!(marks.admit("[]", at), expected, "{ats:?} at {i}");
                }
                let again = Marks::read(Some(&marks.text()), "column day", &[]).unwrap();
                assert_eq!(again.scopes.get("[]"), ats.iter().max(), "{ats:?}");
            }
        }
    }

    #[test]
    fn marks_of_another_order_are_refused() {
        let mut marks = Marks::read(None, "column day", &[]).unwrap();
        marks.admit("[\"EU\"]", 3);
        let e = Marks::read(Some(&marks.text()), "key date %Y%m%d", &[]).unwrap_err();
        assert!(e.contains("ordered by column day"), "{e}");
    }

    /// A scope added, removed or changed is refused: a snapshot of the
    /// scope `["p"]` as of 22 would otherwise undo the whole table's as of 26.
    #[test]
    fn marks_of_another_scope_are_refused() {
        let region = ["region".to_string()];
        let mut whole = Marks::read(None, "column day", &[]).unwrap();
        whole.admit("[]", 26);
        let e = Marks::read(Some(&whole.text()), "column day", &region).unwrap_err();
        assert!(e.contains("with no snapshot_scope (each file the whole table) and the spec has snapshot_scope = [\"region\"]"), "{e}");
        let mut scoped = Marks::read(None, "column day", &region).unwrap();
        scoped.admit("[\"p\"]", 30);
        assert!(Marks::read(Some(&scoped.text()), "column day", &[]).is_err());
        let country = ["country".to_string()];
        assert!(Marks::read(Some(&scoped.text()), "column day", &country).is_err());
        assert!(Marks::read(Some(&scoped.text()), "column day", &region).is_ok());
        // Marks of before the scope was recorded: judged by their width.
        let old = r#"{"order":"column day","scopes":{"[\"p\"]":30}}"#;
        assert!(Marks::read(Some(old), "column day", &region).is_ok());
        let e = Marks::read(Some(old), "column day", &[]).unwrap_err();
        assert!(e.contains("loaded with another snapshot_scope"), "{e}");
        let old_whole = r#"{"order":"column day","scopes":{"[]":26}}"#;
        assert!(Marks::read(Some(old_whole), "column day", &region).is_err());
        assert!(Marks::read(Some(old_whole), "column day", &[]).is_ok());
    }
}
