//! How long the generator takes on the full spec, stage by stage:
//! `cargo bench -p payspec-codegen`.

use payspec_codegen::load::BUILTIN_SPEC_NAME;

/// The repository's spec, the one the build step generates `payspec-client` from.
const BUILTIN_SPEC: &str = include_str!("../spec/payments.yaml");

fn main() {
    divan::main();
}

/// Parse and validate the spec.
#[divan::bench]
fn load() -> payspec_codegen::Spec {
    payspec_codegen::load_str(BUILTIN_SPEC_NAME, divan::black_box(BUILTIN_SPEC))
        .expect("the built-in spec is valid")
}

/// Audit every route.
#[divan::bench]
fn audit(bencher: divan::Bencher) {
    let spec = load();
    bencher.bench(|| payspec_codegen::audit::audit(divan::black_box(&spec)));
}

/// Emit the client's source text, without formatting (the build step's emitter).
#[divan::bench]
fn emit(bencher: divan::Bencher) {
    let spec = load();
    bencher.bench(|| {
        payspec_codegen::generate(
            divan::black_box(&spec),
            &payspec_codegen::Options::new().crate_name("payspec_client"),
        )
    });
}

/// Emit, parse and format (syn + prettyplease): what `payspec generate` writes.
#[divan::bench]
fn emit_and_format(bencher: divan::Bencher) {
    let spec = load();
    bencher.bench(|| {
        payspec_codegen::generate(divan::black_box(&spec), &payspec_codegen::Options::new().formatted())
    });
}

/// The whole job of the build step: load and validate the spec, emit the client and the
/// blocking client, laid out line by line (not formatted).
#[divan::bench(sample_count = 50)]
fn build_step() -> (String, String) {
    let spec = load();
    let options = payspec_codegen::Options::new().crate_name("payspec_client");
    let client = payspec_codegen::generate(&spec, &options).unwrap_or_default();
    (client, payspec_codegen::generate(&spec, &options.blocking()).unwrap_or_default())
}

/// Write the spec as an OpenAPI 3.1 document (`payspec openapi`).
#[divan::bench]
fn openapi_export(bencher: divan::Bencher) {
    let spec = load();
    bencher.bench(|| payspec_codegen::openapi::export_json(divan::black_box(&spec)));
}

/// Read an OpenAPI document (the export, 0.5 MB of JSON) and diff it against the spec
/// (`payspec diff --openapi`).
#[divan::bench]
fn openapi_read_and_diff(bencher: divan::Bencher) {
    let spec = load();
    let text = payspec_codegen::openapi::export_json(&spec);
    bencher.bench(|| {
        let document = payspec_codegen::openapi::read_document("export.json", divan::black_box(&text))
            .expect("the export reads back");
        payspec_codegen::openapi::diff(&spec, &document)
    });
}

/// The spec eight times over (776 operations, every route under its own prefix), loaded.
fn eight_times() -> payspec_codegen::Spec {
    let mut doc: serde_yaml::Value = serde_yaml::from_str(BUILTIN_SPEC).expect("the spec is YAML");
    let operations = doc["operations"].as_mapping().cloned().expect("operations");
    let all = doc["operations"].as_mapping_mut().expect("operations");
    for copy in 1..8 {
        for (name, op) in &operations {
            let mut op = op.clone();
            let prefix = |path: &serde_yaml::Value| {
                serde_yaml::Value::from(format!("/c{copy}{}", path.as_str().unwrap_or("")))
            };
            op["path"] = prefix(&op["path"]);
            if let Some(aliases) = op.get_mut("aliases").and_then(|a| a.as_sequence_mut()) {
                for alias in aliases {
                    alias["path"] = prefix(&alias["path"]);
                    if let Some(same) = alias.get("same_route_as").and_then(|v| v.as_str()).map(str::to_owned)
                    {
                        alias["same_route_as"] = format!("{same}_c{copy}").into();
                    }
                }
            }
            if let Some(listings) = op.get_mut("also_listed_as").and_then(|a| a.as_sequence_mut()) {
                for listing in listings {
                    if let Some(other) = listing.get("name").and_then(|v| v.as_str()).map(str::to_owned) {
                        listing["name"] = format!("{other}_c{copy}").into();
                    }
                }
            }
            let name = format!("{}_c{copy}", name.as_str().unwrap_or(""));
            all.insert(name.into(), op);
        }
    }
    let text = serde_yaml::to_string(&doc).expect("the spec writes back");
    payspec_codegen::load_str("eight.yaml", &text).expect("the enlarged spec is valid")
}

/// Audit every route of 776 operations: grows as n log n.
#[divan::bench]
fn audit_776_operations(bencher: divan::Bencher) {
    let spec = eight_times();
    bencher.bench(|| payspec_codegen::audit::audit(divan::black_box(&spec)));
}

/// A document of the workspace's, read when the bench runs: the package of this crate does
/// not carry it, and a bench run from the package skips the cases that read it.
fn workspace_document(path: &str) -> Option<String> {
    std::fs::read_to_string(std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("..").join(path)).ok()
}

/// Draft a spec from the vendor's OpenAPI document (`payspec import`, 0.6 MB of JSON, 96
/// operations).
#[divan::bench]
fn openapi_import_vendor_document(bencher: divan::Bencher) {
    let Some(text) = workspace_document("spec/facts/vendor-openapi.json") else { return };
    bencher.bench(|| payspec_codegen::openapi::import("vendor-openapi.json", divan::black_box(&text)));
}

/// Draft a spec from Adyen's Checkout document (0.9 MB of JSON, large schemas).
#[divan::bench]
fn openapi_import_adyen_checkout(bencher: divan::Bencher) {
    let Some(text) = workspace_document("tests/fixtures/vendors/adyen-checkout-openapi.json") else { return };
    bencher
        .bench(|| payspec_codegen::openapi::import("adyen-checkout-openapi.json", divan::black_box(&text)));
}
