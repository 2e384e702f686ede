//! The file contract: the 7 columns, by name and in order.

use std::fmt;

/// The header every change file must have, in this order.
pub const COLUMNS: [&str; 7] = [
    "order_id",
    "customer_id",
    "status",
    "amount",
    "currency",
    "ordered_at",
    "updated_at",
];

/// A header that is not the contract's, with both column lists.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HeaderMismatch {
    /// The columns found in the file (empty for an empty file).
    pub found: Vec<String>,
    /// Why it was refused, in a few words.
    pub problem: String,
}

impl HeaderMismatch {
    /// The contract's columns, for messages.
    pub fn expected() -> Vec<String> {
        COLUMNS.iter().map(|c| (*c).to_string()).collect()
    }
}

impl fmt::Display for HeaderMismatch {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{}: has columns [{}], expected [{}]; file refused, nothing written: fix the header and upload the file again",
            self.problem,
            self.found.join(", "),
            COLUMNS.join(", ")
        )
    }
}

impl std::error::Error for HeaderMismatch {}

/// Checks a header record (already split into fields, BOM and line end removed).
///
/// `None` is an empty file. Names must match exactly: case, spaces and order count.
pub fn check_header(fields: Option<&[String]>) -> Result<(), HeaderMismatch> {
    let Some(found) = fields else {
        return Err(HeaderMismatch {
            found: Vec::new(),
            problem: "empty file, no header".to_string(),
        });
    };
    if found.iter().map(String::as_str).eq(COLUMNS.iter().copied()) {
        return Ok(());
    }
    let problem = describe(found);
    Err(HeaderMismatch {
        found: found.to_vec(),
        problem,
    })
}

fn describe(found: &[String]) -> String {
    let missing: Vec<&str> = COLUMNS
        .iter()
        .copied()
        .filter(|c| !found.iter().any(|f| f == c))
        .collect();
    let extra: Vec<&str> = found
        .iter()
        .map(String::as_str)
        .filter(|f| !COLUMNS.contains(f))
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

    fn owned(names: &[&str]) -> Vec<String> {
        names.iter().map(|s| s.to_string()).collect()
    }

    #[test]
    fn accepts_the_contract() {
        assert!(check_header(Some(&owned(&COLUMNS))).is_ok());
    }

    #[test]
    fn refuses_empty_file() {
        let err = check_header(None).unwrap_err();
        assert!(err.found.is_empty());
        assert!(err.to_string().contains("empty file"));
    }

    #[test]
    fn names_extra_missing_reordered_and_case() {
        let mut extra = owned(&COLUMNS);
        extra.push("coupon".into());
        let e = check_header(Some(&extra)).unwrap_err().to_string();
        assert!(e.contains("unexpected coupon"), "{e}");
        assert!(e.contains("expected [order_id, customer_id"), "{e}");

        let missing = owned(&COLUMNS[..6]);
        assert!(check_header(Some(&missing))
            .unwrap_err()
            .to_string()
            .contains("missing updated_at"));

        let mut swapped = owned(&COLUMNS);
        swapped.swap(1, 2);
        let e = check_header(Some(&swapped)).unwrap_err().to_string();
        assert!(e.contains("another order"), "{e}");
        assert!(e.contains("[order_id, status, customer_id"), "{e}");

        let mut upper = owned(&COLUMNS);
        upper[0] = "ORDER_ID".into();
        assert!(check_header(Some(&upper)).is_err());

        let mut dup = owned(&COLUMNS);
        dup[1] = "order_id".into();
        assert!(check_header(Some(&dup))
            .unwrap_err()
            .to_string()
            .contains("duplicated order_id"));
    }
}
