//! `[[dataset.expect]]`: rules each record of the dataset should hold, by
//! name, with what breaking one does (`on_fail`: `warn`, the default,
//! `drop` or `fail`). Their SQL is compiled by the adapter, which refuses
//! an unknown column, a rule that is not boolean, and what a rule over one
//! record cannot hold (aggregates, window functions, subqueries, volatile
//! functions); here the names and actions are checked.

use super::parse::{RawDataset, Source, SpecError};
use super::rules::{OnFail, Rule, RuleKind};

/// The longest name of an expectation: it names a metric's dimension.
const MAX_NAME: usize = 128;

/// The dataset's expectations, each checked.
pub(crate) fn expectations(src: &Source<'_>, d: &RawDataset) -> Result<Vec<Rule>, SpecError> {
    let mut rules: Vec<Rule> = Vec::with_capacity(d.expect.len());
    for raw in &d.expect {
        let e = raw.get_ref();
        let name = e.name.get_ref();
        let err = |span, message: String| src.error(Some(span), message);
        let valid = name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_');
        if name.is_empty() || name.len() > MAX_NAME || !valid {
            return Err(err(e.name.span(), format!("expectation name {name:?} must be 1 to {MAX_NAME} letters, digits or _ (it names the rule in rejects, figures and metrics)")));
        }
        if rules.iter().any(|r| r.name.eq_ignore_ascii_case(name)) {
            return Err(err(e.name.span(), format!("expectation {name:?} is declared twice in dataset {:?}: give each a name of its own", d.name.get_ref())));
        }
        let rule = e.rule.get_ref().trim();
        if rule.is_empty() {
            return Err(err(e.rule.span(), format!("expectation {name:?} has an empty rule: give a SQL boolean over the dataset's columns, e.g. \"amount >= 0\"")));
        }
        let on_fail = match &e.on_fail {
            None => OnFail::Warn,
            Some(text) => OnFail::parse(text.get_ref()).ok_or_else(|| {
                err(text.span(), format!("expectation {name:?} has on_fail = {:?}: use \"warn\" (the default: load and count), \"drop\" (to the rejects) or \"fail\" (refuse the file)", text.get_ref()))
            })?,
        };
        rules.push(Rule {
            kind: RuleKind::Expectation(on_fail),
            name: name.clone(),
            expression: rule.to_string(),
        });
    }
    Ok(rules)
}

#[cfg(test)]
mod tests {
    use crate::spec::{OnFail, RuleKind, Spec};

    fn spec(expect: &str) -> Result<Spec, String> {
        let text = format!(
            "[[dataset]]\nname = \"shop\"\nkeys = [\"id\"]\n\
             [[dataset.columns]]\nname = \"id\"\ntype = \"bigint\"\n{expect}"
        );
        Spec::parse(&text, "spec.toml").map_err(|e| e.to_string())
    }

    #[test]
    fn expectations_are_read_in_order_with_warn_by_default() {
        let s = spec(
            "[[dataset.expect]]\nname = \"id_positive\"\nrule = \"id > 0\"\n\
             [[dataset.expect]]\nname = \"small\"\nrule = \" id < 10 \"\non_fail = \"drop\"\n",
        )
        .unwrap();
        let d = &s.datasets[0];
        let kinds: Vec<_> = d.expectations.iter().map(|r| r.kind).collect();
        assert_eq!(
            kinds,
            [
                RuleKind::Expectation(OnFail::Warn),
                RuleKind::Expectation(OnFail::Drop)
            ]
        );
        assert_eq!(
            d.expectations[1].broken(),
            "expectation small failed: id < 10"
        );
        assert!(
            d.rules.is_empty(),
            "the adapter adds them to the table's rules"
        );
    }

    #[test]
    fn bad_names_actions_and_fields_are_refused_with_the_line() {
        for (expect, says) in [
            ("name = \"a-b\"\nrule = \"id > 0\"", "letters, digits or _"),
            ("name = \"a\"\nrule = \"  \"", "empty rule"),
            (
                "name = \"a\"\nrule = \"id > 0\"\non_fail = \"stop\"",
                "use \"warn\"",
            ),
            (
                "name = \"a\"\nrule = \"id > 0\"\nlevel = 1",
                "unknown field",
            ),
        ] {
            let e = spec(&format!("[[dataset.expect]]\n{expect}\n")).unwrap_err();
            assert!(e.contains(says), "{expect}: {e}");
        }
        let twice = "[[dataset.expect]]\nname = \"a\"\nrule = \"id > 0\"\n\
                     [[dataset.expect]]\nname = \"A\"\nrule = \"id > 1\"\n";
        assert!(spec(twice).unwrap_err().contains("declared twice"));
    }
}
