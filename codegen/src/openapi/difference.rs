//! What a comparison of the spec with an OpenAPI document found: each difference, what it
//! is about, whether a disagreement the spec records accounts for it, and the recorded
//! disagreements the document no longer shows.

use super::document::Quirk;
use crate::model::{Concern, Method};
use serde::Serialize;
use std::fmt;

/// What a difference is about.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum DifferenceKind {
    /// A route one side has and the other does not.
    Operation,
    /// The same path under another method.
    Method,
    /// The same route with other variable names.
    Path,
    /// The same key in another location.
    Location,
    /// A key one side has and the other does not.
    WireKey,
    /// A parameter's JSON type.
    Type,
    /// Whether a parameter is required.
    Required,
    /// An answer field one side lacks or types otherwise.
    AnswerField,
    /// The bearer token or the account header.
    Auth,
}

impl DifferenceKind {
    /// Its name in reports, as a disagreement's `concerns` names it.
    pub fn as_str(self) -> &'static str {
        match self {
            DifferenceKind::Operation => "operation",
            DifferenceKind::Method => "method",
            DifferenceKind::Path => "path",
            DifferenceKind::Location => "location",
            DifferenceKind::WireKey => "wire_key",
            DifferenceKind::Type => "type",
            DifferenceKind::Required => "required",
            DifferenceKind::AnswerField => "answer_field",
            DifferenceKind::Auth => "auth",
        }
    }

    /// The concern of a disagreement that can record it.
    pub fn concern(self) -> Concern {
        match self {
            DifferenceKind::Operation | DifferenceKind::Method | DifferenceKind::Path => Concern::Route,
            DifferenceKind::Location => Concern::Location,
            DifferenceKind::WireKey => Concern::WireKey,
            DifferenceKind::Type => Concern::Type,
            DifferenceKind::Required => Concern::Required,
            DifferenceKind::AnswerField => Concern::AnswerField,
            DifferenceKind::Auth => Concern::Auth,
        }
    }
}

/// One difference between the spec and the document.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Difference {
    /// `recorded` (a disagreement of the operation accounts for it) or `new`.
    pub status: &'static str,
    /// The spec's operation, when the difference belongs to one.
    pub operation: Option<String>,
    /// The method of the route it was found on.
    #[serde(serialize_with = "method_text")]
    pub method: Method,
    /// The route it was found on.
    pub path: String,
    /// What kind of difference it is.
    pub kind: DifferenceKind,
    /// What differs: a wire key, an answer field path, a route, `bearer` or `accountId`.
    pub subject: String,
    /// What the spec has (`None`: nothing).
    pub spec: Option<String>,
    /// What the document has (`None`: nothing).
    pub document: Option<String>,
}

fn method_text<S: serde::Serializer>(method: &Method, serializer: S) -> Result<S::Ok, S::Error> {
    serializer.serialize_str(method.as_str())
}

impl Difference {
    /// Whether a disagreement of its operation accounts for it.
    pub fn is_recorded(&self) -> bool {
        self.status == "recorded"
    }
}

impl fmt::Display for Difference {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let side = |v: &Option<String>| v.clone().unwrap_or_else(|| "nothing".to_owned());
        write!(
            f,
            "{:<9}{:<12}{} {} [{}]  {}: spec {}, document {}",
            self.status,
            self.kind.as_str(),
            self.method,
            self.path,
            self.operation.as_deref().unwrap_or("-"),
            if self.subject.is_empty() { "(the answer's data)" } else { &self.subject },
            side(&self.spec),
            side(&self.document),
        )
    }
}

/// A recorded disagreement (or one subject of it) that no difference matches any more.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Stale {
    /// The operation whose disagreement it is.
    pub operation: String,
    /// The disagreement's `concerns`.
    pub concerns: &'static str,
    /// The subject nothing matched; empty when the disagreement names none.
    pub subject: String,
    /// The disagreement's text.
    pub text: String,
    /// `line:column` in the spec.
    pub at: String,
}

impl fmt::Display for Stale {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "stale    {:<12}[{}] at spec line {}", self.concerns, self.operation, self.at)?;
        if !self.subject.is_empty() {
            write!(f, "  {}", self.subject)?;
        }
        write!(f, ": no difference matches \"{}\"", self.text)
    }
}

/// Everything `payspec diff` reports.
#[derive(Debug, Clone)]
pub struct DiffReport {
    /// Every difference, recorded or new.
    pub differences: Vec<Difference>,
    /// Recorded disagreements that match nothing; always empty against payspec's own export.
    pub stale: Vec<Stale>,
    /// The document's quirks, read rather than refused.
    pub quirks: Vec<Quirk>,
    /// Whether the recorded disagreements were checked (not against payspec's own export).
    pub disagreements_checked: bool,
}

impl DiffReport {
    /// Differences no disagreement records.
    pub fn new_differences(&self) -> impl Iterator<Item = &Difference> {
        self.differences.iter().filter(|d| !d.is_recorded())
    }

    /// Whether the document and the spec agree but for recorded disagreements, and every
    /// disagreement still matches a difference.
    pub fn is_clean(&self) -> bool {
        self.new_differences().next().is_none() && self.stale.is_empty()
    }
}
