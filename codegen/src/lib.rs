//! payspec's generator: one front end that loads and validates `spec/payments.yaml`, and
//! the back ends that read its model: the path audit, the Rust emitter and the CLI.
//!
//! ```no_run
//! let spec = payspec_codegen::load("spec/payments.yaml").map_err(|errors| {
//!     eprintln!("{errors}");
//! });
//! ```
#![warn(missing_docs)]

pub mod audit;
pub mod build_script;
pub mod emit;
pub mod load;
#[cfg(feature = "macros")]
pub mod macros;
pub mod model;
#[cfg(feature = "openapi")]
pub mod openapi;
pub mod report;
mod similar;

pub use emit::{EmitError, Options, generate};
pub use load::{Diagnostic, Diagnostics, load, load_str};
pub use model::Spec;
