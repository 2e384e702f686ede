//! A dataset's expectations (`[[dataset.expect]]`) compiled into what
//! checks them, and refused, naming the expectation, when they cannot be
//! (the compilation itself is the table's rules', [`super::rules`]).

use crate::table::error::LakeError;
use crate::table::rules::{compile, TableRules};
use deltalake::datafusion::physical_expr::PhysicalExpr;
use deltaload_core::spec::Rule;
use deltaload_core::Dataset;
use std::sync::Arc;

/// The refusal of expectation `rule` of `d`, for `problem`.
fn refused(d: &Dataset, (rule, problem): (&Rule, String)) -> LakeError {
    LakeError::Expectation {
        dataset: d.name.clone(),
        name: rule.name.clone(),
        rule: rule.expression.clone(),
        problem,
    }
}

/// `d`'s expectations compiled against its changes, in order; the first
/// that does not compile refuses the spec.
pub(crate) fn compiled(d: &Dataset) -> Result<Vec<Arc<dyn PhysicalExpr>>, LakeError> {
    compile(d, &d.expectations).map_err(|e| refused(d, e))
}

/// Dataset `d` with its expectations as its rules, and what checks them
/// (for `validate`, with no lake: the table's own rules are not read).
pub fn expectations_check(
    d: &Arc<Dataset>,
) -> Result<(Arc<Dataset>, Box<dyn deltaload_ingest::rules::Check>), LakeError> {
    if d.expectations.is_empty() {
        return Ok((d.clone(), Box::new(deltaload_ingest::rules::NoRules)));
    }
    let exprs = compiled(d)?;
    let dataset = Arc::new(Dataset {
        rules: d.expectations.clone(),
        ..(**d).clone()
    });
    Ok((dataset, Box::new(TableRules { exprs })))
}

/// Why each expectation of `d` that cannot be checked cannot (for `spec
/// check`, with no lake): the error it would stop a load with.
pub fn expectation_problems(d: &Dataset) -> Vec<LakeError> {
    (d.expectations.iter())
        .filter_map(|rule| compile(d, std::slice::from_ref(rule)).err())
        .map(|e| refused(d, e))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use deltaload_core::spec::RuleKind;

    #[test]
    fn expectations_that_are_not_a_boolean_of_one_record_are_refused_naming_why() {
        let with = |rule: &str| {
            let mut d = Dataset::orders().as_ref().clone();
            d.expectations = vec![Rule {
                kind: RuleKind::Expectation(deltaload_core::spec::OnFail::Drop),
                name: "e".into(),
                expression: rule.into(),
            }];
            expectation_problems(&d)
                .iter()
                .map(|e| e.to_string())
                .collect::<Vec<_>>()
        };
        assert!(with("amount >= 0 AND status IN ('placed')").is_empty());
        for (rule, says) in [
            ("weight > 0", "weight"),
            ("amount + 1", "not boolean"),
            ("count(order_id) > 0", "aggregate"),
            ("row_number() OVER () > 1", "window"),
            ("amount > (SELECT 1)", "subquery"),
            ("random() < 0.5", "volatile"),
            ("amount >>> 0", "expectation e (amount >>> 0)"),
        ] {
            let got = with(rule);
            assert_eq!(got.len(), 1, "{rule}: {got:?}");
            assert!(got[0].contains(says), "{rule}: {}", got[0]);
            assert!(
                got[0].starts_with("dataset orders: expectation e"),
                "{}",
                got[0]
            );
        }
    }
}
