//! An operation's `params`: each parameter's location, type, wire key, layout and formats
//! checked, and the parameters checked together (nesting, path variables, a body only
//! where the method sends one).

use super::super::diagnostics::Sink;
use super::super::raw::{RawOperation, RawParam, Word};
use super::common::{check_request_field_name, lines};
use super::types::TypeNames;
use crate::model::{Alias, DateLayout, Method, Param, ParamLocation, PathTemplate, Type, WireCase};
use heck::ToLowerCamelCase;
use std::collections::HashMap;

pub(super) fn params(
    raw: &RawOperation,
    base: &str,
    types: &TypeNames,
    case: WireCase,
    sink: &mut Sink,
) -> Vec<Param> {
    let mut out: Vec<Param> = Vec::with_capacity(raw.params.0.len());
    // Wire keys already taken, per location.
    let mut wires: HashMap<(ParamLocation, String), String> = HashMap::new();
    for (name, param) in &raw.params.0 {
        let at = format!("{base}.params.{name}");
        check_request_field_name(name, &at, sink);
        let location = param.location.0;
        let ty = types.resolve(&param.ty, &at, sink);
        let wire = param.wire.clone().unwrap_or_else(|| case.of(name));
        check_wire(&wire, location, &at, sink);
        if let Some(other) = wires.insert((location, wire.clone()), name.clone()) {
            sink.error(
                &format!("{at}.wire"),
                format!("`{name}` and `{other}` both travel in the {} as `{wire}`", location.as_str()),
                "give one of them another `wire` key, or remove the duplicate",
            );
        }
        check_param_shape(name, param, location, &ty, &at, sink);
        if param.max.is_some() && ty != Type::Integer {
            sink.error(
                &format!("{at}.max"),
                "only an integer parameter has a `max`",
                "remove `max`, or make it `type: integer`",
            );
        }
        let layout = date_layout(param.layout.as_deref(), &ty, &at, sink);
        let text = matches!(ty, Type::String | Type::Identifier(_));
        if !text && (param.format.is_some() || param.length.is_some()) {
            let key = if param.format.is_some() { "format" } else { "length" };
            sink.error(
                &format!("{at}.{key}"),
                format!("only a text parameter has a `{key}`, but `{name}` is `{}`", ty.name()),
                format!("remove `{key}`, or make the type `string`"),
            );
        }
        if !param.also_accepts.is_empty() && param.values.is_empty() && param.fixed.is_none() {
            sink.error(
                &format!("{at}.also_accepts"),
                format!("`{name}` lists no `values` or `fixed` value for `also_accepts` to add to"),
                "remove `also_accepts`: a parameter without listed values takes any text already",
            );
        }
        if let Some(blank) = param.also_accepts.iter().find(|v| v.trim().is_empty() || v.trim() != v.as_str())
        {
            sink.error(
                &format!("{at}.also_accepts"),
                format!("`{blank}` is not a value as the service receives it"),
                "write each value exactly as it travels, without spaces around it",
            );
        }
        if param.length == Some(0) {
            sink.error(
                &format!("{at}.length"),
                "a length of 0 allows no value",
                "give the exact number of characters, e.g. `10`",
            );
        }
        let also_layouts = also_layouts(&param.also_layouts, &ty, layout, &at, sink);
        if param.document_requires
            && (param.required || location == ParamLocation::Path || param.fixed.is_some())
        {
            sink.error(
                &format!("{at}.document_requires"),
                format!("`document_requires` says the service does without `{name}`, but the client must send it"),
                "make it `required: false` (the client lets the caller leave it out), or remove `document_requires`",
            );
        }
        if param.accepts_text && !matches!(ty, Type::Decimal | Type::Integer | Type::Boolean) {
            sink.error(
                &format!("{at}.accepts_text"),
                format!("`accepts_text` says the service takes a number or flag as text too, but `{name}` is `{}`", ty.name()),
                "remove `accepts_text`: text already travels as a string",
            );
        }
        out.push(Param {
            name: name.clone(),
            location,
            ty,
            required: param.required || location == ParamLocation::Path,
            wire,
            secret: param.secret,
            origin: param.origin.0,
            values: param.values.clone(),
            fixed: param.fixed.clone(),
            max: param.max,
            as_string: param.as_string,
            layout,
            format: param.format.map(|Word(format)| format),
            length: param.length,
            accepts_text: param.accepts_text,
            also_accepts: param.also_accepts.clone(),
            also_layouts,
            document_requires: param.document_requires,
            doc: lines(param.doc.as_deref()),
        });
    }
    check_nesting(&out, base, sink);
    out
}

/// The layout a `date_time` parameter is written in; only such a parameter names one.
pub(super) fn date_layout(raw: Option<&str>, ty: &Type, at: &str, sink: &mut Sink) -> DateLayout {
    let Some(raw) = raw else { return DateLayout::default() };
    let at = format!("{at}.layout");
    if *ty != Type::DateTime {
        sink.error(
            &at,
            "only a `date_time` parameter has a `layout`",
            "remove `layout`, or make it `type: date_time`",
        );
        return DateLayout::default();
    }
    known_layout(raw, &at, sink).unwrap_or_default()
}

/// The layout a spec names by its pattern; an unknown one is an error at `at`.
fn known_layout(raw: &str, at: &str, sink: &mut Sink) -> Option<DateLayout> {
    let found = DateLayout::ALL.iter().find(|(pattern, _)| *pattern == raw).map(|(_, layout)| *layout);
    if found.is_none() {
        let patterns: Vec<String> = DateLayout::ALL.iter().map(|(p, _)| format!("`{p}`")).collect();
        sink.error(at, format!("unknown layout `{raw}`"), format!("use one of: {}", patterns.join(", ")));
    }
    found
}

/// The other layouts a `date_time` parameter's service reads: known patterns, none twice,
/// none its own `layout`.
fn also_layouts(raw: &[String], ty: &Type, layout: DateLayout, at: &str, sink: &mut Sink) -> Vec<DateLayout> {
    if raw.is_empty() {
        return Vec::new();
    }
    let at = format!("{at}.also_layouts");
    if *ty != Type::DateTime {
        sink.error(
            &at,
            "only a `date_time` parameter has `also_layouts`",
            "remove `also_layouts`, or make it `type: date_time`",
        );
        return Vec::new();
    }
    let mut out = Vec::new();
    for text in raw {
        let Some(found) = known_layout(text, &at, sink) else { continue };
        if found == layout || out.contains(&found) {
            sink.error(
                &at,
                format!("`{text}` is listed twice (`layout` is the one the client writes)"),
                "list each other layout the service reads once, and not the parameter's own `layout`",
            );
            continue;
        }
        out.push(found);
    }
    out
}

pub(super) fn check_wire(wire: &str, location: ParamLocation, at: &str, sink: &mut Sink) {
    let segment_ok =
        |s: &str| !s.is_empty() && s.chars().all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-');
    let ok = match location {
        ParamLocation::Body => wire.split('.').all(segment_ok),
        _ => segment_ok(wire),
    };
    if !ok {
        let hint = match location {
            ParamLocation::Body => {
                "use letters, digits, `_` or `-`, with `.` between nested keys (`order.orderReference`)"
            }
            _ => "use letters, digits, `_` or `-`; only body keys nest with `.`",
        };
        sink.error(
            &format!("{at}.wire"),
            format!("`{wire}` is not a wire key for the {}", location.as_str()),
            hint,
        );
    }
}

pub(super) fn check_param_shape(
    name: &str,
    param: &RawParam,
    location: ParamLocation,
    ty: &Type,
    at: &str,
    sink: &mut Sink,
) {
    if location == ParamLocation::Path && param.fixed.is_some() {
        sink.error(
            &format!("{at}.fixed"),
            "a path parameter cannot be fixed",
            "write the value into the path itself",
        );
    }
    if !param.values.is_empty() && *ty != Type::String {
        sink.error(
            &format!("{at}.values"),
            format!("`values` lists allowed strings, but `{name}` is `{}`", ty.name()),
            "remove `values` or make the type `string`",
        );
    }
    if param.as_string && !matches!(ty, Type::Decimal | Type::Integer | Type::Boolean) {
        sink.error(
            &format!("{at}.as_string"),
            format!("`as_string` sends a number or flag as text, but `{name}` is `{}`", ty.name()),
            "remove `as_string`: text already travels as a string",
        );
    }
    if let Some(fixed) = &param.fixed {
        if param.required {
            sink.error(
                &format!("{at}.required"),
                format!("`{name}` is fixed to `{fixed}`, so the caller never gives it"),
                "remove `required`: a fixed parameter is always sent",
            );
        }
        if !param.values.is_empty() && !param.values.contains(fixed) {
            sink.error(
                &format!("{at}.fixed"),
                format!("`{fixed}` is not one of its `values`"),
                format!("write one of: {}", param.values.join(", ")),
            );
        }
    }
}

/// A body key may not be both a value and an object (`order` and `order.amount`).
pub(super) fn check_nesting(params: &[Param], base: &str, sink: &mut Sink) {
    // Sorted wire keys: the keys inside `outer.` follow right after the prefix.
    let body: std::collections::BTreeMap<&str, &Param> =
        params.iter().filter(|p| p.location == ParamLocation::Body).map(|p| (p.wire.as_str(), p)).collect();
    for outer in body.values() {
        let prefix = format!("{}.", outer.wire);
        let inside = body.range(prefix.as_str()..).next().filter(|(wire, _)| wire.starts_with(&prefix));
        if let Some((_, inner)) = inside {
            sink.error(
                &format!("{base}.params.{}.wire", outer.name),
                format!("`{}` is a value, but `{}` puts `{}` inside it", outer.wire, inner.name, inner.wire),
                "nest both under the object, or give the value another key",
            );
        }
    }
}

pub(super) fn check_path_variables(path: &PathTemplate, params: &[Param], at: &str, sink: &mut Sink) {
    for variable in path.variables() {
        if !params.iter().any(|p| p.location == ParamLocation::Path && p.wire == variable) {
            let hint = match params
                .iter()
                .find(|p| p.wire == variable || p.name.to_lower_camel_case() == variable)
            {
                Some(p) => format!("make `{}` a path parameter: `in: path`, `wire: {variable}`", p.name),
                None => format!("add a parameter with `in: path` and `wire: {variable}`"),
            };
            sink.error(at, format!("path variable `{{{variable}}}` has no path parameter"), hint);
        }
    }
    for param in params.iter().filter(|p| p.location == ParamLocation::Path) {
        if !path.variables().any(|v| v == param.wire) {
            sink.error(
                at,
                format!(
                    "path parameter `{}` (wire `{}`) is not a variable of `{path}`",
                    param.name, param.wire
                ),
                format!(
                    "add `{{{}}}` to the path, or move `{}` to the query or body",
                    param.wire, param.name
                ),
            );
        }
    }
}

pub(super) fn check_body_allowed(
    method: Method,
    aliases: &[Alias],
    allows_body: bool,
    params: &[Param],
    base: &str,
    sink: &mut Sink,
) {
    let bodiless = |m: Method| matches!(m, Method::Get | Method::Delete);
    if allows_body {
        if !bodiless(method) && aliases.iter().all(|a| !bodiless(a.method)) {
            sink.error(
                &format!("{base}.allows_body"),
                "`allows_body` only matters on GET or DELETE",
                "remove it",
            );
        }
        return;
    }
    if !bodiless(method) {
        return;
    }
    for param in params.iter().filter(|p| p.location == ParamLocation::Body) {
        sink.error(
            &format!("{base}.params.{}.in", param.name),
            format!("`{}` travels in the body of a {method} request", param.name),
            format!("move it to the query, or write `allows_body: true` on the operation if the reference sends a body with {method}"),
        );
    }
}

#[cfg(test)]
mod tests {
    use super::super::test_support::{assert_refused, small};

    #[test]
    fn a_parameter_named_as_a_request_s_own_method_is_refused_with_the_fix() {
        for (word, error) in [
            ("new", "`new` cannot name a Rust field"),
            ("extra", "`extra` cannot name a Rust field"),
            ("builder", "`builder` is already a method of every request or its builder"),
            ("build", "`build` is already a method of every request or its builder"),
        ] {
            let text = small().replacen("      client_id:\n", &format!("      {word}:\n"), 1);
            assert_refused(&text, error);
            assert_refused(
                &text,
                &format!("rename it, e.g. `{word}_value`, and keep the wire key with `wire:`"),
            );
        }
    }
}
