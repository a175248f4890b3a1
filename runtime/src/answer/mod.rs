//! What came back of a call, read once (`classify`: by its status, a success's envelope or
//! the refusal it is, the one result retry, settle, decode and the error read); a
//! success's envelope (`envelope`: done, pending, refused, or for money neither; and where
//! the data lies),
//! the data read into the operation's type (`decode`), and what the call returns
//! (`outcome`: [`Outcome`] and [`Envelope`]).

mod classify;
mod decode;
mod envelope;
mod outcome;

pub(crate) use classify::{Refused, classify};
pub(crate) use decode::{decode_data, decode_data_with, decode_outcome};
pub(crate) use envelope::{DataAt, RawAnswer, one_of};
pub use outcome::{Envelope, Outcome};
