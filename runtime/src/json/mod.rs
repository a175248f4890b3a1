//! Answers as exact values: a JSON tree whose numbers keep the text the service sent, and
//! the decoding rules every generated answer type follows, written once here.
//!
//! Answers are read straight from their text by a [`Reader`]: generated answer structs
//! read each declared field in its place, counting them with [`Seen`], and hand the rest
//! to their `other_fields` (a hand-written `read` may keep a [`Slot`] per field). The
//! rules (amounts from a number or a string, open enumerations, optional fields that may be
//! absent or null, unknown fields kept, errors that name the field path) live in this
//! module and in the `FromJson` impls of the runtime's types. No value passes through a
//! float, and no answer is built as a tree first.
//!
//! - `value`: the tree ([`Json`], [`JsonNumber`], [`JsonObject`]);
//! - `path`: where a value sits ([`Path`]) and what was wrong there ([`DecodeError`]);
//! - `parse`: the one-pass parser, bounded in depth;
//! - `step`: stepping over text without building it: values skipped or checked, a body
//!   checked once while the values at given paths are found, a value located by its path;
//! - `reader`: the [`Reader`] and [`FromJson`];
//! - `fields`: what a `read` keeps while it reads an object, [`Seen`] and [`Slot`];
//! - `read` and `write`: the standard types read and written, and serde through both;
//!   what of a value did not fit its type ([`Unread`]).

mod fields;
mod parse;
mod path;
mod read;
mod reader;
mod step;
mod value;
mod write;

#[cfg(test)]
mod tests;

pub use fields::{Seen, Slot};
pub(crate) use parse::Parser;
pub use parse::{JsonError, REPEATED_KEY};
pub use path::{DecodeError, Path};
pub use read::{Unread, deserialize_via_json};
pub use reader::{FromJson, MAX_UNREAD, Reader};
pub(crate) use step::{check_finding, check_tail, locate, parse_entries, scalar_text, span, value_at};
pub use value::{Json, JsonNumber, JsonObject};
pub use write::{ObjectWriter, ToJson, serialize_via_json};
