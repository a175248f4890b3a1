//! For build scripts that run the generator (`payspec-client`'s, or a user's own).

use crate::model::Spec;
use std::path::{Path, PathBuf};

/// Loads the spec at `path` for a build script: tells cargo to re-run the script when the
/// spec changes, and prints each spec error once, as one `cargo::error` line that names the
/// spec's absolute `file:line:col` (clickable wherever the build runs). `None` means the
/// spec has errors: cargo fails the build for them, so the script should then exit
/// successfully, or cargo prints every error a second time with the script's output.
pub fn load_spec(path: &Path) -> Option<Spec> {
    let path = std::fs::canonicalize(path).unwrap_or_else(|_| path.to_path_buf());
    println!("cargo::rerun-if-changed={}", path.display());
    match crate::load(&path) {
        Ok(spec) => Some(spec),
        Err(errors) => {
            for diagnostic in errors.iter() {
                println!("cargo::error={}", diagnostic.one_line());
            }
            if errors.omitted() > 0 {
                println!("cargo::error=... and {} more errors in the spec", errors.omitted());
            }
            None
        }
    }
}

/// Writes `text` to `OUT_DIR/name` for a build script, leaving the file untouched when it
/// already holds `text` (so its timestamp forces no work). Problems are printed as
/// `cargo::error` lines; `false` means the script should fail.
pub fn write_out(name: &str, text: &str) -> bool {
    let Some(out_dir) = std::env::var_os("OUT_DIR").map(PathBuf::from) else {
        println!("cargo::error=OUT_DIR is not set; run this build script through cargo");
        return false;
    };
    let path = out_dir.join(name);
    if std::fs::read_to_string(&path).ok().as_deref() == Some(text) {
        return true;
    }
    match std::fs::write(&path, text) {
        Ok(()) => true,
        Err(error) => {
            println!("cargo::error=cannot write {}: {error}", path.display());
            false
        }
    }
}
