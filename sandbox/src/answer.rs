//! Answers built from the spec: a value of every field of a shape, in the type the spec
//! declares, wrapped in the operation's envelope under the spec's envelope keys. Handlers
//! set the fields they know on top, through [`Data`], and only fields they declare
//! ([`Writes`]): the declarations are checked against the spec when the sandbox starts,
//! so a field the shape does not have is never added (an answer always fits the exported
//! OpenAPI document) and a wrong key is an error, not a field that silently vanishes.

use payspec_codegen::model::{AnswerType, Operation, Spec, SuccessBy, Type};
use serde_json::{Map, Value, json};

/// How deep shapes inside shapes are filled; below that, objects are left empty.
const MAX_DEPTH: usize = 6;

/// A sample of the operation's data (`{}` when untyped).
pub(crate) fn sample_data(spec: &Spec, op: &Operation, now: &str) -> Value {
    match &op.response {
        None => json!({}),
        Some(AnswerType { ty, list }) => sample(spec, ty, *list, &[], now, 0),
    }
}

/// A sample of a shape by name.
pub(crate) fn sample_shape(spec: &Spec, name: &str, now: &str) -> Value {
    sample(spec, &Type::Shape(name.to_owned()), false, &[], now, 0)
}

fn sample(spec: &Spec, ty: &Type, list: bool, values: &[String], now: &str, depth: usize) -> Value {
    if list {
        if depth >= MAX_DEPTH {
            return json!([]);
        }
        return json!([sample(spec, ty, false, values, now, depth + 1)]);
    }
    match ty {
        Type::String | Type::Identifier(_) => match values.first() {
            Some(first) => json!(first),
            None => json!("sandbox"),
        },
        Type::Integer => json!(0),
        Type::Boolean => json!(true),
        // A JSON number; a field that says the service writes it as text is text.
        Type::Decimal => json!(0.0),
        Type::DateTime => json!(now),
        Type::Json => json!({}),
        Type::StringList => json!([]),
        Type::Shape(name) => {
            let mut object = Map::new();
            if let Some(shape) = spec.shape(name)
                && depth < MAX_DEPTH
            {
                for field in &shape.fields {
                    let value = match (&field.ty, field.list, field.as_string) {
                        (Type::Decimal, false, true) => json!("0.00"),
                        _ => sample(spec, &field.ty, field.list, &field.values, now, depth + 1),
                    };
                    object.insert(field.wire.clone(), value);
                }
            }
            Value::Object(object)
        }
    }
}

/// Writes a field at a dotted path, only where the sample has it.
fn put(data: &mut Value, path: &str, value: Value) {
    let mut node = data;
    let mut parts = path.split('.').peekable();
    while let Some(part) = parts.next() {
        let Some(next) = node.as_object_mut().and_then(|o| o.get_mut(part)) else { return };
        if parts.peek().is_none() {
            *next = value;
            return;
        }
        node = next;
    }
}

/// Writes `value` at the dotted `path` of `data` whatever is there, making the objects on
/// the way: for the places a spec's paths name (a page's `meta.page`, a signed value of a
/// delivery), which no shape declares.
pub(crate) fn put_path(data: &mut Value, path: &str, value: Value) {
    let mut node = data;
    let mut keys = path.split('.').peekable();
    while let Some(key) = keys.next() {
        if !node.is_object() {
            *node = json!({});
        }
        let Some(object) = node.as_object_mut() else { return };
        if keys.peek().is_none() {
            object.insert(key.to_owned(), value);
            return;
        }
        node = object.entry(key.to_owned()).or_insert_with(|| json!({}));
    }
}

/// Sets a field at a dotted path, only where the sample has it and holds the same kind of
/// value: a stored record copied into another shape keeps that shape's types. A number
/// where the sample has text (an amount) is written as its text.
fn set(data: &mut Value, path: &str, value: Value) {
    let mut node: &Value = data;
    for part in path.split('.') {
        let Some(next) = node.get(part) else { return };
        node = next;
    }
    let value = match (node, value) {
        (Value::String(_), Value::Number(n)) => Value::String(n.to_string()),
        // An amount a handler keeps as exact text, where the shape's is a number.
        (Value::Number(_), Value::String(text)) => match serde_json::from_str::<serde_json::Number>(&text) {
            Ok(number) => Value::Number(number),
            Err(_) => return,
        },
        (Value::String(_), v @ Value::String(_))
        | (Value::Number(_), v @ Value::Number(_))
        | (Value::Bool(_), v @ Value::Bool(_))
        | (Value::Array(_), v @ Value::Array(_))
        | (Value::Object(_), v @ Value::Object(_)) => v,
        _ => return,
    };
    put(data, path, value);
}

/// The data wrapped in the operation's envelope, with its first success code, under the
/// spec's envelope keys: their first spellings, or for a `response_code` envelope their
/// second (`responseCode`, `responseMessage`), as the service writes that envelope.
pub(crate) fn envelope(op: &Operation, data: Value, description: &str) -> Value {
    match op.answers.reading.success_codes.first() {
        Some(code) => envelope_coded(op, data, code, description),
        // Success said by the flag or the status, and no code the spec knows: none written.
        None => envelope_uncoded(op, data, description),
    }
}

/// The data wrapped in the operation's envelope without a code.
fn envelope_uncoded(op: &Operation, data: Value, description: &str) -> Value {
    let mut body = envelope_coded(op, data, "", description);
    if let (Some((Some(code_key), _)), Value::Object(fields)) =
        (op.answers.reading.envelope.spelled(), &mut body)
    {
        fields.remove(code_key);
    }
    body
}

/// The data wrapped in the operation's envelope with `code`, as [`envelope`].
pub(crate) fn envelope_coded(op: &Operation, data: Value, code: &str, description: &str) -> Value {
    let envelope = &op.answers.reading.envelope;
    let (Some((code_key, description_key)), Some(keys)) = (envelope.spelled(), envelope.keys()) else {
        return data;
    };
    let mut body = Map::new();
    if let Some(key) = code_key {
        body.insert(key.to_owned(), json!(code));
    }
    if let Some(key) = description_key {
        body.insert(key.to_owned(), json!(description));
    }
    // An envelope whose flag says success carries it with every success.
    if let (SuccessBy::Flag, Some(flag)) = (keys.success, &keys.flag) {
        body.insert(flag.clone(), json!(true));
    }
    body.insert(keys.data.clone(), data);
    Value::Object(body)
}

/// The fields a handler writes into one answer: into the operation's data (`shape:
/// None`), or into records of a named shape (a listing's items).
#[derive(Debug)]
pub(crate) struct Writes {
    pub shape: Option<&'static str>,
    pub paths: &'static [&'static str],
}

impl Writes {
    /// The paths of these writes the spec's shape lacks: what makes the sandbox refuse to
    /// start (see the handler table).
    pub(crate) fn missing(&self, spec: &Spec, op: &Operation) -> Vec<String> {
        let sample = match self.shape {
            None => sample_data(spec, op, ""),
            Some(name) if spec.shape(name).is_some() => sample_shape(spec, name, ""),
            Some(name) => return vec![format!("shape `{name}`")],
        };
        self.paths
            .iter()
            .filter(|path| path.split('.').try_fold(&sample, |node, part| node.get(part)).is_none())
            .map(|path| match self.shape {
                None => format!("`{path}` of its answer"),
                Some(name) => format!("`{path}` of shape `{name}`"),
            })
            .collect()
    }
}

/// One answer's data being written: the spec's sample of its shape, and the fields the
/// handler declared it writes there.
pub(crate) struct Data {
    value: Value,
    writes: &'static Writes,
}

impl Data {
    /// The operation's data.
    pub(crate) fn of(spec: &Spec, op: &Operation, now: &str, writes: &'static Writes) -> Data {
        debug_assert!(
            writes.shape.is_none(),
            "the operation's data is written through writes without a shape"
        );
        Data { value: sample_data(spec, op, now), writes }
    }

    /// A record of a named shape.
    pub(crate) fn shape(spec: &Spec, now: &str, writes: &'static Writes) -> Data {
        let name = writes.shape.unwrap_or_default();
        Data { value: sample_shape(spec, name, now), writes }
    }

    /// Sets a declared field, where the shape has it, holding the same kind of value (a
    /// number where the shape has text, as its text).
    pub(crate) fn set(&mut self, path: &str, value: Value) {
        debug_assert!(
            self.writes.paths.contains(&path),
            "a handler writes `{path}`, which its Writes do not declare: declare it, so the spec is checked for it"
        );
        set(&mut self.value, path, value);
    }

    /// Sets a field when these writes declare it: for a handler shared by operations whose
    /// answers differ, each declaring the fields its answer has.
    pub(crate) fn offer(&mut self, path: &str, value: Value) {
        if self.writes.paths.contains(&path) {
            set(&mut self.value, path, value);
        }
    }

    /// Copies each field of `fields` that the shape also has (a stored record into an
    /// answer, a request's fields into a record): the shape decides what is kept.
    pub(crate) fn copy_matching(&mut self, fields: &Value) {
        if let Value::Object(fields) = fields {
            for (key, value) in fields {
                set(&mut self.value, key, value.clone());
            }
        }
    }

    pub(crate) fn into_value(self) -> Value {
        self.value
    }
}
