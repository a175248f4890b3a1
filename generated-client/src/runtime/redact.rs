//! Removes secrets from text that may end up in an error: answer excerpts and service
//! descriptions. Works on text, so it also cleans bodies that are not valid JSON.

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

fn is_secret_key(key: &str) -> bool {
    let normal: String =
        key.chars().filter(|c| *c != '_' && *c != '-').flat_map(char::to_lowercase).collect();
    SECRET_KEYS.contains(&normal.as_str())
}

/// A redacted, shortened excerpt of an answer body. `known` are secret values the client
/// holds (tokens, client secret); every occurrence of them is removed too.
pub(crate) fn excerpt(body: &[u8], known: &[&str]) -> String {
    let scanned = &body[..body.len().min(SCAN_LIMIT)];
    let text = String::from_utf8_lossy(scanned);
    let clean = redact_text(&text, known);
    truncate_chars(&clean, EXCERPT_CHARS)
}

/// Removes secrets from a piece of text (JSON or not).
pub(crate) fn redact_text(text: &str, known: &[&str]) -> String {
    let mut out = redact_json_keys(text);
    out = redact_bearer(&out);
    for secret in known {
        if secret.len() >= 4 {
            out = out.replace(secret, MASK);
        }
    }
    out
}

fn truncate_chars(text: &str, max: usize) -> String {
    match text.char_indices().nth(max) {
        Some((cut, _)) => format!("{}...", &text[..cut]),
        None => text.to_owned(),
    }
}

/// Replaces the value after every `"<secret key>":` with `"***"`. A value that never ends
/// (cut-off or malformed body) is masked up to the end of the text.
fn redact_json_keys(text: &str) -> String {
    let bytes = text.as_bytes();
    let mut out = String::with_capacity(text.len());
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
    out.push_str(&text[copied..]);
    out
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
fn redact_bearer(text: &str) -> String {
    const WORD: &str = "bearer ";
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
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn masks_secret_keys_in_valid_json() {
        let body = br#"{"code":"00","data":{"access_token":"eyJhbGciOi.abc","refresh_token":"r-123","businessId":"b1","cardDetails":{"cardPin":"1234"}}}"#;
        let text = excerpt(body, &[]);
        assert!(!text.contains("eyJhbGciOi"), "{text}");
        assert!(!text.contains("r-123"), "{text}");
        assert!(!text.contains("1234"), "{text}");
        assert!(text.contains("b1"), "{text}");
        assert!(text.contains(r#""access_token":"***""#), "{text}");
    }

    #[test]
    fn masks_secrets_in_malformed_json() {
        let body = br#"{"code":"00","data":{"client_secret": "sk_live_9988", "bvn": 22233344455, "otp":"#;
        let text = excerpt(body, &[]);
        assert!(!text.contains("sk_live_9988"), "{text}");
        assert!(!text.contains("22233344455"), "{text}");
    }

    #[test]
    fn masks_unterminated_secret_value() {
        let body = br#"{"pin":"12345"#;
        let text = excerpt(body, &[]);
        assert!(!text.contains("12345"), "{text}");
    }

    #[test]
    fn masks_bearer_tokens_and_known_values() {
        let text = redact_text(
            "header was Authorization: BEARER abc.def.ghi and key topsecretvalue",
            &["topsecretvalue"],
        );
        assert!(!text.contains("abc.def.ghi"), "{text}");
        assert!(!text.contains("topsecretvalue"), "{text}");
    }

    #[test]
    fn keeps_ordinary_fields_and_truncates() {
        let long = format!(r#"{{"description":"{}"}}"#, "x".repeat(1000));
        let text = excerpt(long.as_bytes(), &[]);
        assert!(text.chars().count() <= EXCERPT_CHARS + 3);
        assert!(text.starts_with(r#"{"description":"xxx"#));
    }
}
