//! Lists of column names in a spec (`keys`, `sequence_by`, ...) resolved to
//! the indexes of the dataset's columns, each error naming its line.

use super::column::Column;
use super::parse::{Names, Source, SpecError};

/// The columns an option lists, by index; none when the option is not set.
pub(super) fn optional(
    names: &Option<Names>,
    find: impl Fn(&Names) -> Result<Vec<usize>, SpecError>,
) -> Result<Vec<usize>, SpecError> {
    names.as_ref().map_or(Ok(Vec::new()), find)
}

/// The columns `names` lists, by index, each once.
pub(super) fn resolve(
    src: &Source<'_>,
    dataset: &str,
    columns: &[Column],
    names: &Names,
    role: &str,
) -> Result<Vec<usize>, SpecError> {
    let mut out = Vec::new();
    for n in names.get_ref() {
        let Some(i) = columns.iter().position(|c| &c.name == n.get_ref()) else {
            let all: Vec<&str> = columns.iter().map(|c| c.name.as_str()).collect();
            return Err(src.error(
                Some(n.span()),
                format!(
                    "{role} column {:?} is not a column of dataset {dataset:?} (its columns: {})",
                    n.get_ref(),
                    all.join(", ")
                ),
            ));
        };
        if out.contains(&i) {
            return Err(src.error(
                Some(n.span()),
                format!("{role} column {:?} is listed twice", n.get_ref()),
            ));
        }
        out.push(i);
    }
    Ok(out)
}
