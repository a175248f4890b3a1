//! What the loader's sections share: the names and limits they check against, the raw
//! file's shape, and the checks of a name or a count every section makes. Each section
//! imports what it uses by name.

use heck::{ToSnakeCase, ToUpperCamelCase};

use super::super::diagnostics::Sink;
use super::super::raw::{Ordered, RawGroup, RawOperation, RawService, RawShape};

/// The file once every piece parsed; operations that failed to parse are left out.
pub(crate) struct RawFile {
    pub format: u32,
    pub service: RawService,
    pub identifiers: Ordered<String>,
    pub groups: Ordered<RawGroup>,
    pub shapes: Ordered<RawShape>,
    pub operations: Vec<(String, RawOperation)>,
    /// Operations whose keys were read but whose bodies had errors (already reported):
    /// other parts of the file may name them without a second, false error.
    pub unreadable: Vec<String>,
}

/// Words a parameter may not be called: Rust cannot escape them, or the generated request
/// type already uses them (`new`, and `extra` for fields the spec does not know).
pub(super) const UNUSABLE_NAMES: [&str; 8] =
    ["self", "Self", "super", "crate", "_", "new", "extra", "extra_field"];

/// Words a request's field (a parameter, a `one_of` set) may not be called besides: every
/// request type has `builder()`, and its builder `build()`.
pub(super) const REQUEST_METHODS: [&str; 2] = ["builder", "build"];

/// Words Rust does not accept even as a raw identifier (`r#self`).
pub(super) const PATH_WORDS: [&str; 4] = ["self", "Self", "super", "crate"];

/// Operation names every generated group already uses for a method of its own.
pub(super) const GROUP_METHODS: [&str; 1] = ["with_options"];

/// Group names the generated client already uses for its own methods.
pub(super) const CLIENT_METHODS: [&str; 2] = ["builder", "runtime"];

/// How many items a spec may hold, so that no spec makes checking or generating slow.
pub const MAX_OPERATIONS: usize = 2_000;

/// The most parameters of one operation, or fields of one shape.
pub const MAX_MEMBERS: usize = 500;

/// The most aliases of one operation.
pub const MAX_ALIASES: usize = 64;

/// Whether `name` can name a Rust type: an ASCII capital, then ASCII letters and digits.
pub(super) fn is_type_name(name: &str) -> bool {
    name.starts_with(|c: char| c.is_ascii_uppercase()) && name.chars().all(|c| c.is_ascii_alphanumeric())
}

/// Refuses a type name that cannot be one, or would hide one the generated code uses.
pub(super) fn check_type_name(kind: &str, name: &str, path: &str, sink: &mut Sink) {
    if !is_type_name(name) || name.to_upper_camel_case() != name {
        let fixed = name.to_upper_camel_case();
        let hint = if fixed.starts_with(|c: char| c.is_ascii_uppercase()) {
            format!("write `{fixed}`")
        } else {
            format!("start it with a capital letter, e.g. `Id{fixed}`")
        };
        sink.error_at_key(path, format!("{kind} `{name}` is not an UpperCamelCase Rust type name"), hint);
    } else if crate::model::RESERVED_TYPE_NAMES.contains(&name) {
        sink.error_at_key(
            path,
            format!("{kind} `{name}` would hide the Rust type `{name}` that the generated code uses"),
            format!("rename it, e.g. `{name}Value`"),
        );
    }
}

/// The Rust type a snake_case name becomes (a request type, a group's type), when it is
/// one the generated code uses from Rust's prelude or the runtime (`result` -> `Result`).
pub(super) fn hidden_type(name: &str) -> Option<String> {
    let ty = name.to_upper_camel_case();
    crate::model::RESERVED_TYPE_NAMES.contains(&ty.as_str()).then_some(ty)
}

/// More than `max` items in the collection at `path`.
pub(super) fn check_count(count: usize, max: usize, what: &str, path: &str, sink: &mut Sink) -> bool {
    if count > max {
        sink.error(path, format!("{count} {what}, more than the {max} a spec may have"), "split the spec");
        return false;
    }
    true
}

pub(super) fn lines(text: Option<&str>) -> Vec<String> {
    text.map(|t| t.trim_end().lines().map(|l| l.trim_end().to_owned()).collect()).unwrap_or_default()
}

pub(super) fn is_snake_case(name: &str) -> bool {
    !name.is_empty()
        && name.starts_with(|c: char| c.is_ascii_lowercase())
        && name.chars().all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '_')
        && !name.contains("__")
        && !name.ends_with('_')
}

pub(super) fn check_param_name(name: &str, path: &str, sink: &mut Sink) {
    if !is_snake_case(name) {
        sink.error_at_key(
            path,
            format!("`{name}` is not a snake_case name"),
            format!("write `{}`", name.to_snake_case()),
        );
    } else if UNUSABLE_NAMES.contains(&name) {
        sink.error_at_key(
            path,
            format!("`{name}` cannot name a Rust field"),
            format!("rename it, e.g. `{name}_value`, and keep the wire key with `wire:`"),
        );
    }
}

/// A request field's name: a parameter's or a `one_of` set's, which neither
/// [`check_param_name`] nor the request's own methods ([`REQUEST_METHODS`]) refuse.
pub(super) fn check_request_field_name(name: &str, path: &str, sink: &mut Sink) {
    check_param_name(name, path, sink);
    if REQUEST_METHODS.contains(&name) {
        sink.error_at_key(
            path,
            format!("`{name}` is already a method of every request or its builder"),
            format!("rename it, e.g. `{name}_value`, and keep the wire key with `wire:`"),
        );
    }
}

/// What a shape calls the fields of an answer that it does not declare.
pub(crate) const OTHER_FIELDS: &str = "other_fields";
