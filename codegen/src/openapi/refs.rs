//! Local `$ref`s of a document followed to what they name, in bounded hops: what the diff's
//! reader and the importer share.

use serde_json::Value;

/// How many `$ref` hops one reference may take before it is called a loop.
pub(super) const MAX_REF_HOPS: usize = 64;

/// Why a reference could not be followed: what went wrong, and the text to locate it by.
pub(super) struct RefError {
    /// Where to look for it in the document's text (the reference itself, or `$ref`).
    pub needle: String,
    /// What is wrong.
    pub message: String,
}

/// Follows `$ref` from `value` until a value that is not a reference.
pub(super) fn resolve<'a>(root: &'a Value, mut value: &'a Value) -> Result<&'a Value, RefError> {
    for _ in 0..MAX_REF_HOPS {
        let Some(reference) = value.get("$ref") else { return Ok(value) };
        let Some(reference) = reference.as_str() else {
            return Err(RefError { needle: "$ref".to_owned(), message: "`$ref` is not a string".to_owned() });
        };
        let Some(target) = reference.strip_prefix('#') else {
            return Err(RefError {
                needle: reference.to_owned(),
                message: format!(
                    "`$ref: {reference}` points outside the document; only local references (`#/...`) are read"
                ),
            });
        };
        value = match root.pointer(&percent_decode(target)) {
            Some(found) => found,
            None => {
                return Err(RefError {
                    needle: reference.to_owned(),
                    message: format!("broken `$ref: {reference}`: the document has nothing there"),
                });
            }
        };
    }
    Err(RefError {
        needle: "$ref".to_owned(),
        message: format!("`$ref` chain longer than {MAX_REF_HOPS} hops (a loop?)"),
    })
}

/// The component a value refers to, by its last name (`#/components/schemas/Payout` is
/// `Payout`), when it is a reference.
pub(super) fn reference_name(value: &Value) -> Option<&str> {
    let reference = value.get("$ref")?.as_str()?;
    reference.rsplit('/').next().filter(|name| !name.is_empty())
}

/// `%7B` and the like in a reference, decoded.
fn percent_decode(text: &str) -> String {
    if !text.contains('%') {
        return text.to_owned();
    }
    let bytes = text.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] == b'%'
            && let Some(hex) = text.get(i + 1..i + 3)
            && let Ok(byte) = u8::from_str_radix(hex, 16)
        {
            out.push(byte);
            i += 3;
            continue;
        }
        out.push(bytes[i]);
        i += 1;
    }
    String::from_utf8_lossy(&out).into_owned()
}
