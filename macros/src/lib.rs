//! Procedural macros over the payspec generator.
//!
//! - `generate!("path/to/spec.yaml")` expands to the same client code as the build step of
//!   `payspec-client`, for a spec of your own. The path is taken from the directory of the
//!   calling file; editing the spec rebuilds the caller; spec errors are compile errors that
//!   name the spec's `file:line:col`.
//! - `route!(bank_transfer)` or `route!(POST /v2/transfers/bank)` is the route constant of
//!   an operation of the built-in spec; a route the spec lacks does not compile, and the
//!   error names the closest one.
//!
//! What `generate!` expands to names the runtime, `::payspec_runtime`, so the calling crate
//! depends on `payspec-runtime` (and on nothing of the payments client); `route!` names
//! `::payspec_client::routes`, so a crate using it depends on `payspec-client`.
#![warn(missing_docs)]

use proc_macro::TokenStream;

/// Generates a client from a spec file (see the crate documentation).
#[proc_macro]
pub fn generate(input: TokenStream) -> TokenStream {
    let literal = match syn::parse::<syn::LitStr>(input) {
        Ok(literal) => literal,
        Err(error) => {
            let message = format!("{error}: write `generate!(\"path/to/spec.yaml\")`");
            return syn::Error::new(error.span(), message).to_compile_error().into();
        }
    };
    let (caller_dir, shown_dir) = caller_dir();
    payspec_codegen::macros::expand_generate(&literal.value(), &caller_dir, &shown_dir, literal.span()).into()
}

/// The spec `route!` looks routes up in: the one `payspec-client` is built from.
const BUILTIN_SPEC: &str = include_str!("../spec/payments.yaml");

/// The route constant of an operation of the built-in spec (see the crate documentation).
#[proc_macro]
pub fn route(input: TokenStream) -> TokenStream {
    // Loaded once per compiler process, however many `route!` calls it expands.
    static SPEC: std::sync::OnceLock<Result<payspec_codegen::Spec, String>> = std::sync::OnceLock::new();
    let spec = SPEC.get_or_init(|| {
        payspec_codegen::load_str(payspec_codegen::load::BUILTIN_SPEC_NAME, BUILTIN_SPEC)
            .map_err(|e| e.to_string())
    });
    payspec_codegen::macros::expand_route(input.into(), spec.as_ref().map_err(String::as_str)).into()
}

/// The directory of the file that calls the macro, and the same directory as the compiler
/// names it in its messages; the crate's manifest directory (twice) when the compiler does
/// not know the file (as with code built from a string).
fn caller_dir() -> (std::path::PathBuf, std::path::PathBuf) {
    let manifest = std::env::var_os("CARGO_MANIFEST_DIR").map(std::path::PathBuf::from).unwrap_or_default();
    match proc_macro::Span::call_site().local_file() {
        Some(file) => {
            let shown = file.parent().map(std::path::Path::to_path_buf).unwrap_or_default();
            let file = if file.is_absolute() {
                file
            } else {
                std::env::current_dir().unwrap_or_default().join(file)
            };
            (file.parent().map(std::path::Path::to_path_buf).unwrap_or(manifest), shown)
        }
        None => (manifest.clone(), manifest),
    }
}
