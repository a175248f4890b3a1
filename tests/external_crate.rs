//! A crate outside the workspace (`external/`) depends on `payspec-client` and
//! `payspec-macros` by path, as a user's project does, and builds and runs.
//!
//! It builds in its own target directory (`target/external`): the cargo running this test
//! holds the lock on the workspace's. The first run compiles every dependency there once
//! (minutes); later runs only relink. `--locked`: `external/Cargo.lock` is committed, and a
//! change to the client's dependencies must update it (`cargo update --manifest-path
//! tests/external/Cargo.toml --workspace`).

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
        .args(["run", "--quiet", "--locked", "--manifest-path"])
        .arg(&manifest)
        .env("CARGO_TARGET_DIR", workspace.join("target/external"))
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
