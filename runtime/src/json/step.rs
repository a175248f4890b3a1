//! Stepping over JSON text without building it: an object's entries handed over one by one
//! (an envelope's), a value skipped (checked, or only bracket by bracket), the rest of an object checked, a body checked once while the
//! values at given paths are found, and a value located by its path and read as text.

use std::borrow::Cow;
use std::ops::Range;

use super::parse::{JsonError, KeySet, MAX_DEPTH, Parser, REPEATED_KEY};

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
/// would, without building it; returns where the value itself lies. Unlike [`parse`], it
/// does not look for a key repeated in an object: a repeat ([`REPEATED_KEY`]) is refused
/// where values are read (by [`parse`], the envelope's reading, the `Reader`), and a value
/// that is only checked is never read.
pub(crate) fn span(bytes: &[u8]) -> Result<Range<usize>, JsonError> {
    let mut parser = Parser::new(bytes);
    parser.skip_space();
    let start = parser.at;
    parser.skip(0)?;
    let value = start..parser.at;
    parser.end_of_text()?;
    Ok(value)
}

/// Checks that the `parser`'s text holds one JSON value as [`parse`] reads it (nesting
/// bounded, no key repeated in any object) without building it, finding on the way where
/// the value at each `.`-joined path of keys lies (the first 64 paths; [`locate`] finds any
/// further one): one pass. A webhook's body is checked so once, and read later only where
/// it is asked for.
pub(crate) fn check_finding(
    parser: &mut Parser<'_>,
    paths: &[&str],
) -> Result<Vec<Option<Range<usize>>>, JsonError> {
    parser.at = 0;
    parser.skip_space();
    // Every path's keys in one list, and where each path's keys start and how many.
    let mut keys = Vec::with_capacity(paths.len() * 3);
    let mut spans = Vec::with_capacity(paths.len());
    for path in paths {
        let start = keys.len();
        keys.extend(path.split('.'));
        spans.push((start, keys.len() - start));
    }
    let keys = PathKeys { keys: &keys, spans: &spans };
    let mut found = vec![None; paths.len()];
    let all = if paths.len() >= 64 { u64::MAX } else { (1u64 << paths.len()) - 1 };
    parser.check_on_the_way(0, all, keys, &mut found)?;
    parser.end_of_text()?;
    for (place, path) in found.iter_mut().zip(paths).skip(64) {
        *place = locate(parser, path);
    }
    Ok(found)
}

/// The keys of the paths [`check_finding`] looks for: all in one list, and for each path
/// where its keys start there and how many it has.
#[derive(Clone, Copy)]
struct PathKeys<'k, 's> {
    keys: &'k [&'s str],
    spans: &'k [(usize, usize)],
}

/// In text [`check_finding`] accepted (the `parser`'s, read from its start whatever it read
/// before), where the value at a `.`-joined path of keys lies, each key an entry of the
/// object before it; `None` when a key is missing or a value on the way is not an object.
pub(crate) fn locate(parser: &mut Parser<'_>, path: &str) -> Option<Range<usize>> {
    parser.at = 0;
    parser.skip_space();
    let mut depth = 0;
    let mut keys = path.split('.').peekable();
    'key: while let Some(wanted) = keys.next() {
        if parser.peek() != Some(b'{') {
            return None;
        }
        parser.at += 1;
        depth += 1;
        parser.skip_space();
        if parser.peek() == Some(b'}') {
            return None;
        }
        loop {
            let key = parser.key_colon().ok()?;
            if *key == *wanted {
                if keys.peek().is_some() {
                    continue 'key;
                }
                return parser.skip_unchecked(depth).ok();
            }
            parser.skip_unchecked(depth).ok()?;
            parser.skip_space();
            match parser.peek() {
                Some(b',') => parser.at += 1,
                _ => return None,
            }
        }
    }
    None
}

/// A scalar's text at `range` of the `parser`'s checked text ([`locate`]): a string's
/// (unescaped), a number's or a boolean's as written; `None` for `null`, an object or a
/// list.
pub(crate) fn scalar_text<'a>(parser: &mut Parser<'a>, range: Range<usize>) -> Option<Cow<'a, str>> {
    parser.at = range.start;
    match parser.peek()? {
        b'"' => parser.str().ok(),
        b'-' | b'0'..=b'9' | b't' | b'f' => parser.text(range.start, range.end).ok().map(Cow::Borrowed),
        _ => None,
    }
}

impl<'a> Parser<'a> {
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
    pub(super) fn finish_object(
        &mut self,
        depth: usize,
        before: &[usize],
        flag_key: Option<&str>,
    ) -> Result<Option<bool>, JsonError> {
        // The keys before are gathered only when a key follows (they were read once, so
        // they read again): most objects end after the value.
        let mut keys: Option<KeySet<'a>> = None;
        let mut flag = None;
        while self.next_entry()? {
            let keys = match &mut keys {
                Some(keys) => keys,
                None => {
                    let resume = self.at;
                    let mut set = KeySet::new();
                    for &at in before {
                        self.at = at;
                        let key = self.key_colon()?;
                        set.insert(&key);
                    }
                    self.at = resume;
                    keys.insert(set)
                }
            };
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
    pub(super) fn next_entry(&mut self) -> Result<bool, JsonError> {
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

    /// [`check`](Self::check) of the value at nesting `depth` whose place is the first
    /// `depth` keys of each path of `candidates` (bits over `keys`): where a path's last key
    /// is met, its value's place goes in `found`.
    fn check_on_the_way(
        &mut self,
        depth: usize,
        candidates: u64,
        keys: PathKeys<'_, '_>,
        found: &mut [Option<Range<usize>>],
    ) -> Result<(), JsonError> {
        if candidates == 0 || self.peek() != Some(b'{') {
            return self.check(depth);
        }
        if depth + 1 > MAX_DEPTH {
            return Err(self.error("nested too deeply"));
        }
        self.at += 1;
        self.skip_space();
        if self.peek() == Some(b'}') {
            self.at += 1;
            return Ok(());
        }
        let mut seen = KeySet::new();
        loop {
            self.skip_space();
            let key_at = self.at;
            let key = self.key_colon()?;
            if !seen.insert(&key) {
                return Err(self.error_at(key_at, REPEATED_KEY));
            }
            let (mut deeper, mut here) = (0u64, 0u64);
            let mut left = candidates;
            while left != 0 {
                let i = left.trailing_zeros() as usize;
                left &= left - 1;
                let (first, count) = keys.spans[i];
                if keys.keys.get(first + depth).is_some_and(|k| **k == *key) {
                    if count == depth + 1 { here |= 1 << i } else { deeper |= 1 << i }
                }
            }
            let start = self.at;
            self.check_on_the_way(depth + 1, deeper, keys, found)?;
            while here != 0 {
                let i = here.trailing_zeros() as usize;
                here &= here - 1;
                found[i] = Some(start..self.at);
            }
            self.skip_space();
            match self.peek() {
                Some(b',') => self.at += 1,
                Some(b'}') => {
                    self.at += 1;
                    return Ok(());
                }
                None => return Err(self.error("unexpected end of JSON")),
                Some(_) => return Err(self.error("expected `,` or `}`")),
            }
        }
    }

    /// Steps over one value at nesting `depth`, checking it wholly as [`Parser::value`]
    /// does (no key repeated in any of its objects) without building it. It has the shape of
    /// [`skip`](Self::skip), which compares no keys: one walk for both, made twice by a
    /// const parameter, cost every call's answer 200 instructions (the key set's room in
    /// each frame of the skip), so the two stay apart.
    fn check(&mut self, depth: usize) -> Result<(), JsonError> {
        let Some(open @ (b'{' | b'[')) = self.peek() else { return self.skip(depth) };
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
        let mut keys = KeySet::new();
        loop {
            self.skip_space();
            if object {
                let key_at = self.at;
                let key = self.key_colon()?;
                if !keys.insert(&key) {
                    return Err(self.error_at(key_at, REPEATED_KEY));
                }
            }
            self.check(depth + 1)?;
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
}
