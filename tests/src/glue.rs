//! The suite's Glue API: moto's server (`localstack/glue`, started by
//! `./test`) at `DELTALOAD_TEST_GLUE_ENDPOINT` or `http://127.0.0.1:4567`,
//! beside LocalStack's S3. Each test registers into a database of its own.

use crate::localstack::sdk_config;
use std::sync::atomic::{AtomicU32, Ordering};

/// The Glue endpoint of the suite.
pub fn glue_endpoint() -> String {
    std::env::var("DELTALOAD_TEST_GLUE_ENDPOINT")
        .unwrap_or_else(|_| "http://127.0.0.1:4567".to_string())
}

/// A Glue database name no other test uses.
pub fn unique_database(prefix: &str) -> String {
    static N: AtomicU32 = AtomicU32::new(0);
    let n = N.fetch_add(1, Ordering::SeqCst);
    format!("{prefix}_{}_{n}", std::process::id())
}

/// A Glue client of the suite's Glue API.
pub async fn glue_client() -> aws_sdk_glue::Client {
    aws_sdk_glue::Client::new(&sdk_config(&glue_endpoint()).await)
}

/// Table `name` of `database`, as Glue returns it (panics when missing).
pub async fn glue_table(
    glue: &aws_sdk_glue::Client,
    database: &str,
    name: &str,
) -> aws_sdk_glue::types::Table {
    let got = glue
        .get_table()
        .database_name(database)
        .name(name)
        .send()
        .await;
    let got = got.unwrap_or_else(|e| panic!("Glue table {database}.{name}: {e:?}"));
    got.table
        .unwrap_or_else(|| panic!("Glue table {database}.{name}: none"))
}

/// The names of `database`'s tables, sorted.
pub async fn glue_tables(glue: &aws_sdk_glue::Client, database: &str) -> Vec<String> {
    let listed = glue.get_tables().database_name(database).send().await;
    let listed = listed.unwrap_or_else(|e| panic!("Glue tables of {database}: {e:?}"));
    let mut names: Vec<String> = listed
        .table_list()
        .iter()
        .map(|t| t.name().to_string())
        .collect();
    names.sort();
    names
}

/// How many versions Glue keeps of table `name` (moto archives every update).
pub async fn glue_versions(glue: &aws_sdk_glue::Client, database: &str, name: &str) -> usize {
    let listed = glue
        .get_table_versions()
        .database_name(database)
        .table_name(name)
        .send()
        .await;
    let listed = listed.unwrap_or_else(|e| panic!("Glue versions of {database}.{name}: {e:?}"));
    listed.table_versions().len()
}

/// A table's columns as `name type`, partition keys after ` | `.
pub fn described(table: &aws_sdk_glue::types::Table) -> String {
    let columns = |cs: &[aws_sdk_glue::types::Column]| {
        cs.iter()
            .map(|c| format!("{} {}", c.name(), c.r#type().unwrap_or("?")))
            .collect::<Vec<_>>()
            .join(", ")
    };
    let sd = table.storage_descriptor().expect("a storage descriptor");
    format!(
        "{} | {}",
        columns(sd.columns()),
        columns(table.partition_keys())
    )
}
