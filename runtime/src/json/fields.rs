//! What a `read` keeps while it reads an object's fields: the [`Seen`] fields a generated
//! `read` fills in place, the [`Slot`] a hand-written one may keep per field, and the
//! entries it keeps as they came ([`JsonObject::read_entry`]).

use super::path::{DecodeError, Path};
use super::reader::{FromJson, Reader};
use super::value::{JsonObject, Key};

/// One declared field of an object being read: absent, `null`, or its value. A `read`
/// keeps one per field and hands it each entry with its key: the first fills it, and a
/// repeat is refused. It then asks each for its value, or for an error when a field it
/// requires did not come. A value of another kind than declared leaves the field absent,
/// is kept as it came with the unknown fields, and is noted by the reader: one odd field
/// never costs the rest of an answer.
///
/// Generated decoders, whose fields are all optional, use [`Seen`] instead: it reads each
/// field straight into its place in the value being made.
#[derive(Debug)]
pub struct Slot<T>(SlotState<T>);

#[derive(Debug)]
enum SlotState<T> {
    Absent,
    Null,
    /// A value of another kind than declared, kept with the unknown fields.
    Unread,
    Value(T),
}

impl Slot<String> {
    /// As [`read`](Self::read), for text a service also sends as a number (a listing's
    /// cursor): a number is read as its exact text.
    pub fn read_text(
        &mut self,
        reader: &mut Reader<'_>,
        at: &Path<'_>,
        key: &str,
        rest: &mut JsonObject,
    ) -> Result<(), DecodeError> {
        // Any other kind (`null` included) is read by the rules of every slot.
        if matches!(self.0, SlotState::Absent)
            && let Some((text, _)) = reader.number_or_string(&at.key(key))?
        {
            self.0 = SlotState::Value(text.into_owned());
            reader.claim();
            return Ok(());
        }
        self.read(reader, at, key, rest)
    }
}

impl<T: FromJson> Slot<T> {
    /// Nothing read yet.
    pub fn new() -> Self {
        Slot(SlotState::Absent)
    }

    /// Fills it from the value the reader is at, the value of `key` in the object at `at`.
    /// A slot filled already (the key repeated in one object) is an error, as
    /// [`Reader::object`] and [`Reader::fields`] have it.
    pub fn read(
        &mut self,
        reader: &mut Reader<'_>,
        at: &Path<'_>,
        key: &str,
        rest: &mut JsonObject,
    ) -> Result<(), DecodeError> {
        if !matches!(self.0, SlotState::Absent) {
            return Err(reader.repeated_key(at));
        }
        self.0 = read_declared(reader, at, key, rest)?;
        Ok(())
    }

    /// The value of a field the spec marks required: present and not `null`.
    pub fn required(self, at: &Path<'_>, key: &str) -> Result<T, DecodeError> {
        match self.0 {
            SlotState::Value(value) => Ok(value),
            SlotState::Absent => {
                Err(DecodeError::at(&at.key(key), "missing, though the spec marks it required"))
            }
            SlotState::Null => Err(DecodeError::at(&at.key(key), "null, though the spec marks it required")),
            SlotState::Unread => Err(DecodeError::at(
                &at.key(key),
                "not of its declared type, though the spec marks it required",
            )),
        }
    }

    /// The value of a field that may be absent or `null`.
    pub fn optional(self) -> Option<T> {
        match self.0 {
            SlotState::Value(value) => Some(value),
            SlotState::Absent | SlotState::Null | SlotState::Unread => None,
        }
    }
}

impl<T: FromJson> Default for Slot<T> {
    fn default() -> Self {
        Self::new()
    }
}

/// The value of a declared field the reader is at: `null`, a value of another kind than
/// declared (kept in `rest` as it came, and noted), or its value. It marks the entry as
/// one of the fields, after any object inside it.
#[inline(always)]
fn read_declared<T: FromJson>(
    reader: &mut Reader<'_>,
    at: &Path<'_>,
    key: &str,
    rest: &mut JsonObject,
) -> Result<SlotState<T>, DecodeError> {
    let state = if reader.null() {
        SlotState::Null
    } else {
        match reader.read_or_note(&at.key(key))? {
            Ok(value) => SlotState::Value(value),
            Err(as_sent) => {
                rest.push(key, as_sent);
                SlotState::Unread
            }
        }
    };
    // Last, after any object inside the value: the key was one of the fields.
    reader.claim();
    Ok(state)
}

/// Which declared fields of the object being read have come, for a `read` that fills
/// each field in its place in the value it makes (the generated decoders): the value
/// starts with every field `None`, and each entry goes to [`Seen::read`] with the field's
/// number, counted from 0 in the order the struct declares them. A field's second entry
/// is refused, as [`Slot::read`] refuses it; `null`, or a value of another kind than
/// declared, leaves the field `None`.
///
/// It has room for `64 × WORDS` fields; a number past them is never seen, so its repeats
/// are not refused (the generator gives each struct the words its fields need).
///
/// Nothing is moved at the end: a struct of many fields is read with one write per field
/// that came, not a slot per field and a move of each into place.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Seen<const WORDS: usize = 1>([u64; WORDS]);

impl<const WORDS: usize> Seen<WORDS> {
    /// No field yet.
    #[must_use]
    pub const fn new() -> Self {
        Seen([0; WORDS])
    }

    /// Marks field `number` as seen; whether it had been before.
    #[inline]
    pub(crate) fn seen_before(&mut self, number: usize) -> bool {
        let bit = 1u64 << (number % 64);
        match self.0.get_mut(number / 64) {
            Some(word) => {
                let before = *word & bit != 0;
                *word |= bit;
                before
            }
            None => false,
        }
    }

    /// Whether field `number` has come.
    #[must_use]
    pub fn has(&self, number: usize) -> bool {
        self.0.get(number / 64).is_some_and(|word| word & (1u64 << (number % 64)) != 0)
    }

    /// Fills `field`, field `number`, from the value of `key` the reader is at, in the
    /// object at `at`; a value it cannot take goes to `rest`. A second entry of the field
    /// is an error, as [`Reader::object`] and [`Reader::fields`] have it.
    pub fn read<T: FromJson>(
        &mut self,
        number: usize,
        field: &mut Option<T>,
        reader: &mut Reader<'_>,
        at: &Path<'_>,
        key: &str,
        rest: &mut JsonObject,
    ) -> Result<(), DecodeError> {
        if self.seen_before(number) {
            return Err(reader.repeated_key(at));
        }
        if let SlotState::Value(value) = read_declared(reader, at, key, rest)? {
            *field = Some(value);
        }
        Ok(())
    }

    /// As [`read`](Self::read), for text a service also sends as a number (a listing's
    /// cursor): a number is read as its exact text.
    pub fn read_text(
        &mut self,
        number: usize,
        field: &mut Option<String>,
        reader: &mut Reader<'_>,
        at: &Path<'_>,
        key: &str,
        rest: &mut JsonObject,
    ) -> Result<(), DecodeError> {
        // Any other kind (`null` included) is read by the rules of every field.
        if !self.has(number)
            && let Some((text, _)) = reader.number_or_string(&at.key(key))?
        {
            self.seen_before(number);
            *field = Some(text.into_owned());
            reader.claim();
            return Ok(());
        }
        self.read(number, field, reader, at, key, rest)
    }
}

impl<const WORDS: usize> Default for Seen<WORDS> {
    fn default() -> Self {
        Self::new()
    }
}

impl JsonObject {
    /// Keeps the entry the reader is at, under `key`, as it came (a field the spec does not
    /// declare).
    pub fn read_entry(
        &mut self,
        key: &str,
        reader: &mut Reader<'_>,
        at: &Path<'_>,
    ) -> Result<(), DecodeError> {
        let value = reader.json(&at.key(key))?;
        if self.0.capacity() == 0 {
            // Room for several: an answer with one field the spec does not declare mostly
            // has more (the service adds to what its document describes), and growing the
            // list from four moves every entry.
            self.0.reserve_exact(8);
        }
        self.0.push((Key::new(key), value));
        Ok(())
    }
}
