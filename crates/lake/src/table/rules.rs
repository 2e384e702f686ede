//! The rules of a table another writer made that deltaload keeps on every
//! record it writes there: its CHECK constraints (`delta.constraints.<name>`)
//! and column invariants (`delta.invariants`). They are read when the table
//! is opened and compiled with DataFusion against the dataset's changes; a
//! record that breaks one is rejected, naming it, by
//! [`deltaload_ingest::rules`]. A rule that cannot be checked as Delta's
//! writers check it refuses the table before anything is written.

use crate::table::error::LakeError;
use deltalake::arrow::array::{AsArray, BooleanArray, RecordBatch};
use deltalake::datafusion::common::DFSchema;
use deltalake::datafusion::logical_expr::ExprSchemable;
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
    exprs: Vec<Arc<dyn PhysicalExpr>>,
}

impl deltaload_ingest::rules::Check for TableRules {
    fn holds(&self, batch: &RecordBatch) -> Result<Vec<BooleanArray>, String> {
        let rows = batch.num_rows();
        let holds = |e: &Arc<dyn PhysicalExpr>| -> Result<BooleanArray, String> {
            let value = e.evaluate(batch).map_err(|e| e.to_string())?;
            let array = value.into_array(rows).map_err(|e| e.to_string())?;
            let mask = array.as_boolean_opt().ok_or("a rule that is not boolean")?;
            Ok(mask.clone())
        };
        self.exprs.iter().map(holds).collect()
    }
}

/// The rules of `table` (loaded, not yet written), dataset `d`'s table:
/// the dataset with them, and what checks them; `None` for a table without
/// any. A rule that cannot be checked refuses the table.
pub(crate) fn read(
    table: &DeltaTable,
    d: &Arc<Dataset>,
) -> Result<Option<(Arc<Dataset>, TableRules)>, LakeError> {
    let label = TableName::Target(d.clone()).as_str();
    if table.version().is_none() {
        return Ok(None);
    }
    let snapshot = table
        .snapshot()
        .map_err(LakeError::delta(&label, table.table_url()))?;
    let rules = of(
        snapshot.metadata().configuration().iter(),
        snapshot.schema().get_invariants(),
    );
    let rules = match rules {
        Ok(rules) if rules.is_empty() => return Ok(None),
        Ok(rules) => rules,
        Err(e) => return Err(refused(&label, RuleKind::Invariant, "its invariants", &e)),
    };
    if let Some(why) = partial_updates(d) {
        let rule = &rules[0];
        let does = format!("cannot check {} on an update that {why}: the row written mixes the change with the table's values", rule.label());
        return Err(LakeError::Unsupported {
            table: label,
            feature: feature(rule.kind).to_string(),
            does,
            remedy:
                "load this table with a dataset whose updates set every column, or drop the rule"
                    .to_string(),
        });
    }
    let exprs = compile(d, &rules).map_err(|(rule, e)| {
        refused(
            &label,
            rule.kind,
            &format!("{} ({})", rule.label(), rule.expression),
            &e,
        )
    })?;
    let dataset = Arc::new(Dataset {
        rules,
        ..(**d).clone()
    });
    Ok(Some((dataset, TableRules { exprs })))
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

/// Why an update of dataset `d` writes a row that is not its change alone.
fn partial_updates(d: &Dataset) -> Option<&'static str> {
    if !d.keep_on_null.is_empty() {
        return Some("keeps the table's value for a null (ignore_null_updates)");
    }
    // A key is matched, not set: the row keeps it either way.
    let kept = |i: &usize| !d.update.contains(i) && !d.keys.contains(i);
    (0..d.columns.len())
        .any(|i| kept(&i))
        .then_some("sets only some columns (update)")
}

/// Each rule compiled against the dataset's changes, or the first that
/// does not compile, with why.
fn compile<'a>(
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

/// The protocol feature a rule of `kind` belongs to.
fn feature(kind: RuleKind) -> &'static str {
    match kind {
        RuleKind::Constraint => "checkConstraints",
        RuleKind::Invariant => "invariants",
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
    fn constraints_by_name_then_invariants() {
        let props = [
            ("delta.constraints.zeta".to_string(), "a > 0".to_string()),
            ("delta.appendOnly".to_string(), "false".to_string()),
            ("delta.constraints.alpha".to_string(), "b > 0".to_string()),
        ];
        let invariants = Ok(vec![deltalake::kernel::Invariant::new("c", "c < 3")]);
        let got = of(props.iter().map(|(k, v)| (k, v)), invariants).expect("reads");
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
