//! Where a value sits in an answer, and what was wrong with it there.

use std::fmt;

use super::value::Json;

/// Where a value sits in an answer, for error messages: `data.results[2].amount`.
#[derive(Clone, Copy, Debug)]
pub struct Path<'a> {
    parent: Option<&'a Path<'a>>,
    step: Step<'a>,
}

#[derive(Clone, Copy, Debug)]
enum Step<'a> {
    Root(&'a str),
    Key(&'a str),
    Index(usize),
}

impl<'a> Path<'a> {
    /// The path of a whole answer part, e.g. `data`.
    pub fn root(name: &'a str) -> Self {
        Path { parent: None, step: Step::Root(name) }
    }

    /// The path of a key below this one.
    pub fn key(&'a self, key: &'a str) -> Path<'a> {
        Path { parent: Some(self), step: Step::Key(key) }
    }

    /// The path of an array element below this one.
    pub fn index(&'a self, index: usize) -> Path<'a> {
        Path { parent: Some(self), step: Step::Index(index) }
    }
}

impl fmt::Display for Path<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if let Some(parent) = self.parent {
            fmt::Display::fmt(parent, f)?;
        }
        match self.step {
            Step::Root(name) => f.write_str(name),
            Step::Key(key) => write!(f, ".{key}"),
            Step::Index(i) => write!(f, "[{i}]"),
        }
    }
}

/// Why an answer value did not fit its declared type. Names the field path and the kind
/// of value that came, never the value itself (it could be a secret).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct DecodeError {
    /// Where, e.g. `data.results[2].amount`.
    pub path: String,
    /// What the spec declares there and what came instead.
    pub problem: String,
}

impl DecodeError {
    /// `expected` there, but a value of another kind came.
    pub fn expected(at: &Path<'_>, expected: &str, found: &Json) -> Self {
        DecodeError { path: at.to_string(), problem: format!("expected {expected}, found {}", found.kind()) }
    }

    /// A problem with the value at `at`.
    pub fn at(at: &Path<'_>, problem: impl Into<String>) -> Self {
        DecodeError { path: at.to_string(), problem: problem.into() }
    }
}

impl fmt::Display for DecodeError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "`{}`: {}", self.path, self.problem)
    }
}

impl std::error::Error for DecodeError {}
