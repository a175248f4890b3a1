//! Answers built from the spec: a value of every field of a shape, in the type the spec
//! declares, wrapped in the operation's envelope. Stateful flows set the fields they know
//! (`set`) on top; a field the shape does not have is never added, so an answer always
//! fits the exported OpenAPI document.

use payspec_codegen::model::{AnswerType, EnvelopeKind, Operation, Spec, Type};
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
        Type::Decimal => json!("0.00"),
        Type::DateTime => json!(now),
        Type::Json => json!({}),
        Type::StringList => json!([]),
        Type::Shape(name) => {
            let mut object = Map::new();
            if let Some(shape) = spec.shape(name)
                && depth < MAX_DEPTH
            {
                for field in &shape.fields {
                    object.insert(
                        field.wire.clone(),
                        sample(spec, &field.ty, field.list, &field.values, now, depth + 1),
                    );
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

/// Sets a field at a dotted path, only where the sample has it and holds the same kind of
/// value: a stored record copied into another shape keeps that shape's types. A number
/// where the sample has text (an amount) is written as its text.
pub(crate) fn set(data: &mut Value, path: &str, value: Value) {
    let mut node: &Value = data;
    for part in path.split('.') {
        let Some(next) = node.get(part) else { return };
        node = next;
    }
    let value = match (node, value) {
        (Value::String(_), Value::Number(n)) => Value::String(n.to_string()),
        (Value::String(_), v @ Value::String(_))
        | (Value::Number(_), v @ Value::Number(_))
        | (Value::Bool(_), v @ Value::Bool(_))
        | (Value::Array(_), v @ Value::Array(_))
        | (Value::Object(_), v @ Value::Object(_)) => v,
        _ => return,
    };
    put(data, path, value);
}

/// The data wrapped in the operation's envelope, with its first success code.
pub(crate) fn envelope(op: &Operation, data: Value, description: &str) -> Value {
    let code = op.answers.success_codes.first().map_or("00", String::as_str);
    match op.answers.envelope {
        EnvelopeKind::Standard => json!({"code": code, "description": description, "data": data}),
        EnvelopeKind::ResponseCode => {
            json!({"responseCode": code, "responseMessage": description, "data": data})
        }
        EnvelopeKind::Unwrapped => data,
    }
}
