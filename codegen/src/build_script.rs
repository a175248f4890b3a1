//! For build scripts that run the generator (`payspec-client`'s, or a user's own).

use crate::model::Spec;
use std::path::Path;

/// Loads the spec at `path` for a build script: tells cargo to re-run the script when the
/// spec changes, and prints each spec error as a `cargo::error` line that names the spec's
/// `file:line:col`. `None` means the spec has errors; the script should then fail.
pub fn load_spec(path: &Path) -> Option<Spec> {
    println!("cargo::rerun-if-changed={}", path.display());
    match crate::load(path) {
        Ok(spec) => Some(spec),
        Err(errors) => {
            for diagnostic in errors.iter() {
                for line in diagnostic.to_string().lines() {
                    println!("cargo::error={line}");
                }
            }
            None
        }
    }
}
