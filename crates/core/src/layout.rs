//! Which field of a CSV record each column reads: the same for every record
//! of a file with a header (or of a dataset with `header = "none"`), or,
//! for AWS DMS files without a header, told by each record's field count
//! (a full-load row has the declared columns, a change row has DMS's `Op`
//! before them).

use crate::contract::{by_name, HeaderMismatch};
use crate::record::RejectReason;
use crate::spec::{Dataset, DMS_OP};

/// Where a record's fields go: column `i` reads field `positions[i]`, the
/// delete column (when the positions hold one more) the last position's.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Layout {
    /// Every record alike.
    Fixed(Vec<usize>),
    /// AWS DMS without a header: `without` for a row of the declared
    /// columns alone, `with_op` for one with `Op` first.
    Dms {
        without: Vec<usize>,
        with_op: Vec<usize>,
    },
}

impl Layout {
    /// The layout of a header-less AWS DMS file of `dataset`.
    pub(crate) fn dms(dataset: &Dataset) -> Self {
        let declared = dataset.declared().len();
        let mut with_op: Vec<usize> = (1..=declared).collect();
        with_op.push(0);
        Self::Dms {
            without: (0..declared).collect(),
            with_op,
        }
    }

    /// The positions for a record of `fields` fields, or why it has the
    /// wrong number of them.
    pub(crate) fn place(&self, fields: usize) -> Result<&[usize], RejectReason> {
        match self {
            Self::Fixed(at) if at.len() == fields => Ok(at),
            Self::Fixed(at) => Err(RejectReason::FieldCount {
                found: fields,
                expected: at.len(),
            }),
            Self::Dms { without, .. } if without.len() == fields => Ok(without),
            Self::Dms { with_op, .. } if with_op.len() == fields => Ok(with_op),
            Self::Dms { without, .. } => Err(RejectReason::DmsFieldCount {
                found: fields,
                columns: without.len(),
            }),
        }
    }

    /// Some positions to find a rejected record's key by.
    pub(crate) fn any(&self) -> &[usize] {
        match self {
            Self::Fixed(at) => at,
            Self::Dms { without, .. } => without,
        }
    }
}

/// The layout of an AWS DMS file whose first record is `first`: by name
/// when it is a header (DMS's `AddColumnName = true`: the declared columns
/// in any order, `Op` among them or not), else by each record's count.
/// `Ok(None)`: the first record is a row.
pub(crate) fn dms_header(
    dataset: &Dataset,
    first: &[String],
) -> Result<Option<Layout>, HeaderMismatch> {
    let names: Vec<&str> = dataset.declared().iter().map(|c| c.name.as_str()).collect();
    let is_name = |f: &String| f == DMS_OP || names.iter().any(|n| n.eq_ignore_ascii_case(f));
    let opens_with_op = first.first().is_some_and(|f| f == DMS_OP);
    if !first.iter().all(is_name) && !opens_with_op {
        return Ok(None);
    }
    let op = first.iter().position(|f| f == DMS_OP);
    let fields: Vec<String> = first
        .iter()
        .filter(|f| *f != DMS_OP)
        .map(|f| {
            let declared = names.iter().find(|n| n.eq_ignore_ascii_case(f));
            declared.map_or_else(|| f.clone(), |n| n.to_string())
        })
        .collect();
    let mut positions = by_name(&names, &fields).ok_or_else(|| {
        let problem = crate::contract::describe(&names, &fields);
        HeaderMismatch::new(
            dataset,
            first.to_vec(),
            format!(
                "{problem} in an AWS DMS header row (the declared columns in any order, Op or not)"
            ),
        )
    })?;
    if let Some(op) = op {
        for p in positions.iter_mut().filter(|p| **p >= op) {
            *p += 1;
        }
        positions.push(op);
    }
    Ok(Some(Layout::Fixed(positions)))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::spec::Spec;

    fn dms() -> Dataset {
        let text = "[[dataset]]\nname = \"t\"\npreset = \"aws_dms\"\nkeys = [\"id\"]\n\
                    [[dataset.columns]]\nname = \"id\"\ntype = \"int\"\n\
                    [[dataset.columns]]\nname = \"city\"\ntype = \"string\"\n";
        Spec::parse(text, "t.toml").unwrap().datasets[0]
            .as_ref()
            .clone()
    }

    fn owned(names: &[&str]) -> Vec<String> {
        names.iter().map(|s| s.to_string()).collect()
    }

    #[test]
    fn a_dms_record_is_placed_by_its_field_count() {
        let layout = Layout::dms(&dms());
        assert_eq!(layout.place(2).unwrap(), &[0, 1]);
        assert_eq!(layout.place(3).unwrap(), &[1, 2, 0]);
        assert_eq!(
            layout.place(4).unwrap_err().to_string(),
            "has 4 fields, expected 2 (a full-load row) or 3 (AWS DMS's Op first)"
        );
    }

    #[test]
    fn a_dms_header_is_found_by_its_names() {
        let d = dms();
        let header = |f: &[&str]| dms_header(&d, &owned(f));
        assert_eq!(header(&["101", "Dallas"]).unwrap(), None);
        assert_eq!(header(&["I", "101", "Dallas"]).unwrap(), None);
        assert_eq!(
            header(&["Op", "id", "city"]).unwrap(),
            Some(Layout::Fixed(vec![1, 2, 0]))
        );
        assert_eq!(
            header(&["CITY", "ID"]).unwrap(),
            Some(Layout::Fixed(vec![1, 0]))
        );
        assert_eq!(
            header(&["id", "Op", "city"]).unwrap(),
            Some(Layout::Fixed(vec![0, 2, 1]))
        );
        let e = header(&["Op", "id", "town"]).unwrap_err().to_string();
        assert!(e.contains("missing city"), "{e}");
        assert!(e.contains("AWS DMS header row"), "{e}");
        assert!(e.contains("has columns [Op, id, town]"), "{e}");
    }
}
