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
    // Each group behind the feature of its name (Cargo.toml declares one per group); the
    // blocking client written whatever the features, so that turning `blocking` on needs
    // no new run. Unformatted code cannot fail to generate.
    let options = payspec_codegen::Options::new().crate_name("payspec_client").per_group();
    for (file, options) in
        [("payspec_generated.rs", options.clone()), ("payspec_blocking.rs", options.blocking())]
    {
        let written = payspec_codegen::generate(&spec, &options)
            .is_ok_and(|source| payspec_codegen::build_script::write_out(file, &source));
        if !written {
            return ExitCode::FAILURE;
        }
    }
    ExitCode::SUCCESS
}
