//! The file's pages, each checked as it is read and before the parquet
//! crate decodes it: that decoder asserts (panics) on some damaged pages
//! where it should return an error. A page that fails a check stops the read
//! with an error instead, which refuses the file.
//!
//! Checked: a page using a dictionary comes after its chunk's dictionary
//! page; the level and dictionary-index runs (RLE / bit-packed hybrid) lie
//! within the page, with a bit width that fits; a page (data or dictionary)
//! of no values holds no value bytes, and a dictionary page no more values
//! than bytes; split byte streams hold a value for each level that is not null.

use super::levels::{bit_width, prefixed, runs, tail, v1_levels};
use bytes::Bytes;
use parquet::arrow::arrow_reader::{ParquetRecordBatchReader, RowGroups};
use parquet::arrow::{parquet_to_arrow_field_levels, ProjectionMask};
use parquet::basic::{Encoding, Type as PhysicalType};
use parquet::column::page::{Page, PageIterator, PageMetadata, PageReader};
use parquet::errors::{ParquetError, Result};
use parquet::file::metadata::{ParquetMetaData, RowGroupMetaData};
use parquet::file::serialized_reader::SerializedPageReader;
use parquet::schema::types::ColumnDescPtr;
use std::sync::Arc;

/// A reader of the top-level columns `roots` of the file in `bytes`, whose
/// metadata (`metadata`) has passed [`super::guard::check_metadata`].
pub(super) fn reader(
    bytes: Bytes,
    metadata: Arc<ParquetMetaData>,
    roots: &[usize],
    batch_size: usize,
) -> Result<ParquetRecordBatchReader> {
    let schema = metadata.file_metadata().schema_descr();
    let root = schema.root_schema();
    if !root.is_group() || roots.iter().any(|&r| r >= root.get_fields().len()) {
        return Err(general("the schema has no such top-level column"));
    }
    let mask = ProjectionMask::roots(schema, roots.iter().copied());
    let levels = parquet_to_arrow_field_levels(schema, mask, None)?;
    let groups = Checked {
        bytes: Arc::new(bytes),
        metadata: Arc::clone(&metadata),
    };
    ParquetRecordBatchReader::try_new_with_row_groups(&levels, &groups, batch_size, None)
}

fn general(text: &str) -> ParquetError {
    ParquetError::General(text.to_string())
}

/// Every row group of the file, its pages checked.
struct Checked {
    bytes: Arc<Bytes>,
    metadata: Arc<ParquetMetaData>,
}

impl RowGroups for Checked {
    fn num_rows(&self) -> usize {
        self.metadata
            .row_groups()
            .iter()
            .map(|g| usize::try_from(g.num_rows()).unwrap_or(0))
            .fold(0, usize::saturating_add)
    }

    fn column_chunks(&self, i: usize) -> Result<Box<dyn PageIterator>> {
        let schema = self.metadata.file_metadata().schema_descr();
        if i >= schema.num_columns() {
            return Err(general("no such leaf column"));
        }
        Ok(Box::new(Chunks {
            bytes: Arc::clone(&self.bytes),
            metadata: Arc::clone(&self.metadata),
            column: schema.column(i),
            leaf: i,
            group: 0,
        }))
    }

    fn row_groups(&self) -> Box<dyn Iterator<Item = &RowGroupMetaData> + '_> {
        Box::new(self.metadata.row_groups().iter())
    }

    fn metadata(&self) -> &ParquetMetaData {
        &self.metadata
    }
}

/// One leaf column's chunks, a row group after another.
struct Chunks {
    bytes: Arc<Bytes>,
    metadata: Arc<ParquetMetaData>,
    column: ColumnDescPtr,
    leaf: usize,
    group: usize,
}

impl Iterator for Chunks {
    type Item = Result<Box<dyn PageReader>>;

    fn next(&mut self) -> Option<Self::Item> {
        let group = self.metadata.row_groups().get(self.group)?;
        self.group += 1;
        let Some(chunk) = group.columns().get(self.leaf) else {
            return Some(Err(general("a row group lacks a column chunk")));
        };
        let rows = usize::try_from(group.num_rows()).unwrap_or(0);
        Some(
            SerializedPageReader::new(Arc::clone(&self.bytes), chunk, rows, None).map(|inner| {
                Box::new(Pages {
                    inner,
                    column: Arc::clone(&self.column),
                    dictionary: false,
                }) as Box<dyn PageReader>
            }),
        )
    }
}

impl PageIterator for Chunks {}

/// A column chunk's pages, each checked before it is handed on.
struct Pages {
    inner: SerializedPageReader<Bytes>,
    column: ColumnDescPtr,
    /// Whether the chunk's dictionary page has been read.
    dictionary: bool,
}

impl Iterator for Pages {
    type Item = Result<Page>;

    fn next(&mut self) -> Option<Self::Item> {
        self.get_next_page().transpose()
    }
}

impl PageReader for Pages {
    fn get_next_page(&mut self) -> Result<Option<Page>> {
        let page = self.inner.get_next_page()?;
        if let Some(page) = &page {
            self.check(page).map_err(ParquetError::General)?;
        }
        Ok(page)
    }

    fn peek_next_page(&mut self) -> Result<Option<PageMetadata>> {
        self.inner.peek_next_page()
    }

    fn skip_next_page(&mut self) -> Result<()> {
        self.inner.skip_next_page()
    }

    fn at_record_boundary(&mut self) -> Result<bool> {
        self.inner.at_record_boundary()
    }
}

impl Pages {
    fn check(&mut self, page: &Page) -> Result<(), String> {
        match page {
            // The decoder divides by the count of values it has left.
            Page::DictionaryPage {
                buf, num_values, ..
            } if *num_values == 0 && !buf.is_empty() => {
                Err("a dictionary page of no values holds value bytes".into())
            }
            // The decoder sizes (and zeroes) the dictionary by its stated
            // count: every value takes a byte at least.
            Page::DictionaryPage {
                buf, num_values, ..
            } if *num_values as usize > buf.len() => Err(format!(
                "a dictionary page claims {num_values} values in {} bytes",
                buf.len()
            )),
            Page::DictionaryPage { .. } => {
                self.dictionary = true;
                Ok(())
            }
            Page::DataPage {
                buf,
                num_values,
                encoding,
                def_level_encoding,
                rep_level_encoding,
                ..
            } => {
                let levels = (*rep_level_encoding, *def_level_encoding);
                self.check_v1(buf, *num_values as usize, *encoding, levels)
            }
            Page::DataPageV2 {
                buf,
                num_values,
                num_nulls,
                encoding,
                def_levels_byte_len,
                rep_levels_byte_len,
                ..
            } => {
                let (r, d) = (*rep_levels_byte_len as usize, *def_levels_byte_len as usize);
                let values = num_values.checked_sub(*num_nulls);
                self.check_v2(buf, (r, d), values, *encoding)
            }
        }
    }

    /// A data page of format 1: `n` values after their repetition and
    /// definition levels, each of its encoding.
    fn check_v1(
        &self,
        buf: &[u8],
        n: usize,
        encoding: Encoding,
        (rep_encoding, def_encoding): (Encoding, Encoding),
    ) -> Result<(), String> {
        let (rep, def) = (self.column.max_rep_level(), self.column.max_def_level());
        let mut at = 0;
        if rep > 0 {
            at += v1_levels(tail(buf, at), rep_encoding, rep, n)?.0;
        }
        // Without definition levels every value is there.
        let mut present = n;
        if def > 0 {
            let (taken, at_max) = v1_levels(tail(buf, at), def_encoding, def, n)?;
            (at, present) = (at + taken, at_max);
        }
        self.values(encoding, tail(buf, at), n, present)
    }

    /// A data page of format 2: its levels' byte lengths (repetition,
    /// definition), then its values, `values` of them not null.
    fn check_v2(
        &self,
        buf: &[u8],
        (r, d): (usize, usize),
        values: Option<u32>,
        encoding: Encoding,
    ) -> Result<(), String> {
        let (rep, def) = (self.column.max_rep_level(), self.column.max_def_level());
        let levels = r.checked_add(d).filter(|&l| l <= buf.len());
        let (Some(levels), Some(values)) = (levels, values) else {
            return Err("a data page's level or null counts do not fit it".into());
        };
        if rep > 0 {
            runs(&buf[..r], bit_width(rep))?;
        }
        if def > 0 {
            runs(&buf[r..levels], bit_width(def))?;
        }
        let values = values as usize;
        self.values(encoding, &buf[levels..], values, values)
    }

    /// The values of a data page in `data`: `count` as its header says, of
    /// which the levels make `present` not null.
    fn values(
        &self,
        encoding: Encoding,
        data: &[u8],
        count: usize,
        present: usize,
    ) -> Result<(), String> {
        match encoding {
            Encoding::PLAIN_DICTIONARY | Encoding::RLE_DICTIONARY => {
                if !self.dictionary {
                    return Err(
                        "a data page refers to a dictionary page its column chunk lacks".into(),
                    );
                }
                match data.split_first() {
                    Some((&width, _)) if width > 32 => Err(format!(
                        "a data page's dictionary indexes are {width} bits wide"
                    )),
                    Some((&width, rest)) => runs(rest, width),
                    None => Err("a data page lacks its dictionary indexes' bit width".into()),
                }
            }
            // The decoder splits the bytes into one stream per byte of a value.
            Encoding::BYTE_STREAM_SPLIT => {
                let size = match self.column.physical_type() {
                    PhysicalType::INT32 | PhysicalType::FLOAT => 4,
                    PhysicalType::INT64 | PhysicalType::DOUBLE => 8,
                    PhysicalType::FIXED_LEN_BYTE_ARRAY => self.column.type_length().max(1) as usize,
                    _ => return Ok(()),
                };
                if data.len() / size < present {
                    return Err(
                        "a data page's split byte streams hold fewer values than its levels".into(),
                    );
                }
                Ok(())
            }
            Encoding::PLAIN if count == 0 && !data.is_empty() => {
                Err("a data page of no values holds value bytes".into())
            }
            Encoding::RLE if self.column.physical_type() == PhysicalType::BOOLEAN => {
                prefixed(data).and_then(|(_, stream)| runs(stream, 1))
            }
            _ => Ok(()),
        }
    }
}
