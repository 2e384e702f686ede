//! How a dataset's files are written: the format, the CSV dialect and
//! encoding, deletes and undeclared fields.

/// How a file's first row is read.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum HeaderMode {
    /// The declared names, in order.
    Exact,
    /// The declared names, in any order.
    ByName,
    /// No header row: fields by position.
    None,
}

/// A file's character encoding.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Encoding {
    /// UTF-8, with or without a byte-order mark.
    Utf8,
    /// Either byte order, told by the byte-order mark.
    Utf16,
    /// Windows-1252 (Western European).
    Windows1252,
    /// ISO-8859-1 (Latin-1).
    Iso88591,
}

impl Encoding {
    /// The name the spec file writes.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Utf8 => "utf-8",
            Self::Utf16 => "utf-16",
            Self::Windows1252 => "windows-1252",
            Self::Iso88591 => "iso-8859-1",
        }
    }
}

/// How a dataset's files are written.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Format {
    /// RFC 4180 text, read by the dataset's `[csv]` options.
    #[default]
    Csv,
    /// One JSON object per line, fields by column name.
    Jsonl,
    /// Apache Parquet, columns by name.
    Parquet,
    /// Apache Avro object container files, fields by name.
    Avro,
}

impl Format {
    /// The name the spec file writes.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Csv => "csv",
            Self::Jsonl => "jsonl",
            Self::Parquet => "parquet",
            Self::Avro => "avro",
        }
    }
}

/// What a JSON Lines, Parquet or Avro file's fields that the spec does not declare do.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum ExtraFields {
    /// The file is refused, naming them.
    #[default]
    Refuse,
    /// They are dropped.
    Ignore,
}

/// Which changes are deletes: those whose `column` holds one of `values`.
/// The column is read from each file, never stored.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DeleteWhen {
    /// The field (column of the file) that says which changes are deletes.
    pub column: String,
    /// Compared with the field's text exactly (a JSON string, number or boolean as written).
    pub values: Vec<String>,
    /// The texts of an upsert, when only these and `values` may be written
    /// (a preset's operations); empty: any other text is an upsert.
    pub upserts: Vec<String>,
}

impl DeleteWhen {
    /// Whether a field's text marks a delete.
    pub fn matches(&self, text: &str) -> bool {
        self.values.iter().any(|v| v == text)
    }

    /// Whether a field's text marks a delete; `Err` with what may be written
    /// when it is neither a delete nor one of [`DeleteWhen::upserts`].
    pub fn classify(&self, text: &str) -> Result<bool, String> {
        if self.matches(text) {
            return Ok(true);
        }
        if self.upserts.is_empty() || self.upserts.iter().any(|u| u == text) {
            return Ok(false);
        }
        let all: Vec<&str> = self
            .upserts
            .iter()
            .chain(&self.values)
            .map(String::as_str)
            .collect();
        Err(format!(
            "{:?} is not an operation: expected one of {}",
            text,
            all.join(", ")
        ))
    }
}

/// How a CSV file of the dataset is written.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CsvFormat {
    /// The byte between fields.
    pub field_delimiter: u8,
    /// How the first row is read.
    pub header: HeaderMode,
    /// Field texts read as null.
    pub null_if: Vec<String>,
    /// The text's encoding.
    pub encoding: Encoding,
}

impl Default for CsvFormat {
    fn default() -> Self {
        Self {
            field_delimiter: b',',
            header: HeaderMode::Exact,
            null_if: vec![String::new()],
            encoding: Encoding::Utf8,
        }
    }
}
