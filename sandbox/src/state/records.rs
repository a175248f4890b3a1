//! What the sandbox remembers of the money requests a spec of any vendor's operations made
//! (the role model, `roles`): each one's request and answered data, the state it stands
//! in, and the values its lookups find it by.

use payspec_codegen::model::FinalState;
use serde_json::Value;

/// One money request answered by the role model.
#[derive(Debug, Clone)]
pub(crate) struct Record {
    /// The sandbox's id of it.
    pub id: String,
    /// The money operation that made it.
    pub operation: String,
    /// The request's values, by the operation's parameter names.
    pub request: serde_json::Map<String, Value>,
    /// The data it was answered with (its state field as answered).
    pub data: Value,
    /// Where it stands: `None` while pending, else its final state.
    pub state: Option<FinalState>,
}

/// Every record, in the order made.
#[derive(Debug, Default)]
pub(crate) struct Records {
    list: Vec<Record>,
}

impl Records {
    pub(crate) fn add(&mut self, record: Record) {
        self.list.push(record);
    }

    /// The record of `operation` whose values match every `(where, value)`: a request
    /// parameter's name, or the keys of its answered data.
    pub(crate) fn find(&self, operation: &str, by: &[(Source<'_>, &Value)]) -> Option<&Record> {
        self.list.iter().rev().find(|record| {
            record.operation == operation
                && by.iter().all(|(source, value)| record.value(*source).is_some_and(|own| same(own, value)))
        })
    }

    /// The record with the sandbox's `id`, to change its state.
    pub(crate) fn by_id_mut(&mut self, id: &str) -> Option<&mut Record> {
        self.list.iter_mut().find(|record| record.id == id)
    }

    /// Every record, the newest first.
    pub(crate) fn newest_first(&self) -> impl Iterator<Item = &Record> {
        self.list.iter().rev()
    }

    /// The records that ended as succeeded.
    pub(crate) fn succeeded(&self) -> impl Iterator<Item = &Record> {
        self.list.iter().filter(|record| record.state == Some(FinalState::Succeeded))
    }

    /// The ids of the records still pending.
    pub(crate) fn pending(&self) -> Vec<String> {
        self.list.iter().filter(|record| record.state.is_none()).map(|record| record.id.clone()).collect()
    }

    pub(crate) fn len(&self) -> usize {
        self.list.len()
    }
}

/// Where a lookup's value is found in a record.
#[derive(Debug, Clone, Copy)]
pub(crate) enum Source<'a> {
    /// A parameter of the money request, by name.
    Request(&'a str),
    /// The keys of the answered data, outermost first.
    Answer(&'a [String]),
}

impl Record {
    pub(crate) fn value(&self, source: Source<'_>) -> Option<&Value> {
        match source {
            Source::Request(name) => self.request.get(name),
            Source::Answer(keys) => keys.iter().try_fold(&self.data, |node, key| node.get(key)),
        }
    }
}

/// Whether two values name the same thing: equal, or the same text (a path segment is
/// text; the answer's id may be a number).
fn same(a: &Value, b: &Value) -> bool {
    let text = |v: &Value| match v {
        Value::String(s) => Some(s.clone()),
        Value::Number(n) => Some(n.to_string()),
        _ => None,
    };
    a == b || (text(a).is_some() && text(a) == text(b))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn a_record_is_found_by_its_request_and_by_keys_nested_in_its_answer() {
        let mut records = Records::default();
        let request = json!({"reference": "ref-1"}).as_object().cloned().unwrap_or_default();
        let data = json!({"transfer": {"id": 42}, "status": "pending"});
        records.add(Record { id: "r1".into(), operation: "send".into(), request, data, state: None });
        let keys = ["transfer".to_owned(), "id".to_owned()];
        // The id as a path segment brings it as text; the answer holds a number.
        let by_answer = [(Source::Answer(&keys), &json!("42"))];
        assert_eq!(records.find("send", &by_answer).map(|r| r.id.as_str()), Some("r1"));
        let by_request = [(Source::Request("reference"), &json!("ref-1"))];
        assert_eq!(records.find("send", &by_request).map(|r| r.id.as_str()), Some("r1"));
        // Another value, another operation, or the top-level key alone: none.
        assert!(records.find("send", &[(Source::Answer(&keys), &json!("43"))]).is_none());
        assert!(records.find("other", &by_request).is_none());
        let top = ["id".to_owned()];
        assert!(records.find("send", &[(Source::Answer(&top), &json!("42"))]).is_none());
    }
}
