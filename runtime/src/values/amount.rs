//! Exact amounts of money: validated decimals that travel as JSON numbers with their exact
//! text, never through a float.

use std::fmt;
use std::str::FromStr;

use rust_decimal::Decimal;
use serde_json::value::RawValue;

use crate::error::Error;
use crate::json::{DecodeError, FromJson, Json, Path, Reader, ToJson};

/// An amount of money: an exact decimal, never a float.
///
/// Built by the caller (`"10000.00".parse()`, `Amount::try_from(decimal)`), it is not
/// negative and has at most two decimal places, and it is sent as a JSON number with its
/// exact text (`10000.00` stays `10000.00`); [`Amount::as_wire_string`] sends it as a
/// string where the wire wants one. Read from an answer, it is whatever exact decimal the
/// service sent (a refund may be negative, a rate may have more places), from a JSON
/// number or a string, and it is written back the same way. Two amounts are equal when
/// their values are.
///
/// ```
/// use payspec_runtime::{Amount, AmountError};
///
/// let amount: Amount = "2500.50".parse()?;
/// assert_eq!(amount.to_string(), "2500.50");
/// assert_eq!(amount.as_decimal(), payspec_runtime::Decimal::new(250050, 2));
/// // What a request may not send is refused before it leaves.
/// assert!("-1".parse::<Amount>().is_err());
/// assert!("1.005".parse::<Amount>().is_err());
/// # Ok::<(), AmountError>(())
/// ```
#[derive(Clone, Copy)]
pub struct Amount {
    value: Decimal,
    /// Read from a JSON string, so written back as one.
    quoted: bool,
}

impl PartialEq for Amount {
    fn eq(&self, other: &Self) -> bool {
        self.value == other.value
    }
}

impl Eq for Amount {}

impl std::hash::Hash for Amount {
    fn hash<H: std::hash::Hasher>(&self, state: &mut H) {
        self.value.hash(state);
    }
}

impl PartialOrd for Amount {
    fn partial_cmp(&self, other: &Self) -> Option<std::cmp::Ordering> {
        Some(self.cmp(other))
    }
}

impl Ord for Amount {
    fn cmp(&self, other: &Self) -> std::cmp::Ordering {
        self.value.cmp(&other.value)
    }
}

impl fmt::Debug for Amount {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "Amount({})", self.value)
    }
}

const fn amount(value: Decimal) -> Amount {
    Amount { value, quoted: false }
}

/// Why a value is not a valid [`Amount`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum AmountError {
    /// The text is not a plain decimal number such as `10000` or `10000.50`.
    NotANumber,
    /// The amount is below zero.
    Negative,
    /// The amount has more than two decimal places.
    TooManyDecimals,
    /// The amount has more digits than an exact decimal can hold.
    TooLarge,
}

impl AmountError {
    /// What is wrong, as its `Display` says it.
    fn reason(self) -> &'static str {
        match self {
            AmountError::NotANumber => {
                "the amount is not a plain decimal number (digits, optionally a point and up to two decimals)"
            }
            AmountError::Negative => "the amount is negative",
            AmountError::TooManyDecimals => "the amount has more than two decimal places",
            AmountError::TooLarge => "the amount has too many digits",
        }
    }
}

impl std::fmt::Display for AmountError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.reason())
    }
}

impl std::error::Error for AmountError {}

impl From<AmountError> for Error {
    fn from(e: AmountError) -> Self {
        Error::invalid(e.to_string())
    }
}

impl Amount {
    /// Zero.
    pub const ZERO: Amount = amount(Decimal::ZERO);

    /// The exact decimal value.
    pub fn as_decimal(&self) -> Decimal {
        self.value
    }

    /// This amount, sent as a JSON string (`"10000.00"`) instead of a number.
    pub fn as_wire_string(&self) -> AmountText {
        AmountText(*self)
    }

    /// The amount as a request may send it: not negative, at most two decimal places (an
    /// amount read from an answer may be neither).
    fn for_request(&self) -> Result<Amount, AmountError> {
        Amount::from_checked_decimal(self.value)
    }

    fn from_checked_decimal(d: Decimal) -> Result<Self, AmountError> {
        if d.is_zero() {
            // Keeps the scale but drops a negative sign (`-0.00`).
            return Ok(amount(Decimal::new(0, d.scale())));
        }
        if d.is_sign_negative() {
            return Err(AmountError::Negative);
        }
        if d.scale() <= 2 {
            return Ok(amount(d));
        }
        if d.normalize().scale() <= 2 {
            // `1.500` is exactly `1.50`; send it with two decimals.
            return Ok(amount(d.round_dp(2)));
        }
        Err(AmountError::TooManyDecimals)
    }
}

impl FromStr for Amount {
    type Err = AmountError;

    /// Accepts only plain decimals: `10000`, `10000.5`, `10000.50`. No sign, exponent,
    /// separators or spaces.
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        if let Some(rest) = s.strip_prefix('-') {
            return match rest.parse::<Amount>() {
                Ok(a) if a.value.is_zero() => Ok(a),
                Ok(_) | Err(AmountError::TooManyDecimals | AmountError::TooLarge) => {
                    Err(AmountError::Negative)
                }
                Err(_) => Err(AmountError::NotANumber),
            };
        }
        let (whole, fraction) = match s.split_once('.') {
            Some((w, f)) => (w, Some(f)),
            None => (s, None),
        };
        if whole.is_empty() || !whole.bytes().all(|b| b.is_ascii_digit()) {
            return Err(AmountError::NotANumber);
        }
        if let Some(f) = fraction {
            if f.is_empty() || !f.bytes().all(|b| b.is_ascii_digit()) {
                return Err(AmountError::NotANumber);
            }
            if f.len() > 2 {
                return Err(AmountError::TooManyDecimals);
            }
        }
        let d = match short_plain_decimal(s.as_bytes()) {
            Some(d) => d,
            None => Decimal::from_str_exact(s).map_err(|_| AmountError::TooLarge)?,
        };
        Amount::from_checked_decimal(d)
    }
}

impl TryFrom<Decimal> for Amount {
    type Error = AmountError;

    fn try_from(d: Decimal) -> Result<Self, Self::Error> {
        Amount::from_checked_decimal(d)
    }
}

impl TryFrom<&str> for Amount {
    type Error = AmountError;

    fn try_from(s: &str) -> Result<Self, Self::Error> {
        s.parse()
    }
}

impl From<u32> for Amount {
    /// Whole units of the currency.
    fn from(units: u32) -> Self {
        amount(Decimal::from(units))
    }
}

impl From<Amount> for Decimal {
    fn from(a: Amount) -> Self {
        a.value
    }
}

impl fmt::Display for Amount {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Display::fmt(&self.value, f)
    }
}

impl serde::Serialize for Amount {
    /// A JSON number with the amount's exact text, as a request sends it (whatever form
    /// an answer gave it in; [`ToJson`] writes an answer back as it came). The value never
    /// becomes a float.
    /// An amount a request may not send (negative, or more than two decimal places, as an
    /// answer's may be) is refused, so it never leaves.
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        // Written on the stack and borrowed as raw JSON: no allocation per amount.
        let text = self.request_text().map_err(serde::ser::Error::custom)?;
        let raw: &RawValue = serde_json::from_str(text.as_str()).map_err(serde::ser::Error::custom)?;
        raw.serialize(serializer)
    }
}

impl Amount {
    /// The amount as a request sends it, on the stack, or why it may not be sent.
    fn request_text(&self) -> Result<StackText, &'static str> {
        let checked = self.for_request().map_err(AmountError::reason)?;
        let mut text = StackText::default();
        write_plain(&checked.value, &mut text).map_err(|_| "the amount is too long to write")?;
        Ok(text)
    }

    /// Appends the amount to a request's JSON text as its serialization writes it (a
    /// number with the amount's exact text), without reading that text back as JSON: it
    /// is a number, written from its digits. Refused as the serialization refuses it.
    pub(crate) fn write_request_json(&self, out: &mut Vec<u8>) -> serde_json::Result<()> {
        let text = self.request_text().map_err(serde::ser::Error::custom)?;
        out.extend_from_slice(text.as_str().as_bytes());
        Ok(())
    }
}

/// Writes `value` as its `Display` does (`2500.00`, `0.05`, `-0`: every digit of its scale),
/// straight from its digits, without the formatting machinery.
fn write_plain(value: &Decimal, out: &mut StackText) -> fmt::Result {
    let scale = value.scale() as usize;
    // Least significant first; a mantissa has at most 29 digits, and a scale at most 28.
    let mut digits = [b'0'; 40];
    let mut len = 0;
    let mut wide = value.mantissa().unsigned_abs();
    while wide > u128::from(u64::MAX) {
        digits[len] = b'0' + (wide % 10) as u8;
        wide /= 10;
        len += 1;
    }
    let mut narrow = wide as u64;
    while narrow > 0 {
        digits[len] = b'0' + (narrow % 10) as u8;
        narrow /= 10;
        len += 1;
    }
    // Zeros before the first digit of a fraction (`0.05`), already in place.
    let len = len.max(scale).min(digits.len());
    let whole = len.saturating_sub(scale);
    let mut text = [0u8; 44];
    let mut at = 0;
    let mut push = |byte: u8| {
        text[at] = byte;
        at += 1;
    };
    if value.is_sign_negative() {
        push(b'-');
    }
    if whole == 0 {
        push(b'0');
    }
    for &digit in digits[scale..len].iter().rev() {
        push(digit);
    }
    if scale > 0 {
        push(b'.');
        for &digit in digits[..scale].iter().rev() {
            push(digit);
        }
    }
    let text = std::str::from_utf8(&text[..at]).map_err(|_| fmt::Error)?;
    fmt::Write::write_str(out, text)
}

/// Reads the exact decimal an answer wrote: plain (`-1500.10`) or with an exponent
/// (`1.5e2`), never through a float. Too many digits for an exact decimal is an error.
fn exact_decimal(text: &str) -> Result<Decimal, &'static str> {
    let text = super::text::trimmed(text);
    if let Some(value) = short_plain_decimal(text.as_bytes()) {
        return Ok(value);
    }
    let plain = text.strip_prefix('-').unwrap_or(text);
    let is_plain = match plain.split_once('.') {
        Some((whole, fraction)) => {
            !whole.is_empty()
                && !fraction.is_empty()
                && whole.bytes().all(|b| b.is_ascii_digit())
                && fraction.bytes().all(|b| b.is_ascii_digit())
        }
        None => !plain.is_empty() && plain.bytes().all(|b| b.is_ascii_digit()),
    };
    if is_plain {
        return Decimal::from_str_exact(text)
            .map_err(|_| "an amount with more digits than an exact decimal holds");
    }
    if text.contains(['e', 'E']) && text.bytes().all(|b| b.is_ascii_digit() || b"+-.eE".contains(&b)) {
        return Decimal::from_scientific(text)
            .map_err(|_| "an amount with more digits than an exact decimal holds");
    }
    Err("an amount")
}

/// A plain decimal of at most 18 digits (`-1500.10`, every amount an answer writes), read
/// digit by digit; `None` for any other text, which [`Decimal::from_str_exact`] reads. The
/// same decimal as that reading, to the sign of a zero and the scale (tested against it).
fn short_plain_decimal(text: &[u8]) -> Option<Decimal> {
    let (negative, digits) = match text {
        [b'-', rest @ ..] => (true, rest),
        _ => (false, text),
    };
    if digits.len() > 19 || digits.first() == Some(&b'.') || digits.last() == Some(&b'.') {
        return None;
    }
    let mut mantissa = 0u64;
    let mut point = None;
    for (at, &b) in digits.iter().enumerate() {
        match b {
            b'0'..=b'9' => mantissa = mantissa * 10 + u64::from(b - b'0'),
            b'.' if point.is_none() => point = Some(at),
            _ => return None,
        }
    }
    let scale = point.map_or(0, |at| digits.len() - at - 1);
    if digits.len() - usize::from(point.is_some()) > 18 || digits.is_empty() {
        return None;
    }
    // At most 18 digits: below 2^63, in the decimal's low and middle words.
    Some(Decimal::from_parts(mantissa as u32, (mantissa >> 32) as u32, 0, negative, scale as u32))
}

impl FromJson for Amount {
    /// An answer's amount, from a JSON number or a string holding one, exactly.
    fn read(reader: &mut Reader<'_>, at: &Path<'_>) -> Result<Self, DecodeError> {
        let kind = reader.kind();
        let Some((text, quoted)) = reader.number_or_string(at)? else {
            return Err(reader.mismatch(at, "an amount"));
        };
        match exact_decimal(&text) {
            Ok(value) => Ok(Amount { value, quoted }),
            Err("an amount") => Err(DecodeError::at(at, format!("expected an amount, found {kind}"))),
            Err(problem) => Err(DecodeError::at(at, format!("expected an amount, found {problem}"))),
        }
    }

    fn from_json(value: Json, at: &Path<'_>) -> Result<Self, DecodeError> {
        let (text, quoted) = match &value {
            Json::Number(n) => (n.as_str(), false),
            Json::String(s) => (s.as_str(), true),
            other => return Err(DecodeError::expected(at, "an amount", other)),
        };
        match exact_decimal(text) {
            Ok(value) => Ok(Amount { value, quoted }),
            Err("an amount") => Err(DecodeError::expected(at, "an amount", &value)),
            Err(problem) => Err(DecodeError::at(at, format!("expected an amount, found {problem}"))),
        }
    }
}

impl ToJson for Amount {
    fn to_json(&self) -> Json {
        let text = self.value.to_string();
        if self.quoted { Json::String(text) } else { Json::parse(&text).unwrap_or(Json::String(text)) }
    }
}

impl<'de> serde::Deserialize<'de> for Amount {
    /// Reads as an answer does: [`FromJson`].
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        crate::json::deserialize_via_json(deserializer)
    }
}

/// An [`Amount`] that travels as a JSON string (`"10000.00"`), for the operations whose
/// wire wants one. Reads from a number or a string.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct AmountText(pub Amount);

impl AmountText {
    /// The amount inside.
    pub fn amount(&self) -> Amount {
        self.0
    }
}

impl From<Amount> for AmountText {
    fn from(a: Amount) -> Self {
        AmountText(a)
    }
}

impl fmt::Display for AmountText {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Display::fmt(&self.0, f)
    }
}

impl serde::Serialize for AmountText {
    /// Refuses what [`Amount`]'s serialization refuses.
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let checked = self.0.for_request().map_err(serde::ser::Error::custom)?;
        serializer.collect_str(&checked)
    }
}

impl<'de> serde::Deserialize<'de> for AmountText {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        Amount::deserialize(deserializer).map(AmountText)
    }
}

/// Text written into a fixed buffer on the stack (an amount is at most a few dozen
/// characters); writing more than it holds is an error, not a reallocation.
struct StackText {
    bytes: [u8; 64],
    len: usize,
}

impl Default for StackText {
    fn default() -> Self {
        StackText { bytes: [0; 64], len: 0 }
    }
}

impl StackText {
    fn as_str(&self) -> &str {
        // Only whole `&str`s are written.
        std::str::from_utf8(&self.bytes[..self.len]).unwrap_or("")
    }
}

impl fmt::Write for StackText {
    fn write_str(&mut self, s: &str) -> fmt::Result {
        let end = self.len + s.len();
        if end > self.bytes.len() {
            return Err(fmt::Error);
        }
        self.bytes[self.len..end].copy_from_slice(s.as_bytes());
        self.len = end;
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_amount_is_written_as_its_display_writes_it() {
        let mut values = vec![Decimal::ZERO, -Decimal::ZERO, Decimal::MAX, Decimal::MIN, Decimal::new(0, 28)];
        let mut seed = 0x2545_f491_4f6c_dd1d_u64;
        for scale in 0..=28u32 {
            for _ in 0..40 {
                seed ^= seed << 13;
                seed ^= seed >> 7;
                seed ^= seed << 17;
                let mantissa = i64::try_from(seed >> (seed % 64)).unwrap_or(i64::MAX);
                let negative = if seed.is_multiple_of(3) { -mantissa } else { mantissa };
                values.push(Decimal::new(negative, scale));
                // Past 64 bits, up to the 96 a decimal holds.
                let wide = i128::from(seed) * i128::from(seed >> (32 + seed % 8));
                values.extend(Decimal::try_from_i128_with_scale(wide, scale));
            }
            values.push(Decimal::new(0, scale));
            values.push(Decimal::new(5, scale));
        }
        for value in values {
            let mut text = StackText::default();
            assert_eq!(write_plain(&value, &mut text), Ok(()));
            assert_eq!(text.as_str(), value.to_string(), "{value:?}");
        }
    }

    #[test]
    fn a_short_plain_decimal_is_read_as_the_exact_reading_reads_it() {
        let pieces = ["0", "1", "5", "9", "00", "10", "999999999", "123456789", ".", ".", "-", "e", " ", "+"];
        let mut seed = 0x9e37_79b9_7f4a_7c15_u64;
        let mut read = 0;
        for _ in 0..20_000 {
            let mut text = String::new();
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            for _ in 0..(seed % 7) {
                seed ^= seed << 13;
                seed ^= seed >> 7;
                seed ^= seed << 17;
                text.push_str(pieces[(seed % pieces.len() as u64) as usize]);
            }
            let exact = plain_text(&text).then(|| Decimal::from_str_exact(&text).ok()).flatten();
            match short_plain_decimal(text.as_bytes()) {
                Some(fast) => {
                    // The same bits: sign (of a zero too), scale and digits.
                    assert_eq!(Some(fast.serialize()), exact.map(|d| d.serialize()), "{text:?}");
                    read += 1;
                }
                None => assert!(
                    exact.is_none() || text.bytes().filter(u8::is_ascii_digit).count() > 18,
                    "{text:?} is a short plain decimal"
                ),
            }
        }
        assert!(read > 2_000, "{read}");
        for text in ["-0", "-0.00", "0.00000000000000001", "999999999999999999", "-99999999999999999.9"] {
            let fast = short_plain_decimal(text.as_bytes()).map(|d| d.serialize());
            assert!(fast.is_some(), "{text}");
            assert_eq!(fast, Decimal::from_str_exact(text).ok().map(|d| d.serialize()), "{text}");
        }
    }

    /// What `exact_decimal` hands the exact reading as plain: digits, at most one point
    /// with digits on both sides, an optional minus.
    fn plain_text(text: &str) -> bool {
        let plain = text.strip_prefix('-').unwrap_or(text);
        match plain.split_once('.') {
            Some((whole, fraction)) => {
                !whole.is_empty()
                    && !fraction.is_empty()
                    && whole.bytes().chain(fraction.bytes()).all(|b| b.is_ascii_digit())
            }
            None => !plain.is_empty() && plain.bytes().all(|b| b.is_ascii_digit()),
        }
    }

    #[test]
    fn parses_plain_decimals() {
        assert_eq!("10000.00".parse::<Amount>().map(|a| a.to_string()), Ok("10000.00".into()));
        assert_eq!("0.5".parse::<Amount>().map(|a| a.to_string()), Ok("0.5".into()));
        assert_eq!("7".parse::<Amount>().map(|a| a.to_string()), Ok("7".into()));
    }

    #[test]
    fn refuses_bad_text() {
        for bad in ["", ".", "1.", ".5", "1,000", "1_000", "1e3", " 1", "+1", "abc", "1.2.3", "NaN"] {
            assert_eq!(bad.parse::<Amount>(), Err(AmountError::NotANumber), "{bad:?}");
        }
        assert_eq!("-1".parse::<Amount>(), Err(AmountError::Negative));
        assert_eq!("-1.234".parse::<Amount>(), Err(AmountError::Negative));
        assert_eq!("1.234".parse::<Amount>(), Err(AmountError::TooManyDecimals));
        assert_eq!("99999999999999999999999999999999".parse::<Amount>(), Err(AmountError::TooLarge));
    }

    #[test]
    fn negative_zero_is_zero() {
        assert_eq!("-0.00".parse::<Amount>().map(|a| a.to_string()), Ok("0.00".into()));
    }

    #[test]
    fn decimal_conversion_checks_scale_and_sign() {
        assert_eq!(Amount::try_from(Decimal::new(-5, 0)), Err(AmountError::Negative));
        assert_eq!(Amount::try_from(Decimal::new(1234, 3)), Err(AmountError::TooManyDecimals));
        assert_eq!(Amount::try_from(Decimal::new(1500, 3)).map(|a| a.to_string()), Ok("1.50".into()));
        assert_eq!(Amount::from(250u32).to_string(), "250");
    }

    #[test]
    fn serializes_exact_number_text() {
        let a: Amount = "10000.00".parse().unwrap_or(Amount::ZERO);
        assert_eq!(serde_json::to_string(&a).ok(), Some("10000.00".into()));
        let big: Amount = "123456789012345678.10".parse().unwrap_or(Amount::ZERO);
        assert_eq!(serde_json::to_string(&big).ok(), Some("123456789012345678.10".into()));
        assert_eq!(serde_json::to_string(&a.as_wire_string()).ok(), Some("\"10000.00\"".into()));
    }

    #[test]
    fn deserializes_number_or_string_exactly() {
        let from_number: Result<Amount, _> = serde_json::from_str("123456789012345678.10");
        assert_eq!(from_number.map(|a| a.to_string()).ok(), Some("123456789012345678.10".into()));
        let from_string: Result<Amount, _> = serde_json::from_str("\"42.50\"");
        assert_eq!(from_string.map(|a| a.to_string()).ok(), Some("42.50".into()));
        // Answers carry what the service sent: a negative refund, more places, a string.
        let refund: Result<Amount, _> = serde_json::from_str("-3.50");
        assert_eq!(refund.as_ref().map(|a| a.to_string()).ok(), Some("-3.50".into()));
        // ...but a request never sends one.
        assert!(refund.as_ref().is_ok_and(|a| serde_json::to_string(a).is_err()));
        assert!(refund.is_ok_and(|a| serde_json::to_string(&a.as_wire_string()).is_err()));
        let quoted: Result<Amount, _> = serde_json::from_str("\"1.99\"");
        // Written back as it came, but sent in a request as a number.
        assert_eq!(quoted.as_ref().ok().map(ToJson::to_json), Some(Json::String("1.99".into())));
        assert_eq!(quoted.and_then(|a| serde_json::to_string(&a)).ok(), Some("1.99".into()));
        let places: Result<Amount, _> = serde_json::from_str("\"1.999\"");
        assert!(places.is_ok_and(|a| serde_json::to_string(&a).is_err()), "three places are not sent");
        for bad in ["1e400", "\"\"", "\"1,000\"", "true", "\"NaN\"", "99999999999999999999999999999999"] {
            assert!(serde_json::from_str::<Amount>(bad).is_err(), "{bad}");
        }
        let text: Result<AmountText, _> = serde_json::from_str("5");
        assert_eq!(text.map(|a| a.to_string()).ok(), Some("5".into()));
    }
}
