//! The rules a value keeps to be sent, written once: text formats and exact lengths, the
//! largest integer a parameter takes, amounts, and date layouts. Driven by the spec's data
//! (a generated request names the rule of each field); the client's [`RequestWriter`]
//! refuses a value that breaks one before anything leaves, and the sandbox refuses a
//! received value by the same rule, so the two cannot drift apart.
//!
//! [`RequestWriter`]: crate::RequestWriter

use std::fmt;
use std::str::FromStr;

use rust_decimal::Decimal;

use crate::error::Error;
use crate::values::amount::{Amount, AmountError};
use crate::values::timestamp::DateLayout;
pub use payspec_vocabulary::TextFormat;

/// What a text value must be before it is sent ([`RequestWriter::text`](super::RequestWriter::text), and the sandbox
/// checks a received value with the same rule).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct TextRule {
    /// Refuse an empty or all-space value.
    pub not_blank: bool,
    /// The format the vendor states.
    pub format: TextFormat,
    /// The exact number of characters the vendor states.
    pub length: Option<usize>,
}

/// Whether `value` is a name as [`TextFormat::Name`] describes it: every character a
/// letter, a space, or beyond ASCII (no source shows the service refusing those).
pub fn is_name(value: &str) -> bool {
    value.chars().all(|c| c == ' ' || !c.is_ascii() || c.is_ascii_alphabetic())
        && !value.chars().any(|c| c.is_control())
}

/// Whether `value` has the form of an email address (not whether it exists).
pub fn is_email(value: &str) -> bool {
    let Some((name, domain)) = value.split_once('@') else { return false };
    !name.is_empty()
        && !domain.contains('@')
        && domain.split('.').count() >= 2
        && domain.split('.').all(|part| !part.is_empty())
        && !value.chars().any(|c| c.is_whitespace() || c.is_control())
}

impl TextRule {
    /// Whether `value` keeps the rule: not blank where it must not be, of the stated
    /// length and format.
    pub fn check(&self, value: &str) -> Result<(), Broken> {
        if self.not_blank && value.chars().all(char::is_whitespace) {
            return Err(Broken::Blank);
        }
        if let Some(wanted) = self.length {
            let found = value.chars().count();
            if found != wanted {
                return Err(Broken::Length { found, wanted });
            }
        }
        match self.format {
            TextFormat::Any => Ok(()),
            TextFormat::Digits if !value.is_empty() && value.bytes().all(|b| b.is_ascii_digit()) => Ok(()),
            TextFormat::Digits => Err(Broken::NotDigits),
            TextFormat::Email if is_email(value) => Ok(()),
            TextFormat::Email => Err(Broken::NotEmail),
            TextFormat::Name if is_name(value) => Ok(()),
            TextFormat::Name => Err(Broken::NotName),
        }
    }
}

/// Whether an integer is within the largest the service takes.
pub fn at_most(value: i64, max: i64) -> Result<(), Broken> {
    if value > max { Err(Broken::AboveMax { value, max }) } else { Ok(()) }
}

/// The amount a decimal number's wire text gives (`2500`, `2500.50`, and the exponent
/// form a JSON number may take), kept to the rules of [`Amount`]: not negative, at most
/// two decimals.
pub fn amount_from_wire(text: &str) -> Result<Amount, Broken> {
    let decimal = Decimal::from_str(text)
        .or_else(|_| Decimal::from_scientific(text))
        .map_err(|_| Broken::Amount(AmountError::NotANumber))?;
    Amount::try_from(decimal).map_err(Broken::Amount)
}

/// Whether `text` is written in `layout`, digit for digit.
pub fn fits_layout(text: &str, layout: DateLayout) -> Result<(), Broken> {
    let shape = match layout {
        DateLayout::Seconds => "dddd-dd-ddTdd:dd:dd",
        DateLayout::Minutes => "dddd-dd-ddTdd:dd",
        DateLayout::SpaceSeconds => "dddd-dd-dd dd:dd:dd",
        DateLayout::Date => "dddd-dd-dd",
        DateLayout::Instant => "dddd-dd-ddTdd:dd:dd.dddZ",
    };
    let fits = text.len() == shape.len()
        && text.bytes().zip(shape.bytes()).all(|(c, s)| if s == b'd' { c.is_ascii_digit() } else { c == s });
    if fits { Ok(()) } else { Err(Broken::Layout(layout)) }
}

/// Which rule a value breaks. Its text names the rule, never the value (which may be a
/// secret) nor the key (which the caller adds).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum Broken {
    /// Empty or all spaces where a value is needed.
    Blank,
    /// Not of the stated number of characters.
    Length {
        /// The characters given.
        found: usize,
        /// The characters the service takes.
        wanted: usize,
    },
    /// Not ASCII digits only.
    NotDigits,
    /// Not of the form of an email address.
    NotEmail,
    /// Not letters and spaces only.
    NotName,
    /// Above the largest value the service takes.
    AboveMax {
        /// The value given (an integer, never a secret).
        value: i64,
        /// The largest the service takes.
        max: i64,
    },
    /// Not an amount the service takes.
    Amount(AmountError),
    /// Not written in the date layout the service reads.
    Layout(DateLayout),
}

impl Broken {
    /// The client's refusal of a value under `key`, before anything is sent.
    pub(crate) fn refusal(self, key: &str) -> Error {
        Error::invalid_field(key, format!("`{key}` {self}"))
    }
}

impl fmt::Display for Broken {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Broken::Blank => f.write_str("is blank; the service needs a value"),
            Broken::Length { found, wanted } => {
                write!(f, "has {found} characters; the service takes exactly {wanted}")
            }
            Broken::NotDigits => f.write_str("must be digits only (0-9)"),
            Broken::NotEmail => f.write_str("is not an email address (name@domain, no spaces)"),
            Broken::NotName => f.write_str(
                "may hold letters and spaces only; the service refuses a digit, `-`, `'`, `.`, `&` or any other symbol",
            ),
            Broken::AboveMax { value, max } => write!(f, "is {value}, more than the {max} the service accepts"),
            Broken::Amount(AmountError::Negative) => f.write_str("must not be negative"),
            Broken::Amount(AmountError::TooManyDecimals) => f.write_str("has more than two decimals"),
            Broken::Amount(AmountError::TooLarge) => f.write_str("has too many digits for an amount"),
            Broken::Amount(_) => f.write_str("must be a decimal number"),
            Broken::Layout(layout) => write!(f, "must be written {}", layout.pattern()),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const DIGITS: TextRule = TextRule { not_blank: false, format: TextFormat::Digits, length: Some(10) };

    #[test]
    fn a_text_rule_names_what_is_wrong_and_never_the_value() {
        assert_eq!(DIGITS.check("0123456789"), Ok(()));
        assert_eq!(DIGITS.check("012345678"), Err(Broken::Length { found: 9, wanted: 10 }));
        assert_eq!(DIGITS.check("01234x6789"), Err(Broken::NotDigits));
        let blank = TextRule { not_blank: true, format: TextFormat::Any, length: None };
        assert_eq!(blank.check("  "), Err(Broken::Blank));
        let message = Broken::Length { found: 9, wanted: 10 }.refusal("accountNumber").to_string();
        assert!(message.contains("`accountNumber` has 9 characters"), "{message}");
        assert!(!message.contains("012345678"), "{message}");
    }

    #[test]
    fn amounts_and_layouts_are_read_as_the_client_writes_them() {
        assert_eq!(amount_from_wire("2500.50").map(|a| a.to_string()), Ok("2500.50".to_owned()));
        assert_eq!(amount_from_wire("2.5e3").map(|a| a.to_string()), Ok("2500".to_owned()));
        assert_eq!(amount_from_wire("1.005"), Err(Broken::Amount(AmountError::TooManyDecimals)));
        assert_eq!(amount_from_wire("-1"), Err(Broken::Amount(AmountError::Negative)));
        assert_eq!(amount_from_wire("ten"), Err(Broken::Amount(AmountError::NotANumber)));
        assert_eq!(at_most(50, 50), Ok(()));
        assert_eq!(at_most(51, 50), Err(Broken::AboveMax { value: 51, max: 50 }));
        for (_, layout) in DateLayout::ALL {
            let written = crate::values::DateTime::now().to_wire(layout);
            assert_eq!(fits_layout(&written, layout), Ok(()), "{written}");
        }
        assert_eq!(fits_layout("2024-09-30", DateLayout::Seconds), Err(Broken::Layout(DateLayout::Seconds)));
        // An instant as a JavaScript `Date` writes it: milliseconds and `Z`, nothing else.
        assert_eq!(fits_layout("2023-09-08T00:00:00.007Z", DateLayout::Instant), Ok(()));
        for other in ["2023-09-08T00:00:00Z", "2023-09-08T00:00:00.007", "2023-09-08T00:00:00.007+01:00"] {
            assert_eq!(
                fits_layout(other, DateLayout::Instant),
                Err(Broken::Layout(DateLayout::Instant)),
                "{other}"
            );
        }
    }

    #[test]
    fn a_name_is_letters_and_spaces_as_the_live_service_takes_it() {
        // Each refused live (published probes), and one accepted.
        for refused in ["Iron Republic Gym 1", "Mary-Jane O'Brien", "Ade Ogunlana Ltd.", "Iron Republic & Co"]
        {
            assert!(!is_name(refused), "{refused}");
        }
        assert!(is_name("Iron Republic Gym"));
        // No source shows letters beyond ASCII refused: they pass.
        assert!(is_name("Ògúnlànà Stores"));
        assert!(!is_name("Tab\tName"));
    }
}
