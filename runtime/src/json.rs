//! Answers as exact values: a JSON tree whose numbers keep the text the service sent, and
//! the decoding rules every generated answer type follows, written once here.
//!
//! Answers are read straight from their text by a [`Reader`]: generated answer structs
//! keep a [`Slot`] for each declared field and hand the rest to their `other_fields`. The
//! rules (amounts from a number or a string, open enumerations, optional fields that may be
//! absent or null, unknown fields kept, errors that name the field path) live in this
//! module and in the `FromJson` impls of the runtime's types. No value passes through a
//! float, and no answer is built as a tree first.

use std::fmt;

use serde::Deserialize as _;
use serde::de::{Deserializer, Error as _};
use serde::ser::{SerializeMap, SerializeSeq};
use serde_json::value::RawValue;

pub use super::json_parse::{JsonError, MAX_UNREAD, REPEATED_KEY, Reader};

/// A JSON value whose numbers keep their exact text: what an untyped answer decodes to,
/// and what a typed answer keeps of the fields the spec does not know.
#[derive(Clone, Debug, PartialEq, Eq, Default)]
pub enum Json {
    /// `null`
    #[default]
    Null,
    /// `true` or `false`
    Bool(bool),
    /// A number, as written (`1500.10` stays `1500.10`).
    Number(JsonNumber),
    /// A string.
    String(String),
    /// An array.
    Array(Vec<Json>),
    /// An object, its keys in the order they came.
    Object(JsonObject),
}

/// Text kept inline when short (keys, numbers), so that reading an answer does not
/// allocate for each.
#[derive(Clone)]
enum SmallText {
    Inline { len: u8, bytes: [u8; 22] },
    Heap(Box<str>),
}

impl SmallText {
    fn new(text: &str) -> Self {
        if text.len() <= 22 {
            let mut bytes = [0; 22];
            bytes[..text.len()].copy_from_slice(text.as_bytes());
            // At most 22, so it fits.
            SmallText::Inline { len: text.len() as u8, bytes }
        } else {
            SmallText::Heap(text.into())
        }
    }

    fn as_str(&self) -> &str {
        match self {
            // Always the bytes of a `&str`, cut at its end.
            SmallText::Inline { len, bytes } => {
                std::str::from_utf8(&bytes[..usize::from(*len)]).unwrap_or("")
            }
            SmallText::Heap(text) => text,
        }
    }

    /// The text's bytes, without checking them again (for comparisons).
    fn as_bytes(&self) -> &[u8] {
        match self {
            SmallText::Inline { len, bytes } => &bytes[..usize::from(*len)],
            SmallText::Heap(text) => text.as_bytes(),
        }
    }
}

impl PartialEq for SmallText {
    fn eq(&self, other: &Self) -> bool {
        self.as_str() == other.as_str()
    }
}

impl Eq for SmallText {}

impl std::hash::Hash for SmallText {
    fn hash<H: std::hash::Hasher>(&self, state: &mut H) {
        self.as_str().hash(state);
    }
}

/// An object key, inline when short.
#[derive(Clone, PartialEq, Eq, Hash)]
pub(crate) struct Key(SmallText);

impl Key {
    pub(crate) fn new(text: &str) -> Self {
        Key(SmallText::new(text))
    }

    pub(crate) fn as_str(&self) -> &str {
        self.0.as_str()
    }

    /// Whether the key is `text`.
    pub(crate) fn is(&self, text: &str) -> bool {
        self.0.as_bytes() == text.as_bytes()
    }
}

impl From<String> for Key {
    fn from(text: String) -> Self {
        if text.len() <= 22 { Key::new(&text) } else { Key(SmallText::Heap(text.into_boxed_str())) }
    }
}

impl fmt::Debug for Key {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Debug::fmt(self.as_str(), f)
    }
}

/// A JSON number as the service wrote it.
#[derive(Clone, PartialEq, Eq, Hash)]
pub struct JsonNumber(SmallText);

impl JsonNumber {
    /// The number's exact text (already checked to be a JSON number).
    pub(crate) fn from_text(text: &str) -> Self {
        JsonNumber(SmallText::new(text))
    }

    /// The number's exact text.
    pub fn as_str(&self) -> &str {
        self.0.as_str()
    }

    /// The number as an `i64`, when it is a whole number in range.
    pub fn as_i64(&self) -> Option<i64> {
        self.as_str().parse().ok()
    }
}

impl fmt::Debug for JsonNumber {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl fmt::Display for JsonNumber {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// A JSON object with its keys in arrival order.
#[derive(Clone, Debug, PartialEq, Eq, Default)]
pub struct JsonObject(Vec<(Key, Json)>);

impl JsonObject {
    /// An empty object.
    pub fn new() -> Self {
        Self::default()
    }

    pub(crate) fn from_entries(entries: Vec<(Key, Json)>) -> Self {
        JsonObject(entries)
    }

    /// The value of `key` (the first, if the object repeats it).
    pub fn get(&self, key: &str) -> Option<&Json> {
        self.0.iter().find(|(k, _)| k.is(key)).map(|(_, v)| v)
    }

    /// The entries, in arrival order.
    pub fn iter(&self) -> impl Iterator<Item = (&str, &Json)> {
        self.0.iter().map(|(k, v)| (k.as_str(), v))
    }

    /// The number of entries.
    pub fn len(&self) -> usize {
        self.0.len()
    }

    /// Whether there is no entry.
    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    /// Adds an entry at the end.
    pub fn push(&mut self, key: impl Into<String>, value: Json) {
        self.0.push((Key::from(key.into()), value));
    }
}

impl Json {
    /// Parses JSON text, keeping every number's text.
    pub fn parse(text: &str) -> Result<Json, JsonError> {
        super::json_parse::parse(text.as_bytes())
    }

    /// Parses JSON bytes (an answer's body), keeping every number's text.
    pub fn parse_bytes(bytes: &[u8]) -> Result<Json, JsonError> {
        super::json_parse::parse(bytes)
    }

    /// The value of `key`, if this is an object that has it.
    pub fn get(&self, key: &str) -> Option<&Json> {
        match self {
            Json::Object(object) => object.get(key),
            _ => None,
        }
    }

    /// The text, if this is a string.
    pub fn as_str(&self) -> Option<&str> {
        match self {
            Json::String(text) => Some(text),
            _ => None,
        }
    }

    /// Whether this is `null`.
    pub fn is_null(&self) -> bool {
        matches!(self, Json::Null)
    }

    /// What kind of value this is, for error messages (never the value itself).
    pub fn kind(&self) -> &'static str {
        match self {
            Json::Null => "null",
            Json::Bool(_) => "a boolean",
            Json::Number(_) => "a number",
            Json::String(_) => "a string",
            Json::Array(_) => "an array",
            Json::Object(_) => "an object",
        }
    }
}

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

impl<'de> serde::Deserialize<'de> for Json {
    /// Reads from `serde_json` only (it needs the raw text to keep numbers exact).
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let raw = Box::<RawValue>::deserialize(deserializer)?;
        Json::parse(raw.get()).map_err(D::Error::custom)
    }
}

impl From<serde_json::Value> for Json {
    /// The value as it serializes: numbers with the text `serde_json` gives them (already
    /// as exact as the `Value` is).
    fn from(value: serde_json::Value) -> Self {
        Json::parse(&value.to_string()).unwrap_or_default()
    }
}

/// Where a value sits in an answer, for error messages: `data.results[2].amount`.
#[derive(Clone, Copy, Debug)]
pub struct Path<'a> {
    parent: Option<&'a Path<'a>>,
    step: Step<'a>,
}

#[derive(Clone, Copy, Debug)]
enum Step<'a> {
    Root(&'a str),
    Key(&'a str),
    Index(usize),
}

impl<'a> Path<'a> {
    /// The path of a whole answer part, e.g. `data`.
    pub fn root(name: &'a str) -> Self {
        Path { parent: None, step: Step::Root(name) }
    }

    /// The path of a key below this one.
    pub fn key(&'a self, key: &'a str) -> Path<'a> {
        Path { parent: Some(self), step: Step::Key(key) }
    }

    /// The path of an array element below this one.
    pub fn index(&'a self, index: usize) -> Path<'a> {
        Path { parent: Some(self), step: Step::Index(index) }
    }
}

impl fmt::Display for Path<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if let Some(parent) = self.parent {
            fmt::Display::fmt(parent, f)?;
        }
        match self.step {
            Step::Root(name) => f.write_str(name),
            Step::Key(key) => write!(f, ".{key}"),
            Step::Index(i) => write!(f, "[{i}]"),
        }
    }
}

/// Why an answer value did not fit its declared type. Names the field path and the kind
/// of value that came, never the value itself (it could be a secret).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct DecodeError {
    /// Where, e.g. `data.results[2].amount`.
    pub path: String,
    /// What the spec declares there and what came instead.
    pub problem: String,
}

impl DecodeError {
    /// `expected` there, but a value of another kind came.
    pub fn expected(at: &Path<'_>, expected: &str, found: &Json) -> Self {
        DecodeError { path: at.to_string(), problem: format!("expected {expected}, found {}", found.kind()) }
    }

    /// A problem with the value at `at`.
    pub fn at(at: &Path<'_>, problem: impl Into<String>) -> Self {
        DecodeError { path: at.to_string(), problem: problem.into() }
    }
}

impl fmt::Display for DecodeError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "`{}`: {}", self.path, self.problem)
    }
}

impl std::error::Error for DecodeError {}

/// A value that can be read from an answer: straight from its text ([`FromJson::read`],
/// how the client reads every answer), or from a tree ([`FromJson::from_json`]).
pub trait FromJson: Sized {
    /// Reads the value at `at` from the text, with the reader just before it.
    fn read(reader: &mut Reader<'_>, at: &Path<'_>) -> Result<Self, DecodeError>;

    /// Reads the value at `at` from a tree, by the same rules as [`FromJson::read`] (by
    /// default, through the tree's text).
    fn from_json(value: Json, at: &Path<'_>) -> Result<Self, DecodeError> {
        let text = serde_json::to_vec(&value).map_err(|e| DecodeError::at(at, e.to_string()))?;
        let mut reader = Reader::new(&text);
        Self::read(&mut reader, at)
    }
}

/// A value that can be written back as the JSON it was read from.
pub trait ToJson {
    /// The value as JSON, numbers with their exact text.
    fn to_json(&self) -> Json;
}

impl FromJson for Json {
    fn read(reader: &mut Reader<'_>, at: &Path<'_>) -> Result<Self, DecodeError> {
        reader.json(at)
    }

    fn from_json(value: Json, _: &Path<'_>) -> Result<Self, DecodeError> {
        Ok(value)
    }
}

impl ToJson for Json {
    fn to_json(&self) -> Json {
        self.clone()
    }
}

impl FromJson for String {
    fn read(reader: &mut Reader<'_>, at: &Path<'_>) -> Result<Self, DecodeError> {
        reader.string(at, "a string")
    }

    fn from_json(value: Json, at: &Path<'_>) -> Result<Self, DecodeError> {
        match value {
            Json::String(text) => Ok(text),
            other => Err(DecodeError::expected(at, "a string", &other)),
        }
    }
}

impl ToJson for String {
    fn to_json(&self) -> Json {
        Json::String(self.clone())
    }
}

impl FromJson for bool {
    /// `true`/`false`, or the same words as a string.
    fn read(reader: &mut Reader<'_>, at: &Path<'_>) -> Result<Self, DecodeError> {
        if let Some(value) = reader.boolean() {
            return Ok(value);
        }
        match reader.str(at, "a boolean") {
            Ok(text) if text.eq_ignore_ascii_case("true") => Ok(true),
            Ok(text) if text.eq_ignore_ascii_case("false") => Ok(false),
            Ok(_) => Err(DecodeError::at(at, "expected a boolean, found a string")),
            Err(error) => Err(error),
        }
    }

    fn from_json(value: Json, at: &Path<'_>) -> Result<Self, DecodeError> {
        match value {
            Json::Bool(b) => Ok(b),
            Json::String(text) if text.eq_ignore_ascii_case("true") => Ok(true),
            Json::String(text) if text.eq_ignore_ascii_case("false") => Ok(false),
            other => Err(DecodeError::expected(at, "a boolean", &other)),
        }
    }
}

impl ToJson for bool {
    fn to_json(&self) -> Json {
        Json::Bool(*self)
    }
}

impl FromJson for i64 {
    /// A whole number, written as a number or as digits in a string.
    fn read(reader: &mut Reader<'_>, at: &Path<'_>) -> Result<Self, DecodeError> {
        let kind = reader.kind();
        let parsed = match reader.number_or_string(at)? {
            Some((text, true)) => text.trim().parse().ok(),
            Some((text, false)) => text.parse().ok(),
            None => return Err(reader.mismatch(at, "a whole number")),
        };
        parsed.ok_or_else(|| DecodeError::at(at, format!("expected a whole number, found {kind}")))
    }

    fn from_json(value: Json, at: &Path<'_>) -> Result<Self, DecodeError> {
        let parsed = match &value {
            Json::Number(n) => n.as_str().parse().ok(),
            Json::String(text) => text.trim().parse().ok(),
            _ => None,
        };
        parsed.ok_or_else(|| DecodeError::expected(at, "a whole number", &value))
    }
}

impl ToJson for i64 {
    fn to_json(&self) -> Json {
        Json::Number(JsonNumber::from_text(&self.to_string()))
    }
}

impl<T: FromJson> FromJson for Option<T> {
    /// `null` is `None`; an absent field is handled by [`Slot::optional`].
    fn read(reader: &mut Reader<'_>, at: &Path<'_>) -> Result<Self, DecodeError> {
        if reader.null() { Ok(None) } else { T::read(reader, at).map(Some) }
    }

    fn from_json(value: Json, at: &Path<'_>) -> Result<Self, DecodeError> {
        match value {
            Json::Null => Ok(None),
            other => T::from_json(other, at).map(Some),
        }
    }
}

impl<T: ToJson> ToJson for Option<T> {
    fn to_json(&self) -> Json {
        self.as_ref().map_or(Json::Null, ToJson::to_json)
    }
}

impl<T: FromJson> FromJson for Vec<T> {
    /// The items that can be read as `T`; one that cannot is left out and noted
    /// ([`Reader::read_or_note`]), so one odd record does not cost the whole list.
    fn read(reader: &mut Reader<'_>, at: &Path<'_>) -> Result<Self, DecodeError> {
        let mut items = Vec::new();
        reader.array(at, |i, reader| {
            if let Ok(item) = reader.read_or_note(&at.index(i))? {
                items.push(item);
            }
            Ok(())
        })?;
        Ok(items)
    }
}

impl<T: ToJson> ToJson for Vec<T> {
    fn to_json(&self) -> Json {
        Json::Array(self.iter().map(ToJson::to_json).collect())
    }
}

/// One declared field of an object being read into a generated struct: absent, `null`,
/// or its value. The generated `read` keeps one per field and hands it each entry with its
/// key: the first fills it, and a repeat is kept with the unknown fields. It then asks each
/// for its value. A value of another kind than declared leaves the field absent, is kept
/// as it came with the unknown fields, and is noted by the reader: one odd field never
/// costs the rest of an answer.
#[derive(Debug)]
pub struct Slot<T>(SlotState<T>);

#[derive(Debug)]
enum SlotState<T> {
    Absent,
    Null,
    /// A value of another kind than declared, kept with the unknown fields.
    Unread,
    Value(T),
}

impl Slot<String> {
    /// As [`read`](Self::read), for text a service also sends as a number (a listing's
    /// cursor): a number is read as its exact text.
    pub fn read_text(
        &mut self,
        reader: &mut Reader<'_>,
        at: &Path<'_>,
        key: &str,
        rest: &mut JsonObject,
    ) -> Result<(), DecodeError> {
        // Any other kind (`null` included) is read by the rules of every slot.
        if matches!(self.0, SlotState::Absent)
            && let Some((text, _)) = reader.number_or_string(&at.key(key))?
        {
            self.0 = SlotState::Value(text.into_owned());
            return Ok(());
        }
        self.read(reader, at, key, rest)
    }
}

impl<T: FromJson> Slot<T> {
    /// Nothing read yet.
    pub fn new() -> Self {
        Slot(SlotState::Absent)
    }

    /// Fills it from the value the reader is at, the value of `key` in the object at `at`.
    /// (A key repeated in one object stops the read before it comes here; were it
    /// filled already, this value would be kept in `rest`.)
    pub fn read(
        &mut self,
        reader: &mut Reader<'_>,
        at: &Path<'_>,
        key: &str,
        rest: &mut JsonObject,
    ) -> Result<(), DecodeError> {
        if !matches!(self.0, SlotState::Absent) {
            return rest.read_entry(key, reader, at);
        }
        if reader.null() {
            self.0 = SlotState::Null;
            return Ok(());
        }
        match reader.read_or_note(&at.key(key))? {
            Ok(value) => self.0 = SlotState::Value(value),
            Err(as_sent) => {
                self.0 = SlotState::Unread;
                rest.push(key, as_sent);
            }
        }
        Ok(())
    }

    /// The value of a field the spec marks required: present and not `null`.
    pub fn required(self, at: &Path<'_>, key: &str) -> Result<T, DecodeError> {
        match self.0 {
            SlotState::Value(value) => Ok(value),
            SlotState::Absent => {
                Err(DecodeError::at(&at.key(key), "missing, though the spec marks it required"))
            }
            SlotState::Null => Err(DecodeError::at(&at.key(key), "null, though the spec marks it required")),
            SlotState::Unread => Err(DecodeError::at(
                &at.key(key),
                "not of its declared type, though the spec marks it required",
            )),
        }
    }

    /// The value of a field that may be absent or `null`.
    pub fn optional(self) -> Option<T> {
        match self.0 {
            SlotState::Value(value) => Some(value),
            SlotState::Absent | SlotState::Null | SlotState::Unread => None,
        }
    }
}

impl<T: FromJson> Default for Slot<T> {
    fn default() -> Self {
        Self::new()
    }
}

impl JsonObject {
    /// Keeps the entry the reader is at, under `key`, as it came (a field the spec does not
    /// declare).
    pub fn read_entry(
        &mut self,
        key: &str,
        reader: &mut Reader<'_>,
        at: &Path<'_>,
    ) -> Result<(), DecodeError> {
        let value = reader.json(&at.key(key))?;
        self.0.push((Key::new(key), value));
        Ok(())
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

/// Reads any answer type with serde, through its [`FromJson`] rules (what the generated
/// `Deserialize` impls call).
pub fn deserialize_via_json<'de, D: Deserializer<'de>, T: FromJson>(deserializer: D) -> Result<T, D::Error> {
    let value = Json::deserialize(deserializer)?;
    T::from_json(value, &Path::root("value")).map_err(D::Error::custom)
}

/// Writes any answer type with serde, through its [`ToJson`] form (what the generated
/// `Serialize` impls call).
pub fn serialize_via_json<S: serde::Serializer, T: ToJson>(
    value: &T,
    serializer: S,
) -> Result<S::Ok, S::Error> {
    serde::Serialize::serialize(&value.to_json(), serializer)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn numbers_keep_their_text_both_ways() {
        let text = r#"{"a":1500.10,"b":90071992547409.93,"c":[0.10,-5,1e400],"d":"x","e":null,"f":true}"#;
        let value = Json::parse(text).unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(serde_json::to_string(&value).ok().as_deref(), Some(text));
        assert_eq!(value.get("a"), Some(&Json::Number(JsonNumber::from_text("1500.10"))));
    }

    /// A struct read as the generated ones are: a slot per declared field, the rest kept.
    #[derive(Debug, PartialEq)]
    struct Sample {
        id: String,
        n: i64,
        opt: Option<String>,
        other_fields: JsonObject,
    }

    impl FromJson for Sample {
        fn read(reader: &mut Reader<'_>, at: &Path<'_>) -> Result<Self, DecodeError> {
            let (mut id, mut n, mut opt) = (Slot::new(), Slot::new(), Slot::new());
            let mut other_fields = JsonObject::new();
            reader.object(at, |key, reader| match key {
                "id" => id.read(reader, at, key, &mut other_fields),
                "n" => n.read(reader, at, key, &mut other_fields),
                "opt" => opt.read(reader, at, key, &mut other_fields),
                _ => other_fields.read_entry(key, reader, at),
            })?;
            Ok(Sample {
                id: id.required(at, "id")?,
                n: n.required(at, "n")?,
                opt: opt.optional(),
                other_fields,
            })
        }
    }

    fn sample(text: &str) -> Result<Sample, String> {
        let mut reader = Reader::over_checked(text.as_bytes()).map_err(|e| e.to_string())?;
        Sample::read(&mut reader, &Path::root("data")).map_err(|e| e.to_string())
    }

    #[test]
    fn slots_take_what_is_declared_and_keep_the_rest() {
        let read =
            sample(r#"{"id":"t1","n":"12","opt":null,"extra":{"k":1.0}}"#).unwrap_or_else(|e| panic!("{e}"));
        assert_eq!((read.id.as_str(), read.n, read.opt.as_deref()), ("t1", 12, None));
        assert_eq!(
            serde_json::to_string(&Json::Object(read.other_fields)).ok().as_deref(),
            Some(r#"{"extra":{"k":1.0}}"#)
        );
        assert_eq!(sample(r#"{"n":1}"#), Err("`data.id`: missing, though the spec marks it required".into()));
        assert_eq!(
            sample(r#"{"id":null,"n":1}"#),
            Err("`data.id`: null, though the spec marks it required".into())
        );
        assert_eq!(
            sample(r#"{"id":"a","n":true}"#),
            Err("`data.n`: not of its declared type, though the spec marks it required".into())
        );
        // A field of another kind is noted and kept as it came; the rest is read.
        let mut reader =
            Reader::over_checked(br#"{"id":"a","n":1,"opt":[1,{"x":2}]}"#).unwrap_or_else(|e| panic!("{e}"));
        let read = Sample::read(&mut reader, &Path::root("data")).unwrap_or_else(|e| panic!("{e}"));
        assert_eq!((read.id.as_str(), read.n, read.opt.as_deref()), ("a", 1, None));
        assert_eq!(
            read.other_fields.get("opt").and_then(|v| serde_json::to_string(v).ok()).as_deref(),
            Some(r#"[1,{"x":2}]"#)
        );
        let (notes, total) = reader.take_unread();
        assert_eq!(total, 1);
        assert_eq!(
            notes.first().map(ToString::to_string).as_deref(),
            Some("`data.opt`: expected a string, found an array")
        );
        assert_eq!(sample(r#"["id"]"#), Err("`data`: expected an object, found an array".into()));
        // The tree path reads by the same rules.
        let tree = Json::parse(r#"{"n":7,"id":"t2","z":[1]}"#).unwrap_or_default();
        let from_tree = Sample::from_json(tree, &Path::root("data")).map_err(|e| e.to_string());
        assert_eq!(from_tree.as_ref().map(|s| (s.id.as_str(), s.n, s.other_fields.len())), Ok(("t2", 7, 1)));
    }

    #[test]
    fn slots_fill_in_any_order_in_objects_of_any_size_and_a_repeated_key_is_refused() {
        let entries: Vec<String> = (0..70).map(|i| format!(r#""k{i}":{i}"#)).collect();
        let text = format!(r#"{{{},"opt":"late","n":5,"id":"first"}}"#, entries.join(","));
        let read = sample(&text).unwrap_or_else(|e| panic!("{e}"));
        assert_eq!((read.id.as_str(), read.n, read.opt.as_deref()), ("first", 5, Some("late")));
        // Every undeclared key, in the order they came.
        let keys: Vec<&str> = read.other_fields.iter().map(|(k, _)| k).collect();
        let expected: Vec<String> = (0..70).map(|i| format!("k{i}")).collect();
        assert_eq!(keys, expected);
        // A key written twice, among few keys or many, declared or not, plainly or escaped,
        // is not read at all: which of the two counts is a question readers answer apart.
        for repeated in [
            r#"{"id":"first","id":"again"}"#.to_owned(),
            r#"{"id":"x","n":5,"\u006e":6}"#.to_owned(),
            format!(r#"{{{},"id":"x","k69":1}}"#, entries.join(",")),
            r#"{"id":"x","extra":{"a":1,"a":2}}"#.to_owned(),
        ] {
            let mut reader = Reader::over_checked(repeated.as_bytes()).unwrap_or_else(|e| panic!("{e}"));
            let read = Sample::read(&mut reader, &Path::root("data"));
            assert!(read.is_err(), "{repeated}: {read:?}");
            let fault = reader.fault(None).map(|f| f.reason);
            assert_eq!(fault, Some(super::super::json_parse::REPEATED_KEY), "{repeated}");
        }
    }

    #[test]
    fn reading_the_text_and_reading_the_tree_agree() {
        fn both<T: FromJson + PartialEq + fmt::Debug>(text: &str) {
            let at = Path::root("data");
            let tree = Json::parse(text).unwrap_or_else(|e| panic!("{text}: {e}"));
            let from_tree = T::from_json(tree, &at);
            let mut reader = Reader::over_checked(text.as_bytes()).unwrap_or_else(|e| panic!("{text}: {e}"));
            let from_text = T::read(&mut reader, &at);
            assert_eq!(from_text, from_tree, "{text}");
        }
        for text in
            [r#""x""#, r#""\u00e9\n""#, "1", "null", "true", "[]", "{}", r#""TRUE""#, r#"" 42 ""#, "-7"]
        {
            both::<String>(text);
            both::<bool>(text);
            both::<i64>(text);
            both::<Option<i64>>(text);
            both::<Vec<String>>(text);
            both::<Json>(text);
        }
        for text in [r#"["a","b"]"#, r#"[["a"],[]]"#, r#"[1,"2",null]"#, "[[1,2],[3]]"] {
            both::<Vec<String>>(text);
            both::<Vec<Option<i64>>>(text);
            both::<Vec<Vec<i64>>>(text);
        }
    }

    #[test]
    fn errors_name_the_path_and_the_kind_never_the_value() {
        let value = Json::parse(r#"[{"a":"x"},{"a":"secret-value"}]"#).unwrap_or_default();
        let root = Path::root("data");
        let items: Result<Vec<Json>, _> = Vec::from_json(value.clone(), &root);
        assert!(items.is_ok());
        // Items of another kind are left out, one by one; data of another kind is an error.
        let as_numbers: Result<Vec<Vec<i64>>, _> = Vec::from_json(value.clone(), &root);
        assert_eq!(as_numbers, Ok(Vec::new()));
        let object = Json::parse(r#"{"a":"secret-value"}"#).unwrap_or_default();
        let as_list: Result<Vec<i64>, _> = Vec::from_json(object, &root);
        let error = as_list.err().map(|e| e.to_string()).unwrap_or_default();
        assert_eq!(error, "`data`: expected an array, found an object");
        assert!(!error.contains("secret"));
    }
}
