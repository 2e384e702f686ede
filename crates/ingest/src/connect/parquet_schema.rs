//! The annotations of a Parquet file written from Avro records (by
//! parquet-avro, as Kafka Connect's ParquetFormat writes): its Avro schema,
//! kept in the file's metadata under `parquet.avro.schema`, read into the
//! Arrow fields' metadata as arrow-avro leaves an Avro file's, so that the
//! same conversions ([`super::normalize`]) read both.

use arrow_array::cast::AsArray;
use arrow_array::{Array, ArrayRef, RecordBatch};
use arrow_schema::{DataType, Field, Schema};
use std::sync::Arc;

/// The file's Arrow `schema` with the annotations of the Avro schema a
/// Parquet writer of Avro records (parquet-avro, as Kafka Connect's
/// ParquetFormat uses) keeps in the key `parquet.avro.schema`, nested
/// records included; `schema` as it is without one.
pub(crate) fn annotated(
    metadata: &parquet::file::metadata::ParquetMetaData,
    schema: &arrow_schema::SchemaRef,
) -> arrow_schema::SchemaRef {
    let kv = metadata.file_metadata().key_value_metadata();
    let avro = (kv.into_iter().flatten())
        .find(|kv| kv.key == "parquet.avro.schema")
        .and_then(|kv| kv.value.as_deref())
        .and_then(|text| serde_json::from_str::<serde_json::Value>(text).ok());
    let Some(avro) = avro else {
        return schema.clone();
    };
    let mut named = Named::default();
    named.collect(&avro, "");
    let fields: Vec<Field> = (schema.fields().iter())
        .map(|f| annotate(f, named.field(&avro, f.name()), &named))
        .collect();
    Arc::new(Schema::new(fields))
}

/// An Avro schema's named types, by full name and by name alone.
#[derive(Default)]
struct Named<'a>(std::collections::HashMap<String, &'a serde_json::Value>);

impl<'a> Named<'a> {
    /// Every named type within `value`, under the enclosing `namespace`.
    fn collect(&mut self, value: &'a serde_json::Value, namespace: &str) {
        let mut namespace = namespace.to_string();
        if let Some(map) = value.as_object() {
            let name = map.get("name").and_then(|n| n.as_str());
            if let (Some(name), true) = (name, map.get("type").is_some_and(|t| t.is_string())) {
                let ns = map.get("namespace").and_then(|n| n.as_str());
                let full = match (name.contains('.'), ns.unwrap_or(&namespace)) {
                    (true, _) | (false, "") => name.to_string(),
                    (false, ns) => format!("{ns}.{name}"),
                };
                namespace = full.rsplit_once('.').map_or("", |(n, _)| n).to_string();
                let short = full.rsplit('.').next().unwrap_or(&full).to_string();
                self.0.insert(full, value);
                self.0.entry(short).or_insert(value);
            }
        }
        match value {
            serde_json::Value::Array(items) => {
                items.iter().for_each(|v| self.collect(v, &namespace))
            }
            serde_json::Value::Object(map) => {
                map.values().for_each(|v| self.collect(v, &namespace))
            }
            _ => {}
        }
    }

    /// The type of field `name` of record schema `record` (the other
    /// branch of a union with null; a named type's definition).
    fn field(&self, record: &'a serde_json::Value, name: &str) -> Option<&'a serde_json::Value> {
        let fields = record.get("fields")?.as_array()?;
        let field = fields
            .iter()
            .find(|f| f.get("name").and_then(|n| n.as_str()) == Some(name))?;
        let ty = field.get("type")?;
        let ty = match ty.as_array() {
            Some(branches) => branches.iter().find(|b| b.as_str() != Some("null"))?,
            None => ty,
        };
        match ty.as_str() {
            Some(reference) => self.0.get(reference).copied(),
            None => Some(ty),
        }
    }
}

/// `field` with the annotations of Avro type `ty` (and its record's fields').
fn annotate(field: &Field, ty: Option<&serde_json::Value>, named: &Named<'_>) -> Field {
    let Some(obj) = ty.and_then(|t| t.as_object()) else {
        return field.clone();
    };
    let mut md = field.metadata().clone();
    for key in ["connect.name", "connect.parameters", "logicalType"] {
        if let Some(v) = obj.get(key) {
            md.insert(key.to_string(), v.to_string());
        }
    }
    let dt = match field.data_type() {
        DataType::Struct(children) => DataType::Struct(
            (children.iter())
                .map(|c| annotate(c, ty.and_then(|t| named.field(t, c.name())), named))
                .collect(),
        ),
        other => other.clone(),
    };
    Field::new(field.name(), dt, field.is_nullable()).with_metadata(md)
}

/// `batch` under `schema` (its own, with annotations in the metadata).
pub(crate) fn with_schema(
    batch: RecordBatch,
    schema: &arrow_schema::SchemaRef,
) -> Result<RecordBatch, String> {
    if batch.schema().fields().len() != schema.fields().len() {
        return Err("a row group has columns other than the file's".to_string());
    }
    let arrays = (batch.columns().iter().zip(schema.fields()))
        .map(|(a, f)| retyped(a, f))
        .collect::<Result<Vec<_>, _>>()?;
    RecordBatch::try_new(schema.clone(), arrays).map_err(|e| e.to_string())
}

/// `array` as `field` types it (a record's fields annotated).
fn retyped(array: &ArrayRef, field: &Field) -> Result<ArrayRef, String> {
    let (DataType::Struct(fields), Some(s)) = (field.data_type(), array.as_struct_opt()) else {
        return Ok(array.clone());
    };
    let children = (s.columns().iter().zip(fields))
        .map(|(a, f)| retyped(a, f))
        .collect::<Result<Vec<_>, _>>()?;
    let s = arrow_array::StructArray::try_new(fields.clone(), children, s.nulls().cloned());
    Ok(Arc::new(s.map_err(|e| e.to_string())?))
}
