//! A request before it leaves: the [`Operation`] a generated request is, the
//! [`RequestWriter`] it writes itself into (path values, query, body, headers), and the
//! rules a value must keep to be sent ([`TextRule`]), which the sandbox checks with too.

mod body;
mod form;
pub(crate) mod operation;
pub(crate) mod rules;
pub(crate) mod writer;

pub use operation::{Operation, Paginated};
pub use rules::{Broken, TextRule, amount_from_wire, at_most, fits_layout, is_email, is_name};
pub(crate) use writer::PreparedRequest;
pub use writer::{ExtraFields, RequestWriter};
