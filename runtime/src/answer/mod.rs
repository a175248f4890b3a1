//! What came back of a call the service answered with success: its envelope read once
//! (`envelope`: done, pending, refused, or for money neither; and where the data lies),
//! the data read into the operation's type (`decode`), and what the call returns
//! (`outcome`: [`Outcome`] and [`Envelope`]).

mod decode;
mod envelope;
mod outcome;

pub(crate) use decode::{decode_data, decode_data_with, decode_outcome};
pub(crate) use envelope::{DataAt, RawAnswer, one_of, peek_code, read_success, reference_taken};
pub use outcome::{Envelope, Outcome};
