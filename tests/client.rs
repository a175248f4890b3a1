//! The generated client's suites that need no process of their own, linked into one test
//! binary (one link instead of five): what a call records (`runtime_meta.rs`), listings
//! followed page by page (`runtime_pages.rs`), answers read as the document shows them
//! (`answers.rs`), the published traffic read (`corpus.rs`), and the scripted transport for a
//! user's own tests (`testing_double.rs`).

#[path = "support/runtime.rs"]
mod support;
#[allow(dead_code, reason = "only the server and client helpers are used here")]
#[path = "support/wire_check.rs"]
mod wire_check;

#[path = "answers.rs"]
mod answers;
#[path = "corpus.rs"]
mod corpus;
#[path = "runtime_meta.rs"]
mod meta;
#[path = "runtime_pages.rs"]
mod pages;
#[path = "testing_double.rs"]
mod testing_double;
