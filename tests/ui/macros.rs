//! The proc macros as a user meets them: `generate!` and `route!` cases that must compile
//! and run, and cases that must not compile, with the exact error (`fail/*.stderr`).
//!
//! Regenerate the `.stderr` files with `TRYBUILD=overwrite cargo test -p payspec-ui-tests
//! --test macros`, then read them: they are the messages a user sees.
//!
//! The cases are a crate of their own because trybuild builds every dependency of the
//! crate its test is in (under its own flags, so none is shared with the workspace's
//! build): here that is the client, the runtime and the macros, not the sandbox, the
//! tracing exporters and the rest of what the workspace tests use.

use std::path::Path;

#[test]
fn ui() {
    let cases = trybuild::TestCases::new();
    cases.pass("pass/*.rs");
    cases.compile_fail("fail/*.rs");
}

/// The UI specs are the fixture, as the cases' comments say: `small.yaml` is a copy,
/// `extended.yaml` the copy plus one appended operation, `broken.yaml` the copy with two
/// mistakes.
#[test]
fn ui_specs_are_the_small_fixture() {
    let read = |path: &str| {
        let path = Path::new(env!("CARGO_MANIFEST_DIR")).join(path);
        std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
    };
    let small = read("../fixtures/small.yaml");
    assert_eq!(read("pass/small.yaml"), small);
    let extended = read("pass/extended.yaml");
    let appended = extended.strip_prefix(small.as_str()).expect("extended.yaml starts with small.yaml");
    assert!(appended.starts_with("  fetch_settlement:\n"), "{appended}");
    let broken = read("fail/broken.yaml");
    let changed: Vec<(&str, &str)> = small.lines().zip(broken.lines()).filter(|(a, b)| a != b).collect();
    assert_eq!(changed.len(), 3, "the header comment and two mistakes: {changed:?}");
    assert_eq!(small.lines().count(), broken.lines().count());
}
