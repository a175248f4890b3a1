//! How the standard types are read from an answer ([`FromJson`] for text, flags, integers,
//! options, lists and the untyped [`Json`]), and serde reading through the same rules.

use serde::Deserialize as _;
use serde::de::{Deserializer, Error as _};
use serde_json::value::RawValue;

use super::path::{DecodeError, Path};
use super::reader::{FromJson, Reader};
use super::value::Json;

impl<'de> serde::Deserialize<'de> for Json {
    /// Reads from `serde_json` only (it needs the raw text to keep numbers exact).
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let raw = Box::<RawValue>::deserialize(deserializer)?;
        Json::parse(raw.get()).map_err(D::Error::custom)
    }
}

impl FromJson for Json {
    fn read(reader: &mut Reader<'_>, at: &Path<'_>) -> Result<Self, DecodeError> {
        reader.json(at)
    }

    fn from_json(value: Json, _: &Path<'_>) -> Result<Self, DecodeError> {
        Ok(value)
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

impl<T: FromJson> FromJson for Option<T> {
    /// `null` is `None`; an absent field is handled by `Slot::optional`.
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

/// Reads any answer type with serde, through its [`FromJson`] rules (what the generated
/// `Deserialize` impls call).
pub fn deserialize_via_json<'de, D: Deserializer<'de>, T: FromJson>(deserializer: D) -> Result<T, D::Error> {
    let value = Json::deserialize(deserializer)?;
    T::from_json(value, &Path::root("value")).map_err(D::Error::custom)
}

/// What of an answer's data did not fit its declared types: where, and what came instead
/// (never the value itself). The first [`MAX_UNREAD`](crate::json::MAX_UNREAD) are
/// kept; [`Unread::total`] counts them all.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Unread {
    notes: Vec<DecodeError>,
    total: usize,
}

impl Unread {
    pub(crate) fn new(notes: Vec<DecodeError>, total: usize) -> Self {
        Unread { notes, total }
    }

    /// Whether everything was read.
    pub fn is_empty(&self) -> bool {
        self.total == 0
    }

    /// How many values did not fit, in all.
    pub fn total(&self) -> usize {
        self.total
    }

    /// The values that did not fit, with their paths (`data.items`) and what was wrong.
    pub fn iter(&self) -> impl Iterator<Item = &DecodeError> {
        self.notes.iter()
    }
}

impl std::fmt::Display for Unread {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        for (i, note) in self.notes.iter().enumerate() {
            if i > 0 {
                f.write_str("; ")?;
            }
            write!(f, "{note}")?;
        }
        if self.total > self.notes.len() {
            write!(f, "; and {} more", self.total - self.notes.len())?;
        }
        Ok(())
    }
}
