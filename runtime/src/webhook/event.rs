//! A verified notification ([`WebhookEvent`]): the values its signature covers, and the
//! rest of its body ([`UnsignedData`]), which the signature does not.

use std::fmt;
use std::sync::OnceLock;
use std::time::SystemTime;

use super::signed::{SignedValues, value_at};
use crate::json::{self, FromJson, Json, Path, Reader, Unread};
use crate::values::Amount;

/// A verified notification. `Debug` leaves out the unsigned part, which holds personal
/// data.
#[derive(Clone)]
#[non_exhaustive]
pub struct WebhookEvent {
    /// The event's kind, as signed.
    pub event_type: String,
    /// When the service signed it (the timestamp header), for a scheme that has one.
    pub signed_at: Option<SystemTime>,
    /// Every value the signature covers.
    pub signed: SignedValues,
    /// Everything else: not covered by the signature. See [`UnsignedData`].
    pub unsigned: UnsignedData,
}

impl fmt::Debug for WebhookEvent {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("WebhookEvent")
            .field("event_type", &self.event_type)
            .field("signed", &self.signed)
            .finish_non_exhaustive()
    }
}

/// The notification's body, which the signature does **not** cover beyond the values in
/// [`SignedValues`]: anyone who can alter a delivery can change an amount, a fee or a
/// customer here without the signature noticing. Use it to decide what to look up, not as
/// proof: fetch the record a signed value names and act on the service's answer.
#[derive(Clone)]
pub struct UnsignedData {
    /// The body as it came, checked as JSON once when it was verified: typed reads read it
    /// where they are asked to, and nothing else of it is parsed.
    raw: bytes::Bytes,
    /// The whole body as a tree, built the first time [`body`](Self::body) or
    /// [`value_at`](Self::value_at) asks for it.
    tree: OnceLock<Json>,
}

impl fmt::Debug for UnsignedData {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("UnsignedData(..)")
    }
}

impl UnsignedData {
    /// The body of a verified notification (checked as one JSON object), held as it came.
    pub(super) fn new(raw: &[u8]) -> Self {
        UnsignedData { raw: bytes::Bytes::copy_from_slice(raw), tree: OnceLock::new() }
    }

    /// The whole body as exact JSON: numbers keep their text. Built the first time it is
    /// asked for (a typed read needs no tree).
    pub fn body(&self) -> &Json {
        // The body was checked as JSON, by the parser's own rules, when it was verified.
        self.tree.get_or_init(|| Json::parse_bytes(&self.raw).unwrap_or(Json::Null))
    }

    /// The body's text as it came.
    pub fn raw(&self) -> &[u8] {
        &self.raw
    }

    /// Reads the value under the body's top-level `key` as `T`, as an answer's data is
    /// read: a value of another kind than declared (anywhere inside it) is noted in
    /// [`Unread`], not an error, and the whole value comes back as it was
    /// sent in `Err`. `None` when the body has no such key.
    pub fn read_key<T: FromJson>(&self, key: &str) -> (Option<Result<T, Json>>, Unread) {
        let mut reader = Reader::new(&self.raw);
        let mut found = None;
        let at = Path::root("body");
        let read = reader.object(&at, |name, reader| {
            if name == key && found.is_none() {
                found = Some(reader.read_or_note::<T>(&at.key(key))?);
                Ok(())
            } else {
                reader.skip(&at.key(name))
            }
        });
        let (notes, total) = reader.take_unread();
        match read {
            Ok(()) => (found, Unread::new(notes, total)),
            // The verifier checked this text whole, by the parser's rules: not reached; kept as sent if it were.
            Err(_) => (self.body().get(key).cloned().map(Err), Unread::new(notes, total + 1)),
        }
    }

    /// The payload under the top-level `key` read as `T` ([`read_key`](Self::read_key)) and
    /// made a `P` by `kind`; as sent, by `other`, when it is not a `T` or is absent (`Null`).
    /// What a generated `WebhookEvent::payload` does for each event kind with a shape.
    pub fn payload<T: FromJson, P>(
        &self,
        key: &str,
        kind: impl FnOnce(T) -> P,
        other: impl FnOnce(Json) -> P,
    ) -> (P, Unread) {
        match self.read_key::<T>(key) {
            (Some(Ok(data)), unread) => (kind(data), unread),
            (Some(Err(sent)), unread) => (other(sent), unread),
            (None, unread) => (other(Json::Null), unread),
        }
    }

    /// The payload under the top-level `key` as sent (`Null` when absent), for an event
    /// kind without a shape.
    pub fn payload_as_sent<P>(&self, key: &str, other: impl FnOnce(Json) -> P) -> (P, Unread) {
        (other(self.value_at(key).cloned().unwrap_or(Json::Null)), Unread::default())
    }

    /// The value at `path` (keys joined with `.`), if the body has one.
    pub fn value_at(&self, path: &str) -> Option<&Json> {
        value_at(self.body(), path)
    }

    /// The amount at `path` as the notification claims it, read exactly from a number or
    /// its text; `None` when absent or not a valid amount. Not covered by the signature:
    /// confirm it with the service before acting on it.
    pub fn amount_at(&self, path: &str) -> Option<Amount> {
        // Read where it lies in the text: no tree is built for it.
        let mut text = json::Parser::new(&self.raw);
        let range = json::locate(&mut text, path)?;
        if !matches!(self.raw.get(range.start), Some(b'"' | b'-' | b'0'..=b'9')) {
            return None;
        }
        json::scalar_text(&mut text, range)?.trim().parse().ok()
    }
}
