//! Nothing: the crate is its test, `macros.rs`.
