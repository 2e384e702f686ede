//! A spec's raw TOML checked into [`Dataset`]s: every name resolved, every
//! rule of the reference enforced, the first problem reported with its line.

use super::column::{Column, ColumnType, LINEAGE_COLUMNS};
use super::dataset::{Dataset, Spec};
use super::formats::{CsvFormat, Encoding, HeaderMode};
use super::parse::{raw, RawColumn, RawCsv, RawDataset, RawEncoding, RawHeader, Source, SpecError};
use super::resolve::{optional, resolve};
use super::tables::RESERVED_NAMES;
use std::sync::Arc;
use toml::Spanned;

impl Spec {
    /// Parses and checks a spec's text; `file` names it in errors.
    pub fn parse(text: &str, file: &str) -> Result<Spec, SpecError> {
        let src = Source { file, text };
        let raw = raw(&src)?;
        if raw.dataset.is_empty() {
            return Err(src.error(None, "declares no dataset: add a [[dataset]] table"));
        }
        let mut datasets: Vec<Arc<Dataset>> = Vec::new();
        for d in &raw.dataset {
            let dataset = dataset(&src, d.get_ref())?;
            let span = || Some(d.get_ref().name.span());
            if let Some(other) = datasets.iter().find(|o| o.name == dataset.name) {
                return Err(src.error(
                    span(),
                    format!(
                        "a second dataset is named {:?}: give each dataset its own name",
                        other.name
                    ),
                ));
            }
            if let Some(other) = datasets
                .iter()
                .find(|o| o.source.is_some() && o.source == dataset.source)
            {
                return Err(src.error(
                    d.get_ref().source.as_ref().map(Spanned::span),
                    format!(
                        "datasets {:?} and {:?} have the same source {:?}: each prefix loads into one dataset",
                        other.name,
                        dataset.name,
                        other.source.as_deref().unwrap_or_default()
                    ),
                ));
            }
            let own = dataset.table_folders();
            if let Some(twice) = own.iter().enumerate().find(|(i, t)| own[..*i].contains(t)) {
                return Err(src.error(span(), format!("dataset {:?} would write table {:?} twice (its table, rejects, tombstones or history): give table or rejected_table another name", dataset.name, twice.1)));
            }
            if let Some((table, other)) = shared_table(&datasets, &dataset) {
                return Err(src.error(span(), format!("dataset {:?} would write table {table:?}, which is also a table of dataset {other:?}: rename one of them", dataset.name)));
            }
            datasets.push(Arc::new(dataset));
        }
        Ok(Spec {
            datasets,
            others: Vec::new(),
        })
    }
}

/// A table `dataset` writes that one of `others` writes too, with its dataset.
fn shared_table(others: &[Arc<Dataset>], dataset: &Dataset) -> Option<(String, String)> {
    let mine = dataset.table_folders();
    others.iter().find_map(|o| {
        let theirs = o.table_folders();
        (mine.iter().find(|t| theirs.contains(t))).map(|t| (t.clone(), o.name.clone()))
    })
}

fn dataset(src: &Source<'_>, d: &RawDataset) -> Result<Dataset, SpecError> {
    let name = dataset_name(src, &d.name)?;
    let (table, rejected) = super::tables::table_names(src, d)?;
    let source = match &d.source {
        Some(s) => Some(source(src, s)?),
        None => None,
    };
    let mut columns = declared_columns(src, d)?;
    let format = super::feed::format_of(d);
    let implied = super::preset::implied(src, d, &columns, format)?;
    let generated = implied.generated.len();
    columns.extend(implied.generated);
    let (keys, mut sequence_by) = key_and_sequence(src, d, &columns)?;
    if generated > 0 {
        sequence_by = (columns.len() - generated..columns.len()).collect();
    }
    for &i in keys.iter().chain(&sequence_by) {
        columns[i].nullable = false;
    }
    let update = super::updates::update_columns(src, d, &columns, &keys, &sequence_by)?;
    let keep_on_null = super::updates::keep_on_null(src, d, &columns, &sequence_by, &update)?;
    let partition_by = optional(&d.partition_by, |n| {
        resolve(src, name, &columns, n, "partition_by")
    })?;
    if let (Some(raw), Some(&i)) = (
        &d.partition_by,
        partition_by
            .iter()
            .find(|&&i| columns[i].ty == ColumnType::Double),
    ) {
        return Err(src.error(Some(raw.span()), format!("partition column {:?} is a double: partition by a string, integer, date or boolean column", columns[i].name)));
    }
    let tie_break = super::updates::tie_break(src, d, &columns, &keys, &sequence_by, &update)?;
    let feed = super::feed::feed(src, d, &columns)?;
    let snapshot = super::snapshot::snapshot(src, d, &columns, &sequence_by)?;
    let roles = super::history::Roles {
        keys: &keys,
        sequence_by: &sequence_by,
        generated,
    };
    let history = super::history::history(src, d, &columns, roles)?;
    let expectations = super::expect::expectations(src, d)?;
    Ok(Dataset {
        history,
        snapshot,
        preset: implied.preset,
        generated,
        name: name.clone(),
        table,
        rejected,
        source,
        columns,
        keys,
        sequence_by,
        tie_break,
        update,
        keep_on_null,
        partition_by,
        format: feed.format,
        delete_when: feed.delete_when.or(implied.delete_when),
        extra_fields: feed.extra_fields,
        merge_on_read: d.merge_on_read.unwrap_or(false),
        change_data_feed: d.change_data_feed.unwrap_or(false),
        csv: csv(src, d.csv.as_ref().map(Spanned::get_ref))?,
        rules: Vec::new(),
        expectations,
    })
}

/// A dataset's name, checked: it names tables.
fn dataset_name<'a>(src: &Source<'_>, raw: &'a Spanned<String>) -> Result<&'a String, SpecError> {
    let name = raw.get_ref();
    if !valid_name(name) {
        return Err(src.error(Some(raw.span()), format!("dataset name {name:?} must be a lower-case letter then lower-case letters, digits or _ (it names the table)")));
    }
    if RESERVED_NAMES.contains(&name.as_str())
        || name.starts_with("rejected_")
        || name.starts_with("tombstones_")
        || name.starts_with("history_")
    {
        return Err(src.error(Some(raw.span()), format!("dataset name {name:?} is taken by deltaload's own tables (ledger, reconciliation, rejected_*, tombstones_*, history_*): choose another")));
    }
    Ok(name)
}

/// The declared columns, each name once.
fn declared_columns(src: &Source<'_>, d: &RawDataset) -> Result<Vec<Column>, SpecError> {
    let name = d.name.get_ref();
    if d.columns.is_empty() {
        return Err(src.error(Some(d.name.span()), format!("dataset {name:?} declares no columns: add [[dataset.columns]] tables with name and type")));
    }
    let mut columns: Vec<Column> = Vec::new();
    for c in &d.columns {
        let column = column(src, c.get_ref())?;
        if let Some(other) = columns
            .iter()
            .find(|o| o.name.eq_ignore_ascii_case(&column.name))
        {
            return Err(src.error(
                Some(c.get_ref().name.span()),
                format!(
                    "column {:?} is declared twice in dataset {name:?} (as {:?}; Delta column \
                     names do not tell case apart)",
                    column.name, other.name
                ),
            ));
        }
        columns.push(column);
    }
    Ok(columns)
}

/// The key columns (one at least, no double) and the sequence columns (no key among them).
fn key_and_sequence(
    src: &Source<'_>,
    d: &RawDataset,
    columns: &[Column],
) -> Result<(Vec<usize>, Vec<usize>), SpecError> {
    let name = d.name.get_ref();
    let keys = resolve(src, name, columns, &d.keys, "key")?;
    let err = |span: std::ops::Range<usize>, m: String| src.error(Some(span), m);
    if keys.is_empty() {
        return Err(err(
            d.keys.span(),
            format!("dataset {name:?} has no keys: name one or more columns that identify a row"),
        ));
    }
    if let Some(&i) = keys.iter().find(|&&i| columns[i].ty == ColumnType::Double) {
        return Err(err(d.keys.span(), format!("key column {:?} is a double, which cannot be compared exactly: use decimal or bigint", columns[i].name)));
    }
    let sequence_by = optional(&d.sequence_by, |n| {
        resolve(src, name, columns, n, "sequence_by")
    })?;
    if let (Some(raw), Some(&i)) = (
        &d.sequence_by,
        sequence_by.iter().find(|i| keys.contains(i)),
    ) {
        return Err(err(raw.span(), format!("column {:?} is both a key and a sequence column: a sequence orders the changes of one key", columns[i].name)));
    }
    Ok((keys, sequence_by))
}

fn valid_name(name: &str) -> bool {
    let mut chars = name.chars();
    chars.next().is_some_and(|c| c.is_ascii_lowercase())
        && chars.all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '_')
}

fn source(src: &Source<'_>, s: &Spanned<String>) -> Result<String, SpecError> {
    let text = s.get_ref();
    let bucket = text
        .strip_prefix("s3://")
        .map(|r| r.split('/').next().unwrap_or(""));
    match bucket {
        // A folder: `s3://landing/netflix` must not take `netflix_archive/`.
        Some(b) if !b.is_empty() && text.ends_with('/') => Ok(text.clone()),
        Some(b) if !b.is_empty() => Ok(format!("{text}/")),
        _ => Err(src.error(
            Some(s.span()),
            format!("source {text:?} is not s3://BUCKET/PREFIX"),
        )),
    }
}

fn column(src: &Source<'_>, c: &RawColumn) -> Result<Column, SpecError> {
    let name = c.name.get_ref();
    if name.is_empty() || LINEAGE_COLUMNS.iter().any(|l| l.eq_ignore_ascii_case(name)) {
        return Err(src.error(Some(c.name.span()), format!("column name {name:?} is taken: every table has the lineage columns source_file and loaded_at")));
    }
    let ty = column_type(c.ty.get_ref()).ok_or_else(|| {
        src.error(Some(c.ty.span()), format!("column {name:?} has unknown type {:?}: use string, boolean, int, bigint, double, decimal(P,S) (P from 1 to 38, S at most P), date or timestamp", c.ty.get_ref()))
    })?;
    if let Some(f) = &c.format {
        if !matches!(ty, ColumnType::Date | ColumnType::Timestamp) {
            return Err(src.error(
                Some(f.span()),
                format!(
                    "column {name:?} is a {ty}: format applies to date and timestamp columns only"
                ),
            ));
        }
        let items = chrono::format::StrftimeItems::new(f.get_ref());
        if f.get_ref().is_empty()
            || items
                .into_iter()
                .any(|i| matches!(i, chrono::format::Item::Error))
        {
            return Err(src.error(Some(f.span()), format!("format {:?} of column {name:?} is not a valid strftime format (e.g. \"%d-%m-%y\")", f.get_ref())));
        }
    }
    let timezone = match &c.timezone {
        None => None,
        Some(_) if ty != ColumnType::Timestamp => {
            return Err(src.error(c.timezone.as_ref().map(Spanned::span), format!("column {name:?} is a {ty}: timezone applies to timestamp columns only")))
        }
        Some(z) => Some(z.get_ref().parse::<chrono_tz::Tz>().map_err(|_| {
            src.error(Some(z.span()), format!("timezone {:?} of column {name:?} is not an IANA zone name (e.g. \"Europe/Berlin\", \"UTC\")", z.get_ref()))
        })?),
    };
    Ok(Column {
        name: name.clone(),
        ty,
        nullable: c.nullable.unwrap_or(true),
        format: c.format.as_ref().map(|f| f.get_ref().clone()),
        timezone,
    })
}

/// `string`, `decimal(10,2)`, ...; `None` for anything else.
pub(crate) fn column_type(text: &str) -> Option<ColumnType> {
    let t = text.trim().to_ascii_lowercase();
    Some(match t.as_str() {
        "string" => ColumnType::String,
        "boolean" => ColumnType::Boolean,
        "int" => ColumnType::Int,
        "bigint" => ColumnType::Bigint,
        "double" => ColumnType::Double,
        "date" => ColumnType::Date,
        "timestamp" => ColumnType::Timestamp,
        _ => {
            let inner = t.strip_prefix("decimal(")?.strip_suffix(')')?;
            let (p, s) = inner.split_once(',')?;
            let (precision, scale): (u8, u8) = (p.trim().parse().ok()?, s.trim().parse().ok()?);
            if !(1..=38).contains(&precision) || scale > precision {
                return None;
            }
            ColumnType::Decimal { precision, scale }
        }
    })
}

fn csv(src: &Source<'_>, raw: Option<&RawCsv>) -> Result<CsvFormat, SpecError> {
    let mut out = CsvFormat::default();
    let Some(raw) = raw else { return Ok(out) };
    if let Some(d) = &raw.field_delimiter {
        let text = d.get_ref();
        out.field_delimiter = match text.as_bytes() {
            [b] if b.is_ascii() && !matches!(b, b'"' | b'\n' | b'\r') => *b,
            _ => return Err(src.error(Some(d.span()), format!("field_delimiter {text:?} must be one ASCII character other than a quote or a line end (e.g. \",\", \";\", \"\\t\", \"|\")"))),
        };
    }
    if let Some(h) = raw.header {
        out.header = match h {
            RawHeader::Exact => HeaderMode::Exact,
            RawHeader::ByName => HeaderMode::ByName,
            RawHeader::None => HeaderMode::None,
        };
    }
    if let Some(n) = &raw.null_if {
        out.null_if = n.clone();
    }
    if let Some(e) = raw.encoding {
        out.encoding = match e {
            RawEncoding::Utf8 => Encoding::Utf8,
            RawEncoding::Utf16 => Encoding::Utf16,
            RawEncoding::Windows1252 => Encoding::Windows1252,
            RawEncoding::Iso88591 => Encoding::Iso88591,
        };
    }
    Ok(out)
}
