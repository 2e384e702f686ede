//! What an update of a matched row does: the columns it sets
//! (`update_columns`, `except_columns`), those where a null keeps the
//! table's value (`ignore_null_updates`), and the columns that break a tie
//! between changes of equal sequence.

use super::column::Column;
use super::parse::{RawDataset, RawIgnoreNulls, Source, SpecError};
use super::resolve::{optional, resolve};

/// The columns an update of a matched row sets: `update_columns`, or every
/// column but the keys and `except_columns`; sequence columns always.
pub(super) fn update_columns(
    src: &Source<'_>,
    d: &RawDataset,
    columns: &[Column],
    keys: &[usize],
    sequence_by: &[usize],
) -> Result<Vec<usize>, SpecError> {
    let name = d.name.get_ref();
    let listed = match (&d.update_columns, &d.except_columns) {
        (Some(_), Some(except)) => {
            return Err(src.error(
                Some(except.span()),
                format!("dataset {name:?} sets both update_columns and except_columns: keep one"),
            ))
        }
        (Some(update), None) => {
            let listed = resolve(src, name, columns, update, "update_columns")?;
            if let Some(&i) = listed.iter().find(|i| keys.contains(i)) {
                return Err(src.error(Some(update.span()), format!("update column {:?} is a key: a key identifies the row and is never updated", columns[i].name)));
            }
            listed
        }
        (None, except) => {
            let except = optional(except, |n| resolve(src, name, columns, n, "except_columns"))?;
            (0..columns.len())
                .filter(|i| !keys.contains(i) && !except.contains(i))
                .collect()
        }
    };
    let mut update: Vec<usize> = (0..columns.len())
        .filter(|i| listed.contains(i) || sequence_by.contains(i))
        .collect();
    update.dedup();
    Ok(update)
}

/// The tie-break columns: as declared (no key or sequence column), else the
/// update columns other than the sequence ones.
pub(super) fn tie_break(
    src: &Source<'_>,
    d: &RawDataset,
    columns: &[Column],
    keys: &[usize],
    sequence_by: &[usize],
    update: &[usize],
) -> Result<Vec<usize>, SpecError> {
    let Some(raw) = &d.tie_break else {
        return Ok(unsequenced(update, sequence_by));
    };
    let ties = resolve(src, d.name.get_ref(), columns, raw, "tie_break")?;
    if let Some(&i) = ties
        .iter()
        .find(|i| keys.contains(i) || sequence_by.contains(i) || !update.contains(i))
    {
        return Err(src.error(
            Some(raw.span()),
            format!(
                "tie_break column {:?} is a key, a sequence column or a column an update does \
                 not set: list update columns (a column an update leaves alone holds the \
                 first change's value, so a tie would depend on load order)",
                columns[i].name
            ),
        ));
    }
    Ok(ties)
}

/// The update columns where an update's null keeps the table's value:
/// `ignore_null_updates = true` takes every update column but the sequence
/// ones, a list takes the columns it names (update columns, no sequence
/// column: a change's sequence always replaces the row's).
pub(super) fn keep_on_null(
    src: &Source<'_>,
    d: &RawDataset,
    columns: &[Column],
    sequence_by: &[usize],
    update: &[usize],
) -> Result<Vec<usize>, SpecError> {
    let Some(raw) = &d.ignore_null_updates else {
        return Ok(Vec::new());
    };
    let listed = match raw.get_ref() {
        RawIgnoreNulls::All(false) => return Ok(Vec::new()),
        RawIgnoreNulls::All(true) => return Ok(unsequenced(update, sequence_by)),
        RawIgnoreNulls::Columns(names) => names,
    };
    let spanned = |n: &String| toml::Spanned::new(raw.span(), n.clone());
    let names = toml::Spanned::new(raw.span(), listed.iter().map(spanned).collect());
    let keep = resolve(
        src,
        d.name.get_ref(),
        columns,
        &names,
        "ignore_null_updates",
    )?;
    if keep.is_empty() {
        return Err(src.error(
            Some(raw.span()),
            "ignore_null_updates lists no column: name the columns whose nulls keep the \
             table's value, or write true for every update column",
        ));
    }
    if let Some(&i) = keep
        .iter()
        .find(|i| sequence_by.contains(i) || !update.contains(i))
    {
        return Err(src.error(
            Some(raw.span()),
            format!(
                "ignore_null_updates column {:?} is a key, a sequence column or a column an \
                 update does not set: list update columns other than the sequence",
                columns[i].name
            ),
        ));
    }
    Ok(keep)
}

/// The update columns but the sequence ones: the default tie-break, and
/// what `ignore_null_updates = true` covers.
fn unsequenced(update: &[usize], sequence_by: &[usize]) -> Vec<usize> {
    (update.iter().copied())
        .filter(|i| !sequence_by.contains(i))
        .collect()
}
