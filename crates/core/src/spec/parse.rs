//! The spec file's TOML, read into raw structs that keep where each value was
//! written, so that every error names the file, the line and what to change.

use serde::Deserialize;
use std::fmt;
use std::ops::Range;
use toml::Spanned;

/// A spec that cannot be used: nothing is read or written.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SpecError {
    /// The spec's file name or URI.
    pub file: String,
    /// 1-based line of the offending value, when known.
    pub line: Option<usize>,
    /// What is wrong and what to change.
    pub message: String,
}

impl fmt::Display for SpecError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.line {
            Some(line) => write!(f, "spec {} line {line}: {}", self.file, self.message),
            None => write!(f, "spec {}: {}", self.file, self.message),
        }
    }
}

impl std::error::Error for SpecError {}

/// Where errors point: the spec's name and text.
pub(crate) struct Source<'a> {
    pub file: &'a str,
    pub text: &'a str,
}

impl Source<'_> {
    pub fn error(&self, span: Option<Range<usize>>, message: impl Into<String>) -> SpecError {
        let line = span.map(|s| {
            let end = s.start.min(self.text.len());
            self.text[..end].bytes().filter(|b| *b == b'\n').count() + 1
        });
        SpecError {
            file: self.file.to_string(),
            line,
            message: message.into(),
        }
    }
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct RawSpec {
    #[serde(default)]
    pub dataset: Vec<Spanned<RawDataset>>,
}

pub(crate) type Names = Spanned<Vec<Spanned<String>>>;

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct RawDataset {
    pub name: Spanned<String>,
    pub table: Option<Spanned<String>>,
    pub rejected_table: Option<Spanned<String>>,
    pub source: Option<Spanned<String>>,
    pub preset: Option<Spanned<String>>,
    pub keys: Names,
    pub sequence_by: Option<Names>,
    pub update_columns: Option<Names>,
    pub except_columns: Option<Names>,
    pub ignore_null_updates: Option<Spanned<RawIgnoreNulls>>,
    pub partition_by: Option<Names>,
    pub tie_break: Option<Names>,
    pub format: Option<Spanned<RawFormat>>,
    pub delete_when: Option<Spanned<RawDeleteWhen>>,
    pub extra_fields: Option<RawExtraFields>,
    pub merge_on_read: Option<bool>,
    pub change_data_feed: Option<bool>,
    pub mode: Option<Spanned<String>>,
    pub snapshot_scope: Option<Names>,
    pub snapshot_key_date: Option<Spanned<String>>,
    pub history: Option<Spanned<bool>>,
    pub history_columns: Option<Names>,
    pub history_except_columns: Option<Names>,
    pub csv: Option<Spanned<RawCsv>>,
    #[serde(default)]
    pub columns: Vec<Spanned<RawColumn>>,
    #[serde(default)]
    pub expect: Vec<Spanned<RawExpect>>,
}

/// One `[[dataset.expect]]`.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct RawExpect {
    pub name: Spanned<String>,
    pub rule: Spanned<String>,
    pub on_fail: Option<Spanned<String>>,
}

impl RawDataset {
    /// The first of `options` (names of dataset options a mode refuses)
    /// that the spec sets, with where it sets it.
    pub(crate) fn first_set(
        &self,
        options: &[&'static str],
    ) -> Option<(&'static str, Range<usize>)> {
        options.iter().find_map(|&option| {
            let span = match option {
                "delete_when" => self.delete_when.as_ref().map(Spanned::span),
                "preset" => self.preset.as_ref().map(Spanned::span),
                "ignore_null_updates" => self.ignore_null_updates.as_ref().map(Spanned::span),
                "tie_break" => self.tie_break.as_ref().map(Spanned::span),
                "update_columns" => self.update_columns.as_ref().map(Spanned::span),
                "except_columns" => self.except_columns.as_ref().map(Spanned::span),
                "partition_by" => self.partition_by.as_ref().map(Spanned::span),
                "mode" => self.mode.as_ref().map(Spanned::span),
                other => {
                    debug_assert!(false, "option {other} is not one first_set knows");
                    None
                }
            };
            span.map(|s| (option, s))
        })
    }
}

/// `ignore_null_updates`: `true`, `false`, or the columns it applies to.
#[derive(Debug)]
pub(crate) enum RawIgnoreNulls {
    All(bool),
    Columns(Vec<String>),
}

impl<'de> Deserialize<'de> for RawIgnoreNulls {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct Visitor;
        impl<'de> serde::de::Visitor<'de> for Visitor {
            type Value = RawIgnoreNulls;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("true, false or a list of column names")
            }
            fn visit_bool<E: serde::de::Error>(self, v: bool) -> Result<Self::Value, E> {
                Ok(RawIgnoreNulls::All(v))
            }
            fn visit_seq<A: serde::de::SeqAccess<'de>>(
                self,
                mut seq: A,
            ) -> Result<Self::Value, A::Error> {
                let mut names = Vec::new();
                while let Some(name) = seq.next_element::<String>()? {
                    names.push(name);
                }
                Ok(RawIgnoreNulls::Columns(names))
            }
        }
        d.deserialize_any(Visitor)
    }
}

#[derive(Debug, Clone, Copy, Deserialize)]
#[serde(rename_all = "snake_case")]
pub(crate) enum RawFormat {
    Csv,
    Jsonl,
    Parquet,
    Avro,
}

#[derive(Debug, Clone, Copy, Deserialize)]
#[serde(rename_all = "snake_case")]
pub(crate) enum RawExtraFields {
    Refuse,
    Ignore,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct RawDeleteWhen {
    pub column: Spanned<String>,
    #[serde(rename = "in")]
    pub values: Vec<String>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct RawCsv {
    pub field_delimiter: Option<Spanned<String>>,
    pub header: Option<RawHeader>,
    pub null_if: Option<Vec<String>>,
    pub encoding: Option<RawEncoding>,
}

#[derive(Debug, Clone, Copy, Deserialize)]
#[serde(rename_all = "snake_case")]
pub(crate) enum RawHeader {
    Exact,
    ByName,
    None,
}

#[derive(Debug, Clone, Copy, Deserialize)]
pub(crate) enum RawEncoding {
    #[serde(rename = "utf-8")]
    Utf8,
    #[serde(rename = "utf-16")]
    Utf16,
    #[serde(rename = "windows-1252")]
    Windows1252,
    #[serde(rename = "iso-8859-1")]
    Iso88591,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct RawColumn {
    pub name: Spanned<String>,
    #[serde(rename = "type")]
    pub ty: Spanned<String>,
    pub nullable: Option<bool>,
    pub format: Option<Spanned<String>>,
    pub timezone: Option<Spanned<String>>,
}

/// Reads the TOML of a spec; syntax errors and unknown fields name their line.
pub(crate) fn raw(source: &Source<'_>) -> Result<RawSpec, SpecError> {
    toml::from_str(source.text).map_err(|e| {
        let message = e.message().trim_end().to_string();
        let hint = if message.contains("unknown field") {
            "; see docs/datasets.md for the fields a spec takes"
        } else {
            ""
        };
        source.error(e.span(), format!("{message}{hint}"))
    })
}
