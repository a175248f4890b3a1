//! Golden files of what payspec writes for the small fixture spec: the generated client
//! code, and the `payspec audit` and `payspec routes` reports. A change to the emitter or
//! the reports shows here as a reviewed diff of `snapshots/*.snap`.
//!
//! Accept an intended change with `INSTA_UPDATE=always cargo test -p payspec-tests --test
//! golden` (or `cargo insta review`), then read the diff. Under `CI=true` insta writes
//! nothing, so a missing or stale snapshot fails.

use payspec_codegen::{Spec, audit, load_str, report};

/// The name the spec is reported under, as `payspec --spec tests/fixtures/small.yaml` names
/// it; fixed here so the snapshot does not depend on the directory the test runs in.
const SMALL_NAME: &str = "tests/fixtures/small.yaml";

fn small() -> Spec {
    load_str(SMALL_NAME, include_str!("fixtures/small.yaml")).unwrap_or_else(|e| panic!("{e}"))
}

#[test]
fn generated_client_of_the_small_spec() {
    let source = payspec_codegen::generate(&small(), &payspec_codegen::Options::new().formatted())
        .unwrap_or_else(|e| panic!("{e}"));
    insta::assert_snapshot!("small_client", source);
}

#[test]
fn audit_and_routes_of_the_small_spec() {
    let spec = small();
    let json: Vec<String> = spec.operations.iter().map(|op| report::operation_json(op).to_string()).collect();
    let reports = format!(
        "$ payspec audit\n{}$ payspec routes\n{}$ payspec routes --json\n{}\n",
        report::audit_text(&audit::audit(&spec)),
        report::routes_table(&spec),
        json.join("\n"),
    );
    insta::assert_snapshot!("small_reports", reports);
}
