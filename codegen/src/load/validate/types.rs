//! The types: identifiers, groups, shapes and their fields, and the names a type may be given.

use super::super::diagnostics::Sink;
use super::super::raw::{Ordered, RawField, RawGroup, RawShape};
use super::common::{
    CLIENT_METHODS, MAX_MEMBERS, OTHER_FIELDS, PATH_WORDS, check_count, check_param_name, check_type_name,
    hidden_type, is_snake_case, lines,
};
use crate::model::{Field, Group, Identifier, Shape, Type, WireCase};
use heck::{ToSnakeCase, ToUpperCamelCase};
use std::collections::{HashMap, HashSet};

pub(super) fn identifiers(raw: &Ordered<String>, sink: &mut Sink) -> Vec<Identifier> {
    let mut out = Vec::new();
    for (name, doc) in &raw.0 {
        let path = format!("identifiers.{name}");
        check_type_name("identifier", name, &path, sink);
        out.push(Identifier { name: name.clone(), doc: doc.clone() });
    }
    out
}

pub(super) fn groups(raw: &Ordered<RawGroup>, sink: &mut Sink) -> Vec<Group> {
    if raw.0.is_empty() {
        sink.error(
            "groups",
            "no group is declared",
            "declare the resource groups, e.g. `transfers: { title: Transfers }`",
        );
    }
    raw.0
        .iter()
        .map(|(key, group)| {
            if !is_snake_case(key) {
                sink.error(
                    &format!("groups.{key}"),
                    format!("group `{key}` is not snake_case"),
                    format!("write `{}`", key.to_snake_case()),
                );
            } else if PATH_WORDS.contains(&key.as_str()) || CLIENT_METHODS.contains(&key.as_str()) {
                sink.error(
                    &format!("groups.{key}"),
                    format!("group `{key}` cannot name the client's accessor method"),
                    format!("rename it, e.g. `{key}_group`"),
                );
            } else if let Some(ty) = hidden_type(key) {
                sink.error(
                    &format!("groups.{key}"),
                    format!("group `{key}` becomes the type `{ty}`, which would hide the Rust type `{ty}` that the generated code uses"),
                    format!("rename it, e.g. `{key}_group`"),
                );
            }
            Group { key: key.clone(), title: group.title.clone(), doc: lines(group.doc.as_deref()) }
        })
        .collect::<Vec<_>>()
        .into_iter()
        .scan(HashMap::new(), |types: &mut HashMap<String, String>, group| {
            let ty = group.key.to_upper_camel_case();
            if let Some(first) = types.insert(ty.clone(), group.key.clone()) {
                sink.error(
                    &format!("groups.{}", group.key),
                    format!("`{}` and `{first}` both become the Rust type `{ty}`", group.key),
                    "rename one of them",
                );
            }
            Some(group)
        })
        .collect()
}

/// The type names a spec may use: the built-ins, its identifiers and (in answers) its
/// shapes.
pub(super) struct TypeNames {
    pub(super) identifiers: HashSet<String>,
    pub(super) shapes: HashSet<String>,
}

impl TypeNames {
    pub(super) fn new(identifiers: &[Identifier], shapes: &Ordered<RawShape>) -> Self {
        TypeNames {
            identifiers: identifiers.iter().map(|i| i.name.clone()).collect(),
            shapes: shapes.0.iter().map(|(name, _)| name.clone()).collect(),
        }
    }

    /// A parameter's type: a built-in or an identifier.
    pub(super) fn resolve(&self, name: &str, path: &str, sink: &mut Sink) -> Type {
        self.resolve_in(name, path, false, sink)
    }

    /// An answer's type: a built-in, an identifier or a shape.
    pub(super) fn resolve_answer(&self, name: &str, path: &str, sink: &mut Sink) -> Type {
        self.resolve_in(name, path, true, sink)
    }

    pub(super) fn resolve_in(&self, name: &str, path: &str, shapes: bool, sink: &mut Sink) -> Type {
        if let Some(ty) = Type::builtin(name) {
            return ty;
        }
        if self.identifiers.contains(name) {
            return Type::Identifier(name.to_owned());
        }
        if shapes && self.shapes.contains(name) {
            return Type::Shape(name.to_owned());
        }
        if !shapes && self.shapes.contains(name) {
            sink.error(
                &format!("{path}.type"),
                format!("`{name}` is a shape, which only answers use"),
                "give the parameter a built-in type, an identifier, or `json`",
            );
            return Type::Json;
        }
        let mut all: Vec<&str> = Type::BUILTIN.to_vec();
        all.extend(self.identifiers.iter().map(String::as_str));
        if shapes {
            all.extend(self.shapes.iter().map(String::as_str));
        }
        let hint = match sink.suggest(name, &all) {
            Some(best) => format!("did you mean `{best}`? or declare `{name}` under `identifiers`"),
            None => {
                format!("use one of {} or declare `{name}` under `identifiers`", Type::BUILTIN.join(", "))
            }
        };
        sink.error(&format!("{path}.type"), format!("unknown type `{name}`"), hint);
        Type::String
    }
}

pub(super) fn shapes(
    raw: &Ordered<RawShape>,
    types: &TypeNames,
    case: WireCase,
    sink: &mut Sink,
) -> Vec<Shape> {
    let mut out = Vec::new();
    for (name, shape) in &raw.0 {
        let base = format!("shapes.{name}");
        check_type_name("shape", name, &base, sink);
        if types.identifiers.contains(name) {
            sink.error(
                &base,
                format!("`{name}` is declared both as an identifier and as a shape"),
                "rename one of them",
            );
        }
        check_count(shape.fields.0.len(), MAX_MEMBERS, "fields", &format!("{base}.fields"), sink);
        let mut seen = HashSet::new();
        let fields = shape
            .fields
            .0
            .iter()
            .map(|(field_name, field)| {
                shape_field(
                    field_name,
                    field,
                    &format!("{base}.fields.{field_name}"),
                    types,
                    case,
                    &mut seen,
                    sink,
                )
            })
            .collect();
        out.push(Shape { name: name.clone(), doc: lines(shape.doc.as_deref()), fields });
    }
    out
}

pub(super) fn shape_field(
    name: &str,
    raw: &RawField,
    path: &str,
    types: &TypeNames,
    case: WireCase,
    seen: &mut HashSet<String>,
    sink: &mut Sink,
) -> Field {
    check_param_name(name, path, sink);
    if name == OTHER_FIELDS {
        sink.error(
            path,
            format!("`{OTHER_FIELDS}` is where a shape keeps the fields the spec does not know"),
            "give the field another name; its wire key can stay",
        );
    }
    let ty = types.resolve_answer(&raw.ty, path, sink);
    check_values(&raw.values, &ty, &format!("{path}.values"), sink);
    let wire = raw.wire.clone().unwrap_or_else(|| case.of(name));
    if !seen.insert(wire.clone()) {
        sink.error(
            &format!("{path}.wire"),
            format!("wire key `{wire}` is used by two fields"),
            "give each field its own `wire` key",
        );
    }
    if raw.as_string && ty != Type::Decimal {
        sink.error(
            &format!("{path}.as_string"),
            "`as_string` says how a decimal travels",
            "remove it, or type the field `decimal` if it is an amount the service writes as text",
        );
    }
    Field {
        name: name.to_owned(),
        wire,
        ty,
        list: raw.list,
        values: raw.values.clone(),
        required: raw.required,
        secret: raw.secret,
        as_string: raw.as_string,
        doc: lines(raw.doc.as_deref()),
    }
}

/// An open enumeration's values: text, each once.
pub(super) fn check_values(values: &[String], ty: &Type, at: &str, sink: &mut Sink) {
    if values.is_empty() {
        return;
    }
    if *ty != Type::String {
        sink.error(at, "only a `string` field lists values", "remove `values`, or make the field a string");
    }
    for (i, value) in values.iter().enumerate() {
        if values[..i].contains(value) {
            sink.error(&format!("{at}[{i}]"), format!("`{value}` is listed twice"), "remove one");
        }
    }
}

/// A shape that holds itself other than through a list would be infinitely large.
pub(super) fn check_shape_cycles(shapes: &[Shape], sink: &mut Sink) {
    pub(super) fn holds(shapes: &[Shape], from: &str, target: &str, seen: &mut HashSet<String>) -> bool {
        let Some(shape) = shapes.iter().find(|s| s.name == from) else { return false };
        shape.fields.iter().filter(|f| !f.list).any(|f| match &f.ty {
            Type::Shape(inner) if inner == target => true,
            Type::Shape(inner) => seen.insert(inner.clone()) && holds(shapes, inner, target, seen),
            _ => false,
        })
    }
    for shape in shapes {
        if holds(shapes, &shape.name, &shape.name, &mut HashSet::new()) {
            sink.error(
                &format!("shapes.{}", shape.name),
                format!("shape `{}` holds itself", shape.name),
                "make one of the fields on the way a list (`list: true`)",
            );
        }
    }
}

pub(super) fn check_group(group: &str, path: &str, groups: &[Group], sink: &mut Sink) {
    if groups.iter().any(|g| g.key == group) {
        return;
    }
    let keys: Vec<&str> = groups.iter().map(|g| g.key.as_str()).collect();
    let hint = match sink.suggest(group, &keys) {
        Some(best) => format!("did you mean `{best}`?"),
        None => format!("declare it under `groups` or use one of: {}", keys.join(", ")),
    };
    sink.error(path, format!("unknown group `{group}`"), hint);
}

#[cfg(test)]
mod tests {
    use super::super::test_support::{assert_refused, small};

    #[test]
    fn an_identifier_is_an_upper_camel_case_name() {
        let text =
            small().replacen("identifiers:\n", "identifiers:\n  lower_case: A badly named identifier.\n", 1);
        assert_refused(&text, "identifiers.lower_case");
    }

    #[test]
    fn only_a_decimal_says_it_travels_as_text() {
        let with = |ty: &str| {
            small().replacen(
                "      expires_at:\n",
                &format!("      fee:\n        type: {ty}\n        as_string: true\n      expires_at:\n"),
                1,
            )
        };
        let spec = crate::load_str("small.yaml", &with("decimal")).map_err(|e| e.to_string());
        let fee = spec
            .as_ref()
            .ok()
            .and_then(|s| s.shape("TokenGrant"))
            .and_then(|s| s.fields.iter().find(|f| f.name == "fee"));
        assert!(fee.is_some_and(|f| f.as_string), "{spec:?}");
        assert_refused(
            &with("integer"),
            "shapes.TokenGrant.fields.fee.as_string: `as_string` says how a decimal travels",
        );
    }
}
