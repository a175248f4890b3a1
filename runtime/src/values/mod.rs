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
pub use timestamp::{DateTime, Timestamp};

/// `text` without the spaces (of any script) around it, as [`str::trim`] has it, looked
/// for only where an end could be one: most texts start and end with a visible ASCII
/// character.
pub(crate) fn trimmed(text: &str) -> &str {
    match text.as_bytes() {
        [first, .., last] if first.is_ascii_graphic() && last.is_ascii_graphic() => text,
        _ => text.trim(),
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn trimmed_is_trim() {
        let ends = ["", " ", "\t", "\n", "\u{a0}", "\u{3000}", "\u{85}", "\u{b}", "x", "é", "-", "\u{1f511}"];
        for start in ends {
            for middle in ["", "a", " ", "1.0", "a b"] {
                for end in ends {
                    let text = format!("{start}{middle}{end}");
                    assert_eq!(super::trimmed(&text), text.trim(), "{text:?}");
                }
            }
        }
    }
}
