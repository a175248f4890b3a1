//! The draft written as a spec: block-style YAML in the format's order, each value quoted
//! where YAML would read it otherwise, each choice left to the author a `# CHOICE` comment
//! where its keys belong.

use super::draft::Spec;
use super::draft::{Operation, Param};
use crate::model::ParamLocation;
use std::fmt::Write;

/// The spec's text, within the size a spec may have: the operations that would take it
/// past that are left out, and their indices answered beside it.
pub(super) fn spec(spec: &Spec, file: &str, version: &str) -> (String, Vec<usize>) {
    let most = crate::load::MAX_SPEC_BYTES;
    let mut out = String::with_capacity(1024 + spec.operations.len() * 1024);
    head(&mut out, spec, file, version);
    service(&mut out, spec);
    groups(&mut out, spec);
    shapes(&mut out, spec);
    out.push_str("operations:\n");
    let mut left_out = Vec::new();
    let mut one = String::new();
    let code_success = spec.envelope.as_ref().is_none_or(|e| success_by(e) == "code");
    for (i, op) in spec.operations.iter().enumerate() {
        one.clear();
        operation(&mut one, op, code_success);
        if out.len() + one.len() > most {
            left_out.push(i);
        } else {
            out.push_str(&one);
        }
    }
    (out, left_out)
}

fn head(out: &mut String, spec: &Spec, file: &str, version: &str) {
    let name = std::path::Path::new(file).file_name().and_then(|n| n.to_str()).unwrap_or(file);
    let _ = writeln!(
        out,
        "# Drafted by `payspec import` from {} (OpenAPI {}).",
        one_comment(name),
        one_comment(version)
    );
    out.push_str(
        "# Every operation of the document is here, in the spec's names; its answers' schemas are\n\
         # shapes. What a spec needs and the document does not say is drafted where the document\n\
         # shows it, and otherwise left as a `# CHOICE` comment naming the keys to write. Where the\n\
         # service does what its document does not say, write it down with its evidence\n\
         # (spec/FORMAT.md, \"Disagreements\" and \"Evidence\").\n",
    );
    out.push_str("format: 1\nservice:\n");
    let _ = writeln!(out, "  title: {}", scalar(&spec.service.title));
}

fn service(out: &mut String, spec: &Spec) {
    if let Some(choice) = &spec.service.environment_choice {
        comment(out, "  ", choice);
    }
    out.push_str("  environments:\n");
    for (name, url) in &spec.service.environments {
        let _ = writeln!(out, "    {name}: {}", scalar(url));
    }
    if !spec.service.credentials.is_empty() {
        out.push_str("  credentials:\n");
        for credential in &spec.service.credentials {
            let _ = writeln!(out, "    {}:", credential.name);
            let _ = writeln!(out, "      header: {}", scalar(&credential.header));
            if !credential.prefix.is_empty() {
                let _ = writeln!(out, "      prefix: {}", scalar(credential.prefix));
            }
            let _ = writeln!(out, "      note: {}", scalar(&credential.note));
        }
        if spec.service.credentials.iter().any(|c| c.prefix == "Bearer ") {
            comment(
                out,
                "  ",
                "CHOICE tokens: a bearer credential is sent as it is given. If the service issues it \
                 from one of its operations, write `token_operations: { issue: <that operation> }` \
                 (and `refresh`, `revoke`) and `auth: bearer` on the operations that send it: the \
                 client then issues and renews the token itself (spec/FORMAT.md, \"Token operations\").",
            );
        }
    }
    match &spec.envelope {
        Some(envelope) => {
            out.push_str("  envelope:\n");
            let success = success_by(envelope);
            let _ = writeln!(out, "    success: {success}");
            if !envelope.code.is_empty() {
                let _ = writeln!(out, "    code: {}", list(&envelope.code));
            }
            if !envelope.description.is_empty() {
                let _ = writeln!(out, "    description: {}", list(&envelope.description));
            }
            let _ = writeln!(out, "    data: {}", scalar(&envelope.data));
            match &envelope.flag {
                Some(flag) => {
                    let _ = writeln!(out, "    flag: {}", scalar(flag));
                }
                None => out.push_str("    flag: ~\n"),
            }
            out.push_str("  answers:\n");
            if success == "code" {
                let _ = writeln!(out, "    success_codes: {}", list(&envelope.success_codes));
            }
            out.push_str("    source: inference\n");
            let _ = writeln!(
                out,
                "    note: {}",
                scalar(&format!(
                    "The answers of the document share this envelope; {} says a success (its examples). CHOICE: list the codes that prove a request was not applied in `refusal_codes`.",
                    match success {
                        "code" => "its code",
                        "flag" => "its flag",
                        _ => "any 2xx status",
                    }
                ))
            );
        }
        None => {
            comment(
                out,
                "  ",
                "CHOICE envelope: the document's answers share no envelope, so each is read as its data \
                 and any 2xx is a success. Where the service wraps its answers (a code or a flag beside \
                 its data), write `envelope:` with their keys and `answers.success_codes` (spec/FORMAT.md, \
                 \"Top level\").",
            );
            out.push_str("  answers:\n    envelope: unwrapped\n    source: inference\n");
            let _ = writeln!(
                out,
                "    note: {}",
                scalar(
                    "The document's answers share no envelope: each answer is its data, and a 2xx is a success."
                )
            );
        }
    }
    let pages = &spec.pages;
    if pages.cursor.is_some()
        || pages.has_more.is_some()
        || pages.page.is_some()
        || pages.total_pages.is_some()
    {
        out.push_str("  pagination:\n");
        for (key, value) in [
            ("cursor", &pages.cursor),
            ("has_more", &pages.has_more),
            ("page", &pages.page),
            ("total_pages", &pages.total_pages),
        ] {
            if let Some(value) = value {
                let _ = writeln!(out, "    {key}: {}", scalar(value));
            }
        }
    }
    comment(
        out,
        "  ",
        "CHOICE webhooks: the document does not say how the service signs its notifications; write \
         `webhooks:` with the signature's header, digest, encoding, what it covers and the signed \
         values, from the vendor's webhook guide (spec/FORMAT.md, \"Top level\").",
    );
    for choice in &spec.choices {
        comment(out, "  ", choice);
    }
}

/// What says an enveloped answer is a success: its code where the examples show success
/// codes, else its flag, else its HTTP status.
fn success_by(envelope: &super::draft::Envelope) -> &'static str {
    if !envelope.success_codes.is_empty() && !envelope.code.is_empty() {
        "code"
    } else if envelope.flag.is_some() {
        "flag"
    } else {
        "status"
    }
}

fn groups(out: &mut String, spec: &Spec) {
    out.push_str("groups:\n");
    for group in &spec.groups {
        let _ = writeln!(out, "  {}:", group.name);
        let _ = writeln!(out, "    title: {}", scalar(&group.title));
        let _ = writeln!(out, "    doc: {}", scalar(&group.doc));
    }
}

fn shapes(out: &mut String, spec: &Spec) {
    if spec.shapes.is_empty() {
        return;
    }
    out.push_str("shapes:\n");
    for shape in &spec.shapes {
        let _ = writeln!(out, "  {}:", shape.name);
        let _ = writeln!(out, "    doc: {}", scalar(&shape.doc));
        if shape.fields.is_empty() {
            out.push_str("    fields: {}\n");
            continue;
        }
        out.push_str("    fields:\n");
        for field in &shape.fields {
            // The wire key always: the format's default case may not be the document's.
            let mut parts = vec![format!("type: {}", field.ty), format!("wire: {}", scalar(&field.wire))];
            if field.list {
                parts.push("list: true".to_owned());
            }
            if field.required {
                parts.push("required: true".to_owned());
            }
            if !field.values.is_empty() && field.ty == "string" {
                parts.push(format!("values: {}", list(&field.values)));
            }
            if let Some(doc) = &field.doc {
                parts.push(format!("doc: {}", scalar(doc)));
            }
            let _ = writeln!(out, "      {}: {{ {} }}", field.name, parts.join(", "));
        }
    }
}

fn operation(out: &mut String, op: &Operation, code_success: bool) {
    let _ = writeln!(out, "  {}:", op.name);
    let _ = writeln!(out, "    # {}", one_comment(&op.pointer));
    for choice in &op.choices {
        comment(out, "    ", choice);
    }
    let _ = writeln!(out, "    group: {}", op.group);
    let _ = writeln!(out, "    summary: {}", scalar(&op.summary));
    if let Some(doc) = &op.doc {
        let _ = writeln!(out, "    doc: {}", scalar(doc));
    }
    let _ = writeln!(out, "    method: {}", op.method);
    let _ = writeln!(out, "    path: {}", scalar(&op.path));
    let _ = writeln!(out, "    origin: reference");
    let _ = writeln!(out, "    auth: {}", op.auth);
    if let Some(encoding) = op.body_encoding {
        let _ = writeln!(out, "    body_encoding: {encoding}");
    }
    if op.allows_body {
        out.push_str("    allows_body: true\n");
    }
    if let Some((param, header)) = &op.idempotency {
        let _ = writeln!(out, "    idempotency: {param}");
        out.push_str("    idempotency_header:\n");
        let _ = writeln!(out, "      wire: {}", scalar(header));
        out.push_str("      source: reference\n");
        let _ = writeln!(
            out,
            "      note: {}",
            scalar(&format!(
                "The document declares `{header}` on this operation; read as the key the service deduplicates on (check the vendor's guide for how long it holds)."
            ))
        );
    }
    if op.unwrapped {
        out.push_str("    answers:\n      envelope: unwrapped\n");
        // An answer without an envelope has no code: where the service's codes do not say
        // success (its flag or status does), its `Envelope::code` is its HTTP status's.
        if !code_success {
            out.push_str("      success_codes: [\"200\"]\n");
        }
        out.push_str("      source: inference\n");
        let _ = writeln!(
            out,
            "      note: {}",
            scalar("This answer is not in the envelope the document's other answers share: it is its data.")
        );
    }
    if let Some(style) = op.pagination {
        let _ = writeln!(out, "    pagination: {style}");
    }
    if let Some(response) = &op.response {
        let _ = writeln!(out, "    response: {response}");
        if op.response_list {
            out.push_str("    response_list: true\n");
        }
    }
    if op.params.is_empty() {
        return;
    }
    out.push_str("    params:\n");
    for param in &op.params {
        let _ = writeln!(out, "      {}: {{ {} }}", param.name, param_parts(param).join(", "));
    }
}

fn param_parts(param: &Param) -> Vec<String> {
    let location = match param.location {
        ParamLocation::Path => "path",
        ParamLocation::Query => "query",
        ParamLocation::Body => "body",
        ParamLocation::Header => "header",
    };
    let mut parts = vec![format!("in: {location}"), format!("type: {}", param.ty)];
    if param.required {
        parts.push("required: true".to_owned());
    }
    parts.push(format!("wire: {}", scalar(&param.wire)));
    if !param.values.is_empty() && param.ty == "string" {
        parts.push(format!("values: {}", list(&param.values)));
    }
    if let Some(max) = param.max {
        parts.push(format!("max: {max}"));
    }
    if let Some(format) = param.format {
        parts.push(format!("format: {format}"));
    }
    if let Some(length) = param.length {
        parts.push(format!("length: {length}"));
    }
    if let Some(layout) = param.layout {
        parts.push(format!("layout: {}", scalar(layout)));
    }
    if let Some(doc) = &param.doc {
        parts.push(format!("doc: {}", scalar(doc)));
    }
    parts
}

/// A `# ` comment, wrapped at about 96 columns.
fn comment(out: &mut String, indent: &str, text: &str) {
    let mut line = String::new();
    for word in text.split_whitespace() {
        if !line.is_empty() && indent.len() + line.len() + word.len() > 94 {
            let _ = writeln!(out, "{indent}# {line}");
            line.clear();
        }
        if !line.is_empty() {
            line.push(' ');
        }
        line.push_str(word);
    }
    if !line.is_empty() {
        let _ = writeln!(out, "{indent}# {line}");
    }
}

/// Text for a comment: one line, no control characters.
fn one_comment(text: &str) -> String {
    text.chars().map(|c| if c.is_control() { ' ' } else { c }).collect()
}

/// A flow list of scalars: `[a, "b c"]`.
fn list(values: &[String]) -> String {
    let items: Vec<String> = values.iter().map(|v| scalar(v)).collect();
    format!("[{}]", items.join(", "))
}

/// A scalar as YAML reads it back as the same text: plain where that is safe (words,
/// paths, URLs without YAML's indicators), else double-quoted with JSON's escapes (which
/// YAML's double-quoted style reads), control characters dropped.
pub(super) fn scalar(text: &str) -> String {
    let clean: String =
        text.chars().filter(|c| !c.is_control() && !matches!(c, '\u{2028}' | '\u{2029}')).collect();
    let plain = !clean.is_empty()
        && clean.chars().all(|c| c.is_ascii_alphanumeric() || "_-./".contains(c))
        && clean.starts_with(|c: char| c.is_ascii_alphabetic() || c == '/')
        && !["true", "false", "null", "yes", "no", "on", "off", "y", "n", "~"]
            .contains(&clean.to_ascii_lowercase().as_str());
    if plain { clean } else { serde_json::Value::String(clean).to_string() }
}

#[cfg(test)]
mod tests {
    use super::scalar;

    #[test]
    fn a_scalar_reads_back_as_the_same_text() {
        for text in [
            "plain",
            "/v1/accounts",
            "two words",
            "yes",
            "00",
            "a: b",
            "\"quoted\"",
            "#hash",
            "é",
            "{x}",
            "- item",
            "x\u{2028}y",
        ] {
            let written = format!("key: {}\n", scalar(text));
            let read: serde_yaml::Value = serde_yaml::from_str(&written).expect("YAML");
            let expected: String = text.chars().filter(|c| !c.is_control() && *c != '\u{2028}').collect();
            assert_eq!(read["key"].as_str(), Some(expected.as_str()), "{written}");
        }
        assert_eq!(scalar("/v1/accounts"), "/v1/accounts");
        assert_eq!(scalar("00"), "\"00\"");
    }
}
