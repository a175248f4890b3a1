//! Text a request carries: kept inline when short, so that a request built from `&str`
//! values (account numbers, bank codes, references, names) does not allocate for each.

use std::borrow::{Borrow, Cow};
use std::cmp::Ordering;
use std::fmt;
use std::hash::{Hash, Hasher};
use std::ops::Deref;
use std::str::FromStr;

use arrayvec::ArrayString;

/// The longest text kept inline, in bytes.
const INLINE: usize = 30;

/// A string field of a request. It reads as a `&str` (it dereferences to one), converts
/// from `&str`, `String` and the like, and holds up to 30 bytes without an allocation;
/// longer text is kept as the `String` it came as.
///
/// ```
/// use payspec_runtime::Text;
///
/// let bank_code = Text::from("058");
/// assert_eq!(bank_code, "058");
/// assert_eq!(bank_code.len(), 3);
/// let owned: String = bank_code.into();
/// assert_eq!(owned, "058");
/// ```
#[derive(Clone)]
pub struct Text(Repr);

#[derive(Clone)]
enum Repr {
    Inline(ArrayString<INLINE>),
    Heap(String),
}

impl Text {
    /// The empty text.
    pub const fn new() -> Self {
        Text(Repr::Inline(ArrayString::new_const()))
    }

    /// The text as a `&str`.
    pub fn as_str(&self) -> &str {
        match &self.0 {
            // Always the bytes of a whole `&str`, so always UTF-8.
            Repr::Inline(text) => text.as_str(),
            Repr::Heap(text) => text,
        }
    }

    /// The text as a `String` (no copy when it was given as a long `String`).
    pub fn into_string(self) -> String {
        match self.0 {
            Repr::Inline(text) => text.as_str().to_owned(),
            Repr::Heap(text) => text,
        }
    }

    fn inline(text: &str) -> Option<Self> {
        ArrayString::from(text).ok().map(|text| Text(Repr::Inline(text)))
    }
}

impl Default for Text {
    fn default() -> Self {
        Text::new()
    }
}

impl Deref for Text {
    type Target = str;

    fn deref(&self) -> &str {
        self.as_str()
    }
}

impl AsRef<str> for Text {
    fn as_ref(&self) -> &str {
        self.as_str()
    }
}

impl Borrow<str> for Text {
    fn borrow(&self) -> &str {
        self.as_str()
    }
}

impl From<&str> for Text {
    fn from(text: &str) -> Self {
        Text::inline(text).unwrap_or_else(|| Text(Repr::Heap(text.to_owned())))
    }
}

impl From<&String> for Text {
    fn from(text: &String) -> Self {
        Text::from(text.as_str())
    }
}

impl From<String> for Text {
    fn from(text: String) -> Self {
        Text::inline(&text).unwrap_or(Text(Repr::Heap(text)))
    }
}

impl From<Box<str>> for Text {
    fn from(text: Box<str>) -> Self {
        Text::from(String::from(text))
    }
}

impl From<Cow<'_, str>> for Text {
    fn from(text: Cow<'_, str>) -> Self {
        match text {
            Cow::Borrowed(text) => Text::from(text),
            Cow::Owned(text) => Text::from(text),
        }
    }
}

impl From<&Text> for Text {
    fn from(text: &Text) -> Self {
        text.clone()
    }
}

impl From<Text> for String {
    fn from(text: Text) -> Self {
        text.into_string()
    }
}

impl FromStr for Text {
    type Err = std::convert::Infallible;

    fn from_str(text: &str) -> Result<Self, Self::Err> {
        Ok(Text::from(text))
    }
}

impl fmt::Display for Text {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Display::fmt(self.as_str(), f)
    }
}

impl fmt::Debug for Text {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Debug::fmt(self.as_str(), f)
    }
}

impl PartialEq for Text {
    fn eq(&self, other: &Self) -> bool {
        self.as_str() == other.as_str()
    }
}

impl Eq for Text {}

impl PartialOrd for Text {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}

impl Ord for Text {
    fn cmp(&self, other: &Self) -> Ordering {
        self.as_str().cmp(other.as_str())
    }
}

impl Hash for Text {
    /// As the `str` it holds, so that maps keyed by `Text` can be read with a `&str`.
    fn hash<H: Hasher>(&self, state: &mut H) {
        self.as_str().hash(state);
    }
}

macro_rules! eq_with {
    ($($other:ty),*) => {$(
        impl PartialEq<$other> for Text {
            fn eq(&self, other: &$other) -> bool {
                self.as_str() == AsRef::<str>::as_ref(other)
            }
        }
        impl PartialEq<Text> for $other {
            fn eq(&self, other: &Text) -> bool {
                AsRef::<str>::as_ref(self) == other.as_str()
            }
        }
    )*};
}

eq_with!(str, &str, String);

impl serde::Serialize for Text {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.serialize_str(self.as_str())
    }
}

impl<'de> serde::Deserialize<'de> for Text {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct Visitor;

        impl serde::de::Visitor<'_> for Visitor {
            type Value = Text;

            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("a string")
            }

            fn visit_str<E: serde::de::Error>(self, text: &str) -> Result<Text, E> {
                Ok(Text::from(text))
            }

            fn visit_string<E: serde::de::Error>(self, text: String) -> Result<Text, E> {
                Ok(Text::from(text))
            }
        }

        deserializer.deserialize_str(Visitor)
    }
}

/// `text` without the spaces (of any script) around it, as [`str::trim`] has it, looked
/// for only where an end could be one: most texts start and end with a visible ASCII
/// character.
pub(crate) fn trimmed(text: &str) -> &str {
    match text.as_bytes() {
        [first, .., last] if first.is_ascii_graphic() && last.is_ascii_graphic() => text,
        _ => text.trim(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn short_text_is_inline_and_long_text_keeps_its_string() {
        let short = Text::from("0123456789");
        assert!(matches!(short.0, Repr::Inline(text) if text.len() == 10));
        let edge = Text::from("x".repeat(INLINE));
        assert!(matches!(edge.0, Repr::Inline(_)));
        let long = "é".repeat(INLINE);
        let pointer = long.as_ptr();
        let text = Text::from(long);
        assert!(matches!(&text.0, Repr::Heap(s) if s.as_ptr() == pointer));
        assert_eq!(text.chars().count(), INLINE);
        let back = String::from(text);
        assert_eq!(back.as_ptr(), pointer);
    }

    #[test]
    fn reads_compares_and_hashes_as_its_str() {
        use std::collections::HashSet;
        for sample in ["", "058", "Ada Obi", "naïve café ☕", &"z".repeat(100)] {
            let text = Text::from(sample);
            assert_eq!(text.as_str(), sample);
            assert_eq!(text, sample);
            assert_eq!(sample, text);
            assert_eq!(text, sample.to_owned());
            assert_eq!(text.to_string(), sample);
            assert_eq!(format!("{text:?}"), format!("{sample:?}"));
            let set: HashSet<Text> = [text.clone()].into_iter().collect();
            assert!(set.contains(sample));
            let json = serde_json::to_string(&text).unwrap_or_default();
            assert_eq!(json, serde_json::to_string(sample).unwrap_or_default());
            let back: Text = serde_json::from_str(&json).unwrap_or_default();
            assert_eq!(back, text);
        }
        let (a, b) = (Text::from("a"), Text::from(String::from("b")));
        assert_eq!(a.cmp(&b), Ordering::Less);
        assert_eq!(Text::default(), "");
    }

    #[test]
    fn trimmed_is_trim() {
        let ends = ["", " ", "\t", "\n", "\u{a0}", "\u{3000}", "\u{85}", "\u{b}", "x", "é", "-", "\u{1f511}"];
        for start in ends {
            for middle in ["", "a", " ", "1.0", "a b"] {
                for end in ends {
                    let text = format!("{start}{middle}{end}");
                    assert_eq!(super::trimmed(&text), text.trim(), "{text:?}");
                }
            }
        }
    }
}
