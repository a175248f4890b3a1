//! How long the generator takes on the full spec, stage by stage:
//! `cargo bench -p payspec-codegen`.

use payspec_codegen::load::BUILTIN_SPEC_NAME;

/// The repository's spec, the one the build step generates `payspec-client` from.
const BUILTIN_SPEC: &str = include_str!("../../spec/payments.yaml");

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

/// Emit tokens (quote), without formatting.
#[divan::bench]
fn emit_tokens(bencher: divan::Bencher) {
    let spec = load();
    bencher.bench(|| payspec_codegen::generate_tokens(divan::black_box(&spec)));
}

/// Emit and format (syn + prettyplease): what the build step writes.
#[divan::bench]
fn emit_and_format(bencher: divan::Bencher) {
    let spec = load();
    bencher.bench(|| payspec_codegen::generate_source(divan::black_box(&spec)));
}

/// The whole job of the build step: load, validate, emit, format.
#[divan::bench(sample_count = 30)]
fn load_validate_emit_format() -> String {
    let spec = load();
    payspec_codegen::generate_source(&spec).expect("the built-in spec generates")
}
