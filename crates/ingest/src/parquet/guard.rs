//! Checks of a file's metadata that the parquet crate asserts instead of
//! returning an error: done first, so a damaged footer refuses the file
//! rather than panicking in the reader.

use parquet::file::metadata::ParquetMetaData;

/// Why the metadata of a file of `len` bytes cannot be read, if it cannot.
pub(super) fn check_metadata(metadata: &ParquetMetaData, len: usize) -> Result<(), String> {
    let leaves = metadata.file_metadata().schema_descr().num_columns();
    for (g, group) in metadata.row_groups().iter().enumerate() {
        if group.num_rows() < 0 {
            return Err(format!("row group {g} has {} rows", group.num_rows()));
        }
        if group.columns().len() != leaves {
            return Err(format!(
                "row group {g} has {} column chunks for {leaves} columns",
                group.columns().len()
            ));
        }
        for (c, chunk) in group.columns().iter().enumerate() {
            let start = chunk
                .dictionary_page_offset()
                .unwrap_or(chunk.data_page_offset());
            let end = u64::try_from(start)
                .ok()
                .zip(u64::try_from(chunk.compressed_size()).ok())
                .and_then(|(s, l)| s.checked_add(l));
            if end.is_none_or(|end| end > len as u64) || chunk.num_values() < 0 {
                return Err(format!(
                    "column chunk {c} of row group {g} lies outside the file ({} bytes at offset \
                     {start}, {} values)",
                    chunk.compressed_size(),
                    chunk.num_values()
                ));
            }
        }
    }
    Ok(())
}
