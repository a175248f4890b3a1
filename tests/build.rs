//! Writes one wire test per operation of `spec/payments.yaml` into `OUT_DIR`, so that every
//! operation, not a hand-picked few, is called against a loopback server. `wire.rs`
//! includes the result.
//!
//! The generated tests carry data only: which request type and group method to call, and a
//! sample value for every parameter. What the request must look like on the wire is decided
//! by one hand-written checker (`wire_check.rs`) that reads the spec itself.

use std::fmt::Write as _;
use std::path::PathBuf;
use std::process::ExitCode;

use heck::ToUpperCamelCase;
use payspec_codegen::model::{Operation, Param, Type};
use serde_json::{Value, json};

/// Rust keywords a spec name may collide with; the client escapes them as raw identifiers.
const KEYWORDS: [&str; 51] = [
    "as", "break", "const", "continue", "else", "enum", "extern", "false", "fn", "for", "if", "impl", "in",
    "let", "loop", "match", "mod", "move", "mut", "pub", "ref", "return", "static", "struct", "trait",
    "true", "type", "unsafe", "use", "where", "while", "async", "await", "dyn", "abstract", "become", "box",
    "do", "final", "macro", "override", "priv", "typeof", "unsized", "virtual", "yield", "try", "gen",
    "union", "raw", "safe",
];

/// A spec name as a Rust identifier, raw where it is a keyword (as the client spells it).
fn ident(name: &str) -> String {
    if KEYWORDS.contains(&name) { format!("r#{name}") } else { name.to_owned() }
}

/// A sample value for a parameter, chosen by type. Text holds characters that must be
/// percent-encoded in a path or query (space, `/`, `?`, `&`, `=`, `%`), yet may travel in
/// a header; numbers differ per parameter so that two swapped keys cannot pass.
fn sample(param: &Param, index: usize) -> Value {
    if let Some(first) = param.values.first() {
        return json!(first);
    }
    let text = format!("v-{} a/b?c&d=e%f", param.name);
    match &param.ty {
        Type::String | Type::Identifier(_) => json!(text),
        Type::DateTime => json!(format!("2024-05-{:02}T07:08:09Z", 10 + index % 18)),
        Type::Integer => json!(11 + index),
        Type::Boolean => json!(true),
        // Text, so the exact digits reach the `Amount` (a JSON number would lose the `0`).
        Type::Decimal => json!("1234.50"),
        Type::Json => json!({"k": format!("v-{}", param.name), "n": [1, 2]}),
        Type::StringList => json!([format!("v-{}-1", param.name), format!("v-{}-2", param.name)]),
    }
}

/// Whether the client takes this parameter as `impl Into<T>` (text, date-times and typed
/// ids): the generated test then passes the sample as `&str`. Every other value (enums,
/// amounts, numbers, flags, JSON, lists) is deserialized from the sample into the type the
/// client's signature names.
fn takes_text(param: &Param) -> bool {
    param.values.is_empty() && matches!(param.ty, Type::String | Type::DateTime | Type::Identifier(_))
}

fn argument(param: &Param) -> String {
    let name = &param.name;
    if takes_text(param) { format!("samples.text({name:?})?") } else { format!("samples.value({name:?})?") }
}

/// The samples of an operation: one per parameter the caller sets, as JSON text.
fn samples(op: &Operation) -> String {
    let settable = op.params.iter().filter(|p| p.fixed.is_none());
    let samples: serde_json::Map<String, Value> =
        settable.enumerate().map(|(i, p)| (p.name.clone(), sample(p, i))).collect();
    Value::Object(samples).to_string()
}

fn test_case(op: &Operation, out: &mut String) {
    let settable: Vec<&Param> = op.params.iter().filter(|p| p.fixed.is_none()).collect();
    let ty = op.name.to_upper_camel_case();
    let required: Vec<String> = settable.iter().filter(|p| p.required).map(|p| argument(p)).collect();
    let setters: String = settable
        .iter()
        .filter(|p| !p.required)
        .map(|p| format!("\n        .{}({})", ident(&p.name), argument(p)))
        .collect();
    let name = &op.name;
    let _ = write!(
        out,
        r#"
/// `{method} {path}`: every parameter set, checked against the spec.
#[tokio::test]
async fn {test}() -> CaseResult {{
    let samples = Samples::lookup(GENERATED_SAMPLES, {name:?})?;
    let server = wire_check::server_for({name:?}).await?;
    let client = wire_check::client(&server)?;
    let request = requests::{ty}::new({required}){setters};
    wire_check::check_debug({name:?}, &samples, &format!("{{request:?}}"))?;
    let outcome = client.{group}().{method_ident}(request).await?;
    wire_check::check({name:?}, &samples, &outcome, &server.requests())?;
    Ok(())
}}
"#,
        method = op.method,
        path = op.path,
        test = ident(name),
        required = required.join(", "),
        group = ident(&op.group),
        method_ident = ident(name),
    );
}

fn main() -> ExitCode {
    let manifest_dir = PathBuf::from(std::env::var_os("CARGO_MANIFEST_DIR").unwrap_or_default());
    let spec_path = manifest_dir.join("../spec/payments.yaml");
    println!("cargo::rerun-if-changed={}", spec_path.display());
    println!("cargo::rerun-if-changed=build.rs");

    let spec = match payspec_codegen::load(&spec_path) {
        Ok(spec) => spec,
        Err(errors) => {
            for diagnostic in errors.iter() {
                for line in diagnostic.to_string().lines() {
                    println!("cargo::error={line}");
                }
            }
            return ExitCode::FAILURE;
        }
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
        let _ = writeln!(out, "    ({:?}, {:?}),", op.name, samples(op));
    }
    let _ = writeln!(out, "];");
    for op in &spec.operations {
        test_case(op, &mut out);
    }

    let Some(out_dir) = std::env::var_os("OUT_DIR").map(PathBuf::from) else {
        println!("cargo::error=OUT_DIR is not set; run this build script through cargo");
        return ExitCode::FAILURE;
    };
    let path = out_dir.join("wire_cases.rs");
    let unchanged = std::fs::read_to_string(&path).ok().as_deref() == Some(out.as_str());
    if !unchanged && let Err(error) = std::fs::write(&path, out) {
        println!("cargo::error=cannot write {}: {error}", path.display());
        return ExitCode::FAILURE;
    }
    ExitCode::SUCCESS
}
