//! Small pieces the generated code calls, so that it stays data only.

use std::fmt;

/// Stands in for a secret value in `Debug` output.
#[derive(Clone, Copy, PartialEq, Eq)]
pub struct Redacted;

impl fmt::Debug for Redacted {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("\"***\"")
    }
}
