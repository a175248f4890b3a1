//! A success's data read into the operation's type, straight from the answer's text: as far
//! as it can be (a success is never turned into an error by its data's shape; only text
//! that is not JSON is), with its state read as the route's answers say.

use std::borrow::Cow;

use super::envelope::{DataAt, RawAnswer, awaited, settled_state};
use super::outcome::{Outcome, State};
use crate::error::{Error, ErrorDetail};
use crate::json::{DecodeError, FromJson, Path, Reader, Unread};
use crate::redact::{self, HoldsSecrets};

/// The outcome of a `2xx` answer: its data read as far as it can be, and its state read
/// as the route's [`Answers`](payspec_vocabulary::Answers) say. `secrets` are removed from an error's
/// excerpt.
pub(crate) fn decode_outcome<T: FromJson>(
    mut answer: Box<RawAnswer>,
    secrets: &dyn HoldsSecrets,
) -> Result<Outcome<T>, Error> {
    let Some(data) = answer.data.clone() else {
        if answer.pending {
            // Checked whole: nothing else reads a pending answer's body.
            crate::json::span(&answer.body)
                .map_err(|fault| unreadable(&answer, None, fault.to_string(), secrets))?;
        }
        let state = settled_state(&answer, None, answer.flag);
        return Ok(state.outcome(Box::new(answer.into_envelope(None, Unread::default(), None, None))));
    };
    let mut reader = answer.data_reader(&data);
    reader.watch_status(answer.status_field);
    let read = reader.read_or_note::<T>(&Path::root("data"));
    // Read whole, the data ends where the reader is: its text need not be found again.
    let data_end = read.is_ok().then(|| reader.position());
    let end = read.is_ok().then_some(data.end);
    if let Some(fault) = reader.fault(end) {
        return Err(unreadable(&answer, None, fault.to_string(), secrets));
    }
    let read = match read {
        Ok(read) => read.ok(),
        // A read stopped by text that is not JSON; a full check places the fault.
        Err(e) => {
            let reason = crate::json::span(&answer.body).err().map_or(e.problem, |f| f.to_string());
            return Err(unreadable(&answer, None, reason, secrets));
        }
    };
    // Noted in the same pass; or, when the data was not of its type, read on its own.
    let status = match (&read, reader.noted_status()) {
        (Some(_), status) => status,
        (None, _) => answer.status_text().map(Cow::Owned),
    };
    let (notes, total) = reader.take_unread();
    if total > 0 {
        tracing::warn!(
            operation = answer.operation,
            unread = total,
            first = %notes.first().map(ToString::to_string).unwrap_or_default(),
            "the answer has values that do not fit the spec; they are kept as sent"
        );
    }
    let tail_flag = reader.tail_flag;
    let mut state = settled_state(&answer, status.as_deref(), answer.flag.or(tail_flag));
    if let (Some(at), Some(end)) = (answer.data.as_mut(), data_end) {
        at.end.get_or_insert(end);
    }
    // A finished answer may still wait on someone (the customer's OTP): pending.
    let awaits =
        if state == State::Done && !answer.answers.awaiting.is_empty() { awaited(&answer) } else { None };
    if awaits.is_some() {
        state = State::Pending;
    }
    // Made in its box: the typed data is not moved once more on the way.
    let envelope = Box::new(answer.into_envelope(read, Unread::new(notes, total), tail_flag, awaits));
    Ok(state.outcome(envelope))
}

/// Reads an answer's data (at `data` in its body) as `T` straight from the text, checking
/// that text as JSON as it goes: text that is not JSON is reported as the whole answer's
/// fault, with its place in the body, as data of the wrong kind is with its path. Values
/// inside it that do not fit are left out ([`Reader::read_or_note`]).
pub(crate) fn decode_data<T: FromJson>(
    answer: &RawAnswer,
    data: &DataAt,
    secrets: &dyn HoldsSecrets,
) -> Result<T, Error> {
    decode_data_with(answer, data, secrets, T::read)
}

/// [`decode_data`] with a reader of its own.
pub(crate) fn decode_data_with<T>(
    answer: &RawAnswer,
    data: &DataAt,
    secrets: &dyn HoldsSecrets,
    read: impl FnOnce(&mut Reader<'_>, &Path<'_>) -> Result<T, DecodeError>,
) -> Result<T, Error> {
    let mut reader = answer.data_reader(data);
    let read = read(&mut reader, &Path::root("data"));
    let end = read.is_ok().then_some(data.end);
    let (path, reason) = match (reader.fault(end), read) {
        (None, Ok(value)) => return Ok(value),
        (Some(fault), _) => (None, fault.to_string()),
        // A value of the wrong kind stops the read: text past it that is not JSON is the
        // first fault to report, as it would be had the whole body been read.
        (None, Err(e)) => match crate::json::span(&answer.body) {
            Err(fault) => (None, fault.to_string()),
            Ok(_) => (Some(e.path), e.problem),
        },
    };
    Err(unreadable(answer, path, reason, secrets))
}

/// A decode error for `answer`, its excerpt with every secret removed, with the call's
/// record.
fn unreadable(answer: &RawAnswer, path: Option<String>, reason: String, secrets: &dyn HoldsSecrets) -> Error {
    let excerpt = redact::answer_excerpt(
        &answer.body,
        &secrets.secrets(&answer.request_secrets),
        answer.answers.secret_values,
    );
    Error::from(ErrorDetail::Decode {
        status: answer.status,
        operation: answer.operation,
        path,
        reason,
        excerpt,
    })
    .in_call(answer.meta.clone().map(Box::new), answer.effect)
    .settled_by(answer.settle_by_reference)
}
