//! One pass from an answer's bytes to a [`Json`] tree: every number keeps its text, keys and
//! short numbers live inline (no allocation), each object and array is allocated once at
//! its final size, and nesting is bounded, so a hostile answer cannot exhaust the stack.

use std::borrow::Cow;
use std::collections::HashSet;

use super::value::{Json, JsonNumber, JsonObject, Key};

impl Json {
    /// Parses JSON text, keeping every number's text.
    pub fn parse(text: &str) -> Result<Json, JsonError> {
        parse(text.as_bytes())
    }

    /// Parses JSON bytes (an answer's body), keeping every number's text.
    pub fn parse_bytes(bytes: &[u8]) -> Result<Json, JsonError> {
        parse(bytes)
    }
}

impl From<serde_json::Value> for Json {
    /// The value as it serializes: numbers with the text `serde_json` gives them (already
    /// as exact as the `Value` is).
    fn from(value: serde_json::Value) -> Self {
        Json::parse(&value.to_string()).unwrap_or_default()
    }
}

/// The bytes a string's scan stops at: its closing quote, an escape, and the control
/// characters JSON forbids in strings.
static STRING_STOPS: [bool; 256] = {
    let mut stops = [false; 256];
    let mut b = 0;
    while b < 0x20 {
        stops[b] = true;
        b += 1;
    }
    stops[b'"' as usize] = true;
    stops[b'\\' as usize] = true;
    stops
};

/// Where the first of [`STRING_STOPS`] is in `bytes`: eight bytes at a time, then one by
/// one.
#[inline]
pub(super) fn string_stop(bytes: &[u8]) -> Option<usize> {
    const ONES: u64 = 0x0101_0101_0101_0101;
    const HIGH: u64 = 0x8080_8080_8080_8080;
    let mut chunks = bytes.chunks_exact(8);
    let mut offset = 0;
    for chunk in &mut chunks {
        let mut word = [0; 8];
        word.copy_from_slice(chunk);
        let word = u64::from_le_bytes(word);
        // A byte's high bit is set where it is below 0x20, a quote or a backslash (and
        // maybe above such a byte, which the lowest match comes before).
        let control = word.wrapping_sub(ONES * 0x20) & !word;
        let quote = word ^ (ONES * u64::from(b'"'));
        let quote = quote.wrapping_sub(ONES) & !quote;
        let backslash = word ^ (ONES * u64::from(b'\\'));
        let backslash = backslash.wrapping_sub(ONES) & !backslash;
        let found = (control | quote | backslash) & HIGH;
        if found != 0 {
            return Some(offset + found.trailing_zeros() as usize / 8);
        }
        offset += 8;
    }
    chunks.remainder().iter().position(|&b| STRING_STOPS[usize::from(b)]).map(|n| offset + n)
}

/// Why JSON text whose object repeats a key is refused (the reason a `JsonError` gives).
pub const REPEATED_KEY: &str = "a key repeated in one object (readers differ on which of the two counts)";

/// How many keys of an object [`KeySet`] keeps in a list before it hashes them: more than
/// the objects answers carry (the spec's transaction record has twenty fields).
const FEW_KEYS: usize = 32;

/// The keys of one object met so far. A key met twice makes the answer unreadable: JSON
/// readers differ on which of the two counts (serde_json, Python and JavaScript keep the
/// last, a reader that stops early the first), so the client and a proxy, a log or an
/// audit tool could disagree on what the service said.
pub(crate) struct KeySet<'k> {
    /// One bit per key met (of 64, by its length and its first and last bytes): a key
    /// whose bit is clear is new without a look at the others, as most are.
    bits: u64,
    /// The first keys, borrowed from the text (room kept, not filled, for each object).
    few: arrayvec::ArrayVec<&'k str, FEW_KEYS>,
    /// Past [`FEW_KEYS`] keys, or from the first key written with an escape: all of them,
    /// hashed with a keyed hash (no answer can make the checks slow).
    many: Option<HashSet<Cow<'k, str>>>,
}

impl<'k> KeySet<'k> {
    pub(crate) fn new() -> Self {
        KeySet { bits: 0, few: arrayvec::ArrayVec::new(), many: None }
    }

    /// Adds `key`: `false` when the object had it already. Inlined: it runs for every key
    /// of every object, and its common case (a new key, few so far) is a few instructions.
    #[allow(clippy::ptr_arg, reason = "a key borrowed from the answer is kept without a copy")]
    #[inline]
    pub(crate) fn insert(&mut self, key: &Cow<'k, str>) -> bool {
        if let (None, Cow::Borrowed(text)) = (&self.many, key) {
            let bit = key_bit(text);
            if self.bits & bit != 0 && self.few.contains(text) {
                return false;
            }
            if self.few.try_push(text).is_ok() {
                self.bits |= bit;
                return true;
            }
        }
        self.insert_hashed(key)
    }

    /// [`insert`](Self::insert) past the first keys, or from an escaped key on.
    #[allow(clippy::ptr_arg, reason = "a key borrowed from the answer is kept without a copy")]
    #[cold]
    fn insert_hashed(&mut self, key: &Cow<'k, str>) -> bool {
        let few = &self.few;
        let many = self.many.get_or_insert_with(|| few.iter().map(|key| Cow::Borrowed(*key)).collect());
        many.insert(key.clone())
    }
}

/// A key's bit in [`KeySet::bits`]: from its length and its first and last bytes, which
/// tell the keys of one object apart nearly always.
#[inline]
fn key_bit(key: &str) -> u64 {
    let bytes = key.as_bytes();
    let (first, last) = match bytes {
        [] => (0, 0),
        [first, .., last] => (u32::from(*first), u32::from(*last)),
        [only] => (u32::from(*only), 0),
    };
    let mix = first.wrapping_mul(0x9e37_79b1)
        ^ last.wrapping_mul(0x85eb_ca6b)
        ^ (bytes.len() as u32).wrapping_mul(0xc2b2_ae35);
    1 << ((mix ^ (mix >> 15)) >> 26)
}

/// How deep arrays and objects may nest.
pub(crate) const MAX_DEPTH: usize = 128;

/// Why bytes are not JSON: where, and what kind of problem (never the text itself).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct JsonError {
    /// 1-based line of the problem.
    pub line: usize,
    /// 1-based column (in bytes) of the problem.
    pub column: usize,
    /// What is wrong there.
    pub reason: &'static str,
}

impl std::fmt::Display for JsonError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{} at line {} column {}", self.reason, self.line, self.column)
    }
}

impl std::error::Error for JsonError {}

/// Parses one JSON value that fills `bytes` (whitespace around it allowed).
pub(crate) fn parse(bytes: &[u8]) -> Result<Json, JsonError> {
    let mut parser = Parser::new(bytes);
    parser.skip_space();
    let value = parser.value(0)?;
    parser.end_of_text()?;
    Ok(value)
}

pub(crate) struct Parser<'a> {
    pub(super) bytes: &'a [u8],
    /// `bytes` as text, when they are UTF-8 throughout.
    pub(super) text: Option<&'a str>,
    pub(super) at: usize,
    /// The entries of the objects being read, innermost last; moved out at each `}`.
    pub(super) entries: Vec<(Key, Json)>,
    /// The items of the arrays being read, innermost last; moved out at each `]`.
    pub(super) items: Vec<Json>,
    /// Where the key handed to a [`parse_entries`] callback starts.
    pub(super) entry_key_at: usize,
}

impl<'a> Parser<'a> {
    pub(crate) fn new(bytes: &'a [u8]) -> Self {
        // Text that is UTF-8 throughout (as answers nearly always are) is checked once
        // here, not string by string.
        let text = std::str::from_utf8(bytes).ok();
        Parser { bytes, text, at: 0, entries: Vec::new(), items: Vec::new(), entry_key_at: 0 }
    }

    pub(super) fn error(&self, reason: &'static str) -> JsonError {
        self.error_at(self.at, reason)
    }

    pub(super) fn error_at(&self, at: usize, reason: &'static str) -> JsonError {
        let at = at.min(self.bytes.len());
        let upto = &self.bytes[..at];
        let line = upto.iter().filter(|b| **b == b'\n').count() + 1;
        let column = at - upto.iter().rposition(|b| *b == b'\n').map_or(0, |i| i + 1) + 1;
        JsonError { line, column, reason }
    }

    /// Where the key handed to a [`parse_entries`] callback starts in the text.
    pub(crate) fn entry_key_at(&self) -> usize {
        self.entry_key_at
    }

    /// Where the parser is.
    pub(crate) fn at(&self) -> usize {
        self.at
    }

    pub(crate) fn peek(&self) -> Option<u8> {
        self.bytes.get(self.at).copied()
    }

    pub(super) fn skip_space(&mut self) {
        while let Some(b' ' | b'\n' | b'\r' | b'\t') = self.peek() {
            self.at += 1;
        }
    }

    fn literal(&mut self, word: &'static [u8], value: Json) -> Result<Json, JsonError> {
        if self.bytes[self.at..].starts_with(word) {
            self.at += word.len();
            Ok(value)
        } else {
            Err(self.error("expected a value"))
        }
    }

    pub(crate) fn value(&mut self, depth: usize) -> Result<Json, JsonError> {
        match self.peek() {
            Some(b'{') => self.object(depth + 1),
            Some(b'[') => self.array(depth + 1),
            Some(b'"') => Ok(Json::String(self.string()?)),
            Some(b't') => self.literal(b"true", Json::Bool(true)),
            Some(b'f') => self.literal(b"false", Json::Bool(false)),
            Some(b'n') => self.literal(b"null", Json::Null),
            Some(b'-' | b'0'..=b'9') => self.number(),
            Some(_) => Err(self.error("expected a value")),
            None => Err(self.error("unexpected end of JSON")),
        }
    }

    fn object(&mut self, depth: usize) -> Result<Json, JsonError> {
        if depth > MAX_DEPTH {
            return Err(self.error("nested too deeply"));
        }
        self.at += 1;
        let start = self.entries.len();
        self.skip_space();
        if self.peek() == Some(b'}') {
            self.at += 1;
            return Ok(Json::Object(JsonObject::default()));
        }
        let mut keys = KeySet::new();
        loop {
            let entry = self.entry(depth, &mut keys)?;
            self.entries.push(entry);
            match self.peek() {
                Some(b',') => self.at += 1,
                Some(b'}') => {
                    self.at += 1;
                    let mut entries = Vec::with_capacity(self.entries.len() - start);
                    entries.extend(self.entries.drain(start..));
                    return Ok(Json::Object(JsonObject::from_entries(entries)));
                }
                None => return Err(self.error("unexpected end of JSON")),
                Some(_) => return Err(self.error("expected `,` or `}`")),
            }
        }
    }

    /// One `"key": value` of an object, and the space after it; its key must not be among
    /// `keys`, the object's keys so far.
    fn entry(&mut self, depth: usize, keys: &mut KeySet<'a>) -> Result<(Key, Json), JsonError> {
        self.skip_space();
        let key_at = self.at;
        let key = self.key_colon()?;
        if !keys.insert(&key) {
            return Err(self.error_at(key_at, REPEATED_KEY));
        }
        let key = match key {
            Cow::Borrowed(key) => Key::new(key),
            Cow::Owned(key) => Key::from(key),
        };
        let value = self.value(depth)?;
        self.skip_space();
        Ok((key, value))
    }

    /// An object's key, its `:` and the space after it: borrowed from the text unless it
    /// has escapes.
    pub(crate) fn key_colon(&mut self) -> Result<Cow<'a, str>, JsonError> {
        self.skip_space();
        if self.peek() != Some(b'"') {
            return Err(self.error(if self.peek().is_none() {
                "unexpected end of JSON"
            } else {
                "expected a key"
            }));
        }
        let (plain, end) = self.scan_string()?;
        let key = if plain {
            let key = self.text(self.at + 1, end)?;
            self.at = end + 1;
            Cow::Borrowed(key)
        } else {
            Cow::Owned(self.escaped_string()?)
        };
        self.skip_space();
        if self.peek() != Some(b':') {
            return Err(self.error("expected `:`"));
        }
        self.at += 1;
        self.skip_space();
        Ok(key)
    }

    fn array(&mut self, depth: usize) -> Result<Json, JsonError> {
        if depth > MAX_DEPTH {
            return Err(self.error("nested too deeply"));
        }
        self.at += 1;
        let start = self.items.len();
        self.skip_space();
        if self.peek() == Some(b']') {
            self.at += 1;
            return Ok(Json::Array(Vec::new()));
        }
        loop {
            self.skip_space();
            let value = self.value(depth)?;
            self.items.push(value);
            self.skip_space();
            match self.peek() {
                Some(b',') => self.at += 1,
                Some(b']') => {
                    self.at += 1;
                    let mut items = Vec::with_capacity(self.items.len() - start);
                    items.extend(self.items.drain(start..));
                    return Ok(Json::Array(items));
                }
                None => return Err(self.error("unexpected end of JSON")),
                Some(_) => return Err(self.error("expected `,` or `]`")),
            }
        }
    }

    fn number(&mut self) -> Result<Json, JsonError> {
        Ok(Json::Number(JsonNumber::from_text(self.number_text()?)))
    }

    /// A number's text, checked.
    pub(super) fn number_text(&mut self) -> Result<&'a str, JsonError> {
        let start = self.at;
        let digits = |p: &mut Self| {
            let from = p.at;
            while let Some(b'0'..=b'9') = p.peek() {
                p.at += 1;
            }
            p.at > from
        };
        if self.peek() == Some(b'-') {
            self.at += 1;
        }
        if self.peek() == Some(b'0') {
            self.at += 1;
        } else if !digits(self) {
            return Err(self.error("invalid number"));
        }
        if self.peek() == Some(b'.') {
            self.at += 1;
            if !digits(self) {
                return Err(self.error("invalid number"));
            }
        }
        if let Some(b'e' | b'E') = self.peek() {
            self.at += 1;
            if let Some(b'+' | b'-') = self.peek() {
                self.at += 1;
            }
            if !digits(self) {
                return Err(self.error("invalid number"));
            }
        }
        // ASCII only, so the slice is text.
        self.slice(start, self.at).ok_or_else(|| self.error("invalid number"))
    }

    fn string(&mut self) -> Result<String, JsonError> {
        self.str().map(Cow::into_owned)
    }

    /// A string's text: borrowed unless it has escapes. Inlined where values are read; a
    /// string with escapes is read out of line.
    #[inline]
    pub(crate) fn str(&mut self) -> Result<Cow<'a, str>, JsonError> {
        let (plain, end) = self.scan_string()?;
        if plain {
            let text = self.text(self.at + 1, end)?;
            self.at = end + 1;
            return Ok(Cow::Borrowed(text));
        }
        self.escaped_string().map(Cow::Owned)
    }

    /// Nothing but space from here to the end of the text.
    pub(super) fn end_of_text(&mut self) -> Result<(), JsonError> {
        self.skip_space();
        if self.at < self.bytes.len() {
            return Err(self.error("trailing characters"));
        }
        Ok(())
    }

    /// From the opening quote: whether the string has no escape, and where it closes.
    /// Inlined where strings are read (every key and most values): the call would cost as
    /// much as the scan of a short string. Its errors are made out of line.
    #[inline(always)]
    pub(super) fn scan_string(&self) -> Result<(bool, usize), JsonError> {
        let mut i = self.at + 1;
        let mut plain = true;
        loop {
            let rest = self.bytes.get(i..).unwrap_or_default();
            let Some(n) = string_stop(rest) else {
                return Err(self.cold_error(self.at, "unexpected end of JSON"));
            };
            i += n;
            match rest[n] {
                b'"' => return Ok((plain, i)),
                b'\\' => {
                    plain = false;
                    i += 2;
                }
                _ => return Err(self.cold_error(i, "control character in a string")),
            }
        }
    }

    /// [`error_at`](Self::error_at), kept out of the paths that read good text.
    #[cold]
    #[inline(never)]
    fn cold_error(&self, at: usize, reason: &'static str) -> JsonError {
        self.error_at(at, reason)
    }

    #[inline]
    pub(super) fn text(&self, from: usize, to: usize) -> Result<&'a str, JsonError> {
        self.slice(from, to).ok_or_else(|| self.error("a string that is not UTF-8"))
    }

    /// The text from `from` to `to`, if it is UTF-8 (cut where JSON puts quotes and digits,
    /// which are never inside a character).
    #[inline]
    fn slice(&self, from: usize, to: usize) -> Option<&'a str> {
        match self.text {
            Some(text) => text.get(from..to),
            None => std::str::from_utf8(self.bytes.get(from..to)?).ok(),
        }
    }

    #[inline(never)]
    fn escaped_string(&mut self) -> Result<String, JsonError> {
        self.at += 1;
        let mut out: Vec<u8> = Vec::new();
        loop {
            let Some(b) = self.peek() else { return Err(self.error("unexpected end of JSON")) };
            match b {
                b'"' => {
                    self.at += 1;
                    return String::from_utf8(out).map_err(|_| self.error("a string that is not UTF-8"));
                }
                b'\\' => {
                    self.at += 1;
                    let Some(escape) = self.peek() else { return Err(self.error("unexpected end of JSON")) };
                    self.at += 1;
                    let simple = match escape {
                        b'"' => Some(b'"'),
                        b'\\' => Some(b'\\'),
                        b'/' => Some(b'/'),
                        b'b' => Some(8),
                        b'f' => Some(12),
                        b'n' => Some(b'\n'),
                        b'r' => Some(b'\r'),
                        b't' => Some(b'\t'),
                        b'u' => None,
                        _ => return Err(self.error("invalid escape")),
                    };
                    match simple {
                        Some(byte) => out.push(byte),
                        None => {
                            let c = self.unicode_escape()?;
                            let mut buf = [0; 4];
                            out.extend_from_slice(c.encode_utf8(&mut buf).as_bytes());
                        }
                    }
                }
                0..=0x1f => return Err(self.error("control character in a string")),
                _ => {
                    out.push(b);
                    self.at += 1;
                }
            }
        }
    }

    fn hex4(&mut self) -> Result<u32, JsonError> {
        let digits =
            self.bytes.get(self.at..self.at + 4).ok_or_else(|| self.error("unexpected end of JSON"))?;
        let mut n = 0;
        for d in digits {
            let v = (*d as char).to_digit(16).ok_or_else(|| self.error("invalid escape"))?;
            n = n * 16 + v;
        }
        self.at += 4;
        Ok(n)
    }

    /// The character of a `\u` escape (after the `u`), joining a surrogate pair.
    fn unicode_escape(&mut self) -> Result<char, JsonError> {
        let first = self.hex4()?;
        let code = if (0xD800..0xDC00).contains(&first) {
            if !self.bytes[self.at..].starts_with(b"\\u") {
                return Err(self.error("a lone surrogate in a string"));
            }
            self.at += 2;
            let second = self.hex4()?;
            if !(0xDC00..0xE000).contains(&second) {
                return Err(self.error("a lone surrogate in a string"));
            }
            0x10000 + ((first - 0xD800) << 10) + (second - 0xDC00)
        } else {
            first
        };
        char::from_u32(code).ok_or_else(|| self.error("a lone surrogate in a string"))
    }
}
