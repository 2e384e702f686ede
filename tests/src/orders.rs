//! Orders change files for tests: one change per line, every column
//! defaulted but the key, so a test names only what it is about.

use std::fmt::Display;

/// One change of an order: `Order::new(7).status("paid").line()`.
#[derive(Debug, Clone)]
pub struct Order {
    id: String,
    customer: String,
    status: String,
    amount: String,
    ordered_at: String,
    updated_at: String,
}

impl Order {
    /// A change of order `id`: customer `C1`, `placed`, 1.00 EUR, no
    /// `ordered_at`, updated at 2026-10-01T08:00:00.
    pub fn new(id: impl Display) -> Self {
        Self {
            id: id.to_string(),
            customer: "C1".into(),
            status: "placed".into(),
            amount: "1.00".into(),
            ordered_at: String::new(),
            updated_at: "2026-10-01T08:00:00".into(),
        }
    }

    /// The customer id.
    pub fn customer(mut self, customer: impl Display) -> Self {
        self.customer = customer.to_string();
        self
    }

    /// The status.
    pub fn status(mut self, status: impl Display) -> Self {
        self.status = status.to_string();
        self
    }

    /// The amount, as written (it may be one that does not parse).
    pub fn amount(mut self, amount: impl Display) -> Self {
        self.amount = amount.to_string();
        self
    }

    /// When it was ordered.
    pub fn ordered_at(mut self, at: impl Display) -> Self {
        self.ordered_at = at.to_string();
        self
    }

    /// When it changed: the change's sequence.
    pub fn updated_at(mut self, at: impl Display) -> Self {
        self.updated_at = at.to_string();
        self
    }

    /// The CSV line, with its line end.
    pub fn line(&self) -> String {
        let Self {
            id,
            customer,
            status,
            amount,
            ordered_at,
            updated_at,
        } = self;
        format!("{id},{customer},{status},{amount},EUR,{ordered_at},{updated_at}\n")
    }
}

/// An orders CSV file: the header, then one line per change.
pub fn orders_csv<'a>(orders: impl IntoIterator<Item = &'a Order>) -> String {
    let mut text = crate::HEADER.to_string();
    for order in orders {
        text.push_str(&order.line());
    }
    text
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_change_is_one_line_of_the_orders_contract() {
        let text = orders_csv(&[Order::new(7).status("paid"), Order::new(8).amount("x")]);
        assert_eq!(
            text,
            "order_id,customer_id,status,amount,currency,ordered_at,updated_at\n\
             7,C1,paid,1.00,EUR,,2026-10-01T08:00:00\n\
             8,C1,placed,x,EUR,,2026-10-01T08:00:00\n"
        );
    }
}
