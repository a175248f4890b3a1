//! Money requests remembered by idempotency key and by reference: the same request sent
//! again gets the first answer; a different request under a used key or reference is
//! refused.

use std::collections::HashMap;

use serde_json::Value;

use crate::check::{Checked, Refusal};
use payspec_codegen::model::Operation;

/// The first answer to a money request.
#[derive(Debug, Clone)]
pub(crate) struct Replay {
    fingerprint: String,
    pub status: u16,
    pub body: Value,
}

/// The answers remembered, by idempotency key and by reference.
#[derive(Debug, Default)]
pub(crate) struct Replays {
    by_key: HashMap<String, Replay>,
    by_reference: HashMap<String, Replay>,
}

impl Replays {
    /// The first answer under an idempotency key, if the key was used; a refusal when it
    /// was used with another request.
    pub(crate) fn by_key(&self, key: &str, fingerprint: &str) -> Option<Result<Replay, Refusal>> {
        self.by_key.get(key).map(|replay| replay.again(fingerprint, &format!("the idempotency key `{key}`")))
    }

    /// The first answer under a reference, as [`Replays::by_key`].
    pub(crate) fn by_reference(&self, reference: &str, fingerprint: &str) -> Option<Result<Replay, Refusal>> {
        self.by_reference
            .get(reference)
            .map(|replay| replay.again(fingerprint, &format!("the reference `{reference}`")))
    }

    /// Remembers an answer under its key and reference.
    pub(crate) fn remember(
        &mut self,
        key: Option<&str>,
        reference: Option<String>,
        fingerprint: String,
        status: u16,
        body: &Value,
    ) {
        let replay = Replay { fingerprint, status, body: body.clone() };
        if let Some(key) = key {
            self.by_key.insert(key.to_owned(), replay.clone());
        }
        if let Some(reference) = reference {
            self.by_reference.insert(reference, replay);
        }
    }
}

impl Replay {
    fn again(&self, fingerprint: &str, what: &str) -> Result<Replay, Refusal> {
        if self.fingerprint == fingerprint {
            Ok(self.clone())
        } else {
            Err(Refusal::unprocessable(format!("{what} was already used with a different request")))
        }
    }
}

/// The operation and its values, with object keys in one order: what makes two requests
/// the same request.
pub(crate) fn fingerprint(op: &Operation, checked: &Checked) -> String {
    let mut values: Vec<(&String, &Value)> = checked.values.iter().collect();
    values.sort_by(|a, b| a.0.cmp(b.0));
    let mut text = op.name.clone();
    for (key, value) in values {
        text.push('\n');
        text.push_str(key);
        text.push('=');
        text.push_str(&canonical(value));
    }
    text
}

fn canonical(value: &Value) -> String {
    match value {
        Value::Object(map) => {
            let mut keys: Vec<&String> = map.keys().collect();
            keys.sort();
            let inner: Vec<String> =
                keys.iter().map(|k| format!("{k:?}:{}", canonical(&map[k.as_str()]))).collect();
            format!("{{{}}}", inner.join(","))
        }
        Value::Array(items) => format!("[{}]", items.iter().map(canonical).collect::<Vec<_>>().join(",")),
        other => other.to_string(),
    }
}
