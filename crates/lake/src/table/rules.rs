//! The rules of a table another writer made that deltaload keeps on every
//! record it writes there: its CHECK constraints (`delta.constraints.<name>`)
//! and column invariants (`delta.invariants`). They are read when the table
//! is opened and compiled with DataFusion against the dataset's changes; a
//! record that breaks one is rejected, naming it, by
//! [`deltaload_ingest::rules`]. A rule that cannot be checked as Delta's
//! writers check it refuses the table before anything is written.

use crate::table::error::LakeError;
use deltalake::arrow::array::{Array, ArrayRef, AsArray, BooleanArray, RecordBatch};
use deltalake::datafusion::common::tree_node::TreeNode;
use deltalake::datafusion::common::DFSchema;
use deltalake::datafusion::common::Result as DfResult;
use deltalake::datafusion::logical_expr::{Expr, ExprSchemable};
use deltalake::datafusion::physical_expr::PhysicalExpr;
use deltalake::datafusion::prelude::SessionContext;
use deltalake::kernel::StructTypeExt;
use deltalake::DeltaTable;
use deltaload_core::spec::{Rule, RuleKind};
use deltaload_core::Dataset;
use deltaload_engine::tables::TableName;
use std::sync::Arc;

/// A table's rules compiled against its dataset's changes.
pub(crate) struct TableRules {
    pub(crate) exprs: Vec<Arc<dyn PhysicalExpr>>,
}

impl deltaload_ingest::rules::Check for TableRules {
    /// A rule whose evaluation fails on a batch (a cast that does not hold,
    /// a division by zero) is evaluated a row at a time, and a row it fails
    /// on breaks it, as a null result would: the record is rejected, never
    /// the whole file.
    fn holds(&self, batch: &RecordBatch) -> Result<Vec<BooleanArray>, String> {
        let holds = |e: &Arc<dyn PhysicalExpr>| match evaluate(e, batch) {
            Ok(array) => boolean(&array),
            Err(_) => (0..batch.num_rows())
                .map(|row| match evaluate(e, &batch.slice(row, 1)) {
                    Ok(one) => boolean(&one).map(|m| m.is_valid(0).then(|| m.value(0))),
                    Err(_) => Ok(Some(false)),
                })
                .collect::<Result<BooleanArray, String>>(),
        };
        self.exprs.iter().map(holds).collect()
    }
}

/// `e` evaluated over `batch`'s rows.
fn evaluate(e: &Arc<dyn PhysicalExpr>, batch: &RecordBatch) -> DfResult<ArrayRef> {
    e.evaluate(batch)?.into_array(batch.num_rows())
}

/// A rule's values as booleans (compiling refuses a rule of another type).
fn boolean(array: &ArrayRef) -> Result<BooleanArray, String> {
    (array.as_boolean_opt().cloned()).ok_or_else(|| "a rule that is not boolean".to_string())
}

/// The rules of `table` (loaded, not yet written), dataset `d`'s table,
/// then `d`'s expectations: the dataset with them, and what checks them;
/// `None` when there are none. A table's rule that cannot be checked
/// refuses the table; an expectation that cannot, the spec.
pub(crate) fn read(
    table: &DeltaTable,
    d: &Arc<Dataset>,
) -> Result<Option<(Arc<Dataset>, TableRules)>, LakeError> {
    let label = TableName::Target(d.clone()).as_str();
    let of_table = table_rules(table, &label)?;
    if of_table.is_empty() && d.expectations.is_empty() {
        return Ok(None);
    }
    if let Some((does, remedy)) = of_table.first().and_then(|r| uncheckable(d, r)) {
        return Err(LakeError::Unsupported {
            table: label,
            feature: feature(of_table[0].kind).to_string(),
            does,
            remedy: remedy.to_string(),
        });
    }
    let mut exprs = compile(d, &of_table).map_err(|(rule, e)| {
        refused(
            &label,
            rule.kind,
            &format!("{} ({})", rule.label(), rule.expression),
            &e,
        )
    })?;
    exprs.extend(crate::table::expectations::compiled(d)?);
    let dataset = Arc::new(Dataset {
        rules: of_table
            .into_iter()
            .chain(d.expectations.iter().cloned())
            .collect(),
        ..(**d).clone()
    });
    Ok(Some((dataset, TableRules { exprs })))
}

/// The CHECK constraints and invariants of `table` (none when it does not exist yet).
fn table_rules(table: &DeltaTable, label: &str) -> Result<Vec<Rule>, LakeError> {
    if table.version().is_none() {
        return Ok(Vec::new());
    }
    let snapshot = table
        .snapshot()
        .map_err(LakeError::delta(label, table.table_url()))?;
    of(
        snapshot.metadata().configuration().iter(),
        snapshot.schema().get_invariants(),
    )
    .map_err(|e| refused(label, RuleKind::Invariant, "its invariants", &e))
}

/// The rules of a table's `properties` (its CHECK constraints, by name)
/// and `invariants` (by column).
fn of<'a>(
    properties: impl Iterator<Item = (&'a String, &'a String)>,
    invariants: Result<Vec<deltalake::kernel::Invariant>, deltalake::kernel::Error>,
) -> Result<Vec<Rule>, String> {
    let mut rules: Vec<Rule> = properties
        .filter_map(|(k, v)| {
            let name = k.strip_prefix("delta.constraints.")?;
            Some(Rule {
                kind: RuleKind::Constraint,
                name: name.to_string(),
                expression: v.clone(),
            })
        })
        .collect();
    rules.sort_by(|a, b| a.name.cmp(&b.name));
    let invariants = invariants.map_err(|e| e.to_string())?;
    rules.extend(invariants.into_iter().map(|i| Rule {
        kind: RuleKind::Invariant,
        name: i.field_name,
        expression: i.invariant_sql,
    }));
    Ok(rules)
}

/// Why no rule (`rule` the first) of dataset `d`'s table can be checked
/// as Delta's writers check it, and what to do; `None` when they can.
fn uncheckable(d: &Dataset, rule: &Rule) -> Option<(String, &'static str)> {
    if d.snapshot.is_some() {
        let does = format!("cannot check {} on a snapshot dataset (mode = \"snapshot\"): its table is written by deltaload's keyed upsert, which leaves a table with rules to delta-rs's MERGE", rule.label());
        return Some((
            does,
            "load this table with a dataset of changes, or drop the rule",
        ));
    }
    let why = partial_updates(d)?;
    let does = format!("cannot check {} on an update that {why}: the row written mixes the change with the table's values", rule.label());
    Some((
        does,
        "load this table with a dataset whose updates set every column, or drop the rule",
    ))
}

/// Why an update of dataset `d` writes a row that is not its change alone
/// (the change is the row exactly when [`Dataset::updates_all`]).
fn partial_updates(d: &Dataset) -> Option<&'static str> {
    match (d.updates_all(), d.keep_on_null.is_empty()) {
        (true, _) => None,
        (false, false) => Some("keeps the table's value for a null (ignore_null_updates)"),
        (false, true) => Some("sets only some columns (update_columns)"),
    }
}

/// Each rule compiled against the dataset's changes, or the first that
/// does not compile, with why.
pub(crate) fn compile<'a>(
    d: &Dataset,
    rules: &'a [Rule],
) -> Result<Vec<Arc<dyn PhysicalExpr>>, (&'a Rule, String)> {
    let schema = deltaload_ingest::changes_schema(d);
    let state = SessionContext::new().state();
    let df_schema =
        DFSchema::try_from(schema.as_ref().clone()).map_err(|e| (&rules[0], e.to_string()))?;
    let one = |rule: &'a Rule| {
        let failed = |e: &dyn std::fmt::Display| (rule, e.to_string());
        let expr = deltalake::delta_datafusion::expr::parse_predicate_expression(
            &df_schema,
            &rule.expression,
            &state,
        )
        .map_err(|e| failed(&e))?;
        if let Some(why) = not_of_one_record(&expr) {
            return Err(failed(&why));
        }
        let ty = expr.get_type(&df_schema).map_err(|e| failed(&e))?;
        if ty != deltalake::arrow::datatypes::DataType::Boolean {
            return Err(failed(&format!("it is of type {ty}, not boolean")));
        }
        state
            .create_physical_expr(expr, &df_schema)
            .map_err(|e| failed(&e))
    };
    rules.iter().map(one).collect()
}

/// Why `expr` is not a rule of one record, if it is not: an aggregate, a
/// window function, a subquery, or a volatile function (`random()`,
/// `now()`), whose value would not be the record's alone.
fn not_of_one_record(expr: &Expr) -> Option<String> {
    let mut why = None;
    let _ = expr.exists(|e| {
        why = match e {
            Expr::AggregateFunction(_) => Some("it holds an aggregate function, and a rule is checked on one record at a time"),
            Expr::WindowFunction(_) => Some("it holds a window function, and a rule is checked on one record at a time"),
            Expr::ScalarSubquery(_) | Expr::Exists(_) | Expr::InSubquery(_) => Some("it holds a subquery, and a rule reads the record alone"),
            _ if e.is_volatile_node() => Some("it calls a volatile function (such as random() or now()), and a rule must give the same answer every time it is checked"),
            _ => None,
        };
        Ok(why.is_some())
    });
    why.map(str::to_string)
}

/// The protocol feature a rule of `kind` belongs to.
fn feature(kind: RuleKind) -> &'static str {
    match kind {
        RuleKind::Constraint => "checkConstraints",
        RuleKind::Invariant => "invariants",
        RuleKind::Expectation(_) => "expectations",
    }
}

/// The refusal of a table whose rule `what` deltaload cannot check.
fn refused(table: &str, kind: RuleKind, what: &str, problem: &str) -> LakeError {
    LakeError::Unsupported {
        table: table.to_string(),
        feature: feature(kind).to_string(),
        does: format!("cannot check {what}: {problem}"),
        remedy: "declare in the spec every column the rule uses (with a type it can compare), or drop the rule, or keep writing this table with the engine that made it".to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use deltaload_ingest::rules::Check;

    fn rules(of: &[(&str, &str)]) -> Vec<Rule> {
        (of.iter())
            .map(|(name, expression)| Rule {
                kind: RuleKind::Constraint,
                name: name.to_string(),
                expression: expression.to_string(),
            })
            .collect()
    }

    #[test]
    fn a_rule_holds_where_true_and_breaks_where_false_or_null() {
        let d = Dataset::orders();
        let text = "order_id,customer_id,status,amount,currency,ordered_at,updated_at\n\
                    1,c,new,5.00,EUR,,2026-10-01T00:00:00Z\n\
                    2,c,new,-1.00,EUR,,2026-10-01T00:00:00Z\n\
                    3,c,new,,EUR,,2026-10-01T00:00:00Z\n";
        let read = deltaload_ingest::read_changes(&d, text.as_bytes()).expect("reads");
        let exprs = compile(&d, &rules(&[("positive", "amount > 0")])).expect("compiles");
        let holds = TableRules { exprs }
            .holds(&read.batches[0])
            .expect("evaluates");
        let mask: Vec<Option<bool>> = holds[0].iter().collect();
        assert_eq!(mask, [Some(true), Some(false), None]);
    }

    #[test]
    fn a_row_a_rule_fails_on_breaks_it_and_the_others_are_checked() {
        let d = Dataset::orders();
        let text = "order_id,customer_id,status,amount,currency,ordered_at,updated_at\n\
                    1,7,new,5.00,EUR,,2026-10-01T00:00:00Z\n\
                    2,x,new,5.00,EUR,,2026-10-01T00:00:00Z\n\
                    3,0,new,5.00,EUR,,2026-10-01T00:00:00Z\n";
        let read = deltaload_ingest::read_changes(&d, text.as_bytes()).expect("reads");
        let rule = rules(&[("ratio", "10 / CAST(customer_id AS INT) >= 1")]);
        let exprs = compile(&d, &rule).expect("compiles");
        let holds = TableRules { exprs }
            .holds(&read.batches[0])
            .expect("evaluates");
        let mask: Vec<Option<bool>> = holds[0].iter().collect();
        assert_eq!(mask, [Some(true), Some(false), Some(false)]);
    }

    #[test]
    fn a_rule_on_an_undeclared_column_or_not_boolean_does_not_compile() {
        let d = Dataset::orders();
        let two = rules(&[("a", "amount > 0"), ("b", "weight > 0")]);
        let (rule, why) = compile(&d, &two).expect_err("refused");
        assert_eq!(rule.name, "b");
        assert!(why.contains("weight"), "{why}");
        let (_, why) = compile(&d, &rules(&[("c", "amount + 1")])).expect_err("refused");
        assert!(why.contains("not boolean"), "{why}");
    }

    #[test]
    fn rules_of_snapshot_datasets_and_of_partial_updates_cannot_be_checked() {
        let rule = &rules(&[("positive", "amount > 0")])[0];
        assert_eq!(uncheckable(&Dataset::orders(), rule), None);
        let spec = |extra: &str| {
            let text = format!(
                "[[dataset]]\nname = \"s\"\nkeys = [\"id\"]\n{extra}\n\
                 [[dataset.columns]]\nname = \"id\"\ntype = \"bigint\"\n\
                 [[dataset.columns]]\nname = \"amount\"\ntype = \"bigint\"\n\
                 [[dataset.columns]]\nname = \"v\"\ntype = \"bigint\"\n"
            );
            deltaload_core::Spec::parse(&text, "s.toml")
                .unwrap()
                .datasets[0]
                .clone()
        };
        let snapshot = spec("mode = \"snapshot\"\nsnapshot_key_date = \"%Y%m%d\"");
        let (does, _) = uncheckable(&snapshot, rule).expect("refused");
        assert!(
            does.contains("CHECK constraint positive on a snapshot dataset"),
            "{does}"
        );
        let partial = spec("sequence_by = [\"v\"]\nupdate_columns = [\"v\"]");
        let (does, _) = uncheckable(&partial, rule).expect("refused");
        assert!(does.contains("sets only some columns"), "{does}");
        let all = spec("sequence_by = [\"v\"]");
        assert_eq!(uncheckable(&all, rule), None, "keys are matched, not set");
    }

    #[test]
    fn constraints_by_name_then_invariants() {
        let props = [
            ("delta.constraints.zeta".to_string(), "a > 0".to_string()),
            ("delta.appendOnly".to_string(), "false".to_string()),
            ("delta.constraints.alpha".to_string(), "b > 0".to_string()),
        ];
        let invariants = Ok(vec![deltalake::kernel::Invariant::new("c", "c < 3")]);
        let got = of(props.iter().map(|(k, v)| (k, v)), invariants).expect("reads");
        assert_eq!(got[0].kind, RuleKind::Constraint);
        let names: Vec<String> = got.iter().map(Rule::broken).collect();
        assert_eq!(
            names,
            [
                "CHECK constraint alpha: b > 0",
                "CHECK constraint zeta: a > 0",
                "the invariant of column c: c < 3"
            ]
        );
    }
}
