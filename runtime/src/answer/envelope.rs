//! The answer envelope (the keys its spec declares: a code, a description, the data), read
//! once from a success's body: whether the service says done, pending, refused or (for
//! money) neither, and where its data lies, for the typed read to start there.

use std::ops::Range;

use super::outcome::{Envelope, RawData, State};
use crate::error::{Error, ErrorDetail};
use crate::json::{Json, Reader, Unread};
use crate::meta::Meta;
use crate::redact::{self, Secrets};
use crate::service::{Answers, Effect, EnvelopeKeys, EnvelopeKind, Route, SuccessBy};

/// A successful answer: the envelope's code and description are read, and its data is
/// found, to be read straight into the operation's type. A finished answer's data is
/// checked as JSON by that read ([`Reader`] checks all it passes); any other answer's
/// body is checked whole before it is returned.
#[derive(Debug)]
pub(crate) struct RawAnswer {
    pub(crate) status: u16,
    /// The operation answered, for decode errors.
    pub(crate) operation: &'static str,
    /// What the operation does, for errors.
    pub(crate) effect: Effect,
    /// The method that follows the operation by its reference, for errors.
    pub(crate) settle_by_reference: Option<&'static &'static str>,
    pub(crate) code: String,
    pub(crate) description: String,
    /// Where the data lies in `body` (never a `null`).
    pub(crate) data: Option<DataAt>,
    /// How deep the data is nested in `body`: 1 in an envelope, 0 when it is the body.
    pub(crate) data_depth: usize,
    /// How the answer wraps its data.
    pub(crate) envelope: EnvelopeKind,
    /// How the route's answers are read: the values of `data.status` that mean the
    /// operation is still being processed, finished or failed (a finished answer's status
    /// is read with its data, in the same pass).
    pub(crate) answers: &'static Answers,
    /// The data key that holds the operation's state (`status`).
    pub(crate) status_field: &'static str,
    pub(crate) pending: bool,
    /// The envelope's top-level `status` flag, when it came before the data.
    pub(crate) flag: Option<bool>,
    /// The secret parameters of the request answered, removed from any decode error.
    pub(crate) request_secrets: Vec<String>,
    /// The body as it came, for the excerpt of a decode error.
    pub(crate) body: bytes::Bytes,
    /// The answer's headers (moved out of the response, not copied), from the attempt
    /// until the call's record takes them.
    pub(crate) headers: Option<reqwest::header::HeaderMap>,
    /// The call's record, once its attempts are over.
    pub(crate) meta: Option<Meta>,
}

/// The code and description of any answer body (for error statuses): at the keys of
/// `answers.errors` (inside the object it names) where the spec says where an error holds
/// them, else at the envelope's keys. A body that is not a JSON object, or without that
/// object, has neither.
pub(crate) fn peek_code(body: &[u8], answers: &Answers) -> (Option<String>, Option<String>) {
    let (code_keys, description_keys, at) = match (answers.errors, answers.envelope) {
        (Some(errors), _) => (errors.code, errors.description, errors.at),
        (None, EnvelopeKind::Wrapped { keys, .. }) => (keys.code, keys.description, None),
        (None, EnvelopeKind::Unwrapped) => return (None, None),
    };
    let object = match at {
        None => body,
        Some(at) => match object_at(body, at) {
            Some(range) => &body[range],
            None => return (None, None),
        },
    };
    let mut found = EnvelopePeek::default();
    let mut keep = |key: &str, parser: &mut crate::json::Parser<'_>| {
        if !found.keep(code_keys, description_keys, key, parser)? {
            parser.skip(1)?;
        }
        Ok(true)
    };
    if crate::json::parse_entries(object, &mut keep).is_err() {
        return (None, None);
    }
    (found.code(), found.description())
}

/// Where the object at the top-level key `key` of `body` lies, if `body` is an object that
/// holds one there.
fn object_at(body: &[u8], key: &str) -> Option<Range<usize>> {
    let mut place = None;
    let mut find = |name: &str, parser: &mut crate::json::Parser<'_>| {
        if name != key {
            parser.skip(1)?;
            return Ok(true);
        }
        if parser.peek() == Some(b'{') {
            place = Some(parser.skip_unchecked(1)?);
        }
        Ok(false)
    };
    crate::json::parse_entries(body, &mut find).ok()?;
    place
}

/// The envelope's code and description, the first of each of its keys present.
#[derive(Default)]
struct EnvelopePeek {
    code: [Option<String>; EnvelopeKeys::MAX_KEYS],
    description: [Option<String>; EnvelopeKeys::MAX_KEYS],
}

impl EnvelopePeek {
    /// Keeps the value at `key` if it is one of the envelope's code or description keys
    /// and the first of it; skips it otherwise. Whether the key was one of them.
    fn keep(
        &mut self,
        code_keys: &[&str],
        description_keys: &[&str],
        key: &str,
        parser: &mut crate::json::Parser<'_>,
    ) -> Result<bool, crate::json::JsonError> {
        let code = code_keys.iter().take(EnvelopeKeys::MAX_KEYS).position(|k| *k == key);
        let description = description_keys.iter().take(EnvelopeKeys::MAX_KEYS).position(|k| *k == key);
        let slot = match (code, description) {
            (Some(i), _) => &mut self.code[i],
            (None, Some(i)) => &mut self.description[i],
            (None, None) => return Ok(false),
        };
        if slot.is_some() {
            parser.skip(1)?;
            return Ok(true);
        }
        // A description is text; a code may also be a number.
        *slot = match parser.value(1)? {
            Json::String(text) => Some(text),
            Json::Number(number) if code.is_some() => Some(number.as_str().to_owned()),
            Json::Bool(flag) if code.is_some() => Some(flag.to_string()),
            _ => None,
        };
        Ok(true)
    }

    fn code(&mut self) -> Option<String> {
        self.code.iter_mut().find_map(Option::take)
    }

    fn description(&mut self) -> Option<String> {
        self.description.iter_mut().find_map(Option::take)
    }
}

/// Where an answer's data lies in its body.
#[derive(Clone, Debug)]
pub(crate) struct DataAt {
    pub(crate) start: usize,
    /// Where it ends, once found. `None` when the envelope was read only up to its data,
    /// having found all it tells before it (the usual `{code, description, data}`): the
    /// data, and the rest of the envelope after it, are read once, by the typed read.
    pub(crate) end: Option<usize>,
    /// When `end` is `None`: where the envelope's keys before the data start, so that the
    /// read of the rest can refuse a key that repeats one of them.
    pub(crate) keys_before: KeyPlaces,
}

/// The places of the few keys of an envelope before its data, kept inline (no allocation
/// per call): an envelope with more keys before its data is read whole instead.
#[derive(Clone, Copy, Debug, Default)]
pub(crate) struct KeyPlaces {
    at: [usize; KeyPlaces::MAX],
    len: usize,
}

impl KeyPlaces {
    const MAX: usize = 6;

    /// Adds a place; `false` when there is no room left.
    fn push(&mut self, at: usize) -> bool {
        let Some(slot) = self.at.get_mut(self.len) else { return false };
        *slot = at;
        self.len += 1;
        true
    }

    pub(crate) fn as_slice(&self) -> &[usize] {
        &self.at[..self.len]
    }
}

impl RawAnswer {
    /// A reader just before the data.
    pub(crate) fn data_reader<'s>(&'s self, data: &'s DataAt) -> Reader<'s> {
        let flag_key = match self.envelope {
            EnvelopeKind::Wrapped { keys, .. } => keys.flag,
            EnvelopeKind::Unwrapped => None,
        };
        Reader::within(&self.body, data.start, self.data_depth, data.keys_before.as_slice(), flag_key)
    }

    /// Where the data lies, found if need be (for the answers whose data is not read
    /// straight into a type: pending ones, pages, statuses read on their own).
    pub(crate) fn data_range(&self) -> Option<Range<usize>> {
        let data = self.data.as_ref()?;
        match data.end {
            Some(end) => Some(data.start..end),
            None => crate::json::value_at(&self.body, data.start, self.data_depth),
        }
    }

    /// Whether `data.status` names a pending state, read on its own (for an answer whose
    /// data is not read whole, or whose read stopped before its status).
    pub(crate) fn status_pending(&self) -> bool {
        if self.answers.pending_statuses.is_empty() {
            return false;
        }
        let status = self.data_range().and_then(|d| data_status(self.body.get(d)?, self.status_field));
        status.is_some_and(|s| self.is_pending_status(&s))
    }

    /// The text of the data's top-level `key`, when it is a string.
    pub(crate) fn data_text(&self, key: &str) -> Option<String> {
        self.data_range().and_then(|d| data_status(self.body.get(d)?, key))
    }

    /// The data's top-level `key` as a state: its text, or `true` / `false` for a boolean.
    pub(crate) fn data_state(&self, key: &str) -> Option<String> {
        let data = self.data_range().and_then(|d| self.body.get(d))?;
        let mut state = None;
        let mut seen = false;
        let object = crate::json::parse_entries(data, &mut |name, parser| {
            if name == key && !std::mem::replace(&mut seen, true) {
                match parser.peek() {
                    Some(b'"') => state = Some(parser.str()?.into_owned()),
                    Some(b't' | b'f') => state = parser.flag(1)?.map(|flag| flag.to_string()),
                    _ => return parser.skip_unchecked(1).map(|_| true),
                }
                return Ok(true);
            }
            parser.skip_unchecked(1).map(|_| true)
        });
        object.ok().and(state)
    }

    /// The text of the data's state field, read on its own (for data that could not be
    /// read into its type).
    pub(crate) fn status_text(&self) -> Option<String> {
        self.data_range().and_then(|d| data_status(self.body.get(d)?, self.status_field))
    }

    /// The answer as an envelope of `data`, with the data's exact text, what of it could
    /// not be read, and what a pending answer waits on.
    #[inline]
    pub(crate) fn into_envelope<T>(
        self,
        data: Option<T>,
        unread: Unread,
        tail_flag: Option<bool>,
        awaiting: Option<&'static str>,
    ) -> Envelope<T> {
        let range = self.data_range().unwrap_or_default();
        Envelope {
            code: self.code,
            description: self.description,
            data,
            status_flag: self.flag.or(tail_flag),
            unread,
            raw: RawData { body: self.body, range },
            awaiting,
            meta: self.meta.unwrap_or_else(|| Meta::new(self.operation, None)),
        }
    }

    /// Whether `status`, read with the data, names a pending state.
    pub(crate) fn is_pending_status(&self, status: &str) -> bool {
        one_of(self.answers.pending_statuses, status)
    }
}

/// Reads a 2xx answer as the route's [`Answers`] say: success, pending, a refusal, or
/// (for money) an outcome the answer does not settle. The body is checked as JSON once,
/// and its data is not built.
pub(crate) fn read_success<'s>(
    status: u16,
    body: &bytes::Bytes,
    route: &'static Route,
    secrets: &dyn Fn() -> Secrets<'s>,
) -> Result<Box<RawAnswer>, Error> {
    let unreadable = |reason: String| {
        Error::from(ErrorDetail::Decode {
            status,
            operation: route.operation,
            path: None,
            reason,
            excerpt: redact::answer_excerpt(body, &secrets(), route.answers.secret_values),
        })
    };
    let answer =
        |code: String, description: String, data: Option<DataAt>, pending: bool, flag: Option<bool>| {
            Box::new(RawAnswer {
                status,
                operation: route.operation,
                effect: route.effect,
                settle_by_reference: route.settle_by_reference.as_ref(),
                code,
                description,
                data: data.filter(|d| !body.get(d.start..).unwrap_or_default().starts_with(b"null")),
                data_depth: if route.answers.envelope == EnvelopeKind::Unwrapped { 0 } else { 1 },
                envelope: route.answers.envelope,
                answers: route.answers,
                status_field: route.answers.status_field,
                pending,
                flag,
                request_secrets: Vec::new(),
                body: body.clone(),
                headers: None,
                meta: None,
            })
        };
    let keys = match route.answers.envelope {
        EnvelopeKind::Unwrapped => {
            let data = crate::json::span(body).map_err(|e| unreadable(e.to_string()))?;
            // The spec's first success code, else the status: what `Envelope::code` holds.
            let code =
                route.answers.success_codes.first().map_or_else(|| status.to_string(), |c| (*c).to_owned());
            let data = DataAt { start: data.start, end: Some(data.end), keys_before: KeyPlaces::default() };
            return Ok(answer(code, String::new(), Some(data), status == 202, None));
        }
        EnvelopeKind::Wrapped { keys, .. } => keys,
    };
    let (mut peek, data, flag) = match scan_envelope(body, keys) {
        Ok(found) => found,
        Err(error) => {
            // Where a full check places the fault, if it finds one first.
            let error = crate::json::span(body).err().unwrap_or(error);
            return Err(unreadable(error.to_string()));
        }
    };
    let answers = route.answers;
    // What says success: the code, the flag (its text the code when the envelope has no
    // code), or the HTTP status (its number the code when the envelope has none).
    let (code, success) = match keys.success {
        SuccessBy::Code => {
            let Some(code) = peek.code() else {
                return Err(unreadable("the answer has no code".to_owned()));
            };
            let success = answers.success_codes.contains(&code.as_str());
            (code, success)
        }
        SuccessBy::Flag => {
            let Some(said) = flag else {
                let key = keys.flag.unwrap_or_default();
                return Err(unreadable(format!("the answer has no `{key}` flag (true or false)")));
            };
            (peek.code().unwrap_or_else(|| said.to_string()), said)
        }
        SuccessBy::Status => (peek.code().unwrap_or_else(|| status.to_string()), true),
    };
    let description = peek.description().unwrap_or_default();
    // A success's `data.status` is read with its data (`ClientInner::decode_outcome`); any
    // other answer's, here.
    let by_status = || {
        let range = data.as_ref().and_then(|d| match d.end {
            Some(end) => Some(d.start..end),
            None => crate::json::value_at(body, d.start, 1),
        });
        let status = range.and_then(|d| data_status(body.get(d)?, answers.status_field));
        status.is_some_and(|s| one_of(answers.pending_statuses, &s))
    };
    let pending = (status == 202 && success)
        || one_of(answers.pending_codes, &code)
        || one_of(answers.pending_descriptions, &description)
        || (!success && !answers.pending_statuses.is_empty() && by_status());
    let unread_null = data.as_ref().is_some_and(|d| d.end.is_none() && body[d.start..].starts_with(b"null"));
    if pending || !success || unread_null {
        // Only a finished answer's data is read (and so checked) later, with the rest of
        // the envelope after it; any other is checked here, and the keys after its data
        // too, when the envelope was read only up to it.
        crate::json::span(body).map_err(|e| unreadable(e.to_string()))?;
        if let Some(data) = data.as_ref().filter(|d| d.end.is_none()) {
            crate::json::check_tail(body, data.start, 1, data.keys_before.as_slice())
                .map_err(|e| unreadable(e.to_string()))?;
        }
    }
    if pending || success {
        return Ok(answer(code, description, data, pending, flag));
    }
    Err(refused(status, body, route, keys, code, description, secrets))
}

/// What [`scan_envelope`] found: the envelope's own keys, the place of its data, its flag.
type Scanned = (EnvelopePeek, Option<DataAt>, Option<bool>);

/// Where the envelope's own keys are (the first of each, in order of preference, kept as
/// they pass), the place of its data and its flag: the object around them is never built.
/// With the data found and all the envelope says known, the rest is left to the data's
/// read.
fn scan_envelope(body: &[u8], keys: &EnvelopeKeys) -> Result<Scanned, crate::json::JsonError> {
    let (mut peek, mut data, mut flag) = (EnvelopePeek::default(), None, None);
    let mut keys_before = KeyPlaces::default();
    let mut keep = |key: &str, parser: &mut crate::json::Parser<'_>| {
        // With more keys before the data than are kept, the envelope is read whole.
        let room = keys_before.push(parser.entry_key_at());
        if keys.flag == Some(key) && flag.is_none() {
            flag = parser.flag(1)?;
            return Ok(true);
        }
        // Found, not checked: the read into the operation's type checks it, and any
        // other answer is checked whole below.
        if key == keys.data && data.is_none() {
            let start = parser.at();
            // All the envelope says is known once each of its keys it declares has come
            // (the first of each list), and, when its flag says success, the flag.
            let known = (keys.code.is_empty() || peek.code[0].is_some())
                && (keys.description.is_empty() || peek.description[0].is_some())
                && (keys.success != SuccessBy::Flag || flag.is_some());
            if room && known && parser.peek() != Some(b'n') {
                // Nothing later can change what the envelope says; its flag, if it follows
                // the data, is read with the rest of the envelope.
                data = Some(DataAt { start, end: None, keys_before });
                return Ok(false);
            }
            let end = parser.skip_unchecked(1)?.end;
            data = Some(DataAt { start, end: Some(end), keys_before: KeyPlaces::default() });
            return Ok(true);
        }
        if !peek.keep(keys.code, keys.description, key, parser)? {
            parser.skip(1)?;
        }
        Ok(true)
    };
    crate::json::parse_entries(body, &mut keep)?;
    Ok((peek, data, flag))
}

/// A 2xx answer whose envelope does not say success: the reference taken, an outcome a
/// money operation's answer leaves unknown, or the service's refusal, each without the
/// client's secrets.
#[cold]
fn refused<'s>(
    status: u16,
    body: &bytes::Bytes,
    route: &'static Route,
    keys: &EnvelopeKeys,
    code: String,
    description: String,
    secrets: &dyn Fn() -> Secrets<'s>,
) -> Error {
    let answers = route.answers;
    let description = redact::answer_text(&description, &secrets(), route.answers.secret_values);
    if let Some(reason) = reference_taken(body, answers) {
        let excerpt = redact::answer_excerpt(body, &secrets(), route.answers.secret_values);
        return ErrorDetail::ReferenceUsed {
            status,
            code: Some(code),
            description: Some(description),
            reason: Some(redact::answer_text(&reason, &secrets(), route.answers.secret_values).into()),
            excerpt,
        }
        .into();
    }
    // A false flag is the service's own word that it refused; a code is a refusal only
    // when the spec lists it as one.
    let refused = keys.success == SuccessBy::Flag || answers.refusal_codes.contains(&code.as_str());
    if route.effect == Effect::Money && !refused {
        return ErrorDetail::OutcomeUnknown { status, code, description }.into();
    }
    ErrorDetail::Service { code, description }.into()
}

/// Reads where a success-coded answer leaves the operation, from its data's state
/// (`status`, or the field the spec names) and the envelope's `status` flag, as the route's
/// answers say: a pending state is pending, a failed one failed. An operation that lists
/// its success states is done only with one of them (or with no state at all) and a flag
/// that is not `false`; any other state is one the spec does not call final, so it is
/// pending: look it up, never send it again.
pub(crate) fn settled_state(answer: &RawAnswer, status: Option<&str>, flag: Option<bool>) -> State {
    let answers = answer.answers;
    if answer.pending {
        return State::Pending;
    }
    if let Some(status) = status {
        if one_of(answers.pending_statuses, status) {
            return State::Pending;
        }
        if one_of(answers.failed_statuses, status) {
            return State::Failed;
        }
    }
    if answers.success_statuses.is_empty() {
        return State::Done;
    }
    let named_success = status.is_none_or(|s| one_of(answers.success_statuses, s));
    if named_success && flag != Some(false) { State::Done } else { State::Pending }
}

/// Whether a refusal's body says the request's reference was used already (one of the
/// route's `reference_taken` texts, ignoring ASCII case), wherever in the body it stands:
/// the service puts it in the description or in the data's message. `Some` with the JSON
/// string that holds it, as the service wrote it (unescaped; the text alone when it stands
/// in no string).
pub(crate) fn reference_taken(body: &[u8], answers: &Answers) -> Option<String> {
    answers.reference_taken.iter().find_map(|text| {
        let needle = text.as_bytes();
        if needle.is_empty() {
            return None;
        }
        let at = body.windows(needle.len()).position(|window| window.eq_ignore_ascii_case(needle))?;
        Some(enclosing_string(body, at, at + needle.len()).unwrap_or_else(|| (*text).to_owned()))
    })
}

/// The JSON string of `body` around `start..end` (which holds no quote), unescaped.
fn enclosing_string(body: &[u8], start: usize, end: usize) -> Option<String> {
    // A quote not escaped: preceded by an even number of backslashes.
    let unescaped = |i: usize| body[..i].iter().rev().take_while(|b| **b == b'\\').count() % 2 == 0;
    let open = (0..start).rev().find(|&i| body[i] == b'"' && unescaped(i))?;
    let close = (end..body.len()).find(|&i| body[i] == b'"' && unescaped(i))?;
    let quoted = std::str::from_utf8(body.get(open..=close)?).ok()?;
    // A string of a few hundred bytes at most is the service's words; longer is not.
    (quoted.len() <= 512).then(|| serde_json::from_str::<String>(quoted).ok()).flatten()
}

/// The first `awaiting` rule of the route whose field, in the data, holds its text.
pub(crate) fn awaited(answer: &RawAnswer) -> Option<&'static str> {
    answer.answers.awaiting.iter().find_map(|rule| {
        let text = answer.data_text(rule.field)?;
        let (text, needle) = (text.as_bytes(), rule.contains.as_bytes());
        let found = !needle.is_empty() && text.windows(needle.len()).any(|w| w.eq_ignore_ascii_case(needle));
        found.then_some(rule.awaits)
    })
}

#[inline]
pub(crate) fn one_of(list: &[&str], value: &str) -> bool {
    if list.is_empty() {
        return false;
    }
    let value = crate::values::trimmed(value);
    list.iter().any(|item| item.eq_ignore_ascii_case(value))
}

/// The text of `status` in the data, if the data is an object whose first `status` is a
/// string (`status` may be any JSON type; only text can name a pending state). The other
/// values are stepped over unchecked: the data is checked before it is used.
fn data_status(data: &[u8], field: &str) -> Option<String> {
    let mut status = None;
    let mut seen = false;
    let object = crate::json::parse_entries(data, &mut |key, parser| {
        if key == field && !std::mem::replace(&mut seen, true) && parser.peek() == Some(b'"') {
            status = Some(parser.str()?.into_owned());
            return Ok(true);
        }
        parser.skip_unchecked(1).map(|_| true)
    });
    object.ok().and(status)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::service::Answers;

    #[test]
    fn reads_the_first_of_each_envelope_key_present() {
        let plain = route(Effect::Write, &crate::service::fixture::ANSWERS);
        let a = read(200, r#"{"code":"00","description":"ok","data":{"x":1}}"#, &plain);
        let b = read(200, r#"{"responseCode":"00","responseMessage":"ok","data":{"x":1}}"#, &plain);
        let (a, b) = (a.unwrap_or_else(|e| panic!("{e}")), b.unwrap_or_else(|e| panic!("{e}")));
        assert_eq!((a.code.as_str(), a.description.as_str()), ("00", "ok"));
        assert_eq!((b.code.as_str(), b.description.as_str()), ("00", "ok"));
        // A key listed earlier wins wherever it comes.
        let both = read(200, r#"{"message":"m","responseCode":"01","code":"00","data":1}"#, &plain);
        assert!(both.is_ok_and(|a| a.code == "00" && a.description == "m"));
        assert!(
            matches!(read(200, r#"{"data":1}"#, &plain), Err(e) if matches!(e.detail(), ErrorDetail::Decode { .. }))
        );
        assert_eq!(
            peek_code(br#"{"responseCode":"02","message":"bad"}"#, plain.answers),
            (Some("02".to_owned()), Some("bad".to_owned()))
        );
        assert_eq!(peek_code(br#"{"code":"02"}"#, &Answers::PLAIN), (None, None));
        // Other keys before the envelope's, of any kind, are stepped over.
        assert_eq!(
            peek_code(br#"{"data":{"a":[1,{"code":"x"}]},"n":2,"code":"401"}"#, plain.answers),
            (Some("401".to_owned()), None)
        );
        // Another service's keys: only they count.
        static OTHER: EnvelopeKeys = EnvelopeKeys {
            success: SuccessBy::Code,
            code: &["rc"],
            description: &["msg"],
            data: "body",
            flag: None,
        };
        static OTHER_ANSWERS: Answers = Answers {
            success_codes: &["ok"],
            envelope: EnvelopeKind::Wrapped { keys: &OTHER, spelling: 0 },
            ..Answers::PLAIN
        };
        let other = route(Effect::Write, &OTHER_ANSWERS);
        let ok = read(200, r#"{"code":"00","rc":"ok","msg":"fine","body":{"x":1}}"#, &other);
        assert!(ok.is_ok_and(|a| a.code == "ok" && a.description == "fine" && a.data.is_some()));
        assert!(
            matches!(read(200, r#"{"code":"00","data":{}}"#, &other), Err(e) if matches!(e.detail(), ErrorDetail::Decode { .. }))
        );
    }

    static TRANSFER_ANSWERS: Answers = Answers {
        success_codes: &["00", "200"],
        pending_statuses: &["PENDING_BILLING", "NEW"],
        pending_descriptions: &["PROCESSING"],
        ..crate::service::fixture::ANSWERS
    };

    fn route(effect: Effect, answers: &'static Answers) -> Route {
        Route {
            operation: "op",
            group: "g",
            method: crate::Method::Post,
            path: "/x",
            aliases: &[],
            auth: payspec_vocabulary::Auth::BearerAndAccount,
            effect,
            reserved: &[],
            idempotency_header: None,
            answers,
            settle_by_reference: None,
            body: payspec_vocabulary::BodyEncoding::Json,
        }
    }

    fn read(status: u16, body: &str, route: &Route) -> Result<Box<RawAnswer>, Error> {
        // The reader takes a route of the generated code's, which lives as long as the program.
        let route: &'static Route = Box::leak(Box::new(*route));
        read_success(status, &bytes::Bytes::copy_from_slice(body.as_bytes()), route, &Secrets::none)
    }

    /// `{status: true|false, message, data}`: success by the flag, no code.
    static FLAG_KEYS: EnvelopeKeys = EnvelopeKeys {
        success: SuccessBy::Flag,
        code: &[],
        description: &["message"],
        data: "data",
        flag: Some("status"),
    };
    static FLAG_ANSWERS: Answers =
        Answers { envelope: EnvelopeKind::Wrapped { keys: &FLAG_KEYS, spelling: 0 }, ..Answers::PLAIN };
    /// `{message, data}`: every 2xx a success.
    static STATUS_KEYS: EnvelopeKeys = EnvelopeKeys {
        success: SuccessBy::Status,
        code: &[],
        description: &["message"],
        data: "data",
        flag: None,
    };
    static STATUS_ANSWERS: Answers =
        Answers { envelope: EnvelopeKind::Wrapped { keys: &STATUS_KEYS, spelling: 0 }, ..Answers::PLAIN };

    #[test]
    fn an_error_is_read_where_the_spec_says_it_lies() {
        use payspec_vocabulary::ErrorKeys;
        static NESTED: ErrorKeys =
            ErrorKeys { at: Some("error"), code: &["code", "type"], description: &["message"] };
        static TOP: ErrorKeys = ErrorKeys { at: None, code: &["error"], description: &["error_description"] };
        static UNDER: Answers = Answers { errors: Some(&NESTED), ..Answers::PLAIN };
        static BESIDE: Answers = Answers { errors: Some(&TOP), ..Answers::PLAIN };
        let some = |code: &str, description: &str| (Some(code.to_owned()), Some(description.to_owned()));
        let declined =
            br#"{"error":{"type":"card_error","code":"card_declined","message":"Declined.","param":"x"}}"#;
        assert_eq!(peek_code(declined, &UNDER), some("card_declined", "Declined."));
        // The first key present counts: a type where no code is sent.
        let invalid = br#"{"error":{"message":"No such payout","type":"invalid_request_error"}}"#;
        assert_eq!(peek_code(invalid, &UNDER), some("invalid_request_error", "No such payout"));
        let oauth = br#"{"error":"invalid_client","error_description":"Bad secret"}"#;
        assert_eq!(peek_code(oauth, &BESIDE), some("invalid_client", "Bad secret"));
        // Where the object is not there, or the body is not JSON, nothing is read.
        for body in
            [&br#"{"error":"card_declined"}"#[..], b"{}", b"<html>busy</html>", br#"{"error":{"code":"#]
        {
            assert_eq!(peek_code(body, &UNDER), (None, None), "{}", String::from_utf8_lossy(body));
        }
        // An unwrapped answer without `errors` has no keys to read.
        assert_eq!(peek_code(declined, &Answers::PLAIN), (None, None));
    }

    #[test]
    fn a_flag_or_the_status_says_success_where_the_spec_says_so() {
        let money = route(Effect::Money, &FLAG_ANSWERS);
        // The flag before the data: read straight into the data's type, the rest after it.
        let ok = read(200, r#"{"status":true,"message":"Transfer has been queued","data":{"a":1}}"#, &money)
            .unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(
            (ok.code.as_str(), ok.description.as_str(), ok.flag),
            ("true", "Transfer has been queued", Some(true))
        );
        assert!(ok.data.as_ref().is_some_and(|d| d.end.is_none()), "the fast path reads the data once");
        // The flag after the data: the data is stepped over, the flag decides.
        let late = read(200, r#"{"message":"ok","data":[1,2],"status":true}"#, &money);
        assert!(late.is_ok_and(|a| a.code == "true" && a.data.is_some()));
        // A false flag is the service's refusal, never an unknown outcome, even for money.
        let refused = read(200, r#"{"status":false,"message":"Insufficient balance"}"#, &money)
            .err()
            .map(|e| e.detail().clone());
        assert!(
            matches!(&refused, Some(ErrorDetail::Service { code, description }) if code == "false" && description == "Insufficient balance"),
            "{refused:?}"
        );
        // No flag at all: the answer cannot be read, and says which key it lacked.
        let bare = read(200, r#"{"message":"ok","data":{}}"#, &money).err().map(|e| e.to_string());
        assert!(bare.as_deref().is_some_and(|e| e.contains("no `status` flag")), "{bare:?}");
        // The flag as text counts (services write it either way); a number is no flag.
        assert!(
            read(200, r#"{"status":"true","message":"ok","data":{}}"#, &money)
                .is_ok_and(|a| a.code == "true")
        );
        assert!(read(200, r#"{"status":1,"message":"ok","data":{}}"#, &money).is_err());

        // By the HTTP status: any 2xx is a success, its status the code.
        let by_status = route(Effect::Money, &STATUS_ANSWERS);
        let ok = read(201, r#"{"message":"created","data":{"id":"x"}}"#, &by_status);
        assert!(ok.is_ok_and(|a| a.code == "201" && a.description == "created" && a.data.is_some()));
        let no_description = read(200, r#"{"data":{"id":"x"}}"#, &by_status);
        assert!(no_description.is_ok_and(|a| a.code == "200" && a.description.is_empty()));
    }

    #[test]
    fn a_state_is_read_as_text_or_as_a_boolean() {
        let plain = route(Effect::Read, &crate::service::fixture::ANSWERS);
        let state = |data: &str, key: &str| {
            read(200, &format!(r#"{{"code":"00","description":"ok","data":{data}}}"#), &plain)
                .ok()
                .and_then(|a| a.data_state(key))
        };
        assert_eq!(state(r#"{"success":true,"message":"m"}"#, "success").as_deref(), Some("true"));
        assert_eq!(state(r#"{"message":"m","success":false}"#, "success").as_deref(), Some("false"));
        assert_eq!(state(r#"{"success":"true"}"#, "success").as_deref(), Some("true"));
        assert_eq!(state(r#"{"status":"SUCCESS"}"#, "status").as_deref(), Some("SUCCESS"));
        // Not a state: a number, an object, null, or a key nested deeper.
        for data in [
            r#"{"success":1}"#,
            r#"{"success":{"a":true}}"#,
            r#"{"success":null}"#,
            r#"{"a":{"success":true}}"#,
        ] {
            assert_eq!(state(data, "success"), None, "{data}");
        }
    }

    #[test]
    fn classifies_success_pending_and_failure() {
        let plain = route(Effect::Write, &crate::service::fixture::ANSWERS);
        let transfer = route(Effect::Money, &TRANSFER_ANSWERS);
        let ok = read(200, r#"{"code":"00","description":"ok","data":{"a":1}}"#, &plain);
        assert!(ok.is_ok_and(|a| !a.pending && a.data.is_some()));
        let processing = read(
            201,
            r#"{"code":"201","description":"PROCESSING","data":{"status":"PENDING_BILLING"}}"#,
            &transfer,
        );
        assert!(processing.is_ok_and(|a| a.pending));
        // A success's status is read with its data, later; a refusal's, at once.
        let pending_200 =
            read(200, r#"{"code":"00","description":"x","data":{"status":"pending_billing"}}"#, &transfer);
        assert!(pending_200.is_ok_and(|a| !a.pending && a.status_pending()));
        let pending_99 =
            read(200, r#"{"code":"99","description":"x","data":{"n":[1],"status":"NEW"}}"#, &transfer);
        assert!(pending_99.is_ok_and(|a| a.pending));
        let created = read(201, r#"{"code":"00","description":"created","data":{"id":"1"}}"#, &plain);
        assert!(created.is_ok_and(|a| !a.pending));
        let accepted = read(202, r#"{"code":"00","description":"accepted"}"#, &plain);
        assert!(accepted.is_ok_and(|a| a.pending));
        let code_200 =
            read(200, r#"{"code":"200","description":"SUCCESS","data":{"status":"SUCCESS"}}"#, &transfer);
        assert!(code_200.is_ok_and(|a| !a.pending));
        let failed = read(200, r#"{"code":"02","description":"bad amount","data":null}"#, &plain);
        assert!(
            matches!(failed.as_ref().map_err(Error::detail), Err(ErrorDetail::Service { code, .. }) if code == "02")
        );
        let refused = read(200, r#"{"code":"06","description":"do not retry"}"#, &transfer);
        assert!(
            matches!(refused.as_ref().map_err(Error::detail), Err(ErrorDetail::Service { code, .. }) if code == "06")
        );
        let unknown = read(200, r#"{"code":"99","description":"try later"}"#, &transfer);
        assert!(
            matches!(unknown.as_ref().map_err(Error::detail), Err(ErrorDetail::OutcomeUnknown { code, .. }) if code == "99")
        );
        let numeric = read(200, r#"{"code":0,"description":"x"}"#, &plain);
        assert!(
            matches!(numeric.as_ref().map_err(Error::detail), Err(ErrorDetail::Service { code, .. }) if code == "0")
        );
        let bad = read(200, r#"{"code":"00","data":{"access_token":"abcdefgh""#, &plain);
        match bad {
            Err(e) => match e.into_detail() {
                ErrorDetail::Decode { excerpt, .. } => assert!(!excerpt.contains("abcdefgh")),
                other => panic!("expected a decode error, got {other:?}"),
            },
            other => panic!("expected a decode error, got {other:?}"),
        }
    }
}
