//! Generates the client from `spec/payments.yaml` (the package's copy) into `OUT_DIR`, the way prost-build and
//! tonic-build do; `src/lib.rs` includes the result.
//!
//! Cargo re-runs this script only when the spec or this file changes. A spec error fails
//! the build with the spec's own `file:line:col`.

use std::path::PathBuf;
use std::process::ExitCode;

fn main() -> ExitCode {
    let manifest_dir = PathBuf::from(std::env::var_os("CARGO_MANIFEST_DIR").unwrap_or_default());
    println!("cargo::rerun-if-changed=build.rs");
    // The package's own copy of the spec: in the repository a link to `spec/payments.yaml`
    // at the top (errors name that file, the link resolved), in the published package the
    // file itself.
    let Some(spec) = payspec_codegen::build_script::load_spec(&manifest_dir.join("spec/payments.yaml"))
    else {
        // The errors are printed as `cargo::error` lines, which fail the build; a failing
        // exit would make cargo print them all again.
        return ExitCode::SUCCESS;
    };
    // Each group behind the feature of its name (Cargo.toml declares one per group).
    let source = payspec_codegen::generate_crate_source_per_group(&spec, "payspec_client");
    if !payspec_codegen::build_script::write_out("payspec_generated.rs", &source) {
        return ExitCode::FAILURE;
    }
    // Written whatever the features, so that turning `blocking` on needs no new run.
    let blocking = payspec_codegen::generate_blocking_source_per_group(&spec);
    if !payspec_codegen::build_script::write_out("payspec_blocking.rs", &blocking) {
        return ExitCode::FAILURE;
    }
    ExitCode::SUCCESS
}
