//! The spec being drafted, before it is written: what the document said, in the spec's
//! words, with the choices it leaves to its author.

use crate::model::{Location, Method, ParamLocation};
use crate::openapi::document::write_located;
use std::fmt;

/// What `payspec import` made of a document.
#[derive(Debug, Clone)]
pub struct Draft {
    /// The spec, as YAML, with each convention the document does not show left as a
    /// commented choice (`# CHOICE`).
    pub yaml: String,
    /// What could not be imported, each at its place in the document.
    pub unimported: Vec<Unimported>,
    /// The conventions drafted from what the document shows (an envelope every answer
    /// shares, a listing's page pair, an idempotency header), one line each.
    pub inferred: Vec<String>,
    /// How many operations the draft has.
    pub operations: usize,
    /// How many shapes the draft has.
    pub shapes: usize,
}

/// A construct of the document the spec format has no word for, or that a limit cut: left
/// out of the draft, and said here with its place.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Unimported {
    /// The document's file, as the caller named it.
    pub file: String,
    /// Its line and column, when located.
    pub location: Option<Location>,
    /// Its JSON pointer in the document.
    pub pointer: String,
    /// What it is, and what the draft does instead.
    pub what: String,
}

impl fmt::Display for Unimported {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write_located(f, &self.file, self.location, "not imported", &self.what, &self.pointer)
    }
}

/// A credential a security scheme becomes.
pub(super) struct Credential {
    pub name: String,
    pub header: String,
    pub prefix: &'static str,
    pub note: String,
}

/// An envelope every answer shares: its keys.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct Envelope {
    pub data: String,
    pub code: Vec<String>,
    pub description: Vec<String>,
    pub flag: Option<String>,
    /// The success codes its examples show (`"00"`); none: any `2xx` is a success.
    pub success_codes: Vec<String>,
}

/// Where a page says where the next one starts (keys of `service.pagination`).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(super) struct PageKeys {
    pub cursor: Option<String>,
    pub has_more: Option<String>,
    pub page: Option<String>,
    pub total_pages: Option<String>,
}

/// A group, from a tag or a path's first segment.
pub(super) struct Group {
    pub name: String,
    pub title: String,
    pub doc: String,
}

/// A parameter of an operation.
#[derive(Debug, Clone)]
pub(super) struct Param {
    pub name: String,
    pub location: ParamLocation,
    pub ty: String,
    pub wire: String,
    pub required: bool,
    pub values: Vec<String>,
    pub max: Option<i64>,
    pub format: Option<&'static str>,
    pub length: Option<u64>,
    pub layout: Option<&'static str>,
    pub doc: Option<String>,
}

/// A field of a shape.
#[derive(Debug, Clone)]
pub(super) struct Field {
    pub name: String,
    pub wire: String,
    pub ty: String,
    pub list: bool,
    pub values: Vec<String>,
    pub required: bool,
    pub doc: Option<String>,
}

/// A shape, from a schema of the document.
#[derive(Debug, Clone)]
pub(super) struct Shape {
    pub name: String,
    pub doc: String,
    pub fields: Vec<Field>,
}

/// An operation.
pub(super) struct Operation {
    pub name: String,
    pub group: String,
    pub summary: String,
    pub doc: Option<String>,
    pub method: Method,
    pub path: String,
    pub auth: String,
    pub body_encoding: Option<&'static str>,
    pub allows_body: bool,
    pub params: Vec<Param>,
    pub response: Option<String>,
    pub response_list: bool,
    /// Its answer is not in the envelope the others share.
    pub unwrapped: bool,
    /// The wire paths of its answer outside the envelope's data (`$.meta.pageCount`).
    pub outside: Vec<String>,
    /// The idempotency parameter's name, and the header it travels in.
    pub idempotency: Option<(String, String)>,
    pub pagination: Option<&'static str>,
    /// Choices left to the spec's author, one comment each.
    pub choices: Vec<String>,
    /// Its place in the document, for the comment above it.
    pub pointer: String,
}

/// What the service section says.
pub(super) struct Service {
    pub title: String,
    pub environments: Vec<(String, String)>,
    /// Said above the environments when the document names no server.
    pub environment_choice: Option<String>,
    pub credentials: Vec<Credential>,
    /// The security scheme's name -> the credential it became.
    pub schemes: Vec<(String, String)>,
}

/// The spec drafted, before it is written.
pub(super) struct Spec {
    pub service: Service,
    pub envelope: Option<Envelope>,
    pub pages: PageKeys,
    /// Choices of the service section, one comment each.
    pub choices: Vec<String>,
    pub groups: Vec<Group>,
    pub shapes: Vec<Shape>,
    pub operations: Vec<Operation>,
}
