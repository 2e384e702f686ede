//! `deltaload spec check` and `deltaload spec example`.

use crate::args::SpecCommand;
use crate::output::out;
use deltaload_core::spec::{HeaderMode, ORDERS_SPEC};
use deltaload_core::Dataset;
use std::process::ExitCode;

/// Runs `spec example` or `spec check`, the latter narrowed to `dataset`
/// (`--dataset`) when given.
pub(crate) async fn run(command: &SpecCommand, dataset: Option<&str>) -> anyhow::Result<ExitCode> {
    match command {
        SpecCommand::Example => {
            out!("{}", ORDERS_SPEC.trim_end());
        }
        SpecCommand::Check {
            file,
            lake,
            glue_database,
        } => {
            let spec = deltaload_aws::spec::read_spec(Some(file)).await?;
            let count = spec.datasets.len();
            let shown = match dataset {
                Some(name) => spec.narrow(name).map_err(anyhow::Error::msg)?,
                None => spec,
            };
            let root = crate::opening::lake_root(lake).ok();
            let mut refused = false;
            for d in &shown.datasets {
                describe(d, count == 1)?;
                if let Some(root) = &root {
                    kept_columns(root, d).await?;
                    refused |= !table_rules(root, d).await?;
                }
            }
            if refused {
                out!("{file}: {count} dataset(s), valid, but the lake refuses a table (above)");
                return Ok(ExitCode::FAILURE);
            }
            if !expectations_compile(&shown)? {
                out!("{file}: {count} dataset(s), but an expectation cannot be checked (above)");
                return Ok(ExitCode::FAILURE);
            }
            if !glue_holds(&shown, glue_database.as_deref())? {
                out!("{file}: {count} dataset(s), valid, but Glue cannot hold a table (above)");
                return Ok(ExitCode::FAILURE);
            }
            out!("{file}: {count} dataset(s), valid");
        }
    }
    Ok(ExitCode::SUCCESS)
}

/// Whether every expectation of `spec`'s datasets compiles: each one that
/// does not is printed with why.
fn expectations_compile(spec: &deltaload_core::Spec) -> std::io::Result<bool> {
    let mut fine = true;
    for d in &spec.datasets {
        for problem in deltaload_lake::expectation_problems(d) {
            out!("  {problem}");
            fine = false;
        }
    }
    Ok(fine)
}

/// Whether the Glue catalog can hold every table of `spec`'s datasets: each
/// one it cannot is printed with the reason, refused when the tables will be
/// registered in `glue_database`, else a note.
fn glue_holds(spec: &deltaload_core::Spec, glue_database: Option<&str>) -> std::io::Result<bool> {
    let refusals = deltaload_lake::catalog::refusals(&spec.datasets);
    for refusal in &refusals {
        match glue_database {
            Some(database) => out!("  Glue database {database} refuses {refusal}"),
            None => out!("  note: Glue could not hold it (with --glue-database): {refusal}"),
        }
    }
    Ok(refusals.is_empty() || glue_database.is_none())
}

/// The columns of `d`'s table at `root` that the spec does not declare,
/// when the table exists (a table another writer made): printed as kept.
/// A lake that cannot be read is left out: the spec is checked alone.
async fn kept_columns(
    root: &deltaload_lake::LakeRoot,
    d: &std::sync::Arc<Dataset>,
) -> std::io::Result<()> {
    match deltaload_lake::undeclared_columns(root, d).await {
        Ok(columns) if !columns.is_empty() => {
            out!(
                "  columns of table {} the spec does not declare, kept (inserts write them null, updates leave them): {}",
                d.table_name(),
                columns.join(", ")
            );
        }
        Ok(_) => {}
        Err(e) => tracing::debug!(error = %e, "the lake was not read for spec check"),
    }
    Ok(())
}

/// The rules (CHECK constraints, invariants) of `d`'s table at `root`,
/// printed; `false` when the table has one a load cannot check (printed
/// with why).
async fn table_rules(
    root: &deltaload_lake::LakeRoot,
    d: &std::sync::Arc<Dataset>,
) -> std::io::Result<bool> {
    match deltaload_lake::table_rules(root, d).await {
        Ok(rules) => {
            // The table's own: the spec's expectations are listed above.
            for rule in rules.iter().filter(|r| r.on_fail().is_none()) {
                out!(
                    "  rule of table {} every record must hold (one that breaks it is rejected): {}",
                    d.table_name(),
                    rule.broken()
                );
            }
            Ok(true)
        }
        Err(e @ deltaload_lake::LakeError::Unsupported { .. }) => {
            out!("  {e}");
            Ok(false)
        }
        Err(e) => {
            tracing::debug!(error = %e, "the lake was not read for spec check");
            Ok(true)
        }
    }
}

/// Prints dataset `d`; `alone` when it is its spec's only dataset (which
/// takes every object when it names no source).
fn describe(d: &Dataset, alone: bool) -> std::io::Result<()> {
    let source = d.source.as_deref().unwrap_or(match alone {
        true => "none (the spec's only dataset: it takes every object)",
        false => "none (loads with `load --dataset` only)",
    });
    let mut tables = d.table_folders();
    if !d.keeps_tombstones() {
        tables.retain(|t| *t != d.tombstones_table());
    }
    out!(
        "dataset {}: tables {}; source {source}",
        d.name,
        tables.join(", ")
    );
    rules(d)?;
    let preset = deltaload_core::spec::describe_preset(d);
    for line in &preset {
        out!("  {line}");
    }
    writes(d)?;
    for e in &d.expectations {
        let action = e.on_fail().map_or("", |a| a.as_str());
        out!("  expect {} ({action}): {}", e.name, e.expression);
    }
    if d.format != deltaload_core::spec::Format::Csv {
        let extra = match d.extra_fields {
            deltaload_core::spec::ExtraFields::Refuse => "refused",
            deltaload_core::spec::ExtraFields::Ignore => "ignored",
        };
        out!("  format: {}, undeclared fields {extra}", d.format.as_str());
    } else if preset.is_empty() {
        csv(d)?;
    }
    columns(d)
}

/// The keys, and what a change does: which wins, what an update sets, deletes.
fn rules(d: &Dataset) -> std::io::Result<()> {
    out!("  keys: {}", d.names(&d.keys).join(", "));
    out!("  newest wins: {}", d.newest_wins_rule());
    out!("  an update sets: {}", d.names(&d.update).join(", "));
    if !d.keep_on_null.is_empty() {
        out!(
            "  an update's null keeps the table's value (ignore_null_updates): {}",
            d.names(&d.keep_on_null).join(", ")
        );
    }
    if !d.partition_by.is_empty() {
        out!("  partition_by: {}", d.names(&d.partition_by).join(", "));
    }
    if let Some(del) = &d.delete_when {
        let kept = match d.sequence_by.is_empty() {
            true => "no sequence_by: the later load wins, no tombstones",
            false => "remembered in the tombstones table",
        };
        let which = match d.preset {
            Some(_) => "the preset's deletes".to_string(),
            None => format!("a change whose {:?} is one of {:?}", del.column, del.values),
        };
        out!("  deletes: {which} ({kept})");
    }
    Ok(())
}

/// How the tables are written: merge-on-read, the history, the feed.
fn writes(d: &Dataset) -> std::io::Result<()> {
    if d.merge_on_read {
        out!("  merge-on-read: changed rows marked deleted (deletion vectors), their files kept");
    }
    if let Some(history) = &d.history {
        let first = d
            .sequence_by
            .first()
            .map_or("", |&i| d.columns[i].name.as_str());
        let per = match history.tracked.is_empty() {
            true => "a version from an upsert to the delete that closes it (no column tracked)"
                .to_string(),
            false => format!(
                "a version per change of {}",
                d.names(&history.tracked).join(", ")
            ),
        };
        out!(
            "  history: {per}, from __start_at to __end_at ({first} of the changes that opened and closed it)"
        );
    }
    if d.change_data_feed {
        out!("  change data feed: every commit that changes rows writes them under _change_data (inserts, deletes, updates before and after)");
    }
    Ok(())
}

/// The CSV options.
fn csv(d: &Dataset) -> std::io::Result<()> {
    let header = match d.csv.header {
        HeaderMode::Exact => "exact",
        HeaderMode::ByName => "by_name",
        HeaderMode::None => "none",
    };
    let delimiter = match d.csv.field_delimiter {
        b'\t' => "\\t".to_string(),
        b => char::from(b).to_string(),
    };
    out!(
        "  csv: field_delimiter {delimiter:?}, header {header}, null_if {:?}, encoding {}",
        d.csv.null_if,
        d.csv.encoding.as_str()
    );
    Ok(())
}

fn columns(d: &Dataset) -> std::io::Result<()> {
    out!("  columns:");
    for c in &d.columns {
        let mut notes = vec![if c.nullable { "nullable" } else { "not null" }.to_string()];
        if let Some(f) = &c.format {
            notes.push(format!("format {f:?}"));
        }
        if let Some(z) = &c.timezone {
            notes.push(format!("timezone {z}"));
        }
        out!(
            "    {:<24} {:<16} {}",
            c.name,
            c.ty.to_string(),
            notes.join(", ")
        );
    }
    Ok(())
}
