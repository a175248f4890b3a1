//! What a vendor's OpenAPI document says, as the diff reads it: each operation's route, its
//! parameters by wire key, the fields of its answer, its authentication, the quirks met
//! reading it, and the type each value travels as.

use crate::model::{Location, Method, ParamLocation};
use serde_json::Value;
use std::fmt;

/// The JSON type a value travels as, as far as a diff is concerned.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum WireType {
    /// A JSON string.
    String,
    /// A whole JSON number.
    Integer,
    /// Any JSON number.
    Number,
    /// `true` or `false`.
    Boolean,
    /// A JSON object.
    Object,
    /// A JSON array.
    Array,
    /// An amount the reader accepts as a JSON number or a decimal string.
    NumberOrString,
    /// Any JSON value (no type given).
    Any,
}

impl WireType {
    /// The OpenAPI name (`number or string` for the pair).
    pub fn as_str(self) -> &'static str {
        match self {
            WireType::String => "string",
            WireType::Integer => "integer",
            WireType::Number => "number",
            WireType::Boolean => "boolean",
            WireType::Object => "object",
            WireType::Array => "array",
            WireType::NumberOrString => "number or string",
            WireType::Any => "any",
        }
    }

    /// Whether a value documented as `self` fits one documented as `other`.
    pub fn compatible(self, other: WireType) -> bool {
        use WireType::*;
        match (self, other) {
            (a, b) if a == b => true,
            (Any, _) | (_, Any) => true,
            (NumberOrString, Number | String | Integer) | (Number | String | Integer, NumberOrString) => true,
            _ => false,
        }
    }

    /// Whether a value of this type stands for everything below its key (a free-form
    /// object or any value): keys under it are not compared one by one.
    pub fn is_opaque(self) -> bool {
        matches!(self, WireType::Object | WireType::Any)
    }
}

/// One request parameter: path, query, header, or a body field (`order.amount`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ApiParam {
    /// Where it travels.
    pub location: ParamLocation,
    /// The wire key; body fields nested in objects are joined with dots.
    pub key: String,
    /// The JSON type it travels as.
    pub ty: WireType,
    /// Whether the document requires it.
    pub required: bool,
}

/// One field of an answer, by its wire path from the top of the body: `data.amount`,
/// `data.results[].id` (`[]` is a list's items); the top itself is the empty key.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ApiField {
    /// Its wire path (`data.results[].id`).
    pub key: String,
    /// The JSON type the document gives it.
    pub ty: WireType,
}

/// One operation of the document, at one method and path.
#[derive(Debug, Clone)]
pub struct ApiOperation {
    /// Its HTTP method.
    pub method: Method,
    /// The path without any query string the key carried.
    pub path: String,
    /// Its `operationId`, if the document gives one.
    pub operation_id: Option<String>,
    /// Where it is: `/paths/~1v1~1accounts/get`.
    pub pointer: String,
    /// Its path key's line and column (for the first operations of a very large document).
    pub location: Option<Location>,
    /// Path, query, header (other than the authentication headers) and body parameters.
    pub params: Vec<ApiParam>,
    /// The successful answer's fields, from the top of the body; `None` when no `2xx`
    /// answer has a JSON schema.
    pub answer: Option<Vec<ApiField>>,
    /// A bearer token is required (a bearer security scheme, or an `Authorization` header).
    pub bearer: bool,
    /// The `accountId` header is required (an API-key scheme or a header parameter).
    pub account: bool,
    /// `x-payspec-alias-of`: payspec's own export marks each alternative form.
    pub alias_of: Option<String>,
}

/// A quirk of the document that was read rather than refused.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Quirk {
    /// The method of the operation it was found on, if it was found on one.
    pub method: Option<Method>,
    /// The path it was found on.
    pub path: String,
    /// Its line and column in the document, when located.
    pub location: Option<Location>,
    /// What was odd, and how it was read.
    pub message: String,
}

/// A document, read.
#[derive(Debug, Clone)]
pub struct ApiDocument {
    /// The file, as the caller named it.
    pub file: String,
    /// The `openapi` version it declares.
    pub version: String,
    /// Every operation, one per method and path.
    pub operations: Vec<ApiOperation>,
    /// What was read rather than refused.
    pub quirks: Vec<Quirk>,
    /// Whether payspec wrote it (`x-payspec` at the top): its differences from the spec
    /// are the export's faults, and the spec's recorded disagreements do not apply.
    pub payspec_export: bool,
}

/// A document that cannot be read.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DocumentError {
    /// The file, as the caller named it.
    pub file: String,
    /// Its line and column, when located.
    pub location: Option<Location>,
    /// The JSON pointer of the offending value, when there is one.
    pub pointer: String,
    /// What is wrong.
    pub message: String,
}

impl fmt::Display for DocumentError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write_located(f, &self.file, self.location, "error", &self.message, &self.pointer)
    }
}

/// `file:line:col: <label>: <message> (at <pointer>)`, the line and column and the pointer
/// where there are some: how a place in a document is said.
pub(super) fn write_located(
    f: &mut fmt::Formatter<'_>,
    file: &str,
    location: Option<Location>,
    label: &str,
    message: &str,
    pointer: &str,
) -> fmt::Result {
    match location {
        Some(at) => write!(f, "{file}:{}:{}: {label}: {message}", at.line, at.column)?,
        None => write!(f, "{file}: {label}: {message}")?,
    }
    if !pointer.is_empty() {
        write!(f, " (at {pointer})")?;
    }
    Ok(())
}

impl std::error::Error for DocumentError {}

/// The wire type a schema declares: `type` (a list of types without `null` counts as its
/// one type, `[number, string]` as the pair), else what its keywords imply.
pub(super) fn wire_type(schema: &Value) -> WireType {
    let one = |name: &str| match name {
        "string" => Some(WireType::String),
        "integer" => Some(WireType::Integer),
        "number" => Some(WireType::Number),
        "boolean" => Some(WireType::Boolean),
        "object" => Some(WireType::Object),
        "array" => Some(WireType::Array),
        _ => None,
    };
    match schema.get("type") {
        Some(Value::String(name)) => one(name).unwrap_or(WireType::Any),
        Some(Value::Array(names)) => {
            let mut types: Vec<WireType> =
                names.iter().filter_map(Value::as_str).filter(|n| *n != "null").filter_map(one).collect();
            types.sort();
            types.dedup();
            match types.as_slice() {
                [one] => *one,
                [WireType::String, WireType::Number] | [WireType::String, WireType::Integer] => {
                    WireType::NumberOrString
                }
                _ => WireType::Any,
            }
        }
        _ if schema.get("properties").is_some() => WireType::Object,
        _ if schema.get("items").is_some() => WireType::Array,
        _ => WireType::Any,
    }
}
