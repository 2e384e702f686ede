//! The rules a record must hold (the CHECK constraints and invariants of a
//! table deltaload took over, and the dataset's expectations:
//! [`deltaload_core::spec::Rule`]) applied to a file's parsed records. A
//! record that breaks a table's rule or a `drop` expectation leaves the
//! changes and becomes a reject, with its line, raw text and every such rule
//! it broke, before the newest change per key is chosen: an older change of
//! its key stays newest, as if it never arrived. One that breaks a `fail`
//! expectation refuses the whole file (naming the rule and the first line
//! that broke it); a `warn` expectation only counts. Every expectation
//! counts the records it checked and those that broke it, whatever became
//! of them. A delete is not checked: it writes no row. The adapter
//! evaluates the rules ([`Check`]); this module only acts on what they say.

use crate::{IngestError, Ingested};
use arrow_array::cast::AsArray;
use arrow_array::{Array, BooleanArray, RecordBatch};
use deltaload_core::spec::OnFail;
use deltaload_core::{Dataset, ExpectationCount, HeaderMismatch, Reject, RejectReason};

/// What evaluates a dataset's rules on its changes.
pub trait Check: Sync {
    /// For each of the dataset's rules, in order, a mask over the rows of
    /// `batch` (of [`crate::changes_schema`]): true where the row holds the
    /// rule; false or null where it breaks it.
    fn holds(&self, batch: &RecordBatch) -> Result<Vec<BooleanArray>, String>;
}

/// A dataset without rules.
pub struct NoRules;

impl Check for NoRules {
    fn holds(&self, _: &RecordBatch) -> Result<Vec<BooleanArray>, String> {
        Ok(Vec::new())
    }
}

/// A record that broke rules: where it is, and which rules (indexes into
/// the dataset's).
struct Broken {
    /// Its index among the file's changes.
    index: usize,
    /// Its batch and row there.
    at: (usize, usize),
    rules: Vec<usize>,
}

/// `ingested` (read from `bytes`) with every record that breaks a
/// dropping rule of `dataset` moved from its changes to its rejects, and
/// the expectations' counts; a refusal when a record breaks a `fail`
/// expectation.
pub fn apply(
    dataset: &Dataset,
    bytes: &[u8],
    mut ingested: Ingested,
    check: &dyn Check,
) -> Result<Ingested, IngestError> {
    if dataset.rules.is_empty() {
        return Ok(ingested);
    }
    let failed = |problem: String| IngestError::Rules {
        dataset: dataset.name.clone(),
        problem,
    };
    let lines = ingested.lines.take().ok_or_else(|| {
        failed("the records' lines were not kept (a defect of deltaload: please report it)".into())
    })?;
    let mut tally = Tally::new(dataset);
    let mut index = 0;
    for (b, batch) in ingested.batches.iter().enumerate() {
        let holds = check.holds(batch).map_err(failed)?;
        if holds.len() != dataset.rules.len() || holds.iter().any(|h| h.len() != batch.num_rows()) {
            return Err(failed("the rules gave masks of another shape".into()));
        }
        let deletes = batch.column(dataset.columns.len()).as_boolean();
        for row in 0..batch.num_rows() {
            // A delete writes no row: not checked.
            if !(deletes.is_valid(row) && deletes.value(row)) {
                let line = lines.get(index + row).copied().unwrap_or(0);
                tally.record(&holds, (index + row, (b, row)), line);
            }
        }
        index += batch.num_rows();
    }
    if let Some((rule, line)) = tally.first_fail {
        // "line N ..." first: a file read in pieces shifts N to the file's line.
        let problem = format!(
            "line {line} (the first to break it): {}",
            dataset.rules[rule].broken()
        );
        let remedy = "correct the records that break the expectation and upload the file again (a corrected upload loads), or change the expectation's on_fail";
        return Err(IngestError::Refused(
            HeaderMismatch::new(dataset, Vec::new(), problem).with_remedy(remedy),
        ));
    }
    ingested.expectations = tally.counts;
    if tally.broken.is_empty() {
        return Ok(ingested);
    }
    let broken = tally.broken;
    let rejects = rejects(dataset, bytes, &ingested.batches, &lines, &broken)
        .map_err(|e| failed(e.to_string()))?;
    ingested.batches = without(&ingested.batches, &broken).map_err(|e| failed(e.to_string()))?;
    ingested.rejects.extend(rejects);
    ingested.rejects.sort_by_key(|r| r.line);
    Ok(ingested)
}

/// What the rules said of a file's records so far.
struct Tally<'d> {
    dataset: &'d Dataset,
    /// Per rule, its index among the expectations, when it is one.
    expectation: Vec<Option<usize>>,
    counts: Vec<ExpectationCount>,
    /// The records that go to the rejects.
    broken: Vec<Broken>,
    /// The first `fail` expectation broken, with the line.
    first_fail: Option<(usize, u64)>,
}

impl<'d> Tally<'d> {
    fn new(dataset: &'d Dataset) -> Self {
        let mut n = 0;
        let expectation = (dataset.rules.iter())
            .map(|r| {
                r.on_fail().map(|_| {
                    n += 1;
                    n - 1
                })
            })
            .collect();
        Self {
            dataset,
            expectation,
            counts: vec![ExpectationCount::default(); n],
            broken: Vec::new(),
            first_fail: None,
        }
    }

    /// Counts record `index` (at batch and row `at`, starting on `line`)
    /// against every rule's mask.
    fn record(&mut self, holds: &[BooleanArray], (index, at): (usize, (usize, usize)), line: u64) {
        let row = at.1;
        let mut dropped = Vec::new();
        for (r, mask) in holds.iter().enumerate() {
            let broke = !(mask.is_valid(row) && mask.value(row));
            if let Some(e) = self.expectation[r] {
                self.counts[e].checked += 1;
                self.counts[e].failed += u64::from(broke);
            }
            let rule = &self.dataset.rules[r];
            if broke && rule.on_fail() == Some(OnFail::Fail) && self.first_fail.is_none() {
                self.first_fail = Some((r, line));
            }
            if broke && rule.drops() {
                dropped.push(r);
            }
        }
        if !dropped.is_empty() {
            self.broken.push(Broken {
                index,
                at,
                rules: dropped,
            });
        }
    }
}

/// The rejects of the `broken` records: their line, their text as read
/// (a Parquet row as JSON), their key and the rules they broke.
fn rejects(
    dataset: &Dataset,
    bytes: &[u8],
    batches: &[RecordBatch],
    lines: &[u64],
    broken: &[Broken],
) -> Result<Vec<Reject>, arrow_schema::ArrowError> {
    let line = |b: &Broken| lines.get(b.index).copied().unwrap_or(0);
    let wanted: Vec<u64> = broken.iter().map(line).collect();
    let raws = deltaload_core::lines::raw_records(dataset, bytes, &wanted);
    // A Parquet row as the file holds it: the columns read from it.
    let declared: Vec<usize> = (0..dataset.declared().len()).collect();
    let mut out = Vec::with_capacity(broken.len());
    for (b, raw) in broken.iter().zip(raws) {
        let (batch, row) = (&batches[b.at.0], b.at.1);
        let keys: Vec<&dyn Array> = (dataset.keys.iter())
            .map(|&k| batch.column(k).as_ref())
            .collect();
        let raw = match raw {
            Some(raw) => raw,
            None => crate::parquet::raw::row_json(&batch.project(&declared)?, row),
        };
        out.push(Reject {
            line: line(b),
            raw,
            key: crate::parquet::raw::key_text(&keys, row),
            reason: RejectReason::Broken {
                rules: b.rules.iter().map(|&r| dataset.rules[r].breach()).collect(),
            },
        });
    }
    Ok(out)
}

/// `batches` without the `broken` records.
fn without(
    batches: &[RecordBatch],
    broken: &[Broken],
) -> Result<Vec<RecordBatch>, arrow_schema::ArrowError> {
    let mut keep: Vec<Vec<bool>> = batches.iter().map(|b| vec![true; b.num_rows()]).collect();
    for b in broken {
        keep[b.at.0][b.at.1] = false;
    }
    (batches.iter().zip(keep))
        .filter(|(_, k)| k.contains(&true))
        .map(|(batch, k)| arrow_select::filter::filter_record_batch(batch, &BooleanArray::from(k)))
        .collect()
}

#[cfg(test)]
#[path = "rules_tests.rs"]
mod tests;
