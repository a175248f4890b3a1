//! The values a request carries and an answer gives, each with its rules written once:
//! [`Amount`] (exact, at most two decimals, never negative), [`Timestamp`] and
//! [`DateTime`] with the service's [`DateLayout`]s, [`Text`] (a string an answer may send
//! as a number), and [`Secret`] and [`Credentials`] (never shown).

pub(crate) mod amount;
pub(crate) mod secret;
pub(crate) mod text;
pub(crate) mod timestamp;

pub use amount::{Amount, AmountError, AmountText};
pub use secret::{Credentials, Secret};
pub use text::Text;
pub(crate) use text::trimmed;
pub use timestamp::{DateTime, Timestamp};
