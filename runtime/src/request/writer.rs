//! Turns an operation's fields into a request: path values (encoded and checked), query
//! pairs, a JSON body with dotted keys nested, and headers.

use std::borrow::Cow;
use std::fmt;
use std::ops::Range;

use percent_encoding::{AsciiSet, NON_ALPHANUMERIC, utf8_percent_encode};
use reqwest::header::{HeaderName, HeaderValue};

use super::rules::{TextRule, at_most};
use crate::error::Error;
use crate::service::{BodyEncoding, Method, Route};

/// Every byte outside RFC 3986's unreserved characters (`A-Z a-z 0-9 - . _ ~`) is encoded,
/// so a value can never add a `/`, `?`, `#` or `%` of its own to the URL.
const COMPONENT: &AsciiSet = &NON_ALPHANUMERIC.remove(b'-').remove(b'.').remove(b'_').remove(b'~');

/// Fields the spec does not know, by dotted wire key (`order.metadata.channel`), sent in
/// the body beside the known ones (in the query string of a GET, which has no body). Keeps
/// insertion order; `Debug` shows keys only, since values may be personal data.
#[derive(Clone, Default)]
pub struct ExtraFields {
    entries: Vec<(String, serde_json::Value)>,
}

impl ExtraFields {
    /// No extra fields.
    pub fn new() -> Self {
        Self::default()
    }

    /// Sets a field by dotted wire key, replacing an earlier value for the same key.
    pub fn insert(&mut self, key: impl Into<String>, value: serde_json::Value) -> &mut Self {
        let key = key.into();
        match self.entries.iter_mut().find(|(k, _)| *k == key) {
            Some(entry) => entry.1 = value,
            None => self.entries.push((key, value)),
        }
        self
    }

    /// Whether no field is set.
    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }

    /// The number of fields.
    pub fn len(&self) -> usize {
        self.entries.len()
    }

    /// The fields, in insertion order.
    pub fn iter(&self) -> impl Iterator<Item = (&str, &serde_json::Value)> {
        self.entries.iter().map(|(k, v)| (k.as_str(), v))
    }
}

impl fmt::Debug for ExtraFields {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_set().entries(self.entries.iter().map(|(k, _)| k)).finish()
    }
}

/// A JSON object being written: each leaf is serialized once, at once, into one buffer
/// (amounts keep their exact text); dotted keys nest. The finished body is written from
/// it in one pass.
#[derive(Default)]
struct BodyObject {
    entries: Vec<(Cow<'static, str>, BodyNode)>,
}

enum BodyNode {
    /// The leaf's JSON text: a range of the writer's buffer.
    Leaf(Range<usize>),
    Object(BodyObject),
}

impl BodyObject {
    /// Places the leaf `value` at `dotted`; `key` makes each segment's key (borrowed when
    /// the key is the generated code's own static text).
    fn insert(
        &mut self,
        dotted: &str,
        key: impl Fn(&str, usize) -> Cow<'static, str>,
        value: Range<usize>,
    ) -> Result<(), Error> {
        let mut object = self;
        let mut offset = 0;
        let mut parts = dotted.split('.').peekable();
        while let Some(part) = parts.next() {
            let at = offset;
            offset += part.len() + 1;
            if part.is_empty() {
                return Err(Error::invalid(format!("the body key `{dotted}` has an empty segment")));
            }
            let position = object.entries.iter().position(|(k, _)| k == part);
            if parts.peek().is_none() {
                if position.is_some() {
                    return Err(set_twice(dotted));
                }
                if object.entries.capacity() == 0 {
                    object.entries.reserve_exact(8);
                }
                object.entries.push((key(part, at), BodyNode::Leaf(value)));
                return Ok(());
            }
            let index = match position {
                Some(i) => i,
                None => {
                    object.entries.push((key(part, at), BodyNode::Object(BodyObject::default())));
                    object.entries.len() - 1
                }
            };
            object = match &mut object.entries[index].1 {
                BodyNode::Object(inner) => inner,
                BodyNode::Leaf(_) => {
                    return Err(Error::invalid(format!(
                        "the body field `{dotted}` is nested under a field that already has a value"
                    )));
                }
            };
        }
        Ok(())
    }

    /// Writes the object, its leaves taken from `leaves`.
    fn write(&self, leaves: &[u8], out: &mut Vec<u8>) -> Result<(), serde_json::Error> {
        out.push(b'{');
        for (i, (key, node)) in self.entries.iter().enumerate() {
            if i > 0 {
                out.push(b',');
            }
            serde_json::to_writer(&mut *out, key.as_ref())?;
            out.push(b':');
            match node {
                BodyNode::Leaf(range) => out.extend_from_slice(&leaves[range.clone()]),
                BodyNode::Object(inner) => inner.write(leaves, out)?,
            }
        }
        out.push(b'}');
        Ok(())
    }

    /// The size of the written object, keys and punctuation included (keys are counted as
    /// their text and quotes; escapes, rare in keys, grow the buffer once).
    fn written_len(&self, leaves: usize) -> usize {
        fn keys(object: &BodyObject) -> usize {
            object
                .entries
                .iter()
                .map(|(k, node)| {
                    k.len() + 4 + if let BodyNode::Object(inner) = node { keys(inner) + 2 } else { 0 }
                })
                .sum()
        }
        leaves + keys(self) + 2
    }
}

/// Collects what an operation's generated `write` says about its request. Every value is
/// checked here, before anything is sent.
pub struct RequestWriter {
    route: &'static Route,
    path_values: Vec<(&'static str, String)>,
    query: Vec<(String, String)>,
    body: Body,
    headers: Vec<(HeaderName, HeaderValue)>,
    idempotency: Option<(HeaderName, HeaderValue)>,
    secrets: Vec<String>,
}

/// The body as written so far.
#[allow(
    clippy::large_enum_variant,
    reason = "a writer lives on the stack while one request is written; a box would cost an allocation per request"
)]
enum Body {
    /// No field yet.
    Empty,
    /// Fields written straight into JSON text, in the order given (see [`Stream`]).
    Stream(Stream),
    /// Fields placed by dotted key in any order, written out when the request is finished.
    Tree { root: BodyObject, leaves: Vec<u8> },
}

/// The most fields a streamed body records; past it the body becomes a tree.
const STREAM_KEYS: usize = 32;

/// A body written as it goes: one buffer, one pass, no tree. It stays so while each key
/// lands in the object its predecessor left open or in a new one, which is the order the
/// generated code gives its keys in. A key that would reopen an object already closed
/// turns it into a tree; one set twice or nested under a value is refused, as a tree
/// refuses it.
struct Stream {
    /// The JSON text, objects still open at its end.
    out: Vec<u8>,
    /// The objects open: the parents of the last key written (`order.customer`).
    open: &'static str,
    /// How many objects are open.
    depth: usize,
    /// Every key written, in order.
    keys: [&'static str; STREAM_KEYS],
    count: usize,
    /// Whether every key written is a top-level one (no dot).
    flat: bool,
}

/// A header name: a lowercase one is used as the static text it is; any other is checked
/// and lowercased (header names are case-insensitive).
fn header_name(name: &'static str) -> Result<HeaderName, Error> {
    if !name.is_empty()
        && name.len() < 1 << 12
        && name.bytes().all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'-')
    {
        Ok(HeaderName::from_static(name))
    } else {
        HeaderName::from_bytes(name.as_bytes())
            .map_err(|_| Error::invalid(format!("`{name}` is not a valid header name")))
    }
}

/// Whether `key` lies inside the object `prefix` (`order.amount` inside `order`).
fn inside(key: &str, prefix: &str) -> bool {
    // The dot first: most keys fail there, before any comparison of text.
    key.len() > prefix.len() && key.as_bytes()[prefix.len()] == b'.' && key.starts_with(prefix)
}

/// The object segments of a dotted key (all but the last).
fn parents(key: &str) -> &str {
    // A byte loop: keys are short, and `rfind` sets up a search for each.
    key.as_bytes().iter().rposition(|&b| b == b'.').map_or("", |dot| &key[..dot])
}

/// How many leading segments two parent paths share.
fn shared_segments(a: &str, b: &str) -> usize {
    if a.is_empty() || b.is_empty() {
        return 0;
    }
    a.split('.').zip(b.split('.')).take_while(|(x, y)| x == y).count()
}

/// The refusal of a body field written twice.
fn set_twice(key: &str) -> Error {
    Error::invalid(format!("the body field `{key}` is set twice"))
}

/// The refusal of a body key with an empty segment.
fn empty_segment(key: &str) -> Error {
    Error::invalid(format!("the body key `{key}` has an empty segment"))
}

/// Whether a dotted body key has an empty segment (`""`, `.a`, `a.`, `a..b`).
fn has_empty_segment(key: &str) -> bool {
    // As if after a dot: a key that starts with one has an empty first segment.
    let mut previous = b'.';
    for &b in key.as_bytes() {
        if b == b'.' && previous == b'.' {
            return true;
        }
        previous = b;
    }
    previous == b'.'
}

/// Writes an object key and its colon.
#[inline]
fn write_key(out: &mut Vec<u8>, key: &str) {
    if key.bytes().all(|b| b >= 0x20 && b != b'"' && b != b'\\') {
        out.reserve(key.len() + 3);
        out.push(b'"');
        out.extend_from_slice(key.as_bytes());
        out.extend_from_slice(b"\":");
    } else {
        // A string always serializes.
        let _ = serde_json::to_writer(&mut *out, key);
        out.push(b':');
    }
}

/// A comma unless the object at the end of `out` is still empty.
#[inline]
fn separate(out: &mut Vec<u8>) {
    if out.last() != Some(&b'{') {
        out.push(b',');
    }
}

/// Writes one value's JSON: the only part of writing a body field that depends on the
/// value's type, so that the rest is compiled once, not once per type.
type WriteJson<'v> = &'v mut dyn FnMut(&mut Vec<u8>) -> serde_json::Result<()>;

/// What a streamed body cannot take without becoming a tree.
enum Unstreamable {
    /// The key would reopen an object already closed, or the record is full.
    NeedsTree,
    Refused(Error),
}

impl Stream {
    fn new() -> Self {
        let mut out = Vec::with_capacity(256);
        out.push(b'{');
        Stream { out, open: "", depth: 0, keys: [""; STREAM_KEYS], count: 0, flat: true }
    }

    fn written(&self) -> &[&'static str] {
        &self.keys[..self.count]
    }

    /// Writes `value` at `dotted`.
    fn push(&mut self, dotted: &'static str, write: WriteJson<'_>) -> Result<(), Unstreamable> {
        if self.flat && !dotted.as_bytes().contains(&b'.') {
            // Every key so far is a top-level one, as most bodies' are: only the same key
            // again is a conflict, and no object opens or closes.
            if dotted.is_empty() {
                return Err(Unstreamable::Refused(empty_segment(dotted)));
            }
            if self.written().contains(&dotted) {
                return Err(Unstreamable::Refused(set_twice(dotted)));
            }
            if self.count == STREAM_KEYS {
                return Err(Unstreamable::NeedsTree);
            }
            let mark = self.out.len();
            return self.write_value(mark, dotted, dotted, "", 0, write);
        }
        if has_empty_segment(dotted) {
            return Err(Unstreamable::Refused(empty_segment(dotted)));
        }
        self.flat = false;
        for key in self.written() {
            if *key == dotted || inside(key, dotted) {
                return Err(Unstreamable::Refused(set_twice(dotted)));
            }
            if inside(dotted, key) {
                return Err(Unstreamable::Refused(Error::invalid(format!(
                    "the body field `{dotted}` is nested under a field that already has a value"
                ))));
            }
        }
        if self.count == STREAM_KEYS {
            return Err(Unstreamable::NeedsTree);
        }
        let wanted = parents(dotted);
        let shared = if wanted == self.open { self.depth } else { shared_segments(self.open, wanted) };
        let wanted_depth =
            if wanted.is_empty() { 0 } else { wanted.bytes().filter(|b| *b == b'.').count() + 1 };
        // Each object to open must be new: one closed before would be written twice.
        if wanted_depth > shared {
            let ends = wanted.match_indices('.').map(|(at, _)| at).chain(std::iter::once(wanted.len()));
            for end in ends.skip(shared) {
                if self.written().iter().any(|key| inside(key, &wanted[..end])) {
                    return Err(Unstreamable::NeedsTree);
                }
            }
        }
        let mark = self.out.len();
        for _ in shared..self.depth {
            self.out.push(b'}');
        }
        if wanted_depth > shared {
            for segment in wanted.split('.').skip(shared) {
                separate(&mut self.out);
                write_key(&mut self.out, segment);
                self.out.push(b'{');
            }
        }
        let last = &dotted[wanted.len() + usize::from(!wanted.is_empty())..];
        self.write_value(mark, dotted, last, wanted, wanted_depth, write)
    }

    /// Writes `last` (the last segment of `dotted`) and its value in the object open at
    /// the end (`wanted`, `wanted_depth` deep), and records the key; on a refusal, the text
    /// goes back to `mark`.
    fn write_value(
        &mut self,
        mark: usize,
        dotted: &'static str,
        last: &str,
        wanted: &'static str,
        wanted_depth: usize,
        write: WriteJson<'_>,
    ) -> Result<(), Unstreamable> {
        separate(&mut self.out);
        write_key(&mut self.out, last);
        if let Err(e) = write(&mut self.out) {
            self.out.truncate(mark);
            // The message is the value's own refusal (an amount's), never the value.
            return Err(Unstreamable::Refused(Error::invalid(format!(
                "the body field `{dotted}` cannot be sent: {e}"
            ))));
        }
        self.keys[self.count] = dotted;
        self.count += 1;
        self.open = wanted;
        self.depth = wanted_depth;
        Ok(())
    }

    /// The finished JSON text: every object closed.
    fn finish(mut self) -> Vec<u8> {
        for _ in 0..=self.depth {
            self.out.push(b'}');
        }
        self.out
    }

    /// The same fields as a tree, each key where it was, for what a stream cannot take.
    fn into_tree(self) -> Result<(BodyObject, Vec<u8>), Error> {
        let keys = self.keys;
        let count = self.count;
        let text = self.finish();
        let parsed = crate::json::Json::parse_bytes(&text)
            .map_err(|e| Error::invalid(format!("the body cannot be read back as JSON ({e})")))?;
        let mut root = BodyObject::default();
        let mut leaves = Vec::with_capacity(text.len());
        for &key in &keys[..count] {
            let value = key
                .split('.')
                .try_fold(&parsed, |node, segment| node.get(segment))
                .ok_or_else(|| Error::invalid(format!("the body field `{key}` was lost while writing")))?;
            let start = leaves.len();
            serde_json::to_writer(&mut leaves, value)
                .map_err(|e| Error::invalid(format!("the body field `{key}` cannot be sent: {e}")))?;
            root.insert(key, static_segment(key), start..leaves.len())?;
        }
        Ok((root, leaves))
    }
}

/// Makes each segment of a static dotted key as borrowed text.
fn static_segment(key: &'static str) -> impl Fn(&str, usize) -> Cow<'static, str> {
    move |_, at| {
        let rest = &key[at..];
        Cow::Borrowed(rest.split('.').next().unwrap_or(rest))
    }
}

impl fmt::Debug for RequestWriter {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("RequestWriter").field("operation", &self.route.operation).finish_non_exhaustive()
    }
}

/// A fully written request, ready to be sent (possibly several times, identically).
#[derive(Clone, Debug)]
pub(crate) struct PreparedRequest {
    pub(crate) route: &'static Route,
    /// The base URL, then the encoded path and query (`/v1/accounts/a%2Fb?limit=10`),
    /// written once for every attempt; `None` when that is the base URL and the route's
    /// path as it is (no variables, no query), which the client keeps parsed.
    pub(crate) url: Option<String>,
    pub(crate) headers: Vec<(HeaderName, HeaderValue)>,
    /// The value of the route's idempotency header, when the request has a key.
    pub(crate) idempotency: Option<(HeaderName, HeaderValue)>,
    /// Written once; each attempt sends the same bytes (a clone is a reference count).
    pub(crate) body: Option<bytes::Bytes>,
    /// The values of the request's secret parameters, removed from any error.
    pub(crate) secrets: Vec<String>,
}

impl RequestWriter {
    /// A writer for one request of `route`.
    pub fn new(route: &'static Route) -> Self {
        RequestWriter {
            route,
            path_values: Vec::new(),
            query: Vec::new(),
            body: Body::Empty,
            headers: Vec::new(),
            idempotency: None,
            secrets: Vec::new(),
        }
    }

    /// Refuses a value above the largest the service accepts (`limit` at most 50).
    pub fn at_most(&mut self, key: &str, value: Option<&i64>, max: i64) -> Result<(), Error> {
        match value {
            Some(value) => at_most(*value, max).map_err(|broken| broken.refusal(key)),
            None => Ok(()),
        }
    }

    /// Refuses a text value the service would refuse, before anything is sent: blank where
    /// the value is required (or is the request's idempotency reference), or not of the
    /// format the vendor states. The message names the key and the rule, never the value.
    pub fn text(&mut self, key: &str, value: Option<&str>, rule: TextRule) -> Result<(), Error> {
        match value {
            Some(value) => rule.check(value).map_err(|broken| broken.refusal(key)),
            None => Ok(()),
        }
    }

    /// Notes the value of a secret parameter (PIN, OTP, card details, BVN), so that the
    /// client removes it from any error or excerpt, in any spelling.
    pub fn secret<T: serde::Serialize + ?Sized>(&mut self, value: &T) {
        match serde_json::to_value(value) {
            Ok(serde_json::Value::String(text)) => self.secrets.push(text),
            Ok(serde_json::Value::Null) | Err(_) => {}
            Ok(other) => self.secrets.push(other.to_string()),
        }
    }

    /// Notes the value of a secret parameter when it is set.
    pub fn secret_opt<T: serde::Serialize>(&mut self, value: Option<&T>) {
        if let Some(v) = value {
            self.secret(v);
        }
    }

    /// Sets a path variable. The value is percent-encoded so it cannot change the route;
    /// empty values, `.` and `..`, and the route's reserved literals are refused.
    pub fn path(&mut self, variable: &'static str, value: &str) -> Result<(), Error> {
        if value.is_empty() {
            return Err(Error::invalid_field(variable, format!("the path value `{variable}` is empty")));
        }
        if value == "." || value == ".." {
            return Err(Error::invalid_field(
                variable,
                format!("the path value `{variable}` is a dot segment, which would change the route"),
            ));
        }
        if let Some(reserved) = self
            .route
            .reserved
            .iter()
            .find(|r| r.variable == variable && r.literal.eq_ignore_ascii_case(value))
        {
            return Err(Error::invalid_field(
                variable,
                format!(
                    "the path value `{variable}` is the reserved word `{}`, which {} would receive instead of {}",
                    reserved.literal, reserved.shadowed_by, self.route.operation
                ),
            ));
        }
        if self.path_values.iter().any(|(v, _)| *v == variable) {
            return Err(Error::invalid(format!("the path value `{variable}` is set twice")));
        }
        self.path_values.push((variable, utf8_percent_encode(value, COMPONENT).to_string()));
        Ok(())
    }

    /// Adds a query pair.
    pub fn query<T: fmt::Display + ?Sized>(&mut self, key: &'static str, value: &T) {
        self.query.push((key.to_owned(), value.to_string()));
    }

    /// Adds a query pair when the value is set.
    pub fn query_opt<T: fmt::Display + ?Sized>(&mut self, key: &'static str, value: Option<&T>) {
        if let Some(v) = value {
            self.query(key, v);
        }
    }

    /// Sets a body field by dotted wire key (`order.amount` nests under `order`). Keys may
    /// come in any order; those that keep each object's keys together (as the generated
    /// code does) are written straight into the body's text.
    pub fn body<T: serde::Serialize + ?Sized>(&mut self, key: &'static str, value: &T) -> Result<(), Error> {
        self.body_json(key, &mut |out| serde_json::to_writer(out, value))
    }

    /// [`body`](Self::body) for an amount: the same JSON number, written from its digits
    /// straight into the body (not read back through serde's raw-value check, as its
    /// serialization must), refused as [`body`](Self::body) refuses it. A money operation's
    /// amount of zero is refused before sending: it would move nothing, and is never what a
    /// caller meant (an amount not yet filled in, a sum of nothing).
    pub fn amount(&mut self, key: &'static str, value: &crate::values::Amount) -> Result<(), Error> {
        self.refuse_zero(key, value)?;
        self.body_json(key, &mut |out| value.write_request_json(out))
    }

    /// [`amount`](Self::amount) for an amount the service reads as a JSON string
    /// (`"1500.00"`), refused alike.
    pub fn amount_text(&mut self, key: &'static str, value: &crate::values::Amount) -> Result<(), Error> {
        self.refuse_zero(key, value)?;
        self.body(key, &value.as_wire_string())
    }

    /// Sets an amount written as a JSON string when it is set.
    pub fn amount_text_opt(
        &mut self,
        key: &'static str,
        value: Option<&crate::values::Amount>,
    ) -> Result<(), Error> {
        match value {
            Some(v) => self.amount_text(key, v),
            None => Ok(()),
        }
    }

    /// A money operation's amount of zero, refused.
    fn refuse_zero(&self, key: &'static str, value: &crate::values::Amount) -> Result<(), Error> {
        if self.route.effect == crate::service::Effect::Money && value.as_decimal().is_zero() {
            return Err(Error::invalid_field(
                key,
                format!(
                    "`{}` moves money and its amount is 0: give the amount to move (greater than 0)",
                    self.route.operation
                ),
            ));
        }
        Ok(())
    }

    /// Sets an amount when it is set.
    pub fn amount_opt(
        &mut self,
        key: &'static str,
        value: Option<&crate::values::Amount>,
    ) -> Result<(), Error> {
        match value {
            Some(v) => self.amount(key, v),
            None => Ok(()),
        }
    }

    /// [`body`](Self::body) for any value: where the field goes, written by `write`.
    fn body_json(&mut self, key: &'static str, write: WriteJson<'_>) -> Result<(), Error> {
        if matches!(self.body, Body::Empty) {
            self.body = Body::Stream(Stream::new());
        }
        if let Body::Stream(stream) = &mut self.body {
            // The stream checks the key's segments.
            match stream.push(key, &mut *write) {
                Ok(()) => return Ok(()),
                Err(Unstreamable::Refused(e)) => return Err(e),
                Err(Unstreamable::NeedsTree) => self.make_tree()?,
            }
        } else if has_empty_segment(key) {
            return Err(empty_segment(key));
        }
        // The generated key is static text: its segments are borrowed, never copied.
        self.body_leaf(key, write, static_segment(key))
    }

    /// Turns a streamed body into a tree, for keys in an order a stream cannot take.
    fn make_tree(&mut self) -> Result<(), Error> {
        let (root, leaves) = match std::mem::replace(&mut self.body, Body::Empty) {
            Body::Stream(stream) => stream.into_tree()?,
            Body::Empty => (BodyObject::default(), Vec::new()),
            tree @ Body::Tree { .. } => {
                self.body = tree;
                return Ok(());
            }
        };
        self.body = Body::Tree { root, leaves };
        Ok(())
    }

    /// Sets a body field when the value is set.
    pub fn body_opt<T: serde::Serialize>(
        &mut self,
        key: &'static str,
        value: Option<&T>,
    ) -> Result<(), Error> {
        match value {
            Some(v) => self.body(key, v),
            None => Ok(()),
        }
    }

    fn body_dynamic<T: serde::Serialize + ?Sized>(&mut self, key: &str, value: &T) -> Result<(), Error> {
        self.body_leaf(key, &mut |out| serde_json::to_writer(out, value), |part, _| {
            Cow::Owned(part.to_owned())
        })
    }

    /// Places a field into the tree (a streamed body becomes one first).
    fn body_leaf(
        &mut self,
        dotted: &str,
        write: WriteJson<'_>,
        key: impl Fn(&str, usize) -> Cow<'static, str>,
    ) -> Result<(), Error> {
        self.make_tree()?;
        let Body::Tree { root, leaves } = &mut self.body else {
            return Err(Error::invalid("the body could not be written"));
        };
        let start = leaves.len();
        if let Err(e) = write(leaves) {
            leaves.truncate(start);
            // The message is the value's own refusal (an amount's), never the value.
            return Err(Error::invalid(format!("the body field `{dotted}` cannot be sent: {e}")));
        }
        let range = start..leaves.len();
        if let Err(e) = root.insert(dotted, key, range) {
            leaves.truncate(start);
            return Err(e);
        }
        Ok(())
    }

    /// Sets the route's idempotency header to the request's key.
    pub(crate) fn idempotency(&mut self, key: &str) -> Result<(), Error> {
        if let Some(name) = self.route.idempotency_header {
            let name = header_name(name)?;
            let value = HeaderValue::from_str(key)
                .map_err(|_| Error::invalid("the idempotency key has characters a header cannot carry"))?;
            self.idempotency = Some((name, value));
        }
        Ok(())
    }

    /// Sets a header. Values that cannot travel in a header are refused.
    pub fn header(&mut self, name: &'static str, value: &str) -> Result<(), Error> {
        let header_name = header_name(name)?;
        if header_name == reqwest::header::AUTHORIZATION {
            return Err(Error::invalid("the Authorization header is set by the client, not by an operation"));
        }
        let header_value = HeaderValue::from_str(value).map_err(|_| {
            Error::invalid(format!("the header `{name}` has a value with characters a header cannot carry"))
        })?;
        self.headers.push((header_name, header_value));
        Ok(())
    }

    /// Adds the fields the spec does not know, by dotted wire key, into the body; a GET has
    /// no body, so there they go to the query string (text as is, other values as JSON). A
    /// key that is already set in the body is refused rather than silently replaced.
    pub fn extra(&mut self, extra: &ExtraFields) -> Result<(), Error> {
        if self.route.method == Method::Get {
            for (key, value) in &extra.entries {
                let text = match value {
                    serde_json::Value::String(text) => text.clone(),
                    other => other.to_string(),
                };
                self.query.push((key.clone(), text));
            }
            return Ok(());
        }
        for (key, value) in &extra.entries {
            self.body_dynamic(key, value)?;
        }
        Ok(())
    }

    /// Fills the path template and finishes the request, its URL only the path and query.
    #[cfg(test)]
    pub(crate) fn finish(self) -> Result<PreparedRequest, Error> {
        self.finish_at("")
    }

    /// Fills the path template and finishes the request, its URL under `base_url`.
    pub(crate) fn finish_at(self, base_url: &str) -> Result<PreparedRequest, Error> {
        let template = self.route.path;
        let url = if self.path_values.is_empty() && self.query.is_empty() && !template.contains('{') {
            None
        } else {
            Some(self.url(base_url)?)
        };
        let body = match self.body {
            Body::Stream(stream) if stream.count > 0 => Some(bytes::Bytes::from(stream.finish())),
            Body::Tree { root, leaves } if !root.entries.is_empty() => {
                let mut out = Vec::with_capacity(root.written_len(leaves.len()));
                root.write(&leaves, &mut out).map_err(|e| {
                    Error::invalid(format!("the body cannot be written as JSON ({:?})", e.classify()))
                })?;
                Some(bytes::Bytes::from(out))
            }
            _ if self.route.method.sends_empty_body() => Some(bytes::Bytes::from_static(b"{}")),
            _ => None,
        };
        // A form is made from the JSON written: one writer, one check of every value.
        let body = match (body, self.route.body) {
            (Some(json), BodyEncoding::Form) => Some(bytes::Bytes::from(super::form::form_from_json(&json)?)),
            (body, _) => body,
        };
        Ok(PreparedRequest {
            route: self.route,
            url,
            headers: self.headers,
            idempotency: self.idempotency,
            body,
            secrets: self.secrets,
        })
    }

    /// The URL: `base_url`, the path template filled, the query.
    fn url(&self, base_url: &str) -> Result<String, Error> {
        let template = self.route.path;
        let mut path = String::with_capacity(base_url.len() + template.len() + 48);
        path.push_str(base_url);
        let mut used = 0;
        let mut rest = template;
        while let Some(open) = rest.find('{') {
            let Some(close) = rest[open..].find('}').map(|c| open + c) else {
                return Err(Error::invalid(format!(
                    "the path template of {} has an unclosed variable",
                    self.route.operation
                )));
            };
            path.push_str(&rest[..open]);
            let variable = &rest[open + 1..close];
            match self.path_values.iter().find(|(v, _)| *v == variable) {
                Some((_, encoded)) => {
                    path.push_str(encoded);
                    used += 1;
                }
                None => {
                    return Err(Error::invalid(format!(
                        "the path value `{variable}` of {} is not set",
                        self.route.operation
                    )));
                }
            }
            rest = &rest[close + 1..];
        }
        path.push_str(rest);
        if used != self.path_values.len() {
            return Err(Error::invalid(format!(
                "a path value was set that the route of {} does not have",
                self.route.operation
            )));
        }
        if !self.query.is_empty() {
            for (i, (k, v)) in self.query.iter().enumerate() {
                path.push(if i == 0 { '?' } else { '&' });
                path.extend(utf8_percent_encode(k, COMPONENT));
                path.push('=');
                path.extend(utf8_percent_encode(v, COMPONENT));
            }
        }
        Ok(path)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::error::ErrorDetail;
    use crate::values::amount::Amount;

    use crate::json::{FromJson, Json, JsonNumber, Path};
    use crate::service::{Auth, Effect, Method, ReservedSegment};

    static ROUTE: Route = Route {
        operation: "fetch_mandate",
        group: "direct_debits",
        method: Method::Post,
        path: "/v1/direct-debits/{mandateId}/x/{other}",
        aliases: &[],
        auth: Auth::BearerAndAccount,
        effect: Effect::Write,
        reserved: &[ReservedSegment {
            variable: "mandateId",
            literal: "status",
            shadowed_by: "GET /v1/direct-debits/status",
        }],
        idempotency_header: None,
        answers: &crate::service::fixture::ANSWERS,
        settle_by_reference: None,
        body: BodyEncoding::Json,
    };

    fn prepared(w: RequestWriter) -> PreparedRequest {
        match w.finish() {
            Ok(p) => p,
            Err(e) => panic!("finish failed: {e}"),
        }
    }

    #[test]
    fn nests_dotted_keys_and_keeps_amount_text() -> Result<(), Error> {
        let mut w = RequestWriter::new(&ROUTE);
        w.path("mandateId", "m 1/2")?;
        w.path("other", "ü")?;
        let amount: Amount = "10000.00".parse()?;
        w.body("order.amount", &amount)?;
        w.body("order.orderReference", "ref-1")?;
        w.body("tokenizeCard", &true)?;
        w.query("limit", &10);
        w.query("q", "a&b=c");
        let mut extra = ExtraFields::new();
        extra.insert("order.metadata.channel", serde_json::json!("web"));
        w.extra(&extra)?;
        let p = prepared(w);
        assert_eq!(p.url.as_deref(), Some("/v1/direct-debits/m%201%2F2/x/%C3%BC?limit=10&q=a%26b%3Dc"));
        assert_eq!(
            p.body.as_deref(),
            Some(
                &br#"{"order":{"amount":10000.00,"orderReference":"ref-1","metadata":{"channel":"web"}},"tokenizeCard":true}"#[..]
            )
        );
        Ok(())
    }

    #[test]
    fn an_amount_is_written_as_its_serialization_writes_it() -> Result<(), Error> {
        use crate::json::{FromJson, Json, Path};
        // As a request would give them, and as an answer may (negative, three decimals).
        let mut amounts: Vec<Amount> = ["10000.00", "0", "0.5", "7", "79228162514264337593543950335"]
            .iter()
            .map(|t| t.parse())
            .collect::<Result<_, _>>()?;
        for text in ["-0.00", "-5", "1.005", "12.50", "\"3.1\"", "1e3"] {
            let value = Json::parse(text).map_err(|e| Error::invalid(e.to_string()))?;
            amounts.push(
                Amount::from_json(value, &Path::root("data")).map_err(|e| Error::invalid(e.to_string()))?,
            );
        }
        let body = |amount: Option<&Amount>, direct: bool, tree: bool| -> Result<String, String> {
            let mut w = RequestWriter::new(&ROUTE);
            let shown = |e: Error| e.to_string();
            w.path("mandateId", "m").map_err(shown)?;
            w.path("other", "o").map_err(shown)?;
            if tree {
                w.make_tree().map_err(shown)?;
            }
            w.body("order.reference", "r").map_err(shown)?;
            if direct {
                w.amount_opt("order.amount", amount).map_err(shown)?;
            } else {
                w.body_opt("order.amount", amount).map_err(shown)?;
            }
            w.body("after", &1).map_err(shown)?;
            let body = w.finish().map_err(shown)?.body.unwrap_or_default();
            Ok(String::from_utf8_lossy(&body).into_owned())
        };
        let mut refused = 0;
        for amount in amounts.iter().map(Some).chain([None]) {
            for tree in [false, true] {
                let (direct, serialized) = (body(amount, true, tree), body(amount, false, tree));
                assert_eq!(direct, serialized, "{:?} (tree: {tree})", amount.map(ToString::to_string));
                refused += usize::from(direct.is_err());
            }
        }
        // Both ways of writing the body refuse the negative and the three decimals.
        assert_eq!(refused, 4);
        assert!(body(Some(&amounts[0]), true, false).is_ok_and(|b| b.contains(r#""amount":10000.00"#)));
        Ok(())
    }

    /// The body `keys` give, each set to its position, streamed or (`tree`) placed.
    fn body_of(keys: &[&'static str], tree: bool) -> Result<String, Error> {
        let mut w = RequestWriter::new(&ROUTE);
        w.path("mandateId", "m")?;
        w.path("other", "o")?;
        if tree {
            w.make_tree()?;
        }
        for (i, key) in keys.iter().enumerate() {
            w.body(key, &i)?;
        }
        let body = prepared(w).body.unwrap_or_default();
        Ok(String::from_utf8_lossy(&body).into_owned())
    }

    #[test]
    fn a_streamed_body_is_the_text_a_tree_writes_in_any_key_order() -> Result<(), Error> {
        let keys =
            ["order.amount", "tokenizeCard", "order.customer.email", "order.currency", "order.customer.name"];
        // Every order of the keys: grouped ones stream, the others reopen an object and
        // become a tree; both must write what a tree writes.
        let mut orders = vec![keys.to_vec()];
        for _ in 0..119 {
            let mut next = orders[orders.len() - 1].clone();
            // The next permutation in lexicographic order of positions.
            let positions: Vec<usize> =
                next.iter().map(|k| keys.iter().position(|x| x == k).unwrap_or(0)).collect();
            let mut p = positions.clone();
            let Some(i) = (0..p.len() - 1).rev().find(|&i| p[i] < p[i + 1]) else { break };
            let j = (i + 1..p.len()).rev().find(|&j| p[j] > p[i]).unwrap_or(i);
            p.swap(i, j);
            p[i + 1..].reverse();
            next = p.iter().map(|&k| keys[k]).collect();
            orders.push(next);
        }
        assert_eq!(orders.len(), 120);
        for order in &orders {
            assert_eq!(body_of(order, false)?, body_of(order, true)?, "{order:?}");
        }
        assert_eq!(
            body_of(&keys, false)?,
            r#"{"order":{"amount":0,"customer":{"email":2,"name":4},"currency":3},"tokenizeCard":1}"#
        );
        Ok(())
    }

    #[test]
    fn a_streamed_body_refuses_what_a_tree_refuses() -> Result<(), Error> {
        for keys in [
            &["amount", "amount"][..],
            &["order.amount", "order"],
            &["order", "order.amount"],
            &["order.customer.email", "order.customer"],
            &["a..b"],
            &[".a"],
            &["a."],
            &[""],
            &["amount", ""],
            &["amount", "fee", "amount"],
        ] {
            assert!(body_of(keys, false).is_err(), "{keys:?}");
            assert!(body_of(keys, true).is_err(), "{keys:?}");
        }
        // A value that cannot be sent leaves nothing behind.
        let mut w = RequestWriter::new(&ROUTE);
        w.path("mandateId", "m")?;
        w.path("other", "o")?;
        let one: Amount = "1.00".parse()?;
        w.body("order.amount", &one)?;
        // An answer's amount may have three places; a request's may not.
        let fine = Amount::from_json(Json::Number(JsonNumber::from_text("1.005")), &Path::root("fee"))
            .map_err(|e| Error::invalid(e.problem))?;
        assert!(w.body("order.customer.fee", &fine).is_err());
        w.body("order.currency", "NGN")?;
        assert_eq!(prepared(w).body.as_deref(), Some(&br#"{"order":{"amount":1.00,"currency":"NGN"}}"#[..]));
        Ok(())
    }

    #[test]
    fn a_body_past_the_stream_record_becomes_a_tree() -> Result<(), Error> {
        let keys: Vec<&'static str> =
            (0..STREAM_KEYS + 8).map(|i| &*Box::leak(format!("k{i}").into_boxed_str())).collect();
        let text = body_of(&keys, false)?;
        assert_eq!(text, body_of(&keys, true)?);
        assert!(text.ends_with(&format!(r#""k{}":{}}}"#, STREAM_KEYS + 7, STREAM_KEYS + 7)), "{text}");
        Ok(())
    }

    #[test]
    fn refuses_conflicting_keys() -> Result<(), Error> {
        let mut w = RequestWriter::new(&ROUTE);
        w.body("order", "x")?;
        assert!(
            matches!(w.body("order.amount", &1), Err(ref e) if matches!(e.detail(), ErrorDetail::InvalidRequest { .. }))
        );
        let mut extra = ExtraFields::new();
        extra.insert("order", serde_json::json!(1));
        assert!(
            matches!(w.extra(&extra), Err(ref e) if matches!(e.detail(), ErrorDetail::InvalidRequest { .. }))
        );
        Ok(())
    }

    #[test]
    fn refuses_reserved_dot_and_missing_path_values() {
        let mut w = RequestWriter::new(&ROUTE);
        assert!(
            matches!(w.path("mandateId", "status"), Err(ref e) if matches!(e.detail(), ErrorDetail::InvalidRequest { .. }))
        );
        assert!(
            matches!(w.path("mandateId", "STATUS"), Err(ref e) if matches!(e.detail(), ErrorDetail::InvalidRequest { .. }))
        );
        assert!(
            matches!(w.path("mandateId", ".."), Err(ref e) if matches!(e.detail(), ErrorDetail::InvalidRequest { .. }))
        );
        assert!(
            matches!(w.path("mandateId", "."), Err(ref e) if matches!(e.detail(), ErrorDetail::InvalidRequest { .. }))
        );
        assert!(
            matches!(w.path("mandateId", ""), Err(ref e) if matches!(e.detail(), ErrorDetail::InvalidRequest { .. }))
        );
        assert!(w.path("mandateId", "status2").is_ok());
        assert!(matches!(w.finish(), Err(ref e) if matches!(e.detail(), ErrorDetail::InvalidRequest { .. })));
    }

    #[test]
    fn refuses_bad_headers_without_echoing_values() {
        let mut w = RequestWriter::new(&ROUTE);
        match w.header("X-Thing", "secret\r\nInjected: 1") {
            Err(e) => assert!(!e.to_string().contains("secret"), "{e}"),
            Ok(()) => panic!("header with CRLF accepted"),
        }
        assert!(w.header("Authorization", "Bearer x").is_err());
        assert!(w.header("X-Thing", "fine").is_ok());
    }

    #[test]
    fn empty_post_sends_empty_object() {
        let mut w = RequestWriter::new(&ROUTE);
        assert!(w.path("mandateId", "m").is_ok());
        assert!(w.path("other", "o").is_ok());
        assert_eq!(prepared(w).body.as_deref(), Some(&b"{}"[..]));
    }

    #[test]
    fn extra_fields_debug_shows_keys_only() {
        let mut extra = ExtraFields::new();
        extra.insert("customer.bvn", serde_json::json!("22233344455"));
        let text = format!("{extra:?}");
        assert!(text.contains("customer.bvn"));
        assert!(!text.contains("22233344455"));
    }

    #[test]
    fn extra_fields_of_a_get_go_to_the_query() -> Result<(), Error> {
        static GET: Route = Route {
            operation: "list_banks",
            group: "transfers",
            method: Method::Get,
            path: "/v1/transfers/banks",
            aliases: &[],
            auth: Auth::BearerAndAccount,
            effect: Effect::Read,
            reserved: &[],
            idempotency_header: None,
            answers: &crate::service::fixture::ANSWERS,
            settle_by_reference: None,
            body: BodyEncoding::Json,
        };
        let mut w = RequestWriter::new(&GET);
        let mut extra = ExtraFields::new();
        extra.insert("country", serde_json::json!("NG"));
        extra.insert("limit", serde_json::json!(5));
        w.extra(&extra)?;
        let p = prepared(w);
        assert_eq!(p.url.as_deref(), Some("/v1/transfers/banks?country=NG&limit=5"));
        assert!(p.body.is_none());
        Ok(())
    }

    #[test]
    fn a_form_route_sends_the_same_fields_as_a_form() -> Result<(), Error> {
        static FORM: Route = Route { body: BodyEncoding::Form, ..ROUTE };
        let mut w = RequestWriter::new(&FORM);
        w.path("mandateId", "m1")?;
        w.path("other", "o")?;
        let amount: Amount = "2000".parse()?;
        w.body("amount", &amount)?;
        w.body("metadata.order_id", "6735")?;
        w.body("description", "Rent & bills")?;
        let p = prepared(w);
        assert_eq!(
            p.body.as_deref(),
            Some(&b"amount=2000&metadata%5Border_id%5D=6735&description=Rent+%26+bills"[..])
        );
        // A POST without fields sends an empty form, not `{}`.
        let mut empty = RequestWriter::new(&FORM);
        empty.path("mandateId", "m1")?;
        empty.path("other", "o")?;
        assert_eq!(prepared(empty).body.as_deref(), Some(&b""[..]));
        Ok(())
    }
}
