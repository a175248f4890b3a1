pub mod counting;
pub mod limited;
pub mod loopback;
pub mod mock;
pub mod redis_server;
pub mod sandboxed;
pub mod transport;

/// The repository's spec, the one `payspec-client` is built from.
pub const BUILTIN_SPEC_PATH: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/../spec/payments.yaml");

/// The text of the repository's spec, read when a test runs (so that editing the spec does
/// not rebuild this crate's library).
pub fn builtin_spec_text() -> String {
    std::fs::read_to_string(BUILTIN_SPEC_PATH).unwrap_or_else(|e| panic!("{BUILTIN_SPEC_PATH}: {e}"))
}

/// The repository's spec, loaded under the name the CLI and the build step report it by.
pub fn load_builtin() -> Result<payspec_codegen::Spec, payspec_codegen::Diagnostics> {
    payspec_codegen::load_str(payspec_codegen::load::BUILTIN_SPEC_NAME, &builtin_spec_text())
}
