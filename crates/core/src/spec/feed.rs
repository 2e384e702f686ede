//! How a dataset's files are written and which changes are deletes: `format`,
//! `delete_when` and `extra_fields`, checked against the columns.

use super::column::{Column, LINEAGE_COLUMNS};
use super::formats::{DeleteWhen, ExtraFields, Format};
use super::parse::{
    RawDataset, RawDeleteWhen, RawExtraFields, RawFormat, RawHeader, Source, SpecError,
};
use super::preset::Preset;
use toml::Spanned;

/// The checked `format`, `delete_when` and `extra_fields` of a dataset.
pub(super) struct Feed {
    pub format: Format,
    pub delete_when: Option<DeleteWhen>,
    pub extra_fields: ExtraFields,
}

pub(super) fn feed(
    src: &Source<'_>,
    d: &RawDataset,
    columns: &[Column],
) -> Result<Feed, SpecError> {
    let name = d.name.get_ref();
    let format = format_of(d);
    if let (Some(csv), false) = (&d.csv, format == Format::Csv) {
        return Err(src.error(
            Some(csv.span()),
            format!(
                "dataset {name:?} has format = {:?}: its [dataset.csv] options do not apply; remove them",
                format.as_str()
            ),
        ));
    }
    let extra_fields = match d.extra_fields {
        None | Some(RawExtraFields::Refuse) => ExtraFields::Refuse,
        Some(RawExtraFields::Ignore) => ExtraFields::Ignore,
    };
    if let (Some(_), Format::Csv) = (d.extra_fields, format) {
        return Err(src.error(
            Some(d.name.span()),
            format!(
                "dataset {name:?} reads CSV files, whose header must hold the declared columns: \
                 extra_fields applies to format = \"jsonl\", \"parquet\" and \"avro\"; remove it"
            ),
        ));
    }
    let delete_when = match &d.delete_when {
        None => None,
        Some(raw) => Some(delete_when(src, d, raw, columns)?),
    };
    Ok(Feed {
        format,
        delete_when,
        extra_fields,
    })
}

/// The dataset's format: CSV unless it says otherwise.
pub(super) fn format_of(d: &RawDataset) -> Format {
    let preset = d.preset.as_ref().and_then(|p| Preset::named(p.get_ref()));
    let debezium = preset == Some(Preset::Debezium);
    match d.format.as_ref().map(|f| *f.get_ref()) {
        None if debezium => Format::Jsonl,
        None | Some(RawFormat::Csv) => Format::Csv,
        Some(RawFormat::Jsonl) => Format::Jsonl,
        Some(RawFormat::Parquet) => Format::Parquet,
        Some(RawFormat::Avro) => Format::Avro,
    }
}

fn delete_when(
    src: &Source<'_>,
    d: &RawDataset,
    raw: &Spanned<RawDeleteWhen>,
    columns: &[Column],
) -> Result<DeleteWhen, SpecError> {
    let inner = raw.get_ref();
    let column = inner.column.get_ref();
    if let Some(why) = column_refused(column, columns) {
        return Err(src.error(Some(inner.column.span()), why));
    }
    if inner.values.is_empty() {
        return Err(src.error(
            Some(raw.span()),
            format!(
                "delete_when of column {column:?} lists no values: e.g. in = [\"d\", \"delete\"]"
            ),
        ));
    }
    if let Some((span, why)) = options_refused(d, column) {
        return Err(src.error(Some(span.unwrap_or_else(|| raw.span())), why));
    }
    Ok(DeleteWhen {
        column: column.clone(),
        values: inner.values.clone(),
        upserts: Vec::new(),
    })
}

/// Why `column` cannot be the delete column, if it cannot: none named, a
/// declared column, or a lineage column.
fn column_refused(column: &str, columns: &[Column]) -> Option<String> {
    if column.is_empty() {
        return Some(
            "delete_when names no column: e.g. { column = \"op\", in = [\"d\"] }".to_string(),
        );
    }
    if let Some(c) = columns.iter().find(|c| c.name.eq_ignore_ascii_case(column)) {
        return Some(format!(
            "delete_when column {column:?} is declared as column {:?}: the delete column is \
             read from each file and never stored; remove it from the columns",
            c.name
        ));
    }
    let mut lineage = LINEAGE_COLUMNS.iter();
    lineage.any(|l| l.eq_ignore_ascii_case(column)).then(|| {
        format!("delete_when column {column:?} is a lineage column's name: name the file's delete column")
    })
}

/// An option of the dataset deletes cannot go with: where (none: at
/// delete_when), and why.
fn options_refused(
    d: &RawDataset,
    column: &str,
) -> Option<(Option<std::ops::Range<usize>>, String)> {
    if let Some(partial) = d.update_columns.as_ref().or(d.except_columns.as_ref()) {
        let which = match d.update_columns.is_some() {
            true => "update_columns",
            false => "except_columns",
        };
        return Some((
            Some(partial.span()),
            format!(
                "delete_when with update_columns or except_columns: a row deleted and inserted \
                 again would keep the deleted row's other columns in some load orders and not in \
                 others; with deletes an update sets every column: remove {which}"
            ),
        ));
    }
    let header = d.csv.as_ref().and_then(|c| c.get_ref().header);
    let headerless = header.is_some_and(|h| matches!(h, RawHeader::None));
    headerless.then(|| {
        let why = format!(
            "delete_when needs the files' header to find column {column:?}, and this dataset's \
             CSV files have none (header = \"none\"): write a header row and set header = \
             \"exact\" or \"by_name\", or, for files AWS DMS writes, set preset = \
             \"aws_dms\" instead of delete_when"
        );
        (None, why)
    })
}
