//! One pass from an answer's bytes to a [`Json`] tree: every number keeps its text, keys and
//! short numbers live inline (no allocation), each object and array is allocated once at
//! its final size, and nesting is bounded, so a hostile answer cannot exhaust the stack.

use std::borrow::Cow;
use std::collections::HashSet;
use std::ops::Range;

use super::json::{DecodeError, Json, JsonNumber, JsonObject, Key, Path};

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
fn string_stop(bytes: &[u8]) -> Option<usize> {
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

/// Why JSON text whose object repeats a key is refused ([`JsonError::reason`]).
pub const REPEATED_KEY: &str = "a key repeated in one object (readers differ on which of the two counts)";

/// How many keys of an object [`KeySet`] compares one by one before it hashes them.
const FEW_KEYS: usize = 8;

/// The keys of one object met so far. A key met twice makes the answer unreadable: JSON
/// readers differ on which of the two counts (serde_json, Python and JavaScript keep the
/// last, a reader that stops early the first), so the client and a proxy, a log or an
/// audit tool could disagree on what the service said.
pub(crate) struct KeySet<'k> {
    few: [Option<Cow<'k, str>>; FEW_KEYS],
    count: usize,
    /// Past [`FEW_KEYS`] keys: all of them, hashed with a keyed hash (no answer can make
    /// the checks slow).
    many: Option<HashSet<Cow<'k, str>>>,
}

impl<'k> KeySet<'k> {
    pub(crate) fn new() -> Self {
        KeySet { few: [const { None }; FEW_KEYS], count: 0, many: None }
    }

    /// Adds `key`: `false` when the object had it already.
    #[allow(clippy::ptr_arg, reason = "a key borrowed from the answer is kept without a copy")]
    pub(crate) fn insert(&mut self, key: &Cow<'k, str>) -> bool {
        if let Some(many) = &mut self.many {
            return many.insert(key.clone());
        }
        if self.few[..self.count].iter().flatten().any(|seen| seen == key) {
            return false;
        }
        if self.count < FEW_KEYS {
            self.few[self.count] = Some(key.clone());
            self.count += 1;
            return true;
        }
        let mut many: HashSet<Cow<'k, str>> = self.few.iter_mut().filter_map(Option::take).collect();
        many.insert(key.clone());
        self.many = Some(many);
        true
    }
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

/// Reads a JSON object that fills `bytes`, handing each top-level key to `entry`, which
/// reads or skips its value with the parser it is given (an envelope keeps three of its
/// keys and only the place of its `data`), and says whether to go on: the rest of an
/// object whose reading `entry` stops is not read. `Ok(false)` when the value is valid
/// JSON but not an object. A key met twice is an error ([`REPEATED_KEY`]).
pub(crate) fn parse_entries(
    bytes: &[u8],
    entry: &mut dyn FnMut(&str, &mut Parser<'_>) -> Result<bool, JsonError>,
) -> Result<bool, JsonError> {
    let mut parser = Parser::new(bytes);
    parser.skip_space();
    if parser.peek() != Some(b'{') {
        span(bytes)?;
        return Ok(false);
    }
    parser.at += 1;
    parser.skip_space();
    if parser.peek() == Some(b'}') {
        parser.at += 1;
    } else {
        let mut keys = KeySet::new();
        loop {
            parser.skip_space();
            let key_at = parser.at;
            let key = parser.key_colon()?;
            if !keys.insert(&key) {
                return Err(parser.error_at(key_at, REPEATED_KEY));
            }
            parser.entry_key_at = key_at;
            if !entry(&key, &mut parser)? {
                return Ok(true);
            }
            if !parser.next_entry()? {
                break;
            }
        }
    }
    parser.end_of_text()?;
    Ok(true)
}

/// Checks the rest of an object after its value at `start` (nested `depth` deep): its
/// entries are JSON and repeat none of its keys, `before` (the places of the keys before
/// the value) included.
pub(crate) fn check_tail(
    bytes: &[u8],
    start: usize,
    depth: usize,
    before: &[usize],
) -> Result<(), JsonError> {
    let mut parser = Parser::new(bytes);
    parser.at = start;
    parser.skip(depth)?;
    parser.finish_object(depth, before, None).map(|_| ())
}

/// Where the value at `start` in `bytes`, nested `depth` deep, ends, following only its
/// brackets and strings (see [`Parser::skip_unchecked`]).
pub(crate) fn value_at(bytes: &[u8], start: usize, depth: usize) -> Option<Range<usize>> {
    let mut parser = Parser::new(bytes);
    parser.at = start;
    parser.skip_unchecked(depth).ok()
}

/// Checks that `bytes` hold one JSON value (whitespace around it allowed), as [`parse`]
/// would, without building it; returns where the value itself lies.
pub(crate) fn span(bytes: &[u8]) -> Result<Range<usize>, JsonError> {
    let mut parser = Parser::new(bytes);
    parser.skip_space();
    let start = parser.at;
    parser.skip(0)?;
    let value = start..parser.at;
    parser.end_of_text()?;
    Ok(value)
}

pub(crate) struct Parser<'a> {
    bytes: &'a [u8],
    /// `bytes` as text, when they are UTF-8 throughout.
    text: Option<&'a str>,
    at: usize,
    /// The entries of the objects being read, innermost last; moved out at each `}`.
    entries: Vec<(Key, Json)>,
    /// The items of the arrays being read, innermost last; moved out at each `]`.
    items: Vec<Json>,
    /// Where the key handed to a [`parse_entries`] callback starts.
    entry_key_at: usize,
}

impl<'a> Parser<'a> {
    fn new(bytes: &'a [u8]) -> Self {
        // Text that is UTF-8 throughout (as answers nearly always are) is checked once
        // here, not string by string.
        let text = std::str::from_utf8(bytes).ok();
        Parser { bytes, text, at: 0, entries: Vec::new(), items: Vec::new(), entry_key_at: 0 }
    }

    fn error(&self, reason: &'static str) -> JsonError {
        self.error_at(self.at, reason)
    }

    fn error_at(&self, at: usize, reason: &'static str) -> JsonError {
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

    fn skip_space(&mut self) {
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
    fn number_text(&mut self) -> Result<&'a str, JsonError> {
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

    /// A string's text: borrowed unless it has escapes.
    pub(crate) fn str(&mut self) -> Result<Cow<'a, str>, JsonError> {
        let (plain, end) = self.scan_string()?;
        if plain {
            let text = self.text(self.at + 1, end)?;
            self.at = end + 1;
            return Ok(Cow::Borrowed(text));
        }
        self.escaped_string().map(Cow::Owned)
    }

    /// Steps over one value at nesting `depth` following only its brackets and the ends
    /// of its strings, without checking the rest: for a value a [`Reader`] reads (and so
    /// checks) later. Nesting is bounded as [`Parser::value`] bounds it; a scalar is
    /// checked.
    pub(crate) fn skip_unchecked(&mut self, depth: usize) -> Result<Range<usize>, JsonError> {
        let start = self.at;
        if !matches!(self.peek(), Some(b'{' | b'[')) {
            self.skip(depth)?;
            return Ok(start..self.at);
        }
        let bytes = self.bytes;
        let mut nesting = 0;
        let mut i = start;
        loop {
            let rest = bytes.get(i..).unwrap_or_default();
            let Some(n) = rest.iter().position(|b| matches!(b, b'"' | b'{' | b'[' | b'}' | b']')) else {
                self.at = bytes.len();
                return Err(self.error("unexpected end of JSON"));
            };
            i += n;
            match rest[n] {
                b'"' => {
                    self.at = i;
                    let (_, end) = self.scan_string()?;
                    i = end + 1;
                }
                b'{' | b'[' => {
                    nesting += 1;
                    if depth + nesting > MAX_DEPTH {
                        self.at = i;
                        return Err(self.error("nested too deeply"));
                    }
                    i += 1;
                }
                _ => {
                    nesting -= 1;
                    i += 1;
                    if nesting == 0 {
                        self.at = i;
                        return Ok(start..i);
                    }
                }
            }
        }
    }

    /// After a value inside an object at nesting `depth`: the rest of that object (its
    /// other entries, checked) and the end of the text.
    /// Reads the rest of the object around a value at `depth`, to the end of the text,
    /// noting the value at `flag_key` when that is `true` or `false` (as a boolean or as
    /// text): an envelope's top-level flag may come after its data.
    /// `before` are the places of the object's keys that came before the value: no key
    /// after it may repeat one of them, or one another ([`REPEATED_KEY`]).
    fn finish_object(
        &mut self,
        depth: usize,
        before: &[usize],
        flag_key: Option<&str>,
    ) -> Result<Option<bool>, JsonError> {
        let mut keys = KeySet::new();
        let after_value = self.at;
        for &at in before {
            self.at = at;
            let key = self.key_colon()?;
            keys.insert(&key);
        }
        self.at = after_value;
        let mut flag = None;
        while self.next_entry()? {
            self.skip_space();
            let key_at = self.at;
            let key = self.key_colon()?;
            if !keys.insert(&key) {
                return Err(self.error_at(key_at, REPEATED_KEY));
            }
            if flag_key == Some(&*key) && flag.is_none() {
                flag = self.flag(depth)?;
                continue;
            }
            self.skip(depth)?;
        }
        self.end_of_text()?;
        Ok(flag)
    }

    /// A value that says yes or no: `true`, `false`, or the same words as text (the service
    /// writes its envelope's `status` either way); `None` for anything else, stepped over.
    pub(crate) fn flag(&mut self, depth: usize) -> Result<Option<bool>, JsonError> {
        let rest = &self.bytes[self.at..];
        for (word, value) in [(&b"true"[..], true), (&b"false"[..], false)] {
            if rest.starts_with(word) {
                self.at += word.len();
                return Ok(Some(value));
            }
        }
        if self.peek() == Some(b'"') {
            let text = self.str()?;
            return Ok(match text.trim() {
                t if t.eq_ignore_ascii_case("true") => Some(true),
                t if t.eq_ignore_ascii_case("false") => Some(false),
                _ => None,
            });
        }
        self.skip(depth).map(|()| None)
    }

    /// After an object's entry: `true` past a `,`, `false` past the closing `}`.
    fn next_entry(&mut self) -> Result<bool, JsonError> {
        self.skip_space();
        match self.peek() {
            Some(b',') => {
                self.at += 1;
                Ok(true)
            }
            Some(b'}') => {
                self.at += 1;
                Ok(false)
            }
            None => Err(self.error("unexpected end of JSON")),
            Some(_) => Err(self.error("expected `,` or `}`")),
        }
    }

    /// Nothing but space from here to the end of the text.
    fn end_of_text(&mut self) -> Result<(), JsonError> {
        self.skip_space();
        if self.at < self.bytes.len() {
            return Err(self.error("trailing characters"));
        }
        Ok(())
    }

    /// Steps over one value at nesting `depth`, checking it as [`Parser::value`] does.
    pub(crate) fn skip(&mut self, depth: usize) -> Result<(), JsonError> {
        match self.peek() {
            Some(open @ (b'{' | b'[')) => {
                if depth + 1 > MAX_DEPTH {
                    return Err(self.error("nested too deeply"));
                }
                let object = open == b'{';
                let (close, expected) =
                    if object { (b'}', "expected `,` or `}`") } else { (b']', "expected `,` or `]`") };
                self.at += 1;
                self.skip_space();
                if self.peek() == Some(close) {
                    self.at += 1;
                    return Ok(());
                }
                loop {
                    if object {
                        self.key_colon()?;
                    } else {
                        self.skip_space();
                    }
                    self.skip(depth + 1)?;
                    self.skip_space();
                    match self.peek() {
                        Some(b',') => self.at += 1,
                        Some(c) if c == close => {
                            self.at += 1;
                            return Ok(());
                        }
                        None => return Err(self.error("unexpected end of JSON")),
                        Some(_) => return Err(self.error(expected)),
                    }
                }
            }
            Some(b'"') => self.str().map(drop),
            Some(b'-' | b'0'..=b'9') => self.number_text().map(drop),
            _ => self.value(depth).map(drop),
        }
    }

    /// From the opening quote: whether the string has no escape, and where it closes.
    fn scan_string(&self) -> Result<(bool, usize), JsonError> {
        let mut i = self.at + 1;
        let mut plain = true;
        loop {
            let rest = self.bytes.get(i..).unwrap_or_default();
            let Some(n) = string_stop(rest) else {
                return Err(self.error("unexpected end of JSON"));
            };
            i += n;
            match rest[n] {
                b'"' => return Ok((plain, i)),
                b'\\' => {
                    plain = false;
                    i += 2;
                }
                _ => return Err(self.error_at(i, "control character in a string")),
            }
        }
    }

    fn text(&self, from: usize, to: usize) -> Result<&'a str, JsonError> {
        self.slice(from, to).ok_or_else(|| self.error("a string that is not UTF-8"))
    }

    /// The text from `from` to `to`, if it is UTF-8 (cut where JSON puts quotes and digits,
    /// which are never inside a character).
    fn slice(&self, from: usize, to: usize) -> Option<&'a str> {
        match self.text {
            Some(text) => text.get(from..to),
            None => std::str::from_utf8(self.bytes.get(from..to)?).ok(),
        }
    }

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

/// Reads an answer's value straight from its text into a typed value: what
/// [`FromJson::read`](super::FromJson::read) is given. The text was checked as JSON before
/// any reading starts, so the only errors a reader reports are values of the wrong kind,
/// at their path.
pub struct Reader<'a> {
    parser: Parser<'a>,
    /// How deep the value being read sits.
    depth: usize,
    /// The first place where the text was not JSON, if any.
    fault: Option<JsonError>,
    /// The text of the first `status` key of the object at this depth, when it is a
    /// string, noted as the read passes it (see [`Reader::watch_status`]).
    status: Option<StatusWatch>,
    /// The values that did not fit their declared types, stepped over (the first
    /// [`MAX_UNREAD`] of them), and how many there were in all.
    unread: Vec<DecodeError>,
    unread_count: usize,
    /// The `status` flag of the object around the value read, when the rest of that
    /// object was read after it (an envelope's flag that follows its data).
    pub(crate) tail_flag: Option<bool>,
    /// Where the keys of the object around the value that come before it start: none
    /// after the value may repeat them.
    keys_before: &'a [usize],
    /// The key of the flag of the object around the value ([`Reader::tail_flag`]).
    flag_key: Option<&'static str>,
}

/// How many values that did not fit an answer keeps a note of (the rest are counted).
pub const MAX_UNREAD: usize = 32;

/// What [`Reader::watch_status`] looks for, and what it found.
#[derive(Debug)]
struct StatusWatch {
    /// The key that holds the state.
    key: &'static str,
    /// The depth of the object's entries.
    depth: usize,
    seen: bool,
    text: Option<String>,
}

impl<'a> Reader<'a> {
    /// A reader over the JSON value that fills `bytes`.
    pub(crate) fn new(bytes: &'a [u8]) -> Self {
        let mut parser = Parser::new(bytes);
        parser.skip_space();
        Reader {
            parser,
            depth: 0,
            fault: None,
            status: None,
            unread: Vec::new(),
            unread_count: 0,
            tail_flag: None,
            keys_before: &[],
            flag_key: None,
        }
    }

    /// A reader over the value at `start` in `bytes`, nested `depth` levels deep there
    /// (an answer's data is one level down), whose errors give their place in the whole of
    /// `bytes`. `keys_before` are the places of the keys of the object around the value
    /// that come before it; `flag_key` the key of that object's flag, read if it follows.
    pub(crate) fn within(
        bytes: &'a [u8],
        start: usize,
        depth: usize,
        keys_before: &'a [usize],
        flag_key: Option<&'static str>,
    ) -> Self {
        let mut parser = Parser::new(bytes);
        parser.at = start;
        Reader {
            parser,
            depth,
            fault: None,
            status: None,
            unread: Vec::new(),
            unread_count: 0,
            tail_flag: None,
            keys_before,
            flag_key,
        }
    }

    /// Notes the first `status` of the object about to be read, if it is text or a boolean, as the read
    /// passes it: whether a finished answer is still pending is read in the same pass as
    /// the answer.
    pub(crate) fn watch_status(&mut self, key: &'static str) {
        self.status = Some(StatusWatch { key, depth: self.depth + 1, seen: false, text: None });
    }

    /// The `status` noted, if it was text.
    /// A state that is not text (an object, a number) is noted as empty text: a state
    /// the spec cannot name, never the absence of one.
    pub(crate) fn noted_status(&mut self) -> Option<String> {
        self.status
            .take()
            .and_then(|watch| if watch.seen { Some(watch.text.unwrap_or_default()) } else { None })
    }

    /// Where the text was found not to be JSON, if it was. After a whole read, checks
    /// too that the reader stopped at the end of the value it was given (`Some(Some(end))`)
    /// or, when that end was not known (`Some(None)`), reads and checks the rest of the
    /// object around the value, to the end of the text.
    pub(crate) fn fault(&mut self, end: Option<Option<usize>>) -> Option<JsonError> {
        if self.fault.is_none() {
            let rest = match end {
                None => Ok(()),
                Some(Some(end)) if self.parser.at == end => Ok(()),
                Some(Some(_)) => Err(self.parser.error("trailing characters")),
                Some(None) => self
                    .parser
                    .finish_object(self.depth, self.keys_before, self.flag_key)
                    .map(|flag| self.tail_flag = flag),
            };
            self.fault = rest.err();
        }
        self.fault.take()
    }

    /// Reads the value the reader is at as `T`, as far as it can be read: a value of
    /// another kind than declared (anywhere inside it) is not an error but a note
    /// ([`Reader::take_unread`]), and comes back as it was sent, in `Err`. Text that is not
    /// JSON is still an error: nothing after it can be trusted.
    pub fn read_or_note<T: super::json::FromJson>(
        &mut self,
        at: &Path<'_>,
    ) -> Result<Result<T, Json>, DecodeError> {
        let (start, depth) = (self.parser.at, self.depth);
        match T::read(self, at) {
            Ok(value) => Ok(Ok(value)),
            Err(error) => self.keep_unread(at, start, depth, error).map(Err),
        }
    }

    /// After a value did not fit its type: the error again if the text is not JSON, or
    /// else the value as it came, read again from `start`, with the mismatch noted.
    fn keep_unread(
        &mut self,
        at: &Path<'_>,
        start: usize,
        depth: usize,
        mismatch: DecodeError,
    ) -> Result<Json, DecodeError> {
        if self.fault.is_some() {
            return Err(mismatch);
        }
        // Back to where the value starts, to keep it whole (and check it) as it came.
        self.parser.at = start;
        self.depth = depth;
        let value = self.json(at)?;
        self.note_unread(mismatch);
        Ok(value)
    }

    fn note_unread(&mut self, problem: DecodeError) {
        self.unread_count += 1;
        if self.unread.len() < MAX_UNREAD {
            self.unread.push(problem);
        }
    }

    /// What the read noted as not fitting its declared type, and how many such values
    /// there were in all (past [`MAX_UNREAD`], only counted).
    pub fn take_unread(&mut self) -> (Vec<DecodeError>, usize) {
        (std::mem::take(&mut self.unread), std::mem::take(&mut self.unread_count))
    }

    /// A reader over JSON text, checked first.
    #[cfg(test)]
    pub(crate) fn over_checked(bytes: &'a [u8]) -> Result<Self, JsonError> {
        let value = span(bytes)?;
        let mut reader = Reader::new(bytes);
        reader.parser.at = value.start;
        Ok(reader)
    }

    /// Notes where the text stopped being JSON; the error the typed read returns.
    fn malformed(&mut self, at: &Path<'_>, error: JsonError) -> DecodeError {
        let problem = format!("not JSON: {}", error.reason);
        self.fault.get_or_insert(error);
        DecodeError::at(at, problem)
    }

    /// What kind of value comes next, for error messages (never the value itself):
    /// `"not JSON"` when no value starts there.
    pub fn kind(&self) -> &'static str {
        let rest = self.parser.bytes.get(self.parser.at..).unwrap_or_default();
        match rest.first() {
            Some(b'{') => "an object",
            Some(b'[') => "an array",
            Some(b'"') => "a string",
            Some(b't') if rest.starts_with(b"true") => "a boolean",
            Some(b'f') if rest.starts_with(b"false") => "a boolean",
            Some(b'n') if rest.starts_with(b"null") => "null",
            Some(b'-' | b'0'..=b'9') => "a number",
            _ => "not JSON",
        }
    }

    /// The error for a value of the wrong kind at `at`, where `expected` was declared.
    pub fn mismatch(&mut self, at: &Path<'_>, expected: &str) -> DecodeError {
        match self.kind() {
            "not JSON" => {
                let reason =
                    if self.parser.peek().is_none() { "unexpected end of JSON" } else { "expected a value" };
                let error = self.parser.error(reason);
                self.malformed(at, error)
            }
            kind => DecodeError::at(at, format!("expected {expected}, found {kind}")),
        }
    }

    /// Steps over a `null`, if that is what comes next.
    pub fn null(&mut self) -> bool {
        let null = self.parser.bytes[self.parser.at..].starts_with(b"null");
        if null {
            self.parser.at += 4;
        }
        null
    }

    /// The next value as a tree.
    pub fn json(&mut self, at: &Path<'_>) -> Result<Json, DecodeError> {
        let value = self.parser.value(self.depth);
        self.checked(at, value)
    }

    /// Steps over the next value.
    pub fn skip(&mut self, at: &Path<'_>) -> Result<(), DecodeError> {
        let skipped = self.parser.skip(self.depth);
        self.checked(at, skipped)
    }

    fn checked<T>(&mut self, at: &Path<'_>, read: Result<T, JsonError>) -> Result<T, DecodeError> {
        read.map_err(|e| self.malformed(at, e))
    }

    /// The next value as text, if it is a string; `expected` names what was declared.
    pub fn string(&mut self, at: &Path<'_>, expected: &str) -> Result<String, DecodeError> {
        self.str(at, expected).map(Cow::into_owned)
    }

    /// The next value as text, borrowed unless it has escapes, if it is a string.
    pub fn str(&mut self, at: &Path<'_>, expected: &str) -> Result<Cow<'a, str>, DecodeError> {
        if self.parser.peek() != Some(b'"') {
            return Err(self.mismatch(at, expected));
        }
        let text = self.parser.str();
        self.checked(at, text)
    }

    /// The next value's text if it is a number or a string, and whether it was a string
    /// (for amounts and whole numbers, which come either way); `None`, reading nothing,
    /// for any other kind.
    pub fn number_or_string(&mut self, at: &Path<'_>) -> Result<Option<(Cow<'a, str>, bool)>, DecodeError> {
        let read = match self.parser.peek() {
            Some(b'"') => self.parser.str().map(|t| Some((t, true))),
            Some(b'-' | b'0'..=b'9') => self.parser.number_text().map(|t| Some((Cow::Borrowed(t), false))),
            _ => Ok(None),
        };
        self.checked(at, read)
    }

    /// The next value if it is `true` or `false`.
    pub fn boolean(&mut self) -> Option<bool> {
        for (word, value) in [(&b"true"[..], true), (&b"false"[..], false)] {
            if self.parser.bytes[self.parser.at..].starts_with(word) {
                self.parser.at += word.len();
                return Some(value);
            }
        }
        None
    }

    fn enter(&mut self, at: &Path<'_>, open: u8, expected: &str) -> Result<bool, DecodeError> {
        if self.parser.peek() != Some(open) {
            return Err(self.mismatch(at, expected));
        }
        if self.depth + 1 > MAX_DEPTH {
            let error = self.parser.error("nested too deeply");
            return Err(self.malformed(at, error));
        }
        self.parser.at += 1;
        self.parser.skip_space();
        let close = if open == b'{' { b'}' } else { b']' };
        if self.parser.peek() == Some(close) {
            self.parser.at += 1;
            return Ok(false);
        }
        self.depth += 1;
        Ok(true)
    }

    /// After one entry or item: `true` at a `,`, `false` past the closing `close`.
    fn next(&mut self, at: &Path<'_>, close: u8) -> Result<bool, DecodeError> {
        self.parser.skip_space();
        match self.parser.peek() {
            Some(b',') => {
                self.parser.at += 1;
                Ok(true)
            }
            Some(c) if c == close => {
                self.parser.at += 1;
                self.depth -= 1;
                Ok(false)
            }
            _ => {
                let reason = match (self.parser.peek(), close) {
                    (None, _) => "unexpected end of JSON",
                    (Some(_), b'}') => "expected `,` or `}`",
                    (Some(_), _) => "expected `,` or `]`",
                };
                let error = self.parser.error(reason);
                Err(self.malformed(at, error))
            }
        }
    }

    /// Reads an object, handing each key to `entry`, which must read or skip its value.
    pub fn object(
        &mut self,
        at: &Path<'_>,
        mut entry: impl FnMut(&str, &mut Self) -> Result<(), DecodeError>,
    ) -> Result<(), DecodeError> {
        self.object_dyn(at, &mut entry)
    }

    /// [`object`](Self::object)'s body, compiled once: every generated decoder hands it its
    /// own closure, so the reading is not repeated per shape.
    fn object_dyn(
        &mut self,
        at: &Path<'_>,
        entry: &mut dyn FnMut(&str, &mut Self) -> Result<(), DecodeError>,
    ) -> Result<(), DecodeError> {
        if !self.enter(at, b'{', "an object")? {
            return Ok(());
        }
        let mut keys = KeySet::new();
        loop {
            self.parser.skip_space();
            let key_at = self.parser.at;
            let key = self.parser.key_colon();
            let key = self.checked(at, key)?;
            if !keys.insert(&key) {
                let error = self.parser.error_at(key_at, REPEATED_KEY);
                return Err(self.malformed(at, error));
            }
            if let Some(watch) = self.status.as_mut().filter(|w| !w.seen && w.depth == self.depth)
                && *key == *watch.key
            {
                // Read ahead, then again by the entry: only this value is read twice. A
                // boolean state reads as `true` or `false` (a card charge's `status`); any
                // other kind of value notes nothing.
                watch.seen = true;
                let start = self.parser.at;
                match self.parser.peek() {
                    Some(b'"') => watch.text = self.parser.str().ok().map(Cow::into_owned),
                    Some(b't' | b'f') => {
                        watch.text = self.parser.flag(self.depth).ok().flatten().map(|f| f.to_string())
                    }
                    _ => {}
                }
                self.parser.at = start;
            }
            entry(&key, self)?;
            if !self.next(at, b'}')? {
                return Ok(());
            }
        }
    }

    /// Reads an array, handing each item's index to `item`, which must read its value.
    pub fn array(
        &mut self,
        at: &Path<'_>,
        mut item: impl FnMut(usize, &mut Self) -> Result<(), DecodeError>,
    ) -> Result<(), DecodeError> {
        self.array_dyn(at, &mut item)
    }

    /// [`array`](Self::array)'s body, compiled once.
    fn array_dyn(
        &mut self,
        at: &Path<'_>,
        item: &mut dyn FnMut(usize, &mut Self) -> Result<(), DecodeError>,
    ) -> Result<(), DecodeError> {
        if !self.enter(at, b'[', "an array")? {
            return Ok(());
        }
        let mut index = 0;
        loop {
            self.parser.skip_space();
            item(index, self)?;
            index += 1;
            if !self.next(at, b']')? {
                return Ok(());
            }
        }
    }
}

impl std::fmt::Debug for Reader<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        // Never the text: it could hold a secret.
        f.debug_struct("Reader")
            .field("at", &self.parser.at)
            .field("depth", &self.depth)
            .field("fault", &self.fault)
            .finish()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn round_trip(text: &str) -> String {
        let value = parse(text.as_bytes()).unwrap_or_else(|e| panic!("{text}: {e}"));
        serde_json::to_string(&value).unwrap_or_else(|e| panic!("{e}"))
    }

    #[test]
    fn reads_what_serde_json_reads_and_keeps_number_text() {
        for text in [
            r#"{"a":1500.10,"b":-0.5e-3,"c":[true,false,null,0],"d":{"e":"x"},"k":[]}"#,
            r#"{"long key that is well past twenty-two bytes":"v","":1}"#,
            r#"[1,2,[3,[4]]]"#,
            r#""text""#,
            r#"12345678901234567890123456789.123456789"#,
        ] {
            assert_eq!(round_trip(text), text);
        }
        // Escapes, surrogate pairs and whitespace read as serde_json reads them.
        let text = " {\"a\\n\\\"b\" : \"\\u00e9\\ud83d\\ude00\\/\\t\" } ";
        let ours = parse(text.as_bytes()).map(|v| serde_json::to_value(&v).ok());
        let theirs = serde_json::from_str::<serde_json::Value>(text).ok();
        assert_eq!(ours, Ok(theirs));
    }

    #[test]
    fn refuses_what_is_not_json_at_its_place_without_quoting_it() {
        for (text, reason) in [
            ("", "unexpected end of JSON"),
            ("{\"a\":1,}", "expected a key"),
            ("{\"a\" 1}", "expected `:`"),
            ("[1 2]", "expected `,` or `]`"),
            ("01", "trailing characters"),
            ("-", "invalid number"),
            ("1.", "invalid number"),
            ("\"a\\x\"", "invalid escape"),
            ("\"\\ud800\"", "a lone surrogate in a string"),
            ("\"a\nb\"", "control character in a string"),
            ("tru", "expected a value"),
            ("{\"secret-value\":1} x", "trailing characters"),
        ] {
            let error = parse(text.as_bytes()).expect_err(text);
            assert_eq!(error.reason, reason, "{text:?}");
            assert!(!error.to_string().contains("secret"), "{error}");
        }
        let error = parse(b"{\n  \"a\": \xff}").expect_err("not UTF-8");
        assert_eq!((error.line, error.column), (2, 8));
        assert!(parse(b"\"\xc3\x28\"").is_err());
    }

    #[test]
    fn deep_nesting_is_refused_not_a_stack_overflow() {
        let deep = "[".repeat(1_000_000);
        let error = parse(deep.as_bytes()).expect_err("too deep");
        assert_eq!(error.reason, "nested too deeply");
        let ok = format!("{}{}", "[".repeat(MAX_DEPTH), "]".repeat(MAX_DEPTH));
        assert!(parse(ok.as_bytes()).is_ok());
        let objects = "{\"a\":".repeat(MAX_DEPTH + 1);
        assert_eq!(parse(objects.as_bytes()).map_err(|e| e.reason), Err("nested too deeply"));
    }

    #[test]
    fn an_envelope_is_read_entry_by_entry() {
        let mut keys = Vec::new();
        let text = br#"{"code":"00","data":{"x":[1]},"c\u006fde":"01"}"#;
        let object = parse_entries(text, &mut |k, parser| {
            keys.push(k.to_owned());
            parser.skip(1).map(|()| true)
        });
        // A key met twice (here escaped) is refused where it repeats.
        assert_eq!(object.map_err(|e| (e.reason, e.column)), Err((REPEATED_KEY, 31)));
        assert_eq!(keys, ["code", "data"]);
        assert_eq!(parse_entries(b"[1]", &mut |_, p| p.skip(1).map(|()| true)), Ok(false));
        assert!(parse_entries(b"{\"a\":1", &mut |_, p| p.skip(1).map(|()| true)).is_err());
        // The data found without checking it, brackets and quotes in its strings aside.
        let text = br#"{"data" : [1, {"a":"}\"]"}] ,"x":2}"#;
        let mut data = None;
        let found = parse_entries(text, &mut |k, p| {
            if k == "data" {
                data = Some(p.skip_unchecked(1)?);
            } else {
                p.skip(1)?;
            }
            Ok(true)
        });
        assert_eq!(found, Ok(true));
        assert_eq!(data.map(|d| &text[d]), Some(&br#"[1, {"a":"}\"]"}]"#[..]));
        assert_eq!(value_at(text, 10, 1), Some(10..27));
        // A reading stopped at a key leaves the rest unread, even text that is not JSON.
        let mut seen = Vec::new();
        let stopped = parse_entries(br#"{"a":1,"stop":[,,"#, &mut |k, p| {
            seen.push(k.to_owned());
            if k == "stop" { Ok(false) } else { p.skip(1).map(|()| true) }
        });
        assert_eq!((stopped, seen), (Ok(true), vec!["a".to_owned(), "stop".to_owned()]));
    }

    #[test]
    fn the_word_scan_stops_where_the_byte_scan_stops() {
        let mut text: Vec<u8> = (0..=255u8).collect();
        text.extend_from_slice(b"plain text, \xc3\xa9 and more plain text");
        for start in 0..text.len() {
            for end in start..(start + 40).min(text.len()) {
                let slice = &text[start..end];
                let bytewise = slice.iter().position(|&b| b < 0x20 || b == b'"' || b == b'\\');
                assert_eq!(string_stop(slice), bytewise, "{slice:?}");
            }
        }
        for b in 0..=255u8 {
            for at in 0..17 {
                let mut slice = vec![b'a'; 17];
                slice[at] = b;
                let bytewise = slice.iter().position(|&b| b < 0x20 || b == b'"' || b == b'\\');
                assert_eq!(string_stop(&slice), bytewise, "{b} at {at}");
            }
        }
    }

    /// Answers cut short at every byte and with every byte replaced by a character that
    /// matters to JSON: checking without building finds each fault where building does.
    #[test]
    fn checking_without_building_refuses_what_parsing_refuses_at_the_same_place() {
        let sample = br#" {"code":"00","d\u00e9":[true,false,null,-1.5e+3,{"k":"v\n\"q"}],"data":{"amount":"1000.00","n":0,"e":{},"a":[]}} "#;
        let mut cases: Vec<Vec<u8>> = (0..=sample.len()).map(|n| sample[..n].to_vec()).collect();
        for i in 0..sample.len() {
            for b in [b'"', b'{', b'}', b'[', b']', b',', b':', b'\\', b'x', b'0', b'-', 0x01, 0xff] {
                let mut mutated = sample.to_vec();
                mutated[i] = b;
                cases.push(mutated);
            }
        }
        cases.push("[".repeat(MAX_DEPTH + 1).into_bytes());
        cases.push(format!("{}{}", "[".repeat(MAX_DEPTH), "]".repeat(MAX_DEPTH)).into_bytes());
        for case in &cases {
            let built = parse(case).map(drop);
            let checked = span(case).map(drop);
            assert_eq!(checked, built, "{}", String::from_utf8_lossy(case));
        }
        assert_eq!(span(b"  [1, 2]\n"), Ok(2..8));
    }
}
