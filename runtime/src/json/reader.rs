//! Reading an answer straight from its text into typed values: the [`Reader`] and the
//! [`FromJson`] rule every answer type follows.

use std::borrow::Cow;

use super::parse::{JsonError, KeySet, MAX_DEPTH, Parser, REPEATED_KEY};
use super::path::{DecodeError, Path};
use super::value::Json;

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

/// Reads an answer's value straight from its text into a typed value: what
/// [`FromJson::read`] is given. The text was checked as JSON before
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
    status: Option<StatusWatch<'a>>,
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
    /// Where the key of the entry being read starts.
    key_at: usize,
    /// Whether a field's place (a [`Slot`](super::fields::Slot), a [`Seen`](super::fields::Seen) field) took the
    /// entry just read ([`Reader::fields`]).
    claimed: bool,
}

/// How many values that did not fit an answer keeps a note of (the rest are counted).
pub const MAX_UNREAD: usize = 32;

/// Which keys of an object the reader checks for repeats.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Repeats {
    /// Every key, before its value ([`Reader::object`]).
    EveryKey,
    /// The keys no [`Slot`] took, after their value: a slot refuses its own key a second
    /// time ([`Reader::fields`]).
    KeysNoSlotTook,
}

/// What [`Reader::watch_status`] looks for, and what it found.
#[derive(Debug)]
struct StatusWatch<'a> {
    /// The key that holds the state.
    key: &'static str,
    /// The depth of the object's entries.
    depth: usize,
    seen: bool,
    /// Borrowed from the answer's text unless it has escapes.
    text: Option<Cow<'a, str>>,
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
            key_at: 0,
            claimed: false,
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
            key_at: 0,
            claimed: false,
        }
    }

    /// Where the reader is in its text: just past the value it read last.
    /// Notes that a field's place took the entry just read: a repeat of its key is then
    /// the place's to refuse, not the reader's.
    pub(super) fn claim(&mut self) {
        self.claimed = true;
    }

    pub(crate) fn position(&self) -> usize {
        self.parser.at
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
    pub(crate) fn noted_status(&mut self) -> Option<Cow<'a, str>> {
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
    pub fn read_or_note<T: FromJson>(&mut self, at: &Path<'_>) -> Result<Result<T, Json>, DecodeError> {
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
        let value = super::step::span(bytes)?;
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
    #[inline]
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
    #[inline]
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
            _ => Err(self.not_next(at, close)),
        }
    }

    /// Why no `,` or `close` came after an entry (out of the loops' way).
    #[cold]
    #[inline(never)]
    fn not_next(&mut self, at: &Path<'_>, close: u8) -> DecodeError {
        let reason = match (self.parser.peek(), close) {
            (None, _) => "unexpected end of JSON",
            (Some(_), b'}') => "expected `,` or `}`",
            (Some(_), _) => "expected `,` or `]`",
        };
        let error = self.parser.error(reason);
        self.malformed(at, error)
    }

    /// Reads an object, handing each key to `entry`, which must read or skip its value.
    pub fn object(
        &mut self,
        at: &Path<'_>,
        mut entry: impl FnMut(&str, &mut Self) -> Result<(), DecodeError>,
    ) -> Result<(), DecodeError> {
        self.entries_dyn(at, &mut entry, Repeats::EveryKey)
    }

    /// Reads an object of declared fields, as [`object`](Self::object) does, for a
    /// decoder that reads each field into a [`Slot`]: a slot refuses its key a second time
    /// itself, so only the keys no slot takes (kept as they came, in a
    /// [`JsonObject`]) are checked for repeats here, after their value. What generated
    /// decoders call.
    pub fn fields(
        &mut self,
        at: &Path<'_>,
        mut entry: impl FnMut(&str, &mut Self) -> Result<(), DecodeError>,
    ) -> Result<(), DecodeError> {
        self.entries_dyn(at, &mut entry, Repeats::KeysNoSlotTook)
    }

    /// The body of [`object`](Self::object) and [`fields`](Self::fields), compiled once:
    /// every generated decoder hands it its own closure, so the reading is not repeated per
    /// shape.
    fn entries_dyn(
        &mut self,
        at: &Path<'_>,
        entry: &mut dyn FnMut(&str, &mut Self) -> Result<(), DecodeError>,
        repeats: Repeats,
    ) -> Result<(), DecodeError> {
        if !self.enter(at, b'{', "an object")? {
            return Ok(());
        }
        let mut keys = KeySet::new();
        loop {
            let key = self.entry_key(at)?;
            if repeats == Repeats::EveryKey && !keys.insert(&key) {
                return Err(self.repeated_key(at));
            }
            let key_at = self.key_at;
            self.watch(&key);
            self.claimed = false;
            entry(&key, self)?;
            if repeats == Repeats::KeysNoSlotTook && !self.claimed && !keys.insert(&key) {
                self.key_at = key_at;
                return Err(self.repeated_key(at));
            }
            if !self.next(at, b'}')? {
                return Ok(());
            }
        }
    }

    /// The next entry's key (and its colon), its place noted.
    #[inline]
    fn entry_key(&mut self, at: &Path<'_>) -> Result<Cow<'a, str>, DecodeError> {
        self.parser.skip_space();
        self.key_at = self.parser.at;
        let key = self.parser.key_colon();
        self.checked(at, key)
    }

    /// The error of a key met twice in the object at `at`, at the second one.
    pub(crate) fn repeated_key(&mut self, at: &Path<'_>) -> DecodeError {
        let error = self.parser.error_at(self.key_at, REPEATED_KEY);
        self.malformed(at, error)
    }

    /// Notes the watched state ([`Reader::watch_status`]) when `key` is its key.
    #[inline]
    fn watch(&mut self, key: &str) {
        if self.status.as_ref().is_some_and(|w| !w.seen && w.depth == self.depth && *key == *w.key) {
            self.note_status();
        }
    }

    /// Reads the watched state ahead, then leaves the reader where it was: only this value
    /// is read twice. A boolean state reads as `true` or `false` (a card charge's
    /// `status`); any other kind of value notes nothing. Once per answer: kept out of the
    /// object loops.
    #[cold]
    #[inline(never)]
    fn note_status(&mut self) {
        let start = self.parser.at;
        let text = match self.parser.peek() {
            Some(b'"') => self.parser.str().ok(),
            Some(b't' | b'f') => self
                .parser
                .flag(self.depth)
                .ok()
                .flatten()
                .map(|f| Cow::Borrowed(if f { "true" } else { "false" })),
            _ => None,
        };
        self.parser.at = start;
        if let Some(watch) = self.status.as_mut() {
            watch.seen = true;
            watch.text = text;
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
