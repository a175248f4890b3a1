//! One pass from an answer's bytes to a [`Json`] tree: every number keeps its text, keys and
//! short numbers live inline (no allocation), each object and array is allocated once at
//! its final size, and nesting is bounded, so a hostile answer cannot exhaust the stack.

use super::json::{Json, JsonNumber, JsonObject, Key};

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
    let mut parser = Parser { bytes, at: 0, entries: Vec::new(), items: Vec::new() };
    parser.skip_space();
    let value = parser.value(0)?;
    parser.skip_space();
    if parser.at < bytes.len() {
        return Err(parser.error("trailing characters"));
    }
    Ok(value)
}

/// Parses a JSON object that fills `bytes`, handing each top-level entry to `entry`
/// instead of building the object (an envelope keeps three of its keys). `Ok(false)` when
/// the value is valid JSON but not an object.
pub(crate) fn parse_entries(bytes: &[u8], entry: &mut dyn FnMut(Key, Json)) -> Result<bool, JsonError> {
    let mut parser = Parser { bytes, at: 0, entries: Vec::new(), items: Vec::new() };
    parser.skip_space();
    if parser.peek() != Some(b'{') {
        parse(bytes)?;
        return Ok(false);
    }
    parser.at += 1;
    parser.skip_space();
    if parser.peek() == Some(b'}') {
        parser.at += 1;
    } else {
        loop {
            let (key, value) = parser.entry(1)?;
            entry(key, value);
            match parser.peek() {
                Some(b',') => parser.at += 1,
                Some(b'}') => {
                    parser.at += 1;
                    break;
                }
                None => return Err(parser.error("unexpected end of JSON")),
                Some(_) => return Err(parser.error("expected `,` or `}`")),
            }
        }
    }
    parser.skip_space();
    if parser.at < bytes.len() {
        return Err(parser.error("trailing characters"));
    }
    Ok(true)
}

struct Parser<'a> {
    bytes: &'a [u8],
    at: usize,
    /// The entries of the objects being read, innermost last; moved out at each `}`.
    entries: Vec<(Key, Json)>,
    /// The items of the arrays being read, innermost last; moved out at each `]`.
    items: Vec<Json>,
}

impl Parser<'_> {
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

    fn peek(&self) -> Option<u8> {
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

    fn value(&mut self, depth: usize) -> Result<Json, JsonError> {
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
        loop {
            let entry = self.entry(depth)?;
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

    /// One `"key": value` of an object, and the space after it.
    fn entry(&mut self, depth: usize) -> Result<(Key, Json), JsonError> {
        self.skip_space();
        if self.peek() != Some(b'"') {
            return Err(self.error(if self.peek().is_none() {
                "unexpected end of JSON"
            } else {
                "expected a key"
            }));
        }
        let key = self.key()?;
        self.skip_space();
        if self.peek() != Some(b':') {
            return Err(self.error("expected `:`"));
        }
        self.at += 1;
        self.skip_space();
        let value = self.value(depth)?;
        self.skip_space();
        Ok((key, value))
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
        let text =
            std::str::from_utf8(&self.bytes[start..self.at]).map_err(|_| self.error("invalid number"))?;
        Ok(Json::Number(JsonNumber::from_text(text)))
    }

    /// A key: inline when short and plain.
    fn key(&mut self) -> Result<Key, JsonError> {
        let (plain, end) = self.scan_string()?;
        if plain {
            let key = Key::new(self.text(self.at + 1, end)?);
            self.at = end + 1;
            return Ok(key);
        }
        Ok(Key::from(self.string()?))
    }

    fn string(&mut self) -> Result<String, JsonError> {
        let (plain, end) = self.scan_string()?;
        if plain {
            let text = self.text(self.at + 1, end)?.to_owned();
            self.at = end + 1;
            return Ok(text);
        }
        self.escaped_string()
    }

    /// From the opening quote: whether the string has no escape, and where it closes.
    fn scan_string(&self) -> Result<(bool, usize), JsonError> {
        let mut i = self.at + 1;
        let mut plain = true;
        while let Some(&b) = self.bytes.get(i) {
            match b {
                b'"' => return Ok((plain, i)),
                b'\\' => {
                    plain = false;
                    i += 2;
                }
                0..=0x1f => return Err(self.error_at(i, "control character in a string")),
                _ => i += 1,
            }
        }
        Err(self.error("unexpected end of JSON"))
    }

    fn text(&self, from: usize, to: usize) -> Result<&str, JsonError> {
        std::str::from_utf8(&self.bytes[from..to]).map_err(|_| self.error("a string that is not UTF-8"))
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
        let object = parse_entries(br#"{"code":"00","data":{"x":[1]},"code":"01"}"#, &mut |k, _| {
            keys.push(k.as_str().to_owned());
        });
        assert_eq!(object, Ok(true));
        assert_eq!(keys, ["code", "data", "code"]);
        assert_eq!(parse_entries(b"[1]", &mut |_, _| {}), Ok(false));
        assert!(parse_entries(b"{\"a\":1", &mut |_, _| {}).is_err());
    }
}
