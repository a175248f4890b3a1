//! Direct-debit mandates, as created (the request's fields, the id the sandbox gave, and
//! their status).

use serde_json::Value;

/// The mandates created, in order.
#[derive(Debug, Default)]
pub(crate) struct Mandates {
    list: Vec<Value>,
}

impl Mandates {
    pub(crate) fn add(&mut self, mandate: Value) {
        self.list.push(mandate);
    }

    pub(crate) fn get(&self, id: &str) -> Option<&Value> {
        self.list.iter().find(|m| m.get("mandateId").and_then(Value::as_str) == Some(id))
    }

    /// The mandates of a status (all when `None`), in order.
    pub(crate) fn with_status(&self, status: Option<&str>) -> Vec<&Value> {
        self.list
            .iter()
            .filter(|m| status.is_none_or(|s| m.get("status").and_then(Value::as_str) == Some(s)))
            .collect()
    }
}
