//! Writes one wire test per operation of `spec/payments.yaml` into `OUT_DIR`, so that every
//! operation, not a hand-picked few, is called against a loopback server. `wire.rs`
//! includes the result.
//!
//! The generated tests carry data only: which request type and group method to call, and a
//! sample value for every parameter. What the request must look like on the wire is decided
//! by one hand-written checker (`support/wire_check.rs`) that reads the spec itself.

use std::fmt::Write as _;
use std::path::PathBuf;
use std::process::ExitCode;

use heck::ToUpperCamelCase;
use payspec_codegen::Spec;
use payspec_codegen::model::{DateLayout, EnvelopeKind, Operation, Param, TextFormat, Type};
use serde_json::{Value, json};

/// A spec name as a Rust identifier, raw where it is a keyword (as the client spells it).
fn ident(name: &str) -> String {
    if payspec_codegen::emit::is_keyword(name) { format!("r#{name}") } else { name.to_owned() }
}

/// A sample value for a parameter, chosen by type. Text holds characters that must be
/// percent-encoded in a path or query (space, `/`, `?`, `&`, `=`, `%`), yet may travel in
/// a header; numbers differ per parameter so that two swapped keys cannot pass.
fn sample(param: &Param, index: usize) -> Value {
    if let Some(first) = param.values.first() {
        return json!(first);
    }
    let text = match (param.format, param.length) {
        // Values of the format the vendor states, which the client checks before sending.
        (Some(TextFormat::Digits), length) => {
            let digits = format!("{:0>12}", 4_000_000 + index);
            digits[digits.len() - length.map_or(6, |n| n as usize).min(12)..].to_owned()
        }
        (Some(TextFormat::Email), _) => format!("v-{}@example.com", param.name.replace('_', "-")),
        // Letters and spaces, and a letter beyond ASCII, which the client lets through.
        (Some(TextFormat::Name), _) => format!("Ada Obi {} Ögún", param.name.replace('_', " ")),
        (None | Some(TextFormat::Any), _) => format!("v-{} a/b?c&d=e%f", param.name),
    };
    match &param.ty {
        Type::String | Type::Identifier(_) => json!(text),
        // As the parameter's layout writes it, so that what reaches the server is the sample.
        Type::DateTime => {
            let day = 10 + index % 18;
            json!(match param.layout {
                DateLayout::Seconds => format!("2024-05-{day:02}T07:08:09"),
                DateLayout::Minutes => format!("2024-05-{day:02}T07:08"),
                DateLayout::SpaceSeconds => format!("2024-05-{day:02} 07:08:09"),
                DateLayout::Date => format!("2024-05-{day:02}"),
                DateLayout::Instant => format!("2024-05-{day:02}T07:08:09.000Z"),
            })
        }
        Type::Integer => json!(11 + index),
        Type::Boolean => json!(true),
        // Text, so the exact digits reach the `Amount` (a JSON number would lose the `0`).
        Type::Decimal => json!("1234.50"),
        Type::Json => json!({"k": format!("v-{}", param.name), "n": [1, 2]}),
        Type::StringList => json!([format!("v-{}-1", param.name), format!("v-{}-2", param.name)]),
        // Validation keeps shapes out of parameters.
        Type::Shape(_) => json!({}),
    }
}

/// Whether the client takes this parameter as `impl Into<T>` of text (text and typed ids):
/// the generated test then passes the sample as `&str`. A date-time is parsed from its
/// sample; every other value (enums, amounts, numbers, flags, JSON, lists) is deserialized
/// from the sample into the type the client's signature names.
fn takes_text(param: &Param) -> bool {
    param.values.is_empty()
        && (matches!(param.ty, Type::String | Type::Identifier(_))
            || (param.secret && param.ty == Type::DateTime))
}

fn argument(param: &Param) -> String {
    let name = &param.name;
    if takes_text(param) {
        format!("samples.text({name:?})?")
    } else if param.ty == Type::DateTime {
        format!("samples.date({name:?})?")
    } else {
        format!("samples.value({name:?})?")
    }
}

/// The parameters of `op` of which exactly one is sent, chosen by `choice`: the
/// `choice`-th of each set (its last, for a shorter set).
fn chosen(op: &Operation, choice: usize) -> Vec<&str> {
    op.one_of
        .iter()
        .filter_map(|set| set.params.get(choice.min(set.params.len().saturating_sub(1))))
        .map(String::as_str)
        .collect()
}

/// How many tests `op` needs to send each parameter of its sets once.
fn choices(op: &Operation) -> usize {
    op.one_of.iter().map(|set| set.params.len()).max().unwrap_or(1)
}

/// The parameters a test of `op` sets: every one the caller sets, of each set the chosen.
fn sent(op: &Operation, choice: usize) -> impl Iterator<Item = &Param> {
    let chosen = chosen(op, choice);
    op.params.iter().filter(move |p| {
        p.fixed.is_none() && (op.one_of_with(&p.name).is_none() || chosen.contains(&p.name.as_str()))
    })
}

/// The samples of an operation: one per parameter the caller sets (of each set the one
/// chosen), as JSON text.
fn samples(op: &Operation, choice: usize) -> String {
    let samples: serde_json::Map<String, Value> =
        sent(op, choice).enumerate().map(|(i, p)| (p.name.clone(), sample(p, i))).collect();
    Value::Object(samples).to_string()
}

/// The generated lines that build `op`'s request from the test's samples: positionally
/// where the request has `new`, else by naming every field; each set by its chosen key.
fn request_code(spec: &Spec, op: &Operation, choice: usize) -> String {
    request_code_by(op, choice, payspec_codegen::emit::uses_builder(spec, op))
}

/// The generated lines that build `op`'s request: by its builder, or by `new`.
fn request_code_by(op: &Operation, choice: usize, by_builder: bool) -> String {
    let settable: Vec<&Param> = sent(op, choice).filter(|p| op.one_of_with(&p.name).is_none()).collect();
    let ty = op.name.to_upper_camel_case();
    let setter = |p: &&Param| format!("\n        .{}({})", ident(&p.name), argument(p));
    let sets: Vec<(String, String)> = op
        .one_of
        .iter()
        .zip(chosen(op, choice))
        .map(|(set, member)| {
            let ty = format!("{ty}{}", set.name.to_upper_camel_case());
            (ident(&set.name), format!("requests::{ty}::{}(samples.text({member:?})?)", ident(member)))
        })
        .collect();
    if by_builder {
        let mut setters: String = settable.iter().map(setter).collect();
        for (field, value) in &sets {
            setters.push_str(&format!("\n        .{field}({value})"));
        }
        return format!("requests::{ty}::builder(){setters}\n        .build()?");
    }
    let mut required: Vec<String> = settable.iter().filter(|p| p.required).map(|p| argument(p)).collect();
    required.extend(sets.into_iter().map(|(_, value)| value));
    let setters: String = settable.iter().filter(|p| !p.required).map(setter).collect();
    format!("requests::{ty}::new({}){setters}", required.join(", "))
}

/// The answer the reference documents for `op`, in `op`'s envelope: its example where it
/// gives one, otherwise a value built from its schema and the schema's examples.
fn reference_answer(reference: &Reference, spec: &Spec, op: &Operation) -> Option<Value> {
    let schema = reference.answer_schema(op)?;
    let mut body = reference.sample(schema, 0);
    // Where the spec records that it reads the reference differently (a list where the
    // reference declares one item), the answer follows the spec.
    if let Some(answer) = &op.response {
        let data = match op.answers.reading.envelope {
            EnvelopeKind::Unwrapped => Some(&mut body),
            _ => body.get_mut("data"),
        };
        if let Some(data) = data {
            conform(spec, &answer.ty, answer.list, data, 0);
        }
    }
    if let (Some(data), Some((code_key, description_key))) =
        (body.as_object_mut().and_then(|o| o.get_mut("data")), op.answers.reading.envelope.spelled())
    {
        let data = data.take();
        let code = op.answers.reading.success_codes.first().cloned().unwrap_or_default();
        let (code_key, description_key) =
            (code_key.unwrap_or("code"), description_key.unwrap_or("description"));
        body = json!({code_key: code, description_key: "ok", "data": data});
    }
    Some(body)
}

/// Wraps in a list each single value where the spec declares a list.
fn conform(spec: &Spec, ty: &Type, list: bool, value: &mut Value, depth: usize) {
    if depth > 12 {
        return;
    }
    if list && !value.is_array() && !value.is_null() {
        *value = json!([value.take()]);
    }
    let Type::Shape(name) = ty else { return };
    let Some(shape) = spec.shape(name) else { return };
    let items: Vec<&mut Value> = match value {
        Value::Array(items) if list => items.iter_mut().collect(),
        other => vec![other],
    };
    for item in items {
        let Some(object) = item.as_object_mut() else { continue };
        for field in &shape.fields {
            if let Some(inner) = object.get_mut(&field.wire) {
                conform(spec, &field.ty, field.list, inner, depth + 1);
            }
        }
    }
}

/// The vendor's OpenAPI document, read for the answers it documents.
struct Reference {
    document: Value,
}

impl Reference {
    fn resolve<'a>(&'a self, mut schema: &'a Value) -> &'a Value {
        for _ in 0..16 {
            let Some(target) = schema.get("$ref").and_then(Value::as_str) else { break };
            let name = target.rsplit('/').next().unwrap_or_default();
            match self.document.pointer(&format!("/components/schemas/{name}")) {
                Some(found) => schema = found,
                None => break,
            }
        }
        schema
    }

    /// The schema of the first 2xx JSON answer of the operation at `op`'s route (or one
    /// of its aliases).
    fn answer_schema(&self, op: &Operation) -> Option<&Value> {
        let shape = |path: &str| -> String {
            path.split('/').map(|s| if s.starts_with('{') { "{}" } else { s }).collect::<Vec<_>>().join("/")
        };
        let routes: Vec<(String, String)> =
            std::iter::once((op.method.as_str().to_lowercase(), shape(op.path.as_str())))
                .chain(op.aliases.iter().map(|a| (a.method.as_str().to_lowercase(), shape(a.path.as_str()))))
                .collect();
        let paths = self.document.get("paths")?.as_object()?;
        let (_, methods) = paths.iter().find(|(path, methods)| {
            routes.iter().any(|(m, p)| {
                *p == shape(path.split('?').next().unwrap_or_default()) && methods.get(m).is_some()
            })
        })?;
        let method = routes.iter().find_map(|(m, _)| methods.get(m))?;
        let responses = method.get("responses")?;
        ["200", "201", "202"]
            .iter()
            .find_map(|status| responses.pointer(&format!("/{status}/content/application~1json/schema")))
    }

    /// A value of `schema`: its examples where it has them, coerced to the declared type
    /// where the example is written as text (`"true"` for a boolean).
    fn sample(&self, schema: &Value, depth: usize) -> Value {
        let schema = self.resolve(schema);
        if depth > 12 {
            return Value::Null;
        }
        let example = schema.get("example").cloned();
        match schema.get("type").and_then(Value::as_str) {
            Some("object") | None if schema.get("properties").is_some() => {
                let properties = schema.get("properties").and_then(Value::as_object);
                let object: serde_json::Map<String, Value> = properties
                    .into_iter()
                    .flatten()
                    .map(|(key, property)| (key.clone(), self.sample(property, depth + 1)))
                    .collect();
                Value::Object(object)
            }
            Some("array") => {
                let items = schema.get("items").map_or(Value::Null, |items| self.sample(items, depth + 1));
                match example {
                    Some(Value::Array(given)) if !given.is_empty() && items.is_object() => json!([items]),
                    Some(Value::Array(given)) => Value::Array(given),
                    _ => json!([items]),
                }
            }
            Some("boolean") => match example {
                Some(Value::Bool(b)) => json!(b),
                Some(Value::String(text)) => json!(text.eq_ignore_ascii_case("true")),
                _ => json!(true),
            },
            Some("integer") => match example {
                Some(Value::Number(n)) => Value::Number(n),
                Some(Value::String(text)) if text.parse::<i64>().is_ok() => {
                    json!(text.parse::<i64>().unwrap_or(0))
                }
                _ => json!(7),
            },
            Some("number") => match example {
                Some(Value::Number(n)) => Value::Number(n),
                Some(Value::String(text)) => Value::String(text),
                _ => json!(1500.10),
            },
            Some("string") => match example {
                Some(Value::String(text)) => Value::String(text),
                Some(Value::Null) => Value::Null,
                Some(other) => Value::String(other.to_string()),
                None => match schema.get("enum").and_then(Value::as_array).and_then(|e| e.first()) {
                    Some(first) => first.clone(),
                    None if schema.get("format").and_then(Value::as_str) == Some("date-time") => {
                        json!("2025-03-01T12:30:45Z")
                    }
                    None => json!("text"),
                },
            },
            Some("object") => example.unwrap_or_else(|| json!({})),
            _ => example.unwrap_or(Value::Null),
        }
    }
}

/// The line of a generated test that looks up its samples, when its request uses them.
fn samples_line(request: &str, name: &str) -> String {
    if request.contains("samples.") {
        format!("\n    let samples = Samples::lookup(GENERATED_SAMPLES, {name:?})?;")
    } else {
        String::new()
    }
}

/// A test that decodes the reference's answer to `op` into its typed answer and writes it
/// back unchanged.
fn answer_case(spec: &Spec, op: &Operation, answer: &Value, out: &mut String) {
    let name = &op.name;
    let request = request_code(spec, op, 0);
    let _ = write!(
        out,
        r#"
/// `{method} {path}`: the reference's answer decodes into the typed answer, losslessly.
#[tokio::test]
async fn {test}() -> CaseResult {{{samples}
    let answer = {answer:?};
    let server = wire_check::server_answering({name:?}, answer).await?;
    let client = wire_check::client(&server)?;
    let request = {request};
    let outcome = client.{group}().{method_ident}(request).await?;
    wire_check::check_round_trip({name:?}, answer, outcome)?;
    Ok(())
}}
"#,
        method = op.method,
        path = op.path,
        test = ident(name),
        answer = answer.to_string(),
        samples = samples_line(&request, name),
        group = ident(&op.group),
        method_ident = ident(name),
    );
}

fn test_case(spec: &Spec, op: &Operation, choice: usize, out: &mut String) {
    let name = &op.name;
    // The first choice of each set under the operation's own name; every other one by
    // the parameters it sends.
    let (table, key, test) = if choice == 0 {
        ("GENERATED_SAMPLES", name.clone(), ident(name))
    } else {
        let members = chosen(op, choice);
        (
            "GENERATED_CHOICE_SAMPLES",
            format!("{name}/{}", members.join("+")),
            format!("{name}_by_{}", members.join("_")),
        )
    };
    // A request that has `new` has a builder too, which builds the same request.
    let built = if payspec_codegen::emit::uses_builder(spec, op) {
        String::new()
    } else {
        format!(
            "\n    let built = {};\n    assert_eq!(format!(\"{{built:?}}\"), format!(\"{{request:?}}\"), \"its builder builds what `new` does\");",
            request_code_by(op, choice, true)
        )
    };
    let _ = write!(
        out,
        r#"
/// `{method} {path}`: every parameter set (of each set, one), checked against the spec.
#[tokio::test]
async fn {test}() -> CaseResult {{
    let samples = Samples::lookup({table}, {key:?})?;
    let server = wire_check::server_for({name:?}).await?;
    let client = wire_check::client(&server)?;
    let request = {request};
    wire_check::check_debug({name:?}, &samples, &format!("{{request:?}}"))?;{built}
    let outcome = client.{group}().{method_ident}(request).await?;
    wire_check::check({name:?}, &samples, &outcome, &server.requests())?;
    Ok(())
}}
"#,
        method = op.method,
        path = op.path,
        request = request_code(spec, op, choice),
        built = built,
        group = ident(&op.group),
        method_ident = ident(name),
    );
}

/// Two tests of `op` answered with a key written twice: once in the envelope, after the
/// data (where a reader that stops early never looks), once in the data.
fn repeat_case(spec: &Spec, op: &Operation, out: &mut String) {
    use payspec_codegen::model::EnvelopeKind;
    let (code, description) = match op.answers.reading.envelope.spelled() {
        Some((code, description)) => (code.unwrap_or("code"), description.unwrap_or("description")),
        None => ("code", "description"),
    };
    let bodies = match op.answers.reading.envelope {
        EnvelopeKind::Unwrapped => [
            r#"{"results":[],"status":"SUCCESS","results":[]}"#.to_owned(),
            r#"{"status":"SUCCESS","status":"FAILED"}"#.to_owned(),
        ],
        _ => [
            format!(r#"{{"{code}":"00","{description}":"Success","data":{{}},"{code}":"05"}}"#),
            format!(
                r#"{{"{code}":"00","{description}":"Success","data":{{"status":"SUCCESS","status":"FAILED"}}}}"#
            ),
        ],
    };
    let request = request_code(spec, op, 0);
    for (n, body) in bodies.iter().enumerate() {
        let name = &op.name;
        let _ = write!(
            out,
            r#"
/// `{method} {path}`: an answer that repeats a key is a decode error, never an outcome.
#[tokio::test]
async fn {test}_{n}() -> CaseResult {{{samples}
    let server = wire_check::server_answering({name:?}, {body:?}).await?;
    let client = wire_check::client(&server)?;
    let request = {request};
    let result = client.{group}().{method_ident}(request).await;
    wire_check::check_repeated_key_refused({name:?}, result.map(|_| ()), &server.requests())?;
    Ok(())
}}
"#,
            method = op.method,
            path = op.path,
            test = ident(name),
            request = request,
            samples = samples_line(&request, name),
            group = ident(&op.group),
            method_ident = ident(name),
        );
    }
}

fn main() -> ExitCode {
    let manifest_dir = PathBuf::from(std::env::var_os("CARGO_MANIFEST_DIR").unwrap_or_default());
    println!("cargo::rerun-if-changed=build.rs");
    let Some(spec) = payspec_codegen::build_script::load_spec(&manifest_dir.join("../spec/payments.yaml"))
    else {
        // The errors are printed as `cargo::error` lines, which fail the build; a failing
        // exit would make cargo print them all again.
        return ExitCode::SUCCESS;
    };

    let mut out = String::new();
    out.push_str("// Generated by tests/build.rs from spec/payments.yaml: one wire test per operation.\n");
    let _ = writeln!(out, "\n/// How many operation tests this file holds.");
    let _ = writeln!(out, "pub const GENERATED_CASES: usize = {};", spec.operations.len());
    let names: Vec<String> = spec.operations.iter().map(|op| format!("{:?}", op.name)).collect();
    let _ = writeln!(out, "\n/// The operations those tests call, in spec order.");
    let _ = writeln!(out, "pub const GENERATED_OPERATIONS: &[&str] = &[{}];", names.join(", "));
    let _ = writeln!(out, "\n/// The sample value of every settable parameter, by operation.");
    let _ = writeln!(out, "pub const GENERATED_SAMPLES: &[(&str, &str)] = &[");
    for op in &spec.operations {
        let _ = writeln!(out, "    ({:?}, {:?}),", op.name, samples(op, 0));
    }
    let _ = writeln!(out, "];");
    let _ = writeln!(
        out,
        "\n/// The samples of the other choices of each `one_of` set, by `operation/parameter`."
    );
    let _ = writeln!(out, "pub const GENERATED_CHOICE_SAMPLES: &[(&str, &str)] = &[");
    for op in &spec.operations {
        for choice in 1..choices(op) {
            let key = format!("{}/{}", op.name, chosen(op, choice).join("+"));
            let _ = writeln!(out, "    ({key:?}, {:?}),", samples(op, choice));
        }
    }
    let _ = writeln!(out, "];");
    for op in &spec.operations {
        for choice in 0..choices(op) {
            test_case(&spec, op, choice, &mut out);
        }
    }

    // One test per typed answer the reference documents, beside the wire tests.
    // The facts of the vendor's document, kept in the repository (spec/facts/refresh.py).
    let reference_path = manifest_dir.join("../spec/facts/vendor-openapi.json");
    println!("cargo::rerun-if-changed={}", reference_path.display());
    let mut answers = String::new();
    answers.push_str("// Generated by tests/build.rs from spec/payments.yaml and the vendor's reference.\n");
    let reference = match std::fs::read_to_string(&reference_path)
        .map_err(|e| e.to_string())
        .and_then(|text| serde_json::from_str(&text).map_err(|e| e.to_string()))
    {
        Ok(document) => Reference { document },
        Err(error) => {
            eprintln!("error: {} cannot be read: {error}", reference_path.display());
            return ExitCode::FAILURE;
        }
    };
    let mut covered = Vec::new();
    for op in spec.operations.iter().filter(|op| op.response.is_some()) {
        if let Some(answer) = reference_answer(&reference, &spec, op) {
            answer_case(&spec, op, &answer, &mut answers);
            covered.push(format!("{:?}", op.name));
        }
    }
    let _ = writeln!(answers, "\n/// The operations whose reference answer is decoded above.");
    let _ = writeln!(answers, "pub const ANSWER_CASES: &[&str] = &[{}];", covered.join(", "));
    if !payspec_codegen::build_script::write_out("answer_cases.rs", &answers) {
        return ExitCode::FAILURE;
    }

    let mut repeats = String::new();
    repeats.push_str("// Generated by tests/build.rs from spec/payments.yaml: two tests per operation.\n");
    for op in &spec.operations {
        repeat_case(&spec, op, &mut repeats);
    }
    if !payspec_codegen::build_script::write_out("repeat_cases.rs", &repeats) {
        return ExitCode::FAILURE;
    }

    if !payspec_codegen::build_script::write_out("wire_cases.rs", &out) {
        return ExitCode::FAILURE;
    }
    ExitCode::SUCCESS
}
