// A spec with mistakes: every one is a compile error at the spec's own file:line:col.
payspec_macros::generate!("broken.yaml");

fn main() {}
