//! A request's JSON body as it is written: streamed straight into its text while the keys
//! come in the order generated code gives them ([`Stream`]), else placed by dotted key in
//! a tree written out once the request is finished ([`BodyObject`]).

use std::borrow::Cow;
use std::ops::Range;

use crate::error::Error;

/// A JSON object being written: each leaf is serialized once, at once, into one buffer
/// (amounts keep their exact text); dotted keys nest. The finished body is written from
/// it in one pass.
#[derive(Default)]
pub(super) struct BodyObject {
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

/// The body as written so far.
#[allow(
    clippy::large_enum_variant,
    reason = "a writer lives on the stack while one request is written; a box would cost an allocation per request"
)]
pub(super) enum Body {
    /// No field yet.
    Empty,
    /// Fields written straight into JSON text, in the order given (see [`Stream`]).
    Stream(Stream),
    /// Fields placed by dotted key in any order, written out when the request is finished.
    Tree { root: BodyObject, leaves: Vec<u8> },
}

impl Body {
    /// A field at the generated static `key`, written by `write`.
    pub(super) fn field(&mut self, key: &'static str, write: WriteJson<'_>) -> Result<(), Error> {
        if matches!(self, Body::Empty) {
            *self = Body::Stream(Stream::new());
        }
        if let Body::Stream(stream) = self {
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
        self.leaf(key, write, static_segment(key))
    }

    /// Turns a streamed body into a tree, for keys in an order a stream cannot take.
    pub(super) fn make_tree(&mut self) -> Result<(), Error> {
        let (root, leaves) = match std::mem::replace(self, Body::Empty) {
            Body::Stream(stream) => stream.into_tree()?,
            Body::Empty => (BodyObject::default(), Vec::new()),
            tree @ Body::Tree { .. } => {
                *self = tree;
                return Ok(());
            }
        };
        *self = Body::Tree { root, leaves };
        Ok(())
    }

    /// A field at a key made at run time (an extra field's), its segments copied.
    pub(super) fn field_dynamic<T: serde::Serialize + ?Sized>(
        &mut self,
        key: &str,
        value: &T,
    ) -> Result<(), Error> {
        self.leaf(key, &mut |out| serde_json::to_writer(out, value), |part, _| Cow::Owned(part.to_owned()))
    }

    /// Places a field into the tree (a streamed body becomes one first).
    fn leaf(
        &mut self,
        dotted: &str,
        write: WriteJson<'_>,
        key: impl Fn(&str, usize) -> Cow<'static, str>,
    ) -> Result<(), Error> {
        self.make_tree()?;
        let Body::Tree { root, leaves } = self else {
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

    /// The body's JSON text, or `None` when no field was written.
    /// Borrowed, not moved: a body is the largest part of a writer, and a GET has none.
    #[inline]
    pub(super) fn finish(&mut self) -> Result<Option<Vec<u8>>, Error> {
        Ok(match self {
            Body::Stream(stream) if stream.count > 0 => Some(stream.close()),
            Body::Tree { root, leaves } if !root.entries.is_empty() => {
                let mut out = Vec::with_capacity(root.written_len(leaves.len()));
                root.write(leaves, &mut out).map_err(|e| {
                    Error::invalid(format!("the body cannot be written as JSON ({:?})", e.classify()))
                })?;
                Some(out)
            }
            _ => None,
        })
    }
}

/// The most fields a streamed body records; past it the body becomes a tree.
pub(super) const STREAM_KEYS: usize = 32;

/// A body written as it goes: one buffer, one pass, no tree. It stays so while each key
/// lands in the object its predecessor left open or in a new one, which is the order the
/// generated code gives its keys in. A key that would reopen an object already closed
/// turns it into a tree; one set twice or nested under a value is refused, as a tree
/// refuses it.
pub(super) struct Stream {
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
pub(super) type WriteJson<'v> = &'v mut dyn FnMut(&mut Vec<u8>) -> serde_json::Result<()>;

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
    /// The text, every object still open closed.
    fn close(&mut self) -> Vec<u8> {
        let mut out = std::mem::take(&mut self.out);
        out.extend(std::iter::repeat_n(b'}', self.depth + 1));
        out
    }

    /// The same fields as a tree, each key where it was, for what a stream cannot take.
    fn into_tree(mut self) -> Result<(BodyObject, Vec<u8>), Error> {
        let keys = self.keys;
        let count = self.count;
        let text = self.close();
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
