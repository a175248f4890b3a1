//! Crates outside the workspace, built and run as a user's project is: `external/` depends
//! on `payspec-client` and `payspec-macros` by path; `own-service/` has a spec of its own
//! and depends on `payspec-runtime` and `payspec-macros` only, no payments code.
//!
//! They cannot build in the workspace's target directory (the cargo running this test holds
//! its lock), so it builds where the trybuild cases of `ui/macros.rs` build, with the same
//! target, flags and settings trybuild uses: the two share their compiled dependencies, and
//! a cold `cargo test` compiles each of them twice in all (here and in the workspace), not
//! three times. If trybuild changes its flags, the sharing stops but nothing breaks.
//! `--locked`: each crate's `Cargo.lock` is committed, and a change to the client's
//! dependencies must update it (`cargo update --manifest-path tests/external/Cargo.toml
//! --workspace`, the same for `own-service`).

use std::path::Path;
use std::process::Command;

/// Builds and runs the crate at `tests/<name>/` from outside the workspace; its standard
/// output, or a failure with everything it printed.
fn run_outside(name: &str) -> String {
    let tests_dir = Path::new(env!("CARGO_MANIFEST_DIR"));
    let workspace = tests_dir.parent().expect("the tests crate is inside the workspace");
    let manifest = tests_dir.join(name).join("Cargo.toml");
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
    let stdout = String::from_utf8_lossy(&output.stdout).into_owned();
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(output.status.success(), "{}\nstdout:\n{stdout}\nstderr:\n{stderr}", output.status);
    stdout
}

#[test]
fn a_crate_outside_the_workspace_builds_and_calls_the_client() {
    let stdout = run_outside("external");
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

#[test]
fn a_crate_with_a_spec_of_its_own_builds_on_the_runtime_alone_and_calls_its_service() {
    // No payments code in its build: its lock file names neither the payments client nor
    // the sandbox.
    let lock = std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("own-service/Cargo.lock"))
        .unwrap_or_else(|e| panic!("own-service/Cargo.lock: {e}"));
    for payments in ["name = \"payspec-client\"", "name = \"payspec-sandbox\""] {
        assert!(!lock.contains(payments), "own-service depends on `{payments}`");
    }
    assert!(lock.contains("name = \"payspec-runtime\""), "own-service does not depend on the runtime");

    let stdout = run_outside("own-service");
    let lines: Vec<&str> = stdout.lines().collect();
    // Its spec's environments and default, not the payments service's.
    for line in [
        "default environment: https://staging.notes.example.org",
        "production: https://notes.example.org",
        "created: n-1 Some(\"buy milk\") pinned=Some(true)",
        "fetched: Some(\"buy milk\")",
        "listed: 1 notes",
    ] {
        assert!(lines.contains(&line), "missing `{line}` in:\n{stdout}");
    }
    // Counted at the server: each operation sent once, with the spec's wire and no
    // header beyond what HTTP needs (no token, no account id), under the user's crate name.
    let received: Vec<&str> = lines.iter().filter_map(|l| l.strip_prefix("received: ")).collect();
    assert_eq!(
        received,
        [
            r#"[own-service/0.0.0] POST /notes {"text":"buy milk","pinned":true}"#,
            "[own-service/0.0.0] GET /notes/n-1",
            "[own-service/0.0.0] GET /notes?pinned=true",
        ],
        "{stdout}"
    );
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
