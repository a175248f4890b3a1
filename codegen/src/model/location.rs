//! Where a spec item is declared: a line and a column of the file.

/// A one-based line and column in the spec file: where a spec item is declared, and where
/// the loader places an error.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Default)]
pub struct Location {
    /// One-based line.
    pub line: usize,
    /// One-based column.
    pub column: usize,
}

impl Location {
    /// The first character of the file.
    pub const START: Location = Location { line: 1, column: 1 };
}
