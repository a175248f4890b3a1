//! One example per group, for the documentation of the crate the build step writes: the
//! group's first operation that takes a required field, its required fields filled with values of their kind, called
//! through the client. Each compiles as a doctest (`no_run`: there is no service to call).
//!
//! Only code whose crate name is known gets them: a `generate!` expansion lives at a path
//! of the user's choosing, where an example could not name its items.

use super::names::{Names, field_ident, request_type};
use super::requests::settable;
use crate::model::{Group, Param, Spec, Type};
use heck::ToSnakeCase;

/// The doc lines of `group`'s example, calling through the crate `krate`, or nothing for a
/// group without operations.
pub(super) fn group_example(spec: &Spec, group: &Group, names: &Names, krate: &str) -> Vec<String> {
    // The first operation that takes a required field shows how a request is built.
    let mut ops = spec.operations.iter().filter(|op| op.group == group.key);
    let Some(first) = ops.clone().next() else { return Vec::new() };
    let op = ops.find(|op| settable(op).any(|p| p.required) || !op.one_of.is_empty()).unwrap_or(first);
    let ty = request_type(op);
    let accessor = field_ident(&group.key.to_snake_case());
    let method = field_ident(&op.name);
    let required: Vec<&Param> = settable(op).filter(|p| p.required).collect();
    let mut lines = vec![
        String::new(),
        "# Example".to_owned(),
        String::new(),
        "```no_run".to_owned(),
        format!("use {krate}::requests::{ty};"),
        String::new(),
        format!("# async fn example(client: &{krate}::Client) -> Result<(), {krate}::Error> {{"),
    ];
    // Each `one_of` set by its first parameter.
    let chosen: Vec<(String, String)> = op
        .one_of
        .iter()
        .filter_map(|set| {
            let param = op.param(set.params.first()?)?;
            let variant = super::requests::one_of_variant(&param.name);
            let ty = super::requests::one_of_type(op, set);
            let value = format!("{krate}::requests::{ty}::{variant}({}.into())", value(param, names, krate));
            Some((field_ident(&set.name), value))
        })
        .collect();
    if super::requests::positional(op, names) {
        let mut args: Vec<String> = required.iter().map(|p| value(p, names, krate)).collect();
        args.extend(chosen.iter().map(|(_, value)| value.clone()));
        lines.push(format!("let request = {ty}::new({});", args.join(", ")));
    } else {
        lines.push(format!("let request = {ty}::builder()"));
        for param in &required {
            lines.push(format!("    .{}({})", field_ident(&param.name), value(param, names, krate)));
        }
        for (ident, value) in &chosen {
            lines.push(format!("    .{ident}({value})"));
        }
        lines.push("    .build()?;".to_owned());
    }
    lines.push(format!("let outcome = client.{accessor}().{method}(request).await?;"));
    lines.push("println!(\"{}: {}\", outcome.code(), outcome.description());".to_owned());
    lines.extend(["# Ok(())".to_owned(), "# }".to_owned(), "```".to_owned()]);
    lines
}

/// An example value for `param`, as Rust source.
fn value(param: &Param, names: &Names, krate: &str) -> String {
    if let Some((enum_name, variant)) = names.first_variant(param) {
        return format!("{krate}::types::{enum_name}::{variant}");
    }
    match &param.ty {
        Type::String | Type::Identifier(_) => format!("{:?}", text(&param.name)),
        Type::DateTime => "\"2025-01-31T09:00:00\".parse()?".to_owned(),
        Type::Decimal => "\"2500.00\".parse()?".to_owned(),
        Type::Integer => param.max.map_or(1, |max| max.min(10)).to_string(),
        Type::Boolean => "true".to_owned(),
        Type::Json => format!("{krate}::runtime::serde_json::json!({{}})"),
        Type::StringList => format!("vec![{:?}.to_owned()]", text(&param.name)),
        // Validation keeps shapes out of parameters.
        Type::Shape(_) => "Default::default()".to_owned(),
    }
}

/// Example text of the kind a parameter's name suggests.
fn text(name: &str) -> String {
    let has = |part: &str| name.contains(part);
    let text = if has("email") {
        "ada@example.com"
    } else if has("url") {
        "https://example.com/callback"
    } else if has("phone") {
        "08030000000"
    } else if has("account_number") {
        "0123456789"
    } else if has("bank_code") {
        "058"
    } else if has("currency") {
        "NGN"
    } else if has("country") {
        "NG"
    } else if has("otp") || has("pin") {
        "123456"
    } else if has("name") {
        "Ada Obi"
    } else if has("ref") || has("reference") {
        "ref-2025-0001"
    } else {
        return format!("{}-1", name.replace('_', "-"));
    };
    text.to_owned()
}
