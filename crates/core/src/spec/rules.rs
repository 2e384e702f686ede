//! Rules a record must hold to be written: the CHECK constraints and the
//! column invariants of the table it goes to (a table another writer made
//! and deltaload took over). A rule holds only where its SQL expression is
//! true: false or null breaks it, as Delta's writers check them. The
//! adapter compiles and evaluates them on the parsed records; a record that
//! breaks one is rejected, naming every rule it broke.

/// Where a rule comes from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RuleKind {
    /// A CHECK constraint (`delta.constraints.<name>` of the table).
    Constraint,
    /// A column invariant (`delta.invariants` in a column's metadata).
    Invariant,
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
        }
    }

    /// What a reject's reason says of the rule: its name and expression.
    pub fn broken(&self) -> String {
        format!("{}: {}", self.label(), self.expression)
    }
}
