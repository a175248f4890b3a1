//! The two date formats the wire uses: RFC 3339 instants (`expiresAt`) and HTTP dates
//! (`Retry-After`). Small on purpose; a date crate would be far larger than these needs.

use std::time::{Duration, SystemTime, UNIX_EPOCH};

/// Days from 1970-01-01 to the given civil date (proleptic Gregorian).
fn days_from_civil(year: i64, month: u32, day: u32) -> i64 {
    let y = if month <= 2 { year - 1 } else { year };
    let era = y.div_euclid(400);
    let yoe = y - era * 400;
    let m = i64::from(month);
    let doy = (153 * (if m > 2 { m - 3 } else { m + 9 }) + 2) / 5 + i64::from(day) - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    era * 146_097 + doe - 719_468
}

fn days_in_month(year: i64, month: u32) -> u32 {
    match month {
        1 | 3 | 5 | 7 | 8 | 10 | 12 => 31,
        4 | 6 | 9 | 11 => 30,
        _ if (year % 4 == 0 && year % 100 != 0) || year % 400 == 0 => 29,
        _ => 28,
    }
}

fn digits(s: &[u8]) -> Option<u32> {
    if s.is_empty() || !s.iter().all(u8::is_ascii_digit) {
        return None;
    }
    s.iter().try_fold(0u32, |acc, d| acc.checked_mul(10)?.checked_add(u32::from(d - b'0')))
}

/// `date` is (year, month, day), `time` is (hour, minute, second).
fn instant(
    (year, month, day): (i64, u32, u32),
    (hour, minute, second): (u32, u32, u32),
    nanos: u32,
    offset_seconds: i64,
) -> Option<SystemTime> {
    if !(1..=12).contains(&month)
        || day == 0
        || day > days_in_month(year, month)
        || hour > 23
        || minute > 59
        || second > 60
    {
        return None;
    }
    // A leap second is read as the last second of its minute.
    let second = second.min(59);
    let secs = days_from_civil(year, month, day) * 86_400
        + i64::from(hour) * 3_600
        + i64::from(minute) * 60
        + i64::from(second)
        - offset_seconds;
    let base = if secs >= 0 {
        UNIX_EPOCH.checked_add(Duration::from_secs(secs.unsigned_abs()))?
    } else {
        UNIX_EPOCH.checked_sub(Duration::from_secs(secs.unsigned_abs()))?
    };
    base.checked_add(Duration::from_nanos(u64::from(nanos)))
}

/// Parses an RFC 3339 / ISO-8601 instant: `2025-01-31T10:20:30Z`, with optional
/// fractional seconds and `Z` or a `±HH:MM` offset. A `T` may be a space; a missing offset
/// is read as UTC, since the wire documents UTC instants.
pub(crate) fn parse_rfc3339(text: &str) -> Option<SystemTime> {
    let s = text.trim().as_bytes();
    if s.len() < 19 || s[4] != b'-' || s[7] != b'-' || s[13] != b':' || s[16] != b':' {
        return None;
    }
    if !matches!(s[10], b'T' | b't' | b' ') {
        return None;
    }
    let year = i64::from(digits(&s[0..4])?);
    let month = digits(&s[5..7])?;
    let day = digits(&s[8..10])?;
    let hour = digits(&s[11..13])?;
    let minute = digits(&s[14..16])?;
    let second = digits(&s[17..19])?;
    let mut rest = &s[19..];
    let mut nanos = 0u32;
    if let Some(after_dot) = rest.strip_prefix(b".") {
        let len = after_dot.iter().take_while(|b| b.is_ascii_digit()).count();
        if len == 0 {
            return None;
        }
        let kept = &after_dot[..len.min(9)];
        nanos = digits(kept)? * 10u32.pow(9 - u32::try_from(kept.len()).ok()?);
        rest = &after_dot[len..];
    }
    let offset = match rest {
        [] | [b'Z' | b'z'] => 0,
        [sign @ (b'+' | b'-'), h1, h2, b':', m1, m2] | [sign @ (b'+' | b'-'), h1, h2, m1, m2] => {
            let h = i64::from(digits(&[*h1, *h2])?);
            let m = i64::from(digits(&[*m1, *m2])?);
            if h > 23 || m > 59 {
                return None;
            }
            let total = h * 3_600 + m * 60;
            if *sign == b'-' { -total } else { total }
        }
        _ => return None,
    };
    instant((year, month, day), (hour, minute, second), nanos, offset)
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
pub(crate) fn parse_expiry(value: &serde_json::Value) -> Option<SystemTime> {
    match value {
        serde_json::Value::String(text) => {
            let text = text.trim();
            if !text.is_empty() && text.bytes().all(|b| b.is_ascii_digit()) {
                return from_epoch(text.parse().ok()?);
            }
            parse_rfc3339(text)
        }
        serde_json::Value::Number(n) => match n.as_u64() {
            Some(whole) => from_epoch(whole),
            // A fractional epoch: whole seconds or milliseconds are precise enough here.
            None => n.as_f64().filter(|f| f.is_finite() && *f >= 0.0 && *f < 1e15).and_then(|f| {
                // The bound above keeps the value within u64.
                #[allow(clippy::cast_possible_truncation, clippy::cast_sign_loss)]
                from_epoch(f as u64)
            }),
        },
        _ => None,
    }
}

/// Parses an HTTP date in its preferred form (`Sun, 06 Nov 1994 08:49:37 GMT`).
pub(crate) fn parse_http_date(text: &str) -> Option<SystemTime> {
    let parts: Vec<&str> = text.split_whitespace().collect();
    let [_weekday, day, month, year, time, zone] = parts.as_slice() else {
        return None;
    };
    if !zone.eq_ignore_ascii_case("GMT") && !zone.eq_ignore_ascii_case("UTC") {
        return None;
    }
    const MONTHS: [&str; 12] =
        ["jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct", "nov", "dec"];
    let month_index = MONTHS.iter().position(|m| m.eq_ignore_ascii_case(month))?;
    let month = u32::try_from(month_index).ok()? + 1;
    let mut hms = time.split(':');
    let (Some(h), Some(m), Some(sec), None) = (hms.next(), hms.next(), hms.next(), hms.next()) else {
        return None;
    };
    let date = (i64::from(digits(year.as_bytes())?), month, digits(day.as_bytes())?);
    let time = (digits(h.as_bytes())?, digits(m.as_bytes())?, digits(sec.as_bytes())?);
    instant(date, time, 0, 0)
}

/// Reads a `Retry-After` value: whole seconds or an HTTP date (measured from `now`).
pub(crate) fn parse_retry_after(text: &str, now: SystemTime) -> Option<Duration> {
    let text = text.trim();
    if let Some(secs) = digits(text.as_bytes()) {
        return Some(Duration::from_secs(u64::from(secs)));
    }
    if !text.is_empty() && text.bytes().all(|b| b.is_ascii_digit()) {
        // Too many digits for u32: a very long wait.
        return Some(Duration::from_secs(u64::from(u32::MAX)));
    }
    let at = parse_http_date(text)?;
    Some(at.duration_since(now).unwrap_or(Duration::ZERO))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn unix(t: Option<SystemTime>) -> Option<i128> {
        let t = t?;
        Some(match t.duration_since(UNIX_EPOCH) {
            Ok(d) => d.as_nanos() as i128,
            Err(e) => -(e.duration().as_nanos() as i128),
        })
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
        use serde_json::json;
        let at = Some(1_738_318_830_000_000_000);
        assert_eq!(unix(parse_expiry(&json!("2025-01-31T10:20:30Z"))), at);
        assert_eq!(unix(parse_expiry(&json!(1_738_318_830u64))), at);
        assert_eq!(unix(parse_expiry(&json!(1_738_318_830_000u64))), at);
        assert_eq!(unix(parse_expiry(&json!("1738318830"))), at);
        assert_eq!(unix(parse_expiry(&json!(1_738_318_830.0))), at);
        for bad in [json!("soon"), json!(-5), json!(null), json!(true), json!(""), json!(1e300)] {
            assert_eq!(parse_expiry(&bad), None, "{bad}");
        }
    }

    // 784111777 = Sun, 06 Nov 1994 08:49:37 GMT (the RFC 9110 example).
    #[test]
    fn parses_http_dates_and_retry_after() {
        assert_eq!(unix(parse_http_date("Sun, 06 Nov 1994 08:49:37 GMT")), Some(784_111_777_000_000_000));
        let now = UNIX_EPOCH + Duration::from_secs(784_111_770);
        assert_eq!(parse_retry_after("Sun, 06 Nov 1994 08:49:37 GMT", now), Some(Duration::from_secs(7)));
        assert_eq!(parse_retry_after(" 3 ", now), Some(Duration::from_secs(3)));
        assert_eq!(parse_retry_after("Sun, 06 Nov 1994 08:49:30 GMT", now), Some(Duration::ZERO));
        assert_eq!(parse_retry_after("soon", now), None);
    }
}
