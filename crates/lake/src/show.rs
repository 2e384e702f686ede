//! A table printed as text, like the seed's show.py.

use crate::error::LakeError;
use crate::location::LakeRoot;
use crate::schema::TableName;
use crate::table::{open, select_all};
use deltalake::arrow::util::pretty::pretty_format_batches;

/// Renders every row of `name` under `root`, sorted by the table's natural key.
pub async fn render_table(root: &LakeRoot, name: TableName) -> Result<String, LakeError> {
    let (table, batches) =
        select_all(root, name, "*")
            .await?
            .ok_or_else(|| LakeError::Missing {
                table: name.as_str(),
                url: root.to_string(),
            })?;
    let rows: usize = batches.iter().map(|b| b.num_rows()).sum();
    let text = pretty_format_batches(&batches).map_err(LakeError::arrow(name.as_str()))?;
    Ok(format!(
        "{text}\n{rows} row(s), table {} version {}",
        name.as_str(),
        table.version().map_or("-".to_string(), |v| v.to_string())
    ))
}

/// Every row of `name` as text cells (`NULL` for null), sorted by the table's key;
/// `columns` is an SQL select list. For tests and scripted checks.
pub async fn table_rows(
    root: &LakeRoot,
    name: TableName,
    columns: &str,
) -> Result<Vec<Vec<String>>, LakeError> {
    use deltalake::arrow::util::display::{ArrayFormatter, FormatOptions};
    let Some((_, batches)) = select_all(root, name, columns).await? else {
        return Ok(Vec::new());
    };
    let options = FormatOptions::default().with_null("NULL");
    let mut rows = Vec::new();
    for batch in &batches {
        let formatters = batch
            .columns()
            .iter()
            .map(|c| ArrayFormatter::try_new(c.as_ref(), &options))
            .collect::<Result<Vec<_>, _>>()
            .map_err(LakeError::arrow(name.as_str()))?;
        for row in 0..batch.num_rows() {
            rows.push(
                formatters
                    .iter()
                    .map(|f| f.value(row).to_string())
                    .collect(),
            );
        }
    }
    Ok(rows)
}

/// The current version of table `name`, `None` when it does not exist.
pub async fn table_version(root: &LakeRoot, name: TableName) -> Result<Option<u64>, LakeError> {
    Ok(open(root, name).await?.and_then(|t| t.version()))
}
