// A spec file that does not exist: the error names the path as written and says where a
// relative path is taken from.
payspec_macros::generate!("missing.yaml");

fn main() {}
