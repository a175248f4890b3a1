//! Removes secrets from text that may end up in an error: answer excerpts and service
//! descriptions. Works on text, so it also cleans bodies that are not valid JSON.

use std::borrow::Cow;
use std::sync::Arc;

use crate::values::Secret;

/// At most this many bytes of an answer are examined.
const SCAN_LIMIT: usize = 64 * 1024;
/// At most this many characters of an answer are kept in an error.
pub(crate) const EXCERPT_CHARS: usize = 300;
/// What a removed secret is replaced with.
pub(crate) const MASK: &str = "***";

/// JSON keys whose values are secrets, compared after lowercasing and dropping `_`/`-`.
const SECRET_KEYS: &[&str] = &[
    "accesstoken",
    "refreshtoken",
    "clientsecret",
    "secret",
    "carddetails",
    "cardpin",
    "cardcvv",
    "cvv",
    "cardnumber",
    "otp",
    "pin",
    "bvn",
    "password",
    "authorization",
    "token",
    "signaturekey",
];

/// The longest of [`SECRET_KEYS`].
const LONGEST_SECRET_KEY: usize = 13;

fn is_secret_key(key: &str) -> bool {
    // Lowercased as Unicode does (the Kelvin sign is a `k`), without allocating: a key that
    // is longer, or not ASCII once lowercased, is none of them. ASCII is lowercased byte by
    // byte, the cheaper way to the same letters.
    let mut normal = [0u8; LONGEST_SECRET_KEY];
    let mut len = 0;
    let mut push = |c: char| {
        let fits = c.is_ascii() && len < normal.len();
        if fits {
            normal[len] = c as u8;
            len += 1;
        }
        fits
    };
    let kept = |c: &char| *c != '_' && *c != '-';
    let fits = if key.is_ascii() {
        key.chars().filter(kept).all(|c| push(c.to_ascii_lowercase()))
    } else {
        key.chars().filter(kept).flat_map(char::to_lowercase).all(push)
    };
    fits && SECRET_KEYS.iter().any(|secret| secret.as_bytes() == &normal[..len])
}

/// The secret values a client holds at one moment (client secret, access and refresh
/// tokens, the secret parameters of the request being sent). Every occurrence of them is
/// removed from text, whether written as is, JSON-escaped or percent-encoded.
///
/// Borrowed from where they are kept (the token's values by a reference count): gathering
/// them for an error copies none.
#[derive(Default)]
pub(crate) struct Secrets<'a> {
    client: Option<&'a str>,
    token: Option<Arc<[Secret]>>,
    request: &'a [String],
    keys: &'a [Secret],
}

impl<'a> Secrets<'a> {
    /// No known secret; key names and bearer tokens are still masked.
    #[cfg(test)]
    pub(crate) fn none() -> Self {
        Secrets::default()
    }

    /// A client's secrets: its client secret, its current token's values and the secret
    /// parameters of the request at hand, in that order.
    pub(crate) fn of(client: Option<&'a str>, token: Option<Arc<[Secret]>>, request: &'a [String]) -> Self {
        Secrets { client, token, request, keys: &[] }
    }

    /// The same, with the client's secret key credentials.
    pub(crate) fn with_keys(mut self, keys: &'a [Secret]) -> Self {
        self.keys = keys;
        self
    }

    /// The values to remove, in order. Values shorter than [`MIN_SECRET_CHARS`] cannot be
    /// told apart from ordinary text and are left out. A value given twice is looked for
    /// twice; the second finds it masked already.
    fn values(&self) -> impl Iterator<Item = &str> {
        let token = self.token.iter().flat_map(|values| values.iter().map(Secret::expose));
        let keys = self.keys.iter().map(Secret::expose);
        let all =
            self.client.into_iter().chain(token).chain(keys).chain(self.request.iter().map(String::as_str));
        all.filter(|value| value.chars().count() >= MIN_SECRET_CHARS)
    }
}

/// What knows the secrets a client holds (its client secret, the tokens it holds): the
/// text of an error is made with them, and the secret parameters of the request at hand,
/// removed.
pub(crate) trait HoldsSecrets: Sync {
    /// The secrets to remove from an error about a request whose secret parameters are
    /// `request`.
    fn secrets<'a>(&'a self, request: &'a [String]) -> Secrets<'a>;
}

/// Holds none: for what answers no request of a client's (a test's reading).
impl HoldsSecrets for () {
    fn secrets<'a>(&'a self, request: &'a [String]) -> Secrets<'a> {
        Secrets::of(None, None, request)
    }
}

/// Stands in for a secret value in `Debug` output.
#[derive(Clone, Copy, PartialEq, Eq)]
pub struct Redacted;

impl std::fmt::Debug for Redacted {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("\"***\"")
    }
}

/// The shortest value removed as a known secret.
const MIN_SECRET_CHARS: usize = 3;
/// At most this many characters of a description are kept in an error.
const DESCRIPTION_CHARS: usize = 1000;

/// A redacted, shortened excerpt of an answer body.
pub(crate) fn excerpt(body: &[u8], secrets: &Secrets) -> String {
    let scanned = &body[..body.len().min(SCAN_LIMIT)];
    let text = String::from_utf8_lossy(scanned);
    // Cut once, to the excerpt's length (the shorter of the two): the same text as cutting
    // to a description's length first, and one copy of it.
    const _: () = assert!(EXCERPT_CHARS <= DESCRIPTION_CHARS);
    truncate_chars(redacted(&text, secrets), EXCERPT_CHARS)
}

/// Removes secrets from a piece of text (JSON or not), and bounds its length.
pub(crate) fn redact_text(text: &str, secrets: &Secrets) -> String {
    truncate_chars(redacted(text, secrets), DESCRIPTION_CHARS.max(EXCERPT_CHARS))
}

/// [`redact_text`] without the bound on its length: the text itself when it has nothing
/// to remove.
fn redacted<'t>(text: &'t str, secrets: &Secrets) -> Cow<'t, str> {
    let text = if text.len() <= SCAN_LIMIT {
        // No more characters than bytes.
        text
    } else {
        match text.char_indices().nth(SCAN_LIMIT) {
            Some((cut, _)) => &text[..cut],
            None => text,
        }
    };
    // Known values first: a heuristic mask could cut one in two and hide it from the match.
    // Each step borrows what it leaves unchanged: text without secrets is copied once.
    let mut out = Cow::Borrowed(text);
    for secret in secrets.values() {
        if let Cow::Owned(changed) = redact_value(&out, secret) {
            out = Cow::Owned(changed);
        }
    }
    if let Cow::Owned(changed) = redact_json_keys(&out) {
        out = Cow::Owned(changed);
    }
    if let Cow::Owned(changed) = redact_bearer(&out) {
        out = Cow::Owned(changed);
    }
    out
}

/// Replaces every occurrence of `secret` in `text`, in any mix of its literal,
/// JSON-escaped (`\/`, `\u00XX`) and percent-encoded (`%2F`, `+` for a space) spellings. A
/// text that ends inside the secret is masked to its end.
fn redact_value<'t>(text: &'t str, secret: &str) -> Cow<'t, str> {
    let bytes = text.as_bytes();
    let mut chars = secret.chars();
    let Some(first) = chars.next() else { return Cow::Borrowed(text) };
    let second = chars.next();
    let mut utf8 = [0u8; 4];
    let literal = first.encode_utf8(&mut utf8).as_bytes();
    // Every spelling of the first character starts with its first byte, or with `\`, `%`
    // or `+`: a byte never inside another character, so each is a character boundary.
    let lead = literal[0];
    let second_lead = second.map(|c| c.encode_utf8(&mut [0u8; 4]).as_bytes()[0]);
    let escape = |b: u8| matches!(b, b'\\' | b'%' | b'+');
    let mut out = String::new();
    let mut copied = 0;
    let mut i = 0;
    while let Some(found) = bytes[i..].iter().position(|&b| b == lead || escape(b)) {
        let at = i + found;
        // Only where spellings of the secret's first two characters follow each other is
        // the rest followed.
        let could_start = if escape(bytes[at]) {
            spellings_of(first, bytes, at).any(|next| {
                next < bytes.len()
                    && second.is_none_or(|second| spellings_of(second, bytes, next).next().is_some())
            })
        } else {
            // Only the character as it is starts with any other byte; the second then
            // starts with its own first byte or an escape.
            bytes[at..].starts_with(literal)
                && match (second_lead, bytes.get(at + literal.len())) {
                    (None, _) => true,
                    (Some(_), None) => false,
                    (Some(second), Some(&next)) => next == second || escape(next),
                }
        };
        if could_start && let Some(end) = match_encoded(bytes, at, secret) {
            // Cut at character boundaries only.
            let end = (end..=bytes.len()).find(|e| text.is_char_boundary(*e)).unwrap_or(bytes.len());
            out.reserve(text.len());
            out.push_str(&text[copied..at]);
            out.push_str(MASK);
            copied = end;
            i = end;
        } else {
            i = at + 1;
        }
    }
    if copied == 0 {
        return Cow::Borrowed(text);
    }
    out.push_str(&text[copied..]);
    Cow::Owned(out)
}

/// Where a spelling of `secret` that starts at `start` ends, if one does. Every character
/// of the secret may be spelled differently, so the possible positions are followed
/// together.
fn match_encoded(text: &[u8], start: usize, secret: &str) -> Option<usize> {
    let mut positions = vec![start];
    let mut next = Vec::new();
    let mut matched = 0;
    for c in secret.chars() {
        next.clear();
        let mut at_end = false;
        for &p in &positions {
            if p >= text.len() {
                at_end = true;
                continue;
            }
            for end in spellings_of(c, text, p) {
                if !next.contains(&end) {
                    next.push(end);
                }
            }
        }
        if next.is_empty() {
            // The text ended inside a spelling of the secret: mask what is there.
            return (at_end && matched >= MIN_SECRET_CHARS).then_some(text.len());
        }
        matched += 1;
        std::mem::swap(&mut positions, &mut next);
    }
    positions.into_iter().max()
}

/// The positions just past each spelling of `c` that starts at `p`.
fn spellings_of(c: char, text: &[u8], p: usize) -> impl Iterator<Item = usize> {
    let mut utf8 = [0u8; 4];
    let literal = c.encode_utf8(&mut utf8).as_bytes();
    let plain = text[p..].starts_with(literal).then_some(p + literal.len());
    let plus = (c == ' ' && text[p] == b'+').then_some(p + 1);
    let percent = percent_spelling(literal, text, p);
    let escaped = json_escape_spelling(c, text, p);
    [plain, plus, percent, escaped].into_iter().flatten()
}

fn hex_value(b: u8) -> Option<u8> {
    match b {
        b'0'..=b'9' => Some(b - b'0'),
        b'a'..=b'f' => Some(b - b'a' + 10),
        b'A'..=b'F' => Some(b - b'A' + 10),
        _ => None,
    }
}

/// `%XX` for every byte of the character (any hex case).
fn percent_spelling(utf8: &[u8], text: &[u8], p: usize) -> Option<usize> {
    let mut i = p;
    for &byte in utf8 {
        let [b'%', hi, lo] = *text.get(i..i + 3)? else {
            return None;
        };
        if hex_value(hi)? * 16 + hex_value(lo)? != byte {
            return None;
        }
        i += 3;
    }
    Some(i)
}

/// A JSON escape of the character: `\"`, `\\`, `\/`, `\n`-style, or `\uXXXX` (a pair of
/// them outside the basic plane).
fn json_escape_spelling(c: char, text: &[u8], p: usize) -> Option<usize> {
    if text.get(p) != Some(&b'\\') {
        return None;
    }
    let short = match text.get(p + 1)? {
        b'"' => Some('"'),
        b'\\' => Some('\\'),
        b'/' => Some('/'),
        b'n' => Some('\n'),
        b't' => Some('\t'),
        b'r' => Some('\r'),
        b'b' => Some('\u{8}'),
        b'f' => Some('\u{c}'),
        _ => None,
    };
    if let Some(decoded) = short {
        return (decoded == c).then_some(p + 2);
    }
    let mut units = [0u16; 2];
    let units = c.encode_utf16(&mut units);
    let mut i = p;
    for unit in units.iter() {
        let [b'\\', b'u', a, b, c2, d] = *text.get(i..i + 6)? else {
            return None;
        };
        let value =
            [a, b, c2, d].iter().try_fold(0u16, |acc, h| Some(acc * 16 + u16::from(hex_value(*h)?)))?;
        if value != *unit {
            return None;
        }
        i += 6;
    }
    Some(i)
}

/// The excerpt of an answer for an error: every value hidden when the answer's values are
/// all secrets ([`excerpt_without_values`]), known secrets and secret keys otherwise.
pub(crate) fn answer_excerpt(body: &[u8], secrets: &Secrets, secret_values: bool) -> String {
    if secret_values { excerpt_without_values(body, secrets) } else { excerpt(body, secrets) }
}

/// A text taken from an answer (its description, a redirect's target), cleaned as
/// [`answer_excerpt`] cleans the whole answer.
pub(crate) fn answer_text(text: &str, secrets: &Secrets, secret_values: bool) -> String {
    let clean = redact_text(text, secrets);
    if secret_values { hide_values(&clean) } else { clean }
}

/// A redacted, shortened excerpt of an answer every value of which is a secret (a token
/// answer): its keys and structure, with every value replaced ([`hide_values`]).
pub(crate) fn excerpt_without_values(body: &[u8], secrets: &Secrets) -> String {
    let scanned = &body[..body.len().min(SCAN_LIMIT)];
    let text = String::from_utf8_lossy(scanned);
    let clean = hide_values(&redact_text(&text, secrets));
    truncate_chars(Cow::Owned(clean), EXCERPT_CHARS)
}

/// The longest word kept by [`hide_values`]: longer words may be tokens.
const MAX_PLAIN_WORD: usize = 15;
/// The longest key kept by [`hide_values`].
const MAX_PLAIN_KEY: usize = 40;

/// Replaces every value in `text` with `***`, for text that comes from an answer whose
/// values are all secrets. JSON strings become `"***"` unless they are keys made of
/// letters, `_` and `-`; outside strings, a word (a run of characters other than spaces
/// and JSON or markup punctuation) stays only if it is made of ASCII letters and at most
/// 15 long, so `true`, `null` and the words of a message such as `Bad Gateway` stay, and
/// numbers, tokens and encoded text go. Works on any text, JSON or not.
pub(crate) fn hide_values(text: &str) -> String {
    let bytes = text.as_bytes();
    let mut out = String::with_capacity(text.len().min(4 * EXCERPT_CHARS));
    let mut i = 0;
    while i < bytes.len() {
        let b = bytes[i];
        if b == b'"' {
            let end = string_end(bytes, i);
            let after = end.map_or(bytes.len(), |e| e + 1);
            let inner = &text[i + 1..end.unwrap_or(bytes.len())];
            let is_key = end.is_some() && bytes.get(skip_ws(bytes, after)) == Some(&b':');
            let plain_key = is_key
                && inner.len() <= MAX_PLAIN_KEY
                && inner.bytes().all(|c| c.is_ascii_alphabetic() || c == b'_' || c == b'-');
            if plain_key {
                out.push_str(&text[i..after]);
            } else {
                out.push('"');
                out.push_str(MASK);
                out.push('"');
            }
            i = after;
        } else if is_word_break(b) {
            out.push(char::from(b));
            i += 1;
        } else {
            let end = (i..bytes.len()).find(|&j| is_word_break(bytes[j])).unwrap_or(bytes.len());
            let word = &text[i..end];
            out.push_str(if is_plain_word(word) { word } else { MASK });
            i = end;
        }
    }
    out
}

/// A word of a message: ASCII letters, at most [`MAX_PLAIN_WORD`] long, written in lower
/// case, upper case or capitalized (encoded text mixes cases), with a closing mark allowed.
fn is_plain_word(word: &str) -> bool {
    let letters = word.trim_end_matches(['.', '!', '?', ';']);
    let Some((&first, rest)) = letters.as_bytes().split_first() else {
        return false;
    };
    letters.len() <= MAX_PLAIN_WORD
        && first.is_ascii_alphabetic()
        && (rest.iter().all(u8::is_ascii_lowercase) || rest.iter().all(u8::is_ascii_uppercase))
        && !(first.is_ascii_lowercase() && rest.iter().any(u8::is_ascii_uppercase))
}

/// Whether `b` separates the words [`hide_values`] judges (all ASCII, so a word is always
/// cut at character boundaries).
fn is_word_break(b: u8) -> bool {
    b.is_ascii_whitespace() || matches!(b, b'{' | b'}' | b'[' | b']' | b':' | b',' | b'"' | b'<' | b'>')
}

/// `text` cut to `max` characters, with `...` where it was cut; text already owned and
/// short enough is kept, not copied.
fn truncate_chars(text: Cow<'_, str>, max: usize) -> String {
    if text.len() <= max {
        // No more characters than bytes.
        return text.into_owned();
    }
    match text.char_indices().nth(max) {
        Some((cut, _)) => format!("{}...", &text[..cut]),
        None => text.into_owned(),
    }
}

/// Replaces the value after every `"<secret key>":` with `"***"`. A value that never ends
/// (cut-off or malformed body) is masked up to the end of the text.
fn redact_json_keys(text: &str) -> Cow<'_, str> {
    let bytes = text.as_bytes();
    let mut out = String::new();
    let mut copied = 0;
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] != b'"' {
            i += 1;
            continue;
        }
        let Some(key_end) = string_end(bytes, i) else {
            break;
        };
        let key = &text[i + 1..key_end];
        let mut j = skip_ws(bytes, key_end + 1);
        if j < bytes.len() && bytes[j] == b':' && is_secret_key(key) {
            j = skip_ws(bytes, j + 1);
            let value_end = value_end(bytes, j);
            out.push_str(&text[copied..j]);
            out.push('"');
            out.push_str(MASK);
            out.push('"');
            copied = value_end;
            i = value_end;
        } else {
            i = key_end + 1;
        }
    }
    if copied == 0 {
        // Every mask moves `copied` past a value: nothing was masked.
        return Cow::Borrowed(text);
    }
    out.push_str(&text[copied..]);
    Cow::Owned(out)
}

fn skip_ws(bytes: &[u8], mut i: usize) -> usize {
    while i < bytes.len() && bytes[i].is_ascii_whitespace() {
        i += 1;
    }
    i
}

/// Index of the closing quote of the string opening at `start`.
fn string_end(bytes: &[u8], start: usize) -> Option<usize> {
    let mut i = start + 1;
    while i < bytes.len() {
        match bytes[i] {
            b'\\' => i += 2,
            b'"' => return Some(i),
            _ => i += 1,
        }
    }
    None
}

/// Index just past the JSON value starting at `start` (or the end of the text).
fn value_end(bytes: &[u8], start: usize) -> usize {
    if start >= bytes.len() {
        return bytes.len();
    }
    match bytes[start] {
        b'"' => string_end(bytes, start).map_or(bytes.len(), |e| e + 1),
        b'{' | b'[' => {
            let mut depth = 0usize;
            let mut i = start;
            while i < bytes.len() {
                match bytes[i] {
                    b'"' => match string_end(bytes, i) {
                        Some(e) => i = e,
                        None => return bytes.len(),
                    },
                    b'{' | b'[' => depth += 1,
                    b'}' | b']' => {
                        depth = depth.saturating_sub(1);
                        if depth == 0 {
                            return i + 1;
                        }
                    }
                    _ => {}
                }
                i += 1;
            }
            bytes.len()
        }
        _ => {
            let mut i = start;
            while i < bytes.len() && !matches!(bytes[i], b',' | b'}' | b']' | b'\n' | b'\r') {
                i += 1;
            }
            i
        }
    }
}

/// Replaces the token after every `Bearer ` (any casing) with `***`.
fn redact_bearer(text: &str) -> Cow<'_, str> {
    const WORD: &str = "bearer ";
    if !text.as_bytes().windows(WORD.len()).any(|w| w.eq_ignore_ascii_case(WORD.as_bytes())) {
        return Cow::Borrowed(text);
    }
    let lower = text.to_ascii_lowercase();
    let mut out = String::with_capacity(text.len());
    let mut copied = 0;
    let mut search = 0;
    while let Some(found) = lower[search..].find(WORD) {
        let token_start = search + found + WORD.len();
        let token_end = text[token_start..]
            .find(|c: char| c.is_whitespace() || matches!(c, '"' | ',' | '}' | ']' | '\''))
            .map_or(text.len(), |e| token_start + e);
        out.push_str(&text[copied..token_start]);
        out.push_str(MASK);
        copied = token_end;
        search = token_end.max(token_start);
    }
    out.push_str(&text[copied..]);
    Cow::Owned(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The whole-text scan `redact_value` replaced: a candidate at every byte that could
    /// start the secret, followed with `match_encoded` each time.
    fn redact_value_by_every_byte(text: &str, secret: &str) -> String {
        let bytes = text.as_bytes();
        let first = secret.chars().next().unwrap_or_default();
        let mut out = String::new();
        let mut copied = 0;
        let mut i = 0;
        while i < bytes.len() {
            let b = bytes[i];
            let could_start = (first.is_ascii() && b == first as u8)
                || matches!(b, b'\\' | b'%' | b'+')
                || (!first.is_ascii() && text.is_char_boundary(i) && text[i..].starts_with(first));
            if could_start && let Some(end) = match_encoded(bytes, i, secret) {
                let end = (end..=bytes.len()).find(|e| text.is_char_boundary(*e)).unwrap_or(bytes.len());
                out.push_str(&text[copied..i]);
                out.push_str(MASK);
                copied = end;
                i = end;
            } else {
                i += 1;
            }
        }
        out.push_str(&text[copied..]);
        out
    }

    #[test]
    fn a_secret_is_found_wherever_the_byte_by_byte_scan_finds_it() {
        // Texts of pieces of the secrets in every spelling, escapes cut short, other text.
        let secrets = ["sk_live+42/x", "t\u{e9}k\u{e9}n-\u{1f511}", "%ab"];
        let pieces = [
            "sk",
            "_live",
            "+42",
            "/x",
            "%2Fx",
            "\\/x",
            "%2f",
            "sk%5Flive",
            "\\u0073k",
            "s",
            "k",
            "_",
            "+",
            " ",
            "t\u{e9}k",
            "\u{e9}n-",
            "\u{1f511}",
            "t%C3%A9k%c3%a9n-",
            "\\u00e9",
            "\\ud83d\\udd11",
            "%F0%9F",
            "%",
            "\\",
            "%25ab",
            "%ab",
            "a",
            "b",
            "\"",
            ":",
            "x",
            "\u{e9}",
            "%2",
            "\\u00",
            "\\u",
            "Bearer ",
        ];
        let mut seed = 0x9e37_79b9_7f4a_7c15_u64;
        let mut masked = [0usize; 3];
        for _ in 0..3000 {
            let mut text = String::new();
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            let len = (seed % 12) as usize;
            for _ in 0..len {
                seed ^= seed << 13;
                seed ^= seed >> 7;
                seed ^= seed << 17;
                text.push_str(pieces[(seed % pieces.len() as u64) as usize]);
            }
            for (secret, masked) in secrets.iter().zip(&mut masked) {
                let expected = redact_value_by_every_byte(&text, secret);
                assert_eq!(redact_value(&text, secret), expected, "{text:?} with {secret:?}");
                *masked += usize::from(expected.contains(MASK));
            }
        }
        // Each secret was found, in some spelling, in a share of the texts.
        assert!(masked.iter().all(|n| *n >= 30), "{masked:?}");
    }

    #[test]
    fn secret_keys_are_told_by_their_lowercase_letters_only() {
        assert_eq!(SECRET_KEYS.iter().map(|k| k.len()).max(), Some(LONGEST_SECRET_KEY));
        for key in ["access_token", "Access-Token", "ACCESSTOKEN", "Authorization", "card_cvv", "PIN"] {
            assert!(is_secret_key(key), "{key}");
        }
        // The Kelvin sign lowercases to `k`: this is "token".
        assert!(is_secret_key("to\u{212a}en"));
        let long = "x".repeat(200);
        for key in ["accessTokens", "authorization_header", "code", "", "___", "tok\u{e9}n", long.as_str()] {
            assert!(!is_secret_key(key), "{key}");
        }
    }

    #[test]
    fn masks_secret_keys_in_valid_json() {
        let body = br#"{"code":"00","data":{"access_token":"eyJhbGciOi.abc","refresh_token":"r-123","businessId":"b1","cardDetails":{"cardPin":"1234"}}}"#;
        let text = excerpt(body, &Secrets::none());
        assert!(!text.contains("eyJhbGciOi"), "{text}");
        assert!(!text.contains("r-123"), "{text}");
        assert!(!text.contains("1234"), "{text}");
        assert!(text.contains("b1"), "{text}");
        assert!(text.contains(r#""access_token":"***""#), "{text}");
    }

    #[test]
    fn masks_secrets_in_malformed_json() {
        let body = br#"{"code":"00","data":{"client_secret": "sk_live_9988", "bvn": 22233344455, "otp":"#;
        let text = excerpt(body, &Secrets::none());
        assert!(!text.contains("sk_live_9988"), "{text}");
        assert!(!text.contains("22233344455"), "{text}");
    }

    #[test]
    fn masks_unterminated_secret_value() {
        let body = br#"{"pin":"12345"#;
        let text = excerpt(body, &Secrets::none());
        assert!(!text.contains("12345"), "{text}");
    }

    #[test]
    fn secrets_come_in_order_and_short_ones_are_left_out() {
        let token: Arc<[Secret]> = Arc::new([Secret::new("access-1"), Secret::new("refresh-1")]);
        let request = ["pin-9".to_owned(), "ab".to_owned(), "access-1".to_owned()];
        let secrets = Secrets::of(Some("client-secret"), Some(token), &request);
        let values: Vec<&str> = secrets.values().collect();
        assert_eq!(values, ["client-secret", "access-1", "refresh-1", "pin-9", "access-1"]);
        assert_eq!(Secrets::none().values().count(), 0);
        // A value given twice is masked all the same.
        let text = redact_text("sent access-1 and pin-9, and ab", &secrets);
        assert_eq!(text, "sent *** and ***, and ab");
    }

    #[test]
    fn an_excerpt_is_cut_once_as_if_cut_twice() {
        for len in [0, 299, 300, 301, 999, 1000, 1001, 5000] {
            for unit in ["a", "é", "\u{1F600}"] {
                let text = unit.repeat(len);
                let twice = truncate_chars(Cow::Owned(redact_text(&text, &Secrets::none())), EXCERPT_CHARS);
                assert_eq!(excerpt(text.as_bytes(), &Secrets::none()), twice, "{len} of {unit}");
            }
        }
    }

    #[test]
    fn masks_bearer_tokens_and_known_values() {
        let values = ["topsecretvalue".to_owned()];
        let secrets = Secrets::of(None, None, &values);
        let text =
            redact_text("header was Authorization: BEARER abc.def.ghi and key topsecretvalue", &secrets);
        assert!(!text.contains("abc.def.ghi"), "{text}");
        assert!(!text.contains("topsecretvalue"), "{text}");
    }

    #[test]
    fn masks_escaped_and_encoded_spellings_of_known_secrets() {
        // One in each place a client keeps them: as its client secret, and as a token's.
        let token: Arc<[Secret]> = Arc::new([Secret::new("sk_live_9988")]);
        let secrets = Secrets::of(Some("tok/en+val ue"), Some(token), &[]);
        for spelled in [
            r#"{"echo":"tok\/en+val ue"}"#,
            r#"{"echo":"tok\u002fen\u002Bval\u0020ue"}"#,
            "echo=tok%2Fen%2bval+ue&x=1",
            "echo=tok%2fen%2Bval%20ue",
            r#"{"echo":"\u0073k_live_9988"}"#,
            "sk%5Flive%5F9988",
        ] {
            let text = redact_text(spelled, &secrets);
            assert!(text.contains(MASK), "{spelled} -> {text}");
            for leak in ["en+val", "en%2", "val ue", "9988", "en\\u002"] {
                assert!(!text.contains(leak), "{spelled} -> {text}");
            }
        }
        // A body cut off inside a secret does not show the part it has.
        let cut = excerpt(b"token was sk_live_99", &secrets);
        assert!(!cut.contains("sk_live"), "{cut}");
        assert_eq!(redact_text("nothing here", &secrets), "nothing here");
        // A heuristic mask (after `Bearer `) must not cut a known value in two first.
        let values = ["tok en-98765".to_owned()];
        let spaced = Secrets::of(None, None, &values);
        let text = redact_text("Authorization: Bearer tok en-98765", &spaced);
        assert!(!text.contains("98765"), "{text}");
    }

    #[test]
    fn hides_every_value_of_a_secret_answer() {
        let body = br#"{"code":"00","description":"Success","data":{"jwt":"eyJhbGciOiJIUzI1NiJ9.e30.sig","ttl":1800,"ok":true,"k9x":"abc","nested":{"key":"plainword"},"list":["abcdefg"]}}"#;
        let text = excerpt_without_values(body, &Secrets::none());
        for leak in ["eyJ", "1800", "abc", "plainword", "abcdefg", "Success", "00", "k9x"] {
            assert!(!text.contains(leak), "{leak}: {text}");
        }
        for kept in [r#""jwt":"***""#, r#""ttl":***"#, r#""ok":true"#, r#""nested":{"key":"***"}"#] {
            assert!(text.contains(kept), "{kept}: {text}");
        }
        // Not JSON, or cut off: words of a message stay, anything token-like goes.
        let page = hide_values(
            "<html><body>Bad Gateway eyJhbGciOi.abc QWxhZGRpbjpvcGVuIHNlc2FtZQ== dGVzdA</body></html>",
        );
        assert_eq!(page, "<html><body>Bad Gateway *** *** ***<***><***>");
        assert_eq!(hide_values(r#"{"access_token":"tok"#), r#"{"access_token":"***""#);
        assert_eq!(hide_values("Invalid client credentials."), "Invalid client credentials.");
        assert_eq!(hide_values("token ab12cd expired"), "token *** expired");
    }

    #[test]
    fn keeps_ordinary_fields_and_truncates() {
        let long = format!(r#"{{"description":"{}"}}"#, "x".repeat(1000));
        let text = excerpt(long.as_bytes(), &Secrets::none());
        assert!(text.chars().count() <= EXCERPT_CHARS + 3);
        assert!(text.starts_with(r#"{"description":"xxx"#));
    }
}
