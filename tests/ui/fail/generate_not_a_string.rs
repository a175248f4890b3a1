// The argument must be a string literal path.
payspec_macros::generate!(42);

fn main() {}
