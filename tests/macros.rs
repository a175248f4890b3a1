//! The proc macros as a user meets them: `generate!` and `route!` cases that must compile
//! and run, and cases that must not compile, with the exact error (`ui/fail/*.stderr`).
//!
//! Regenerate the `.stderr` files with `TRYBUILD=overwrite cargo test -p payspec-tests
//! --test macros`, then read them: they are the messages a user sees.

use std::path::Path;

#[test]
fn ui() {
    let cases = trybuild::TestCases::new();
    cases.pass("ui/pass/*.rs");
    cases.compile_fail("ui/fail/*.rs");
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
    let small = read("fixtures/small.yaml");
    assert_eq!(read("ui/pass/small.yaml"), small);
    let extended = read("ui/pass/extended.yaml");
    let appended = extended.strip_prefix(small.as_str()).expect("extended.yaml starts with small.yaml");
    assert!(appended.starts_with("  fetch_settlement:\n"), "{appended}");
    let broken = read("ui/fail/broken.yaml");
    let changed: Vec<(&str, &str)> = small.lines().zip(broken.lines()).filter(|(a, b)| a != b).collect();
    assert_eq!(changed.len(), 3, "the header comment and two mistakes: {changed:?}");
    assert_eq!(small.lines().count(), broken.lines().count());
}
