//! The spec's names for what a document names in its own way: snake_case operations,
//! groups, parameters and fields, UpperCamelCase shapes, each one the loader takes (no word
//! Rust or the generated code keeps for itself) and none taken twice in its place.

use heck::{ToSnakeCase, ToUpperCamelCase};
use std::collections::HashSet;

/// Words a field or parameter may not be called, as the loader refuses them; each is
/// written with `_value` after it.
const FIELD_WORDS: [&str; 11] =
    ["self", "super", "crate", "new", "extra", "extra_field", "builder", "build", "other_fields", "r#", "_"];

/// Operation and group names the loader refuses (the client's own methods, path words, and
/// the names whose type would hide one the generated code uses).
const OPERATION_WORDS: [&str; 6] = ["self", "super", "crate", "with_options", "builder", "runtime"];

/// `text` as snake_case ASCII: letters and digits, words joined by single underscores, no
/// leading digit (`2fa` is `n2fa`); `fallback` when nothing is left.
pub(super) fn snake(text: &str, fallback: &str) -> String {
    let ascii: String =
        text.chars().map(|c| if c.is_ascii_alphanumeric() { c } else { ' ' }).collect::<String>();
    let mut name = ascii.to_snake_case();
    name.retain(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '_');
    let mut squeezed = String::with_capacity(name.len());
    for c in name.chars() {
        if c == '_' && (squeezed.is_empty() || squeezed.ends_with('_')) {
            continue;
        }
        squeezed.push(c);
    }
    while squeezed.ends_with('_') {
        squeezed.pop();
    }
    if squeezed.is_empty() {
        return fallback.to_owned();
    }
    if squeezed.starts_with(|c: char| c.is_ascii_digit()) {
        squeezed.insert(0, 'n');
    }
    squeezed
}

/// `text` as an UpperCamelCase type name the loader takes: ASCII letters and digits, a
/// capital first (`Shape` before a leading digit), and not a type the generated code uses.
pub(super) fn upper_camel(text: &str) -> String {
    let name = snake(text, "shape").to_upper_camel_case();
    let name = if name.starts_with(|c: char| c.is_ascii_uppercase()) { name } else { format!("Shape{name}") };
    if crate::model::RESERVED_TYPE_NAMES.contains(&name.as_str()) { format!("{name}Value") } else { name }
}

/// A field's or a parameter's name: snake_case, and not a word the loader keeps.
pub(super) fn field(wire: &str) -> String {
    let name = snake(wire, "value");
    if FIELD_WORDS.contains(&name.as_str()) { format!("{name}_value") } else { name }
}

/// An operation's name: snake_case, not a word the client keeps, and not one whose request
/// type would hide a type the generated code uses (`result`: `Result`).
pub(super) fn operation(text: &str) -> String {
    let name = snake(text, "operation");
    let hides = crate::model::RESERVED_TYPE_NAMES.contains(&name.to_upper_camel_case().as_str());
    if hides || OPERATION_WORDS.contains(&name.as_str()) { format!("{name}_operation") } else { name }
}

/// A group's name: as an operation's, with `api` for nothing.
pub(super) fn group(text: &str) -> String {
    let name = snake(text, "api");
    let hides = crate::model::RESERVED_TYPE_NAMES.contains(&name.to_upper_camel_case().as_str());
    if hides || OPERATION_WORDS.contains(&name.as_str()) { format!("{name}_api") } else { name }
}

/// Names already given in one place (a shape's fields, an operation's parameters, the
/// spec's operations), and the next free one for a wanted name: itself, else `_2`, `_3`.
#[derive(Default)]
pub(super) struct Taken {
    names: HashSet<String>,
}

impl Taken {
    /// `wanted`, or the first of `wanted_2`, `wanted_3`, ... not taken yet; taken now.
    pub(super) fn take(&mut self, wanted: String) -> String {
        self.take_with(wanted, "_")
    }

    /// As [`take`](Self::take), with `joint` before the number (`""` for type names).
    pub(super) fn take_with(&mut self, wanted: String, joint: &str) -> String {
        if self.names.insert(wanted.clone()) {
            return wanted;
        }
        (2usize..)
            .map(|n| format!("{wanted}{joint}{n}"))
            .find(|name| self.names.insert(name.clone()))
            .unwrap_or(wanted)
    }

    /// Marks `name` taken without asking.
    pub(super) fn reserve(&mut self, name: &str) {
        self.names.insert(name.to_owned());
    }

    /// Whether `name` is taken.
    pub(super) fn contains(&self, name: &str) -> bool {
        self.names.contains(name)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_are_ascii_snake_case_and_keep_clear_of_the_loaders_words() {
        assert_eq!(snake("Obtain access token", "x"), "obtain_access_token");
        assert_eq!(snake("getV1Accounts{id}", "x"), "get_v1_accounts_id");
        assert_eq!(snake("2fa-Code", "x"), "n2fa_code");
        assert_eq!(snake("---", "fallback"), "fallback");
        assert_eq!(snake("Café au lait", "x"), "caf_au_lait");
        assert_eq!(field("new"), "new_value");
        assert_eq!(field("orderReference"), "order_reference");
        assert_eq!(field("metadata.order_id"), "metadata_order_id");
        assert_eq!(operation("Result"), "result_operation");
        assert_eq!(operation("with_options"), "with_options_operation");
        assert_eq!(group("Builder"), "builder_api");
        assert_eq!(upper_camel("string"), "StringValue");
        assert_eq!(upper_camel("2fa"), "N2fa");
        assert_eq!(upper_camel("bank-account"), "BankAccount");
        let mut taken = Taken::default();
        assert_eq!(taken.take("a".to_owned()), "a");
        assert_eq!(taken.take("a".to_owned()), "a_2");
        assert_eq!(taken.take_with("A".to_owned(), ""), "A");
        assert_eq!(taken.take_with("A".to_owned(), ""), "A2");
    }
}
