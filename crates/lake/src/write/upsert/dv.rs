//! Deletion vectors (Delta protocol, "Deletion Vector Format"): which rows of
//! a data file are deleted, read for any storage type and written, all of one
//! commit, to one `deletion_vector_<uuid>.bin` file beside the data files.
//!
//! A vector is a `RoaringTreemap` of row positions in its portable
//! serialisation after a 4-byte magic number; in a file each is preceded by
//! its size (big-endian) and followed by its CRC-32 (big-endian), after one
//! version byte at the file's start.

use deltalake::kernel::{DeletionVectorDescriptor, StorageType};
use deltalake::{ObjectStore, Path};
use object_store::ObjectStoreExt as _;
use roaring::RoaringTreemap;
use std::sync::Arc;

/// The magic number opening a serialised vector (little-endian).
const MAGIC: u32 = 1681511377;

/// The rows a descriptor marks deleted, read from the table at `store`.
pub(crate) async fn read(
    store: &Arc<dyn ObjectStore>,
    dv: &DeletionVectorDescriptor,
) -> Result<RoaringTreemap, String> {
    let data = match dv.storage_type {
        StorageType::Inline => z85::decode(&dv.path_or_inline_dv)
            .map_err(|e| format!("inline deletion vector is not base85: {e}"))?,
        StorageType::UuidRelativePath | StorageType::AbsolutePath => {
            let path = file_path(dv)?;
            let bytes = store
                .get(&path)
                .await
                .map_err(|e| format!("deletion vector file {path}: {e}"))?
                .bytes()
                .await
                .map_err(|e| format!("deletion vector file {path}: {e}"))?;
            let at = usize::try_from(dv.offset.unwrap_or(1)).unwrap_or(0);
            let size = bytes
                .get(at..at + 4)
                .map(|b| u32::from_be_bytes([b[0], b[1], b[2], b[3]]) as usize)
                .ok_or_else(|| {
                    format!("deletion vector file {path} is shorter than its descriptor says")
                })?;
            bytes
                .get(at + 4..at + 4 + size)
                .ok_or_else(|| {
                    format!("deletion vector file {path} is shorter than its descriptor says")
                })?
                .to_vec()
        }
    };
    parse(&data)
}

/// A serialised vector: the magic number, then the treemap.
fn parse(data: &[u8]) -> Result<RoaringTreemap, String> {
    match data.get(..4) {
        Some(m) if u32::from_le_bytes([m[0], m[1], m[2], m[3]]) == MAGIC => {
            RoaringTreemap::deserialize_from(&data[4..])
                .map_err(|e| format!("damaged deletion vector: {e}"))
        }
        _ => Err("not a deletion vector (wrong magic number)".into()),
    }
}

/// Where a vector stored in a file is, relative to the table's root.
fn file_path(dv: &DeletionVectorDescriptor) -> Result<Path, String> {
    match dv.storage_type {
        StorageType::AbsolutePath => {
            let url = url::Url::parse(&dv.path_or_inline_dv).map_err(|e| e.to_string())?;
            Ok(Path::from(url.path()))
        }
        _ => {
            let text = &dv.path_or_inline_dv;
            let split = text
                .len()
                .checked_sub(20)
                .ok_or("deletion vector path too short")?;
            let (prefix, encoded) = text.split_at(split);
            let bytes = z85::decode(encoded).map_err(|e| format!("deletion vector id: {e}"))?;
            let id = uuid::Uuid::from_slice(&bytes).map_err(|e| e.to_string())?;
            let name = format!("deletion_vector_{id}.bin");
            Ok(Path::from(match prefix {
                "" => name,
                p => format!("{p}/{name}"),
            }))
        }
    }
}

/// Vectors written to one new file: its path and bytes, and each vector's
/// descriptor, in the order given.
pub(crate) fn write(
    vectors: &[RoaringTreemap],
) -> Result<(Path, Vec<u8>, Vec<DeletionVectorDescriptor>), String> {
    let id = uuid::Uuid::new_v4();
    let mut bytes = vec![1u8];
    let mut descriptors = Vec::with_capacity(vectors.len());
    for vector in vectors {
        let mut data = MAGIC.to_le_bytes().to_vec();
        vector
            .serialize_into(&mut data)
            .map_err(|e| e.to_string())?;
        let size = i32::try_from(data.len()).map_err(|_| "deletion vector over 2 GiB")?;
        let offset = i32::try_from(bytes.len()).map_err(|_| "deletion vector file over 2 GiB")?;
        bytes.extend_from_slice(&(size as u32).to_be_bytes());
        bytes.extend_from_slice(&data);
        bytes.extend_from_slice(&crc32fast::hash(&data).to_be_bytes());
        descriptors.push(DeletionVectorDescriptor {
            storage_type: StorageType::UuidRelativePath,
            path_or_inline_dv: z85::encode(id.as_bytes()),
            offset: Some(offset),
            size_in_bytes: size,
            cardinality: vector.len() as i64,
        });
    }
    Ok((
        Path::from(format!("deletion_vector_{id}.bin")),
        bytes,
        descriptors,
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn written_vectors_read_back_from_their_file_and_inline() {
        let store: Arc<dyn ObjectStore> = Arc::new(object_store::memory::InMemory::new());
        let a: RoaringTreemap = [0u64, 5, 1 << 33].into_iter().collect();
        let b: RoaringTreemap = (10u64..20).collect();
        let (path, bytes, descriptors) = write(&[a.clone(), b.clone()]).unwrap();
        store.put(&path, bytes.into()).await.unwrap();
        assert_eq!(read(&store, &descriptors[0]).await.unwrap(), a);
        assert_eq!(read(&store, &descriptors[1]).await.unwrap(), b);
        assert_eq!(descriptors[1].cardinality, 10);
        let mut data = MAGIC.to_le_bytes().to_vec();
        a.serialize_into(&mut data).unwrap();
        let inline = DeletionVectorDescriptor {
            storage_type: StorageType::Inline,
            path_or_inline_dv: z85::encode(&data),
            offset: None,
            size_in_bytes: data.len() as i32,
            cardinality: 3,
        };
        assert_eq!(read(&store, &inline).await.unwrap(), a);
    }
}
