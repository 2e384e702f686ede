//! The file contract: a dataset's columns in the header, checked before
//! anything is written, and which field each column reads.

use crate::spec::{Dataset, HeaderMode};
use std::fmt;

/// A file refused before any write, with what was found and what was expected.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HeaderMismatch {
    /// The columns found in the file (empty for an empty file).
    pub found: Vec<String>,
    /// Why it was refused, in a few words.
    pub problem: String,
    /// The dataset's columns.
    pub expected: Vec<String>,
    /// What to do, when it is not to fix the file (a file too large for the
    /// memory budget is not wrong).
    pub remedy: Option<String>,
}

impl fmt::Display for HeaderMismatch {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        // A refusal before any column was read (an empty file's says what
        // it expected): no empty list of columns found.
        let remedy = (self.remedy.as_deref()).unwrap_or("fix the file and upload it again");
        if self.found.is_empty() {
            return write!(
                f,
                "{}; file refused, nothing written: {remedy}",
                self.problem
            );
        }
        write!(
            f,
            "{}: has columns [{}], expected [{}]; file refused, nothing written: {remedy}",
            self.problem,
            self.found.join(", "),
            self.expected.join(", ")
        )
    }
}

impl std::error::Error for HeaderMismatch {}

impl HeaderMismatch {
    /// A refusal of a file of `dataset` whose fields are `found`.
    pub fn new(dataset: &Dataset, found: Vec<String>, problem: String) -> Self {
        Self {
            found,
            problem,
            expected: expected_names(dataset)
                .into_iter()
                .map(str::to_string)
                .collect(),
            remedy: None,
        }
    }

    /// The refusal with `remedy` in place of fixing the file.
    pub fn with_remedy(self, remedy: &str) -> Self {
        Self {
            remedy: Some(remedy.to_string()),
            ..self
        }
    }
}

/// Checks a header record (split into fields, BOM and line end removed) and
/// returns, per column, the index of the field it reads. `None` is an empty file.
pub fn check_header(
    dataset: &Dataset,
    fields: Option<&[String]>,
) -> Result<Vec<usize>, HeaderMismatch> {
    let Some(found) = fields else {
        let expected = expected_names(dataset).join(", ");
        return Err(HeaderMismatch::new(
            dataset,
            Vec::new(),
            format!("empty file, no header: expected [{expected}]"),
        ));
    };
    let names = expected_names(dataset);
    let positions = match dataset.csv.header {
        HeaderMode::None => return Ok((0..names.len()).collect()),
        HeaderMode::Exact => exact(dataset, &names, found),
        HeaderMode::ByName => by_name(&names, found),
    };
    positions.ok_or_else(|| HeaderMismatch::new(dataset, found.to_vec(), describe(&names, found)))
}

/// The names a file's header holds: the columns, then the delete column if any.
fn expected_names(dataset: &Dataset) -> Vec<&str> {
    let mut names: Vec<&str> = dataset.declared().iter().map(|c| c.name.as_str()).collect();
    names.extend(dataset.delete_when.as_ref().map(|d| d.column.as_str()));
    names
}

/// The declared columns in their order; the delete column, when the dataset
/// has one, at any place among them (AWS DMS writes its `Op` first).
fn exact(dataset: &Dataset, names: &[&str], found: &[String]) -> Option<Vec<usize>> {
    let Some(delete) = &dataset.delete_when else {
        return found
            .iter()
            .map(String::as_str)
            .eq(names.iter().copied())
            .then(|| (0..names.len()).collect());
    };
    let at = found.iter().position(|f| *f == delete.column)?;
    let mut positions: Vec<usize> = (0..found.len()).filter(|&i| i != at).collect();
    let in_order = positions
        .iter()
        .map(|&i| found[i].as_str())
        .eq(names[..names.len() - 1].iter().copied());
    positions.push(at);
    in_order.then_some(positions)
}

/// The field of each column when the header names each column exactly once and nothing else.
pub(crate) fn by_name(names: &[&str], found: &[String]) -> Option<Vec<usize>> {
    if found.len() != names.len() {
        return None;
    }
    names
        .iter()
        .map(|n| found.iter().position(|f| f == n))
        .collect()
}

/// What differs between the `names` a header should hold and those `found`.
pub(crate) fn describe(names: &[&str], found: &[String]) -> String {
    let missing: Vec<&str> = names
        .iter()
        .copied()
        .filter(|c| !found.iter().any(|f| f == c))
        .collect();
    let extra: Vec<&str> = found
        .iter()
        .map(String::as_str)
        .filter(|f| !names.contains(f))
        .collect();
    let mut seen = std::collections::HashSet::new();
    let duplicated: Vec<&str> = found
        .iter()
        .map(String::as_str)
        .filter(|f| !seen.insert(*f))
        .collect();
    let mut parts = Vec::new();
    if !missing.is_empty() {
        parts.push(format!("missing {}", missing.join(", ")));
    }
    if !extra.is_empty() {
        parts.push(format!("unexpected {}", extra.join(", ")));
    }
    if !duplicated.is_empty() {
        parts.push(format!("duplicated {}", duplicated.join(", ")));
    }
    if parts.is_empty() {
        parts.push("columns in another order".to_string());
    }
    format!("header mismatch ({})", parts.join("; "))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::spec::Spec;

    fn owned(names: &[&str]) -> Vec<String> {
        names.iter().map(|s| s.to_string()).collect()
    }

    fn orders_columns() -> Vec<String> {
        Dataset::orders()
            .column_names()
            .iter()
            .map(|s| s.to_string())
            .collect()
    }

    #[test]
    fn accepts_the_contract() {
        let orders = Dataset::orders();
        assert_eq!(
            check_header(&orders, Some(&orders_columns())).unwrap(),
            (0..7).collect::<Vec<_>>()
        );
    }

    #[test]
    fn refuses_empty_file() {
        let err = check_header(&Dataset::orders(), None).unwrap_err();
        assert!(err.found.is_empty());
        assert!(err.to_string().contains("empty file"));
    }

    #[test]
    fn names_extra_missing_reordered_and_case() {
        let orders = Dataset::orders();
        let check = |h: &[String]| check_header(&orders, Some(h)).unwrap_err().to_string();
        let mut extra = orders_columns();
        extra.push("coupon".into());
        let e = check(&extra);
        assert!(e.contains("unexpected coupon"), "{e}");
        assert!(e.contains("expected [order_id, customer_id"), "{e}");
        assert!(check(&orders_columns()[..6]).contains("missing updated_at"));
        let mut swapped = orders_columns();
        swapped.swap(1, 2);
        let e = check(&swapped);
        assert!(e.contains("another order"), "{e}");
        assert!(e.contains("[order_id, status, customer_id"), "{e}");
        let mut upper = orders_columns();
        upper[0] = "ORDER_ID".into();
        assert!(check_header(&orders, Some(&upper)).is_err());
        let mut dup = orders_columns();
        dup[1] = "order_id".into();
        assert!(check(&dup).contains("duplicated order_id"));
    }

    #[test]
    fn by_name_takes_any_order_and_none_reads_by_position() {
        let spec = |header: &str| {
            Spec::parse(&format!("[[dataset]]\nname = \"t\"\nkeys = [\"a\"]\n[dataset.csv]\nheader = \"{header}\"\n[[dataset.columns]]\nname = \"a\"\ntype = \"int\"\n[[dataset.columns]]\nname = \"b\"\ntype = \"int\"\n"), "t.toml").unwrap()
        };
        let by_name = spec("by_name");
        let d = &by_name.datasets[0];
        assert_eq!(
            check_header(d, Some(&owned(&["b", "a"]))).unwrap(),
            vec![1, 0]
        );
        let e = check_header(d, Some(&owned(&["b", "a", "c"])))
            .unwrap_err()
            .to_string();
        assert!(e.contains("unexpected c"), "{e}");
        assert!(check_header(d, Some(&owned(&["b"])))
            .unwrap_err()
            .to_string()
            .contains("missing a"));
        let none = spec("none");
        assert_eq!(
            check_header(&none.datasets[0], Some(&owned(&["x", "y"]))).unwrap(),
            vec![0, 1]
        );
    }
}
