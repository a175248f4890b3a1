//! A crate outside the workspace (`external/`) depends on `payspec-client` and
//! `payspec-macros` by path, as a user's project does, and builds and runs.
//!
//! It cannot build in the workspace's target directory (the cargo running this test holds
//! its lock), so it builds where the trybuild cases of `macros.rs` build, with the same
//! target, flags and settings trybuild uses: the two share their compiled dependencies, and
//! a cold `cargo test` compiles each of them twice in all (here and in the workspace), not
//! three times. If trybuild changes its flags, the sharing stops but nothing breaks.
//! `--locked`: `external/Cargo.lock` is committed, and a change to the client's
//! dependencies must update it (`cargo update --manifest-path tests/external/Cargo.toml
//! --workspace`).

use std::path::Path;
use std::process::Command;

#[test]
fn a_crate_outside_the_workspace_builds_and_calls_the_client() {
    let tests_dir = Path::new(env!("CARGO_MANIFEST_DIR"));
    let workspace = tests_dir.parent().expect("the tests crate is inside the workspace");
    let manifest = tests_dir.join("external/Cargo.toml");
    let cargo = std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into());

    let mut command = Command::new(cargo);
    command
        .args(["run", "--quiet", "--locked", "--target", &host_triple(), "--manifest-path"])
        .arg(&manifest)
        // What trybuild passes (its `cargo.rs` and `rustflags.rs`).
        .arg(r#"--config=build.rustflags=["--cfg","trybuild","--verbose","-A","dead_code","--diagnostic-width=140"]"#)
        .env("CARGO_TARGET_DIR", workspace.join("target/tests/trybuild"))
        .env("CARGO_INCREMENTAL", "0")
        .env_remove("RUSTFLAGS")
        .current_dir(workspace);
    // What cargo set for this test binary describes this package, not the external one.
    for name in ["CARGO_MANIFEST_DIR", "CARGO_MANIFEST_PATH", "CARGO_PRIMARY_PACKAGE", "OUT_DIR"] {
        command.env_remove(name);
    }
    let output = command.output().unwrap_or_else(|e| panic!("cannot run cargo: {e}"));
    let stdout = String::from_utf8_lossy(&output.stdout);
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(output.status.success(), "{}\nstdout:\n{stdout}\nstderr:\n{stderr}", output.status);

    let expected = [
        "route: POST /v2/transfers/bank (bank_transfer)",
        "macro route: POST /v2/transfers/bank",
        "small spec: 4 routes, first issue_token",
    ];
    let lines: Vec<&str> = stdout.lines().collect();
    for line in expected {
        assert!(lines.contains(&line), "missing `{line}` in:\n{stdout}");
    }
    let request = lines.iter().find(|l| l.starts_with("request: BankTransfer {")).expect("the request line");
    assert!(request.contains("narration: Some(\"school fees\")"), "{request}");
    let client = lines.iter().find(|l| l.starts_with("client: Client {")).expect("the client line");
    assert!(client.contains("\"http://127.0.0.1:9\""), "the custom base URL, trimmed: {client}");
    assert!(!stdout.contains("sk_test_external_secret"), "the client secret was printed:\n{stdout}");
}

/// The host's target triple, as the compiler names it (trybuild builds for it explicitly).
fn host_triple() -> String {
    let rustc = std::env::var_os("RUSTC").unwrap_or_else(|| "rustc".into());
    let output = Command::new(rustc).arg("-vV").output().unwrap_or_else(|e| panic!("cannot run rustc: {e}"));
    String::from_utf8_lossy(&output.stdout)
        .lines()
        .find_map(|line| line.strip_prefix("host: "))
        .map(str::to_owned)
        .unwrap_or_else(|| panic!("rustc -vV names no host"))
}
