//! Small pieces the generated code calls, so that it stays data only.

use std::fmt;

/// Stands in for a secret value in `Debug` output.
#[derive(Clone, Copy, PartialEq, Eq)]
pub struct Redacted;

impl fmt::Debug for Redacted {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("\"***\"")
    }
}

/// Writes a value as its wire text: what it serializes to, without JSON quotes. Generated
/// enumerations use it for `Display`, so a query parameter carries the same text as a body.
pub fn fmt_wire<T: serde::Serialize>(value: &T, f: &mut fmt::Formatter<'_>) -> fmt::Result {
    match serde_json::to_value(value) {
        Ok(serde_json::Value::String(text)) => f.write_str(&text),
        Ok(other) => write!(f, "{other}"),
        Err(_) => Err(fmt::Error),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[derive(serde::Serialize)]
    enum Network {
        #[serde(rename = "9MOBILE")]
        NineMobile,
        #[serde(untagged)]
        Other(String),
    }

    impl fmt::Display for Network {
        fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
            fmt_wire(self, f)
        }
    }

    #[test]
    fn wire_text_has_no_quotes_and_keeps_unknown_values() {
        assert_eq!(Network::NineMobile.to_string(), "9MOBILE");
        assert_eq!(Network::Other("NTEL".into()).to_string(), "NTEL");
        assert_eq!(format!("{:?}", Redacted), "\"***\"");
    }
}
