//! The JSON value: a tree whose numbers keep the text the service sent, and whose short
//! keys and numbers live inline.

use std::fmt;

/// A JSON value whose numbers keep their exact text: what an untyped answer decodes to,
/// and what a typed answer keeps of the fields the spec does not know.
///
/// ```
/// use payspec_runtime::Json;
///
/// let answer = Json::parse(r#"{"amount": 10000.50, "status": "SUCCESS"}"#)?;
/// // The number keeps the text it was sent with: no float in between.
/// let Some(Json::Number(amount)) = answer.get("amount") else { panic!("a number") };
/// assert_eq!(amount.as_str(), "10000.50");
/// assert_eq!(answer.get("status").and_then(Json::as_str), Some("SUCCESS"));
/// # Ok::<(), payspec_runtime::JsonError>(())
/// ```
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
pub struct JsonObject(pub(super) Vec<(Key, Json)>);

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

    /// Sets `key` to `value`: in its place when the object has it (its first entry), else
    /// at the end. An object built this way never repeats a key.
    pub fn insert(&mut self, key: &str, value: Json) {
        match self.0.iter_mut().find(|(k, _)| k.is(key)) {
            Some((_, slot)) => *slot = value,
            None => self.push(key, value),
        }
    }
}

impl Json {
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
