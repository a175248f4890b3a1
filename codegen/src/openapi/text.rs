//! A document's text: read as JSON or YAML into one JSON value, and the line and column
//! where a key or a value is found in it.

use crate::model::Location;
use serde_json::Value;

/// JSON when it looks like JSON (for its exact error positions), else YAML.
pub(super) fn parse(text: &str) -> Result<Value, (Option<Location>, String)> {
    let body = text.trim_start_matches('\u{feff}').trim_start();
    if body.starts_with('{') || body.starts_with('[') {
        return serde_json::from_str(text).map_err(|e| {
            let message = e.to_string();
            let message = message.rsplit_once(" at line ").map_or(message.as_str(), |(m, _)| m);
            (Some(Location { line: e.line(), column: e.column() }), format!("not valid JSON: {message}"))
        });
    }
    let yaml: serde_yaml::Value = serde_yaml::from_str(text).map_err(|e| {
        let location = e.location().map(|l| Location { line: l.line(), column: l.column() });
        let message = e.to_string();
        let message = message.rsplit_once(" at line ").map_or(message.as_str(), |(m, _)| m);
        (location, format!("neither JSON nor valid YAML: {message}"))
    })?;
    Ok(yaml_to_json(yaml))
}

/// YAML to JSON values; a non-text key (`200:` in `responses`) becomes its text.
fn yaml_to_json(value: serde_yaml::Value) -> Value {
    use serde_yaml::Value as Y;
    match value {
        Y::Null => Value::Null,
        Y::Bool(b) => Value::Bool(b),
        Y::Number(n) => {
            if let Some(i) = n.as_i64() {
                Value::from(i)
            } else if let Some(u) = n.as_u64() {
                Value::from(u)
            } else {
                n.as_f64().and_then(serde_json::Number::from_f64).map_or(Value::Null, Value::Number)
            }
        }
        Y::String(s) => Value::String(s),
        Y::Sequence(items) => Value::Array(items.into_iter().map(yaml_to_json).collect()),
        Y::Mapping(map) => Value::Object(
            map.into_iter()
                .map(|(k, v)| {
                    let key = match yaml_to_json(k) {
                        Value::String(s) => s,
                        other => other.to_string(),
                    };
                    (key, yaml_to_json(v))
                })
                .collect(),
        ),
        Y::Tagged(tagged) => yaml_to_json(tagged.value),
    }
}

/// The first place the text names `needle` as a key or a value, for error positions.
pub(super) fn locate(text: &str, needle: &str) -> Option<Location> {
    let quoted = format!("\"{needle}\"");
    let at = text.find(&quoted).or_else(|| text.find(needle))?;
    let before = &text[..at];
    let line = before.matches('\n').count() + 1;
    let column = before.rsplit('\n').next().map_or(0, |l| l.chars().count()) + 1;
    Some(Location { line, column })
}

/// Escapes a key for a JSON pointer (`/` is `~1`, `~` is `~0`).
pub(super) fn escape(key: &str) -> String {
    key.replace('~', "~0").replace('/', "~1")
}
