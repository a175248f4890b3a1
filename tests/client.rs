//! The generated client's suites that need no process of their own, linked into one test
//! binary (one link instead of four): what a call records (`runtime_meta.rs`), listings
//! followed page by page (`runtime_pages.rs`), answers read as the document shows them
//! (`answers.rs`), and the scripted transport for a user's own tests (`testing_double.rs`).

#[path = "support/runtime.rs"]
mod support;

#[path = "answers.rs"]
mod answers;
#[path = "runtime_meta.rs"]
mod meta;
#[path = "runtime_pages.rs"]
mod pages;
#[path = "testing_double.rs"]
mod testing_double;
