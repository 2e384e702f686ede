//! Rules a record must hold: the CHECK constraints and the column
//! invariants of the table it goes to (a table another writer made and
//! deltaload took over), and the dataset's expectations
//! (`[[dataset.expect]]`). A rule holds only where its SQL expression is
//! true: false or null breaks it, as Delta's writers check them. The
//! adapter compiles and evaluates them on the parsed records; a record that
//! breaks a table's rule or a `drop` expectation is rejected, naming every
//! such rule it broke; one breaking a `fail` expectation refuses its file;
//! a `warn` expectation only counts.

/// What breaking an expectation does to a record.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum OnFail {
    /// The record loads, and is counted.
    Warn,
    /// The record goes to the rejects, as one that does not parse.
    Drop,
    /// The whole file is refused before anything is written.
    Fail,
}

impl OnFail {
    /// Its name in a spec.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Warn => "warn",
            Self::Drop => "drop",
            Self::Fail => "fail",
        }
    }

    /// The action named `text` in a spec.
    pub fn parse(text: &str) -> Option<Self> {
        [Self::Warn, Self::Drop, Self::Fail]
            .into_iter()
            .find(|a| a.as_str() == text)
    }
}

/// Where a rule comes from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RuleKind {
    /// A CHECK constraint (`delta.constraints.<name>` of the table).
    Constraint,
    /// A column invariant (`delta.invariants` in a column's metadata).
    Invariant,
    /// An expectation of the spec, and what breaking it does.
    Expectation(OnFail),
}

/// A rule of the table, by name, with its SQL boolean expression.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Rule {
    /// Where it comes from.
    pub kind: RuleKind,
    /// The constraint's name, or the column of the invariant.
    pub name: String,
    /// The SQL boolean expression, as the table holds it.
    pub expression: String,
}

impl Rule {
    /// How a reject's reason names the rule.
    pub fn label(&self) -> String {
        match self.kind {
            RuleKind::Constraint => format!("CHECK constraint {}", self.name),
            RuleKind::Invariant => format!("the invariant of column {}", self.name),
            RuleKind::Expectation(_) => format!("expectation {} failed", self.name),
        }
    }

    /// How a reject's reason says a record broke it: `breaks CHECK
    /// constraint positive: qty > 0`, `expectation amount_not_negative
    /// failed: amount >= 0`.
    pub fn breach(&self) -> String {
        match self.kind {
            RuleKind::Expectation(_) => self.broken(),
            _ => format!("breaks {}", self.broken()),
        }
    }

    /// Whether a record that breaks it goes to the rejects (a table's rule,
    /// or a `drop` expectation).
    pub fn drops(&self) -> bool {
        !matches!(
            self.kind,
            RuleKind::Expectation(OnFail::Warn | OnFail::Fail)
        )
    }

    /// What breaking it does, when it is an expectation.
    pub fn on_fail(&self) -> Option<OnFail> {
        match self.kind {
            RuleKind::Expectation(on_fail) => Some(on_fail),
            _ => None,
        }
    }

    /// What a reject's reason says of the rule: its name and expression.
    pub fn broken(&self) -> String {
        format!("{}: {}", self.label(), self.expression)
    }
}
