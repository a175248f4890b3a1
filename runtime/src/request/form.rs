//! A body sent as an HTML form (`application/x-www-form-urlencoded`, the route's
//! [`BodyEncoding::Form`](payspec_vocabulary::BodyEncoding::Form)), made from the JSON object the writer
//! wrote: one `key=value` pair a value, a nested key in brackets (`metadata[order_id]`), a
//! list's items by their index (`items[0][price]`), `true`/`false` as those words, a null as
//! an empty value (what form-taking services read as "unset"). Keys and values are
//! percent-encoded as the form serializer of the URL standard does, a space as `+`.

use percent_encoding::{AsciiSet, NON_ALPHANUMERIC, utf8_percent_encode};

use crate::error::Error;
use crate::json::Json;

/// The bytes a form leaves as they are: ASCII letters and digits, `*`, `-`, `.`, `_`
/// (a space becomes `+`, written apart).
const FORM: &AsciiSet = &NON_ALPHANUMERIC.remove(b'*').remove(b'-').remove(b'.').remove(b'_').remove(b' ');

/// The form of the JSON object `json`. A body that is not an object cannot be a form.
pub(crate) fn form_from_json(json: &[u8]) -> Result<Vec<u8>, Error> {
    let parsed = Json::parse_bytes(json)
        .map_err(|e| Error::invalid(format!("the body cannot be read back as JSON ({e})")))?;
    let Json::Object(object) = parsed else {
        return Err(Error::invalid("a form body is an object of fields; this body is not one"));
    };
    let mut out = Vec::with_capacity(json.len() + json.len() / 4);
    let mut key = String::with_capacity(64);
    for (name, value) in object.iter() {
        key.clear();
        push_encoded(&mut key, name);
        pairs(&mut out, &mut key, value);
    }
    Ok(out)
}

/// Writes the pairs of `value` under `key` (already encoded), restoring `key` after.
fn pairs(out: &mut Vec<u8>, key: &mut String, value: &Json) {
    let at = key.len();
    match value {
        Json::Object(object) => {
            for (name, inner) in object.iter() {
                key.push_str("%5B");
                push_encoded(key, name);
                key.push_str("%5D");
                pairs(out, key, inner);
                key.truncate(at);
            }
        }
        Json::Array(items) => {
            for (index, inner) in items.iter().enumerate() {
                key.push_str("%5B");
                key.push_str(&index.to_string());
                key.push_str("%5D");
                pairs(out, key, inner);
                key.truncate(at);
            }
        }
        Json::Null => pair(out, key, ""),
        Json::Bool(flag) => pair(out, key, if *flag { "true" } else { "false" }),
        Json::Number(number) => pair(out, key, number.as_str()),
        Json::String(text) => {
            let mut encoded = String::with_capacity(text.len());
            push_encoded(&mut encoded, text);
            pair(out, key, &encoded);
        }
    }
}

/// One `key=value` pair (both encoded), after a `&` unless it is the first.
fn pair(out: &mut Vec<u8>, key: &str, value: &str) {
    if !out.is_empty() {
        out.push(b'&');
    }
    out.extend_from_slice(key.as_bytes());
    out.push(b'=');
    out.extend_from_slice(value.as_bytes());
}

/// `text` percent-encoded for a form, a space as `+`.
fn push_encoded(out: &mut String, text: &str) {
    for piece in utf8_percent_encode(text, FORM) {
        if piece.contains(' ') {
            out.push_str(&piece.replace(' ', "+"));
        } else {
            out.push_str(piece);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn form(json: &str) -> String {
        String::from_utf8(form_from_json(json.as_bytes()).expect("a form")).expect("ASCII")
    }

    #[test]
    fn nested_keys_go_in_brackets_and_lists_by_index() {
        assert_eq!(
            form(r#"{"amount":2000,"currency":"usd","metadata":{"order_id":"6735"}}"#),
            "amount=2000&currency=usd&metadata%5Border_id%5D=6735"
        );
        assert_eq!(
            form(r#"{"items":[{"price":"p_1","quantity":2}],"expand":["data.source"]}"#),
            "items%5B0%5D%5Bprice%5D=p_1&items%5B0%5D%5Bquantity%5D=2&expand%5B0%5D=data.source"
        );
    }

    #[test]
    fn values_are_encoded_as_a_form_encodes_them() {
        assert_eq!(
            form(r#"{"description":"Rent & bills: 50% off","ok":true,"no":false,"gone":null}"#),
            "description=Rent+%26+bills%3A+50%25+off&ok=true&no=false&gone="
        );
        // An amount keeps the digits it was written with; text beyond ASCII is UTF-8.
        assert_eq!(form(r#"{"amount":1500.10,"name":"Zoë"}"#), "amount=1500.10&name=Zo%C3%AB");
        assert_eq!(form("{}"), "");
    }

    #[test]
    fn a_body_that_is_not_an_object_is_refused() {
        for body in ["[1]", "\"text\"", "{"] {
            assert!(form_from_json(body.as_bytes()).is_err(), "{body}");
        }
    }
}
