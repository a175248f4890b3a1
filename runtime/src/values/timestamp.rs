//! Dates and times on the wire: answer timestamps, `expiresAt`, `Retry-After` and the
//! webhook timestamp, read with the `time` crate.

use std::fmt;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use time::OffsetDateTime;
use time::format_description::well_known::Rfc3339;

pub use payspec_vocabulary::DateLayout;

use crate::json::{DecodeError, FromJson, Json, Path, Reader, ToJson};

/// An instant from an answer, with the exact text the service sent (written back as
/// is). Read as ISO-8601: `2025-01-31T10:20:30.123Z`, an offset instead of `Z`, a space
/// instead of `T`; without an offset it is UTC, and without seconds it is on the minute,
/// as some of the reference's own examples are.
#[derive(Clone)]
pub struct Timestamp {
    text: Box<str>,
    instant: OffsetDateTime,
}

impl Timestamp {
    /// Reads an ISO-8601 date and time.
    pub fn parse(text: &str) -> Option<Timestamp> {
        Some(Timestamp { instant: instant(text)?, text: text.into() })
    }

    /// Reads an owned text, kept without a copy.
    fn parse_owned(text: String) -> Option<Timestamp> {
        Some(Timestamp { instant: instant(&text)?, text: text.into_boxed_str() })
    }

    /// The text as the service sent it.
    pub fn as_str(&self) -> &str {
        &self.text
    }

    /// The instant, with the offset it was written in.
    pub fn instant(&self) -> OffsetDateTime {
        self.instant
    }

    /// The instant as a [`SystemTime`].
    pub fn to_system_time(&self) -> SystemTime {
        SystemTime::from(self.instant)
    }
}

/// The instant an ISO-8601 text names. Strict RFC 3339, the common case, is read as is;
/// other spellings are normalized first.
fn instant(text: &str) -> Option<OffsetDateTime> {
    match OffsetDateTime::parse(text, &Rfc3339) {
        Ok(instant) => Some(instant),
        Err(_) => OffsetDateTime::parse(&normalized(text.trim())?, &Rfc3339).ok(),
    }
}

/// The text as strict RFC 3339: `T` between date and time, seconds, an offset with a
/// colon.
fn normalized(text: &str) -> Option<String> {
    let bytes = text.as_bytes();
    if bytes.len() < 16 || !matches!(bytes[10], b'T' | b't' | b' ') || !text.is_char_boundary(16) {
        return None;
    }
    let (date, clock) = (&text[..10], &text[11..16]);
    let mut rest = &text[16..];
    let mut out = format!("{date}T{clock}");
    match rest.strip_prefix(':') {
        Some(after) if after.len() >= 2 && after.is_char_boundary(2) => {
            out.push(':');
            out.push_str(&after[..2]);
            rest = &after[2..];
        }
        Some(_) => return None,
        None => out.push_str(":00"),
    }
    if let Some(after) = rest.strip_prefix('.') {
        let digits = after.bytes().take_while(u8::is_ascii_digit).count();
        if digits == 0 {
            return None;
        }
        out.push('.');
        out.push_str(&after[..digits]);
        rest = &after[digits..];
    }
    match rest.as_bytes() {
        [] => out.push('Z'),
        [b'Z' | b'z'] => out.push('Z'),
        [sign @ (b'+' | b'-'), h1, h2, m1, m2] => {
            out.extend([*sign, *h1, *h2, b':', *m1, *m2].map(char::from));
        }
        _ => out.push_str(rest),
    }
    Some(out)
}

impl PartialEq for Timestamp {
    fn eq(&self, other: &Self) -> bool {
        self.instant == other.instant
    }
}

impl Eq for Timestamp {}

impl PartialOrd for Timestamp {
    fn partial_cmp(&self, other: &Self) -> Option<std::cmp::Ordering> {
        Some(self.cmp(other))
    }
}

impl Ord for Timestamp {
    fn cmp(&self, other: &Self) -> std::cmp::Ordering {
        self.instant.cmp(&other.instant)
    }
}

impl fmt::Debug for Timestamp {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "Timestamp({})", self.text)
    }
}

impl fmt::Display for Timestamp {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.text)
    }
}

impl FromJson for Timestamp {
    fn read(reader: &mut Reader<'_>, at: &Path<'_>) -> Result<Self, DecodeError> {
        let text = reader.string(at, "an ISO-8601 date and time")?;
        Timestamp::parse_owned(text).ok_or_else(|| {
            DecodeError::at(at, "expected an ISO-8601 date and time, found a string that is not one")
        })
    }

    fn from_json(value: Json, at: &Path<'_>) -> Result<Self, DecodeError> {
        match value {
            Json::String(text) => Timestamp::parse_owned(text).ok_or_else(|| {
                DecodeError::at(at, "expected an ISO-8601 date and time, found a string that is not one")
            }),
            other => Err(DecodeError::expected(at, "an ISO-8601 date and time", &other)),
        }
    }
}

impl ToJson for Timestamp {
    fn to_json(&self) -> Json {
        Json::String(self.text.to_string())
    }
}

impl serde::Serialize for Timestamp {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.serialize_str(&self.text)
    }
}

impl<'de> serde::Deserialize<'de> for Timestamp {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        crate::json::deserialize_via_json(deserializer)
    }
}

/// Reads an ISO-8601 instant as [`Timestamp::parse`] does.
pub(crate) fn parse_rfc3339(text: &str) -> Option<SystemTime> {
    Timestamp::parse(text).map(|t| t.to_system_time())
}

/// Reads a strict RFC 3339 instant, and nothing else: seconds, an offset, no trailing
/// text (the webhook timestamp, whose exact form the signature relies on).
pub(crate) fn parse_rfc3339_strict(text: &str) -> Option<SystemTime> {
    OffsetDateTime::parse(text, &Rfc3339).ok().map(SystemTime::from)
}

/// `2025-03-01T12:30:45Z`: whole seconds, UTC.
pub(crate) fn format_rfc3339(at: SystemTime) -> String {
    let whole = at.duration_since(UNIX_EPOCH).map_or(0, |d| d.as_secs());
    let instant = OffsetDateTime::from_unix_timestamp(i64::try_from(whole).unwrap_or(0))
        .unwrap_or(OffsetDateTime::UNIX_EPOCH);
    instant.format(&Rfc3339).unwrap_or_default()
}

/// Epoch numbers at or above this are milliseconds, below it seconds (10^11 seconds is
/// the year 5138; 10^11 milliseconds is 1973).
const EPOCH_MILLIS_FROM: u64 = 100_000_000_000;

fn from_epoch(value: u64) -> Option<SystemTime> {
    if value >= EPOCH_MILLIS_FROM {
        UNIX_EPOCH.checked_add(Duration::from_millis(value))
    } else {
        UNIX_EPOCH.checked_add(Duration::from_secs(value))
    }
}

/// Reads a token's `expiresAt`: an ISO-8601 instant, or epoch seconds or milliseconds
/// as a JSON number or as digits in a string.
pub(crate) fn parse_expiry(value: &Json) -> Option<SystemTime> {
    match value {
        Json::String(text) => {
            let text = text.trim();
            if !text.is_empty() && text.bytes().all(|b| b.is_ascii_digit()) {
                return from_epoch(text.parse().ok()?);
            }
            parse_rfc3339(text)
        }
        // A fractional epoch keeps its whole part: seconds or milliseconds are precise
        // enough here. Exponents and signs are not epochs.
        Json::Number(n) => {
            let whole = n.as_str().split('.').next().unwrap_or_default();
            if whole.is_empty() || !whole.bytes().all(|b| b.is_ascii_digit()) {
                return None;
            }
            from_epoch(whole.parse().ok()?)
        }
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_request_date_is_held_in_utc_and_written_in_its_layout() {
        let parsed = |text: &str| text.parse::<DateTime>().unwrap_or_else(|e| panic!("{text}: {e}"));
        let from = parsed("2024-09-30T23:59:59.750+01:00");
        assert_eq!(from.to_wire(DateLayout::Seconds), "2024-09-30T22:59:59");
        assert_eq!(from.to_wire(DateLayout::Minutes), "2024-09-30T22:59");
        assert_eq!(from.to_wire(DateLayout::SpaceSeconds), "2024-09-30 22:59:59");
        assert_eq!(from.to_wire(DateLayout::Date), "2024-09-30");
        // Without an offset it is UTC; a space and missing seconds are read too.
        assert_eq!(parsed("2025-08-29 14:58").to_wire(DateLayout::Seconds), "2025-08-29T14:58:00");
        assert_eq!(DateTime::from(time::Date::MIN.next_day().unwrap_or(time::Date::MIN)).utc().hour(), 0);
        for bad in
            ["", "30/09/2024", "2024-13-01T00:00:00", "2024-09-30T25:00:00", "2024-09-30T10:00:00+0x:00"]
        {
            let error = bad.parse::<DateTime>().expect_err(bad).to_string();
            assert!(error.contains("is not a date and time"), "{bad}: {error}");
        }
    }

    fn unix(t: Option<SystemTime>) -> Option<i128> {
        let t = t?;
        Some(match t.duration_since(UNIX_EPOCH) {
            Ok(d) => d.as_nanos() as i128,
            Err(e) => -(e.duration().as_nanos() as i128),
        })
    }

    #[test]
    fn timestamps_keep_their_text_and_read_the_references_forms() {
        for text in ["2023-09-04T15:23:55.173Z", "2025-08-30T10:40", "2026-03-08T19:26:34.657000Z"] {
            let t = Timestamp::parse(text).unwrap_or_else(|| panic!("{text}"));
            assert_eq!(t.as_str(), text);
        }
        assert_eq!(unix(parse_rfc3339("2025-08-30T10:40")), unix(parse_rfc3339("2025-08-30T10:40:00Z")));
        assert_eq!(parse_rfc3339_strict("2025-08-30T10:40"), None);
        assert_eq!(parse_rfc3339_strict("2025-03-01T12:30:45Z:junk"), None);
        assert_eq!(format_rfc3339(UNIX_EPOCH + Duration::from_secs(1_738_318_830)), "2025-01-31T10:20:30Z");
    }

    // Expected values computed with: python3 -c "import datetime; print(int(datetime.datetime(2025,1,31,10,20,30,tzinfo=datetime.timezone.utc).timestamp()))"
    #[test]
    fn parses_rfc3339_forms() {
        assert_eq!(unix(parse_rfc3339("2025-01-31T10:20:30Z")), Some(1_738_318_830_000_000_000));
        assert_eq!(unix(parse_rfc3339("2025-01-31T10:20:30.25Z")), Some(1_738_318_830_250_000_000));
        assert_eq!(unix(parse_rfc3339("2025-01-31T11:20:30+01:00")), Some(1_738_318_830_000_000_000));
        assert_eq!(unix(parse_rfc3339("2025-01-31 10:20:30")), Some(1_738_318_830_000_000_000));
        assert_eq!(
            unix(parse_rfc3339("2025-01-31T05:20:30.123456789123-0500")),
            Some(1_738_318_830_123_456_789)
        );
        // 2024-02-29 is a leap day: 1709164800.
        assert_eq!(unix(parse_rfc3339("2024-02-29T00:00:00Z")), Some(1_709_164_800_000_000_000));
        assert_eq!(unix(parse_rfc3339("1969-12-31T23:59:59Z")), Some(-1_000_000_000));
    }

    #[test]
    fn refuses_malformed_instants() {
        for bad in [
            "",
            "2025-01-31",
            "2025-13-01T00:00:00Z",
            "2025-02-29T00:00:00Z",
            "2025-01-31T24:00:00Z",
            "2025-01-31T10:20:30.Z",
            "2025-01-31T10:20:30+1:00",
            "2025/01/31T10:20:30Z",
            "2025-01-31T10:20:30Zjunk",
        ] {
            assert_eq!(parse_rfc3339(bad), None, "{bad:?}");
        }
    }

    #[test]
    fn reads_expiry_in_every_form() {
        let json = |text: &str| Json::parse(text).unwrap_or_default();
        let at = Some(1_738_318_830_000_000_000);
        assert_eq!(unix(parse_expiry(&json("\"2025-01-31T10:20:30Z\""))), at);
        assert_eq!(unix(parse_expiry(&json("1738318830"))), at);
        assert_eq!(unix(parse_expiry(&json("1738318830000"))), at);
        assert_eq!(unix(parse_expiry(&json("\"1738318830\""))), at);
        assert_eq!(unix(parse_expiry(&json("1738318830.0"))), at);
        for bad in ["\"soon\"", "-5", "null", "true", "\"\"", "1e300", "99999999999999999999999"] {
            assert_eq!(parse_expiry(&json(bad)), None, "{bad}");
        }
    }
}

/// A date and time a request sends, held as UTC to the second.
///
/// Build it from a [`time::OffsetDateTime`] (converted to UTC), a [`SystemTime`], a
/// [`time::Date`] (midnight UTC), or text: `"2024-09-30T23:59:59"`, with or without
/// seconds, a space for the `T`, or an offset (converted to UTC).
///
/// ```
/// use payspec_runtime::DateTime;
/// use payspec_runtime::vocabulary::DateLayout;
/// let from: DateTime = "2024-09-30T23:59:59+01:00".parse()?;
/// assert_eq!(from.to_wire(DateLayout::Seconds), "2024-09-30T22:59:59");
/// # Ok::<(), payspec_runtime::Error>(())
/// ```
#[derive(Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct DateTime(time::PrimitiveDateTime);

impl DateTime {
    /// The current time.
    pub fn now() -> DateTime {
        DateTime::from(OffsetDateTime::now_utc())
    }

    /// The date and time, in UTC.
    pub fn utc(&self) -> time::PrimitiveDateTime {
        self.0
    }

    /// The text a request sends in `layout`.
    pub fn to_wire(&self, layout: DateLayout) -> String {
        let (date, clock) = (self.0.date(), self.0.time());
        let (y, m, d) = (date.year(), u8::from(date.month()), date.day());
        let (hh, mm, ss) = (clock.hour(), clock.minute(), clock.second());
        match layout {
            DateLayout::Seconds => format!("{y:04}-{m:02}-{d:02}T{hh:02}:{mm:02}:{ss:02}"),
            DateLayout::Minutes => format!("{y:04}-{m:02}-{d:02}T{hh:02}:{mm:02}"),
            DateLayout::SpaceSeconds => format!("{y:04}-{m:02}-{d:02} {hh:02}:{mm:02}:{ss:02}"),
            DateLayout::Date => format!("{y:04}-{m:02}-{d:02}"),
            DateLayout::Instant => format!("{y:04}-{m:02}-{d:02}T{hh:02}:{mm:02}:{ss:02}.000Z"),
        }
    }
}

impl std::str::FromStr for DateTime {
    type Err = crate::error::Error;

    fn from_str(text: &str) -> Result<Self, Self::Err> {
        match Timestamp::parse(text) {
            Some(t) if (0..=9999).contains(&t.instant.to_offset(time::UtcOffset::UTC).year()) => {
                Ok(DateTime::from(t.instant))
            }
            _ => Err(crate::error::Error::invalid(format!(
                "`{}` is not a date and time such as 2024-09-30T23:59:59",
                text.escape_debug()
            ))),
        }
    }
}

impl From<OffsetDateTime> for DateTime {
    fn from(instant: OffsetDateTime) -> Self {
        let utc = instant.to_offset(time::UtcOffset::UTC);
        let whole = utc.time().replace_nanosecond(0).unwrap_or(utc.time());
        DateTime(time::PrimitiveDateTime::new(utc.date(), whole))
    }
}

impl From<SystemTime> for DateTime {
    fn from(instant: SystemTime) -> Self {
        DateTime::from(OffsetDateTime::from(instant))
    }
}

impl From<time::Date> for DateTime {
    fn from(date: time::Date) -> Self {
        DateTime(date.midnight())
    }
}

impl fmt::Debug for DateTime {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "DateTime({}Z)", self.to_wire(DateLayout::Seconds))
    }
}

impl fmt::Display for DateTime {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}Z", self.to_wire(DateLayout::Seconds))
    }
}
