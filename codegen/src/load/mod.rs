//! The one front end: reads a spec file and returns the validated model or every error it
//! contains. The YAML library is used in this module only.

mod diagnostics;
mod prescan;
mod raw;
mod span;
mod validate;

pub(crate) use diagnostics::Sink;
pub use diagnostics::{Diagnostic, Diagnostics, MAX_ERRORS};
pub use prescan::{COLLECTION_BYTES, FREE_BYTES, MAX_NESTING, MAX_SPEC_BYTES, SCALAR_BYTES};

pub use span::{Location, SpanIndex};
pub use validate::{MAX_ALIASES, MAX_MEMBERS, MAX_OPERATIONS};

use crate::model::Spec;
use std::path::Path;

/// The name under which the built-in spec is reported, and its path in the repository.
/// The library does not embed it: only the `payspec` command and `route!` carry a copy, so
/// an edit of the spec rebuilds them and the client, never the generator.
pub const BUILTIN_SPEC_NAME: &str = "spec/payments.yaml";

/// Reads and validates the spec at `path`. Errors name the file as `path` is written.
pub fn load(path: impl AsRef<Path>) -> Result<Spec, Diagnostics> {
    let path = path.as_ref();
    let name = path.display().to_string();
    let size = std::fs::metadata(path).map(|m| m.len()).unwrap_or(0);
    if size > MAX_SPEC_BYTES as u64 {
        return Err(whole_file(
            &name,
            Location::START,
            format!("the spec is {size} bytes, more than the {MAX_SPEC_BYTES} a spec may have"),
            "split the service into several specs",
        ));
    }
    match std::fs::read(path) {
        Ok(bytes) => load_bytes(&name, bytes),
        Err(error) => Err(whole_file(
            &name,
            Location::START,
            format!("cannot read the spec: {error}"),
            "check the path; relative paths are taken from the current directory",
        )),
    }
}

/// Reads and validates spec `bytes` (a file's or standard input's); `file` names it in
/// errors. Bytes that are not UTF-8 are refused where they stand.
pub fn load_bytes(file: &str, bytes: Vec<u8>) -> Result<Spec, Diagnostics> {
    match String::from_utf8(bytes) {
        Ok(text) => load_str(file, &text),
        Err(error) => {
            let valid = &error.as_bytes()[..error.utf8_error().valid_up_to()];
            let text = String::from_utf8_lossy(valid);
            let line = text.matches('\n').count() + 1;
            let column = text.rsplit('\n').next().map_or(0, |l| l.chars().count()) + 1;
            Err(whole_file(
                file,
                Location { line, column },
                "the spec is not UTF-8 text: this byte is not part of a UTF-8 character".into(),
                "save the file as UTF-8",
            ))
        }
    }
}

fn whole_file(file: &str, location: Location, message: String, hint: &str) -> Diagnostics {
    Diagnostics::one(Diagnostic {
        file: file.to_owned(),
        location,
        path: String::new(),
        message,
        hint: hint.into(),
    })
}

/// Reads and validates spec `text`; `file` names it in errors.
pub fn load_str(file: &str, text: &str) -> Result<Spec, Diagnostics> {
    let empty = SpanIndex::default();
    let mut early = Sink::new(file, &empty);
    if !prescan::scan(text, &mut early) {
        return Err(early.finish());
    }
    let spans = SpanIndex::build(text);
    let mut sink = Sink::new(file, &spans);
    let value: serde_yaml::Value = match serde_yaml::from_str(text) {
        Ok(value) => value,
        Err(error) => {
            sink.yaml_syntax(&error);
            return Err(within(text, sink.finish()));
        }
    };
    let spec = read_spec(value, &mut sink).and_then(|raw| validate::validate(file, raw, &mut sink));
    match spec {
        Some(spec) if sink.found.is_empty() => Ok(spec),
        _ => Err(within(text, sink.finish())),
    }
}

/// Every location moved inside `text`: the YAML parser reports the end of a file that has
/// no final newline one line past it.
fn within(text: &str, mut diagnostics: Diagnostics) -> Diagnostics {
    let lines: Vec<&str> = text.split('\n').collect();
    let last = if text.ends_with('\n') && lines.len() > 1 { lines.len() - 1 } else { lines.len() };
    for d in &mut diagnostics.errors {
        if d.location.line > last {
            let end = lines.get(last - 1).map_or(0, |l| l.trim_end_matches('\r').chars().count());
            d.location = Location { line: last, column: end + 1 };
        } else if let Some(line) = lines.get(d.location.line - 1) {
            let width = line.trim_end_matches('\r').chars().count() + 1;
            d.location.column = d.location.column.clamp(1, width);
        }
        d.location.line = d.location.line.max(1);
    }
    diagnostics
}

fn read_spec(value: serde_yaml::Value, sink: &mut Sink) -> Option<validate::RawFile> {
    if !value.is_mapping() {
        let (found, at) = match value {
            serde_yaml::Value::Sequence(_) => ("a list", "[0]"),
            serde_yaml::Value::Null => ("nothing", ""),
            _ => ("a single value", ""),
        };
        sink.error(
            at,
            format!("the spec is {found}, not a mapping of keys"),
            "start it with `format: 1`, then `service`, `groups` and `operations` (see spec/FORMAT.md)",
        );
        return None;
    }
    let serde_yaml::Value::Mapping(mut top) = value else { return None };
    // Each section is read on its own, and each group, shape and operation within it, so
    // that a mistake in one hides none in another.
    let allowed = ["format", "service", "identifiers", "groups", "shapes", "operations"];
    let mut unknown_keys = Vec::new();
    for key in top.keys() {
        match key.as_str() {
            Some(name) if allowed.contains(&name) => {}
            Some(name) => unknown_keys.push(name.to_owned()),
            None => unknown_keys.push(format!("{key:?}")),
        }
    }
    for key in unknown_keys {
        let hint = match sink.suggest(&key, &allowed) {
            Some(best) => format!("did you mean `{best}`? the keys allowed here are: {}", allowed.join(", ")),
            None => format!("remove it; the keys allowed here are: {}", allowed.join(", ")),
        };
        sink.error_at_key(&key, format!("unknown key `{key}`"), hint);
    }
    let mut section = |name: &str, sink: &mut Sink<'_>| -> Option<serde_yaml::Value> {
        let found = top.remove(name);
        if found.is_none() && ["format", "service", "groups", "operations"].contains(&name) {
            sink.error("", format!("missing key `{name}`"), format!("add `{name}:` to the top level"));
        }
        found
    };
    let format = section("format", sink).and_then(|v| sink.deserialize::<u32>(v, "format"));
    let service = section("service", sink).and_then(|v| sink.deserialize::<raw::RawService>(v, "service"));
    let identifiers = match section("identifiers", sink) {
        Some(v) => sink.deserialize::<raw::Ordered<String>>(v, "identifiers"),
        None => Some(raw::Ordered::default()),
    };
    let groups = section("groups", sink).and_then(|v| each::<raw::RawGroup>(sink, v, "groups"));
    let shapes = match section("shapes", sink) {
        Some(v) => each::<raw::RawShape>(sink, v, "shapes"),
        None => Some(raw::Ordered::default()),
    };
    let operations = section("operations", sink).and_then(|v| entries(sink, v, "operations"));

    let mut read = Vec::new();
    let mut unreadable = Vec::new();
    for (name, value) in operations.map(|o| o.0).unwrap_or_default() {
        let path = format!("operations.{name}");
        match sink.deserialize::<raw::RawOperation>(value, &path) {
            Some(op) => read.push((name, op)),
            None => unreadable.push(name),
        }
    }
    Some(validate::RawFile {
        format: format?,
        service: service?,
        identifiers: identifiers?,
        groups: groups?,
        shapes: shapes?,
        operations: read,
        unreadable,
    })
}

/// Reads a mapping of named entries (`groups`, `shapes`) one entry at a time; `None` when
/// any entry had an error (all of them reported).
fn each<T: serde::de::DeserializeOwned>(
    sink: &mut Sink<'_>,
    value: serde_yaml::Value,
    base: &str,
) -> Option<raw::Ordered<T>> {
    let entries = entries(sink, value, base)?;
    let mut out = Vec::with_capacity(entries.0.len());
    let mut failed = false;
    for (name, value) in entries.0 {
        match sink.deserialize::<T>(value, &format!("{base}.{name}")) {
            Some(entry) => out.push((name, entry)),
            None => failed = true,
        }
    }
    (!failed).then_some(raw::Ordered(out))
}

/// The entries of a mapping of named entries, taken out of it as they are; a mapping
/// with a key that is not text, or a value that is not a mapping, is read through
/// [`Sink::deserialize`], which reports what is wrong.
fn entries(
    sink: &mut Sink<'_>,
    value: serde_yaml::Value,
    base: &str,
) -> Option<raw::Ordered<serde_yaml::Value>> {
    match value {
        serde_yaml::Value::Mapping(map) if map.keys().all(serde_yaml::Value::is_string) => {
            let entries = map.into_iter().filter_map(|(key, value)| match key {
                serde_yaml::Value::String(key) => Some((key, value)),
                _ => None,
            });
            Some(raw::Ordered(entries.collect()))
        }
        other => sink.deserialize::<raw::Ordered<serde_yaml::Value>>(other, base),
    }
}
