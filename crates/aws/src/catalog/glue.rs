//! [`GlueApi`] over `aws-sdk-glue`: the five calls deltaload makes, and
//! Glue's types turned into [`GlueTable`] and back.

use super::plan::{GlueColumn, GlueTable};
use super::{ApiError, GlueApi};
use aws_sdk_glue::error::{DisplayErrorContext, ProvideErrorMetadata, SdkError};
use aws_sdk_glue::types::{Column, DatabaseInput, SerDeInfo, StorageDescriptor, Table, TableInput};
use std::collections::{BTreeMap, HashMap};
use std::time::Duration;

/// The Glue client of the standard AWS configuration (`AWS_ENDPOINT_URL_GLUE`,
/// else `AWS_ENDPOINT_URL`, points it elsewhere). A call gives up after 20
/// seconds, each attempt after 5: Glue out of reach delays a load by that at
/// most, and never fails it.
#[derive(Debug, Clone)]
pub struct GlueClient(aws_sdk_glue::Client);

impl GlueClient {
    /// The client of `aws`.
    pub fn new(aws: &aws_config::SdkConfig) -> Self {
        let timeouts = aws_config::timeout::TimeoutConfig::builder()
            .connect_timeout(Duration::from_secs(3))
            .operation_attempt_timeout(Duration::from_secs(5))
            .operation_timeout(Duration::from_secs(20))
            .build();
        let config = aws_sdk_glue::config::Builder::from(aws)
            .timeout_config(timeouts)
            .build();
        Self(aws_sdk_glue::Client::from_conf(config))
    }
}

/// A failed call as [`ApiError`]: `conflict` tells the errors that mean
/// "read it again and retry".
fn api_error<E>(
    e: SdkError<E, aws_sdk_glue::config::http::HttpResponse>,
    conflict: bool,
) -> ApiError
where
    E: ProvideErrorMetadata + std::error::Error + Send + Sync + 'static,
{
    let code = e.code().map(str::to_string);
    let message = DisplayErrorContext(&e).to_string();
    match conflict {
        true => ApiError::Conflict(message),
        false => ApiError::Failed {
            code,
            message,
            reached: !matches!(e, SdkError::DispatchFailure(_) | SdkError::TimeoutError(_)),
        },
    }
}

/// An input Glue refused to build (a required field missing): a defect.
fn invalid(e: aws_sdk_glue::error::BuildError) -> ApiError {
    ApiError::Failed {
        code: None,
        message: format!("building the request: {e}"),
        reached: false,
    }
}

impl GlueApi for GlueClient {
    async fn ensure_database(&self, database: &str) -> Result<(), ApiError> {
        let got = self.0.get_database().name(database).send().await;
        match got {
            Ok(_) => return Ok(()),
            Err(e)
                if e.as_service_error()
                    .is_some_and(|s| s.is_entity_not_found_exception()) => {}
            Err(e) => return Err(api_error(e, false)),
        }
        let input = DatabaseInput::builder()
            .name(database)
            .description("Delta tables deltaload loads and registers")
            .build()
            .map_err(invalid)?;
        match self.0.create_database().database_input(input).send().await {
            Ok(_) => Ok(()),
            Err(e)
                if e.as_service_error()
                    .is_some_and(|s| s.is_already_exists_exception()) =>
            {
                Ok(())
            }
            Err(e) => Err(api_error(e, false)),
        }
    }

    async fn get_table(&self, database: &str, name: &str) -> Result<Option<GlueTable>, ApiError> {
        let got = self
            .0
            .get_table()
            .database_name(database)
            .name(name)
            .send()
            .await;
        match got {
            Ok(out) => Ok(out.table().map(from_glue)),
            Err(e)
                if e.as_service_error()
                    .is_some_and(|s| s.is_entity_not_found_exception()) =>
            {
                Ok(None)
            }
            Err(e) => Err(api_error(e, false)),
        }
    }

    async fn create_table(&self, database: &str, table: &GlueTable) -> Result<(), ApiError> {
        let input = to_glue(table)?;
        let created = (self.0.create_table().database_name(database))
            .table_input(input)
            .send()
            .await;
        created.map(|_| ()).map_err(|e| {
            let exists = e
                .as_service_error()
                .is_some_and(|s| s.is_already_exists_exception());
            api_error(e, exists)
        })
    }

    async fn update_table(&self, database: &str, table: &GlueTable) -> Result<(), ApiError> {
        let input = to_glue(table)?;
        let updated = (self.0.update_table().database_name(database))
            .table_input(input)
            .set_version_id(table.version_id.clone())
            .skip_archive(true)
            .send()
            .await;
        updated.map(|_| ()).map_err(|e| {
            let moved =
                (e.as_service_error()).is_some_and(|s| s.is_concurrent_modification_exception());
            api_error(e, moved)
        })
    }
}

fn from_column(c: &Column) -> GlueColumn {
    GlueColumn {
        name: c.name().to_string(),
        type_name: c.r#type().unwrap_or_default().to_string(),
        comment: c.comment().map(str::to_string),
    }
}

fn sorted(map: Option<&HashMap<String, String>>) -> BTreeMap<String, String> {
    map.map(|m| m.iter().map(|(k, v)| (k.clone(), v.clone())).collect())
        .unwrap_or_default()
}

/// Glue's table as [`GlueTable`].
fn from_glue(t: &Table) -> GlueTable {
    let sd = t.storage_descriptor();
    let serde = sd.and_then(|s| s.serde_info());
    GlueTable {
        name: t.name().to_string(),
        table_type: t.table_type().map(str::to_string),
        location: sd.and_then(|s| s.location()).map(str::to_string),
        input_format: sd.and_then(|s| s.input_format()).map(str::to_string),
        output_format: sd.and_then(|s| s.output_format()).map(str::to_string),
        serde: serde
            .and_then(|s| s.serialization_library())
            .map(str::to_string),
        serde_parameters: sorted(serde.and_then(|s| s.parameters())),
        columns: sd
            .map(|s| s.columns().iter().map(from_column).collect())
            .unwrap_or_default(),
        partition_keys: t.partition_keys().iter().map(from_column).collect(),
        parameters: sorted(t.parameters()),
        description: t.description().map(str::to_string),
        version_id: t.version_id().map(str::to_string),
        kept: Some(Box::new(t.clone())),
    }
}

/// `c` as Glue's column, with the parameters `kept` (Glue's columns as
/// read) gives a column of its name.
fn to_column(c: &GlueColumn, kept: &[Column]) -> Result<Column, ApiError> {
    let parameters = (kept.iter())
        .find(|k| k.name() == c.name)
        .and_then(|k| k.parameters().cloned());
    Column::builder()
        .name(&c.name)
        .r#type(&c.type_name)
        .set_comment(c.comment.clone())
        .set_parameters(parameters)
        .build()
        .map_err(invalid)
}

/// [`GlueTable`] as Glue's input to create or update a table: what
/// deltaload models from `t`, the rest carried over from the table read.
fn to_glue(t: &GlueTable) -> Result<TableInput, ApiError> {
    let kept = t.kept.as_deref();
    let kept_sd = kept.and_then(|k| k.storage_descriptor());
    let columns = (t.columns.iter())
        .map(|c| to_column(c, kept_sd.map_or(&[], |sd| sd.columns())))
        .collect::<Result<Vec<_>, _>>()?;
    let partition_keys = (t.partition_keys.iter())
        .map(|c| to_column(c, kept.map_or(&[], |k| k.partition_keys())))
        .collect::<Result<Vec<_>, _>>()?;
    let serde = SerDeInfo::builder()
        .set_serialization_library(t.serde.clone())
        .set_parameters(Some(t.serde_parameters.clone().into_iter().collect()))
        .build();
    let sd = StorageDescriptor::builder()
        .set_columns(Some(columns))
        .set_location(t.location.clone())
        .set_input_format(t.input_format.clone())
        .set_output_format(t.output_format.clone())
        .serde_info(serde)
        .set_parameters(kept_sd.and_then(|sd| sd.parameters().cloned()))
        .set_bucket_columns(kept_sd.map(|sd| sd.bucket_columns().to_vec()))
        .set_sort_columns(kept_sd.map(|sd| sd.sort_columns().to_vec()))
        .set_number_of_buckets(kept_sd.map(|sd| sd.number_of_buckets()))
        .set_compressed(kept_sd.map(|sd| sd.compressed()))
        .set_stored_as_sub_directories(kept_sd.map(|sd| sd.stored_as_sub_directories()))
        .set_skewed_info(kept_sd.and_then(|sd| sd.skewed_info().cloned()))
        .build();
    TableInput::builder()
        .name(&t.name)
        .set_table_type(t.table_type.clone())
        .set_description(t.description.clone())
        .storage_descriptor(sd)
        .set_partition_keys(Some(partition_keys))
        .set_parameters(Some(t.parameters.clone().into_iter().collect()))
        .set_owner(kept.and_then(|k| k.owner().map(str::to_string)))
        .set_retention(kept.map(|k| k.retention()))
        .set_view_original_text(kept.and_then(|k| k.view_original_text().map(str::to_string)))
        .set_view_expanded_text(kept.and_then(|k| k.view_expanded_text().map(str::to_string)))
        .set_target_table(kept.and_then(|k| k.target_table().cloned()))
        .build()
        .map_err(invalid)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::HashMap;

    #[test]
    fn an_update_carries_over_what_deltaload_does_not_model() {
        let params = |k: &str| HashMap::from([(k.to_string(), "v".to_string())]);
        let column = Column::builder()
            .name("id")
            .r#type("bigint")
            .set_parameters(Some(params("column.tag")))
            .build()
            .unwrap();
        let sd = StorageDescriptor::builder()
            .columns(column)
            .location("s3://lake/orders/")
            .set_parameters(Some(params("sd.tag")))
            .build();
        let table = Table::builder()
            .name("orders")
            .owner("data-team")
            .retention(7)
            .storage_descriptor(sd)
            .build()
            .unwrap();
        let mut read = from_glue(&table);
        read.columns.push(GlueColumn {
            name: "note".into(),
            type_name: "string".into(),
            comment: None,
        });
        let input = to_glue(&read).unwrap();
        assert_eq!(input.owner(), Some("data-team"));
        assert_eq!(input.retention(), 7);
        let sd = input.storage_descriptor().unwrap();
        assert_eq!(sd.parameters(), Some(&params("sd.tag")));
        assert_eq!(sd.columns()[0].parameters(), Some(&params("column.tag")));
        assert_eq!(sd.columns()[1].name(), "note");
    }
}
