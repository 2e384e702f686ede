//! The file's pages, each checked as it is read and before the parquet
//! crate decodes it: that decoder asserts (panics) on some damaged pages
//! where it should return an error. A page that fails a check stops the read
//! with an error instead, which refuses the file.
//!
//! Checked: a page using a dictionary comes after its chunk's dictionary
//! page; the level and dictionary-index runs (RLE / bit-packed hybrid) lie
//! within the page, with a bit width that fits; a page (data or dictionary)
//! of no values holds no value bytes.

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
/// metadata (`metadata`) has passed [`crate::guard::check_metadata`].
pub(crate) fn reader(
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
        let (rep, def) = (self.column.max_rep_level(), self.column.max_def_level());
        match page {
            // The decoder divides by the count of values it has left.
            Page::DictionaryPage {
                buf, num_values, ..
            } if *num_values == 0 && !buf.is_empty() => {
                Err("a dictionary page of no values holds value bytes".into())
            }
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
                let n = *num_values as usize;
                let mut at = 0;
                if rep > 0 {
                    at += v1_levels(tail(buf, at), *rep_level_encoding, rep, n)?;
                }
                if def > 0 {
                    at += v1_levels(tail(buf, at), *def_level_encoding, def, n)?;
                }
                self.values(*encoding, tail(buf, at), n)
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
                let levels = r.checked_add(d).filter(|&l| l <= buf.len());
                let (Some(levels), Some(values)) = (levels, num_values.checked_sub(*num_nulls))
                else {
                    return Err("a data page's level or null counts do not fit it".into());
                };
                if rep > 0 {
                    runs(&buf[..r], bit_width(rep))?;
                }
                if def > 0 {
                    runs(&buf[r..levels], bit_width(def))?;
                }
                self.values(*encoding, &buf[levels..], values as usize)
            }
        }
    }

    /// The values of a data page: at most `count` of them in `data`.
    fn values(&self, encoding: Encoding, data: &[u8], count: usize) -> Result<(), String> {
        match encoding {
            Encoding::PLAIN_DICTIONARY | Encoding::RLE_DICTIONARY => {
                if !self.dictionary {
                    return Err("a data page refers to a dictionary page its column chunk lacks".into());
                }
                match data.split_first() {
                    Some((&width, _)) if width > 32 => {
                        Err(format!("a data page's dictionary indexes are {width} bits wide"))
                    }
                    Some((&width, rest)) => runs(rest, width),
                    None => Ok(()),
                }
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

fn tail(buf: &[u8], at: usize) -> &[u8] {
    buf.get(at..).unwrap_or_default()
}

/// The bits a level of at most `max` takes.
fn bit_width(max: i16) -> u8 {
    (16 - max.max(0).leading_zeros()) as u8
}

/// A stream after its 4-byte little-endian length: (bytes taken, the stream).
fn prefixed(data: &[u8]) -> Result<(usize, &[u8]), String> {
    let short = || "a page's levels or values are cut short".to_string();
    let (len, rest) = data.split_first_chunk::<4>().ok_or_else(short)?;
    let len = usize::try_from(u32::from_le_bytes(*len)).map_err(|_| short())?;
    let stream = rest.get(..len).ok_or_else(short)?;
    Ok((len + 4, stream))
}

/// Version 1 levels of `n` values at the front of `data`: the bytes they take.
fn v1_levels(data: &[u8], encoding: Encoding, max: i16, n: usize) -> Result<usize, String> {
    #[allow(deprecated)]
    match encoding {
        Encoding::RLE => {
            let (taken, stream) = prefixed(data)?;
            runs(stream, bit_width(max))?;
            Ok(taken)
        }
        Encoding::BIT_PACKED => {
            let bytes = n
                .checked_mul(usize::from(bit_width(max)))
                .map(|bits| bits.div_ceil(8))
                .filter(|&b| b <= data.len());
            bytes.ok_or_else(|| "a page's bit-packed levels are cut short".to_string())
        }
        other => Err(format!("a page's levels are encoded as {other}")),
    }
}

/// Checks an RLE / bit-packed hybrid stream of `width`-bit values: every
/// run's bytes are there.
fn runs(mut data: &[u8], width: u8) -> Result<(), String> {
    let value_bytes = usize::from(width).div_ceil(8);
    while !data.is_empty() {
        let (header, used) = uleb128(data)?;
        data = tail(data, used);
        let len = if header & 1 == 1 {
            // Groups of 8 values of `width` bits: `width` bytes each.
            usize::try_from(header >> 1)
                .ok()
                .and_then(|groups| groups.checked_mul(usize::from(width)))
        } else {
            Some(value_bytes)
        };
        match len {
            Some(len) if len <= data.len() => data = tail(data, len),
            _ => return Err("a run of encoded values is cut short".into()),
        }
    }
    Ok(())
}

/// An unsigned LEB128 varint of at most 64 bits: (value, bytes taken).
fn uleb128(data: &[u8]) -> Result<(u64, usize), String> {
    let mut value = 0u64;
    for (i, &byte) in data.iter().enumerate().take(10) {
        value |= u64::from(byte & 0x7f) << (7 * i);
        if byte & 0x80 == 0 {
            return Ok((value, i + 1));
        }
    }
    Err("a run header is cut short".into())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn runs_must_lie_within_their_stream() {
        assert_eq!(runs(&[], 1), Ok(()));
        // RLE run of 4 values of 3 bits: one value byte.
        assert_eq!(runs(&[8, 5], 3), Ok(()));
        assert!(runs(&[8], 3).is_err());
        // Two bit-packed groups of 2 bits: 4 bytes.
        assert_eq!(runs(&[5, 0, 0, 0, 0], 2), Ok(()));
        assert!(runs(&[5, 0, 0, 0], 2).is_err());
        assert!(runs(&[0xff; 11], 2).is_err(), "an endless header");
        assert!(runs(&[0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x01], 32).is_err());
        assert_eq!(bit_width(1), 1);
        assert_eq!(bit_width(3), 2);
        assert_eq!(bit_width(4), 3);
    }
}
