//! Writing values back as the JSON they were read from: [`ToJson`], the object a generated
//! struct writes, and serde writing through the same form.

use serde::ser::{SerializeMap, SerializeSeq};
use serde_json::value::RawValue;

use super::value::{Json, JsonNumber, JsonObject};

impl serde::Serialize for Json {
    /// Writes the value back with every number's exact text.
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        match self {
            Json::Null => serializer.serialize_unit(),
            Json::Bool(b) => serializer.serialize_bool(*b),
            Json::Number(n) => {
                let raw = RawValue::from_string(n.as_str().to_owned()).map_err(serde::ser::Error::custom)?;
                raw.serialize(serializer)
            }
            Json::String(s) => serializer.serialize_str(s),
            Json::Array(items) => {
                let mut seq = serializer.serialize_seq(Some(items.len()))?;
                for item in items {
                    seq.serialize_element(item)?;
                }
                seq.end()
            }
            Json::Object(object) => {
                let mut map = serializer.serialize_map(Some(object.len()))?;
                for (k, v) in &object.0 {
                    map.serialize_entry(k.as_str(), v)?;
                }
                map.end()
            }
        }
    }
}

/// A value that can be written back as the JSON it was read from.
pub trait ToJson {
    /// The value as JSON, numbers with their exact text.
    fn to_json(&self) -> Json;
}

impl ToJson for Json {
    fn to_json(&self) -> Json {
        self.clone()
    }
}

impl ToJson for String {
    fn to_json(&self) -> Json {
        Json::String(self.clone())
    }
}

impl ToJson for bool {
    fn to_json(&self) -> Json {
        Json::Bool(*self)
    }
}

impl ToJson for i64 {
    fn to_json(&self) -> Json {
        Json::Number(JsonNumber::from_text(&self.to_string()))
    }
}

impl<T: ToJson> ToJson for Option<T> {
    fn to_json(&self) -> Json {
        self.as_ref().map_or(Json::Null, ToJson::to_json)
    }
}

impl<T: ToJson> ToJson for Vec<T> {
    fn to_json(&self) -> Json {
        Json::Array(self.iter().map(ToJson::to_json).collect())
    }
}

/// Writes a generated struct back as an object: its declared fields in order, then the
/// unknown ones it kept.
#[derive(Debug, Default)]
pub struct ObjectWriter {
    object: JsonObject,
}

impl ObjectWriter {
    /// An empty object.
    pub fn new() -> Self {
        Self::default()
    }

    /// Writes a field that is always there.
    pub fn required<T: ToJson>(&mut self, key: &str, value: &T) {
        self.object.push(key, value.to_json());
    }

    /// Writes a field when it is set.
    pub fn optional<T: ToJson>(&mut self, key: &str, value: &Option<T>) {
        if let Some(v) = value {
            self.object.push(key, v.to_json());
        }
    }

    /// The object, with the unknown fields after the declared ones.
    pub fn finish(mut self, rest: &JsonObject) -> Json {
        self.object.0.extend(rest.0.iter().cloned());
        Json::Object(self.object)
    }
}

/// Writes any answer type with serde, through its [`ToJson`] form (what the generated
/// `Serialize` impls call).
pub fn serialize_via_json<S: serde::Serializer, T: ToJson>(
    value: &T,
    serializer: S,
) -> Result<S::Ok, S::Error> {
    serde::Serialize::serialize(&value.to_json(), serializer)
}
