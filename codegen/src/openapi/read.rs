//! Reads an OpenAPI 3.x document (JSON or YAML) into the flat view the diff compares: each
//! operation's route, its parameters by wire key (body fields dotted), the fields of its
//! answer, and its authentication.
//!
//! Documents in the wild have quirks. The ones met in the vendor's own document are read
//! and reported, not refused: a query string written inside a path key, a path variable
//! with no declared parameter, and one route listed twice under two variable names.
//! What cannot be read (not JSON or YAML, not OpenAPI 3.x, a `$ref` that leads nowhere)
//! is a [`DocumentError`] that says where.

use crate::model::{Location, Method, ParamLocation, PathTemplate};
use serde_json::Value;
use std::collections::{HashMap, HashSet};
use std::fmt;

/// The largest document read, in bytes.
pub const MAX_DOCUMENT_BYTES: usize = 64 << 20;
/// How many `$ref` hops one reference may take before it is called a loop.
const MAX_REF_HOPS: usize = 64;
/// How deep a schema is followed (nested objects and list items); deeper levels are cut,
/// on both sides of a diff alike, so a schema that holds itself is read in bounded time.
pub const MAX_SCHEMA_DEPTH: usize = 12;
/// The most parameters, answer fields and `allOf` members a whole document may expand to.
/// References can multiply a small document into an enormous one; past this it is refused.
const MAX_FIELDS: usize = 200_000;
/// How many quirks and operations get a line and column (each is a search of the text);
/// past this they are reported without one, so a huge document is not searched over and over.
const MAX_LOCATED: usize = 256;

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
        match self.location {
            Some(at) => write!(f, "{}:{}:{}: error: {}", self.file, at.line, at.column, self.message)?,
            None => write!(f, "{}: error: {}", self.file, self.message)?,
        }
        if !self.pointer.is_empty() {
            write!(f, " (at {})", self.pointer)?;
        }
        Ok(())
    }
}

impl std::error::Error for DocumentError {}

/// Reads a document from its text. `file` names it in errors.
pub fn read_document(file: &str, text: &str) -> Result<ApiDocument, DocumentError> {
    let error = |location: Option<Location>, pointer: &str, message: String| DocumentError {
        file: file.to_owned(),
        location,
        pointer: pointer.to_owned(),
        message,
    };
    if text.len() > MAX_DOCUMENT_BYTES {
        return Err(error(
            None,
            "",
            format!("the document is {} bytes; at most {MAX_DOCUMENT_BYTES} are read", text.len()),
        ));
    }
    let root = parse(text).map_err(|(location, message)| error(location, "", message))?;
    let Value::Object(top) = &root else {
        return Err(error(
            Some(Location::START),
            "",
            "not an OpenAPI document: the top level is not a mapping".to_owned(),
        ));
    };
    let version = match top.get("openapi") {
        Some(Value::String(v)) if v.starts_with("3.") => v.clone(),
        Some(other) => {
            return Err(error(
                locate(text, "openapi"),
                "/openapi",
                format!("not an OpenAPI 3.x document: `openapi` is {other}; payspec reads 3.0 and 3.1"),
            ));
        }
        None if top.contains_key("swagger") => {
            return Err(error(
                locate(text, "swagger"),
                "/swagger",
                "a Swagger 2.0 document; payspec reads OpenAPI 3.0 and 3.1 (convert it first)".to_owned(),
            ));
        }
        None => {
            return Err(error(
                Some(Location::START),
                "",
                "not an OpenAPI document: it has no `openapi` version".to_owned(),
            ));
        }
    };
    let reader = Reader {
        file,
        text,
        root: &root,
        budget: std::cell::Cell::new(MAX_FIELDS),
        located: std::cell::Cell::new(0),
    };
    let mut document = ApiDocument {
        file: file.to_owned(),
        version,
        operations: Vec::new(),
        quirks: Vec::new(),
        payspec_export: top.contains_key("x-payspec"),
    };
    let paths = match top.get("paths") {
        None => return Ok(document),
        Some(Value::Object(paths)) => paths,
        Some(_) => return Err(error(locate(text, "paths"), "/paths", "`paths` is not a mapping".to_owned())),
    };
    for (key, item) in paths {
        reader.read_path(key, item, &mut document)?;
    }
    report_repeated_routes(&mut document);
    Ok(document)
}

/// JSON when it looks like JSON (for its exact error positions), else YAML.
fn parse(text: &str) -> Result<Value, (Option<Location>, String)> {
    let body = text.trim_start_matches('\u{feff}').trim_start();
    if body.starts_with('{') || body.starts_with('[') {
        return serde_json::from_str(text).map_err(|e| {
            let message = e.to_string();
            let message = message.rsplit_once(" at line ").map_or(message.as_str(), |(m, _)| m);
            (Some(Location { line: e.line(), column: e.column() }), format!("not valid JSON: {message}"))
        });
    }
    let yaml: serde_yaml::Value = serde_yaml::from_str(text).map_err(|e| {
        let location = e.location().map(|l| Location { line: l.line(), column: l.column() });
        let message = e.to_string();
        let message = message.rsplit_once(" at line ").map_or(message.as_str(), |(m, _)| m);
        (location, format!("neither JSON nor valid YAML: {message}"))
    })?;
    Ok(yaml_to_json(yaml))
}

/// YAML to JSON values; a non-text key (`200:` in `responses`) becomes its text.
fn yaml_to_json(value: serde_yaml::Value) -> Value {
    use serde_yaml::Value as Y;
    match value {
        Y::Null => Value::Null,
        Y::Bool(b) => Value::Bool(b),
        Y::Number(n) => {
            if let Some(i) = n.as_i64() {
                Value::from(i)
            } else if let Some(u) = n.as_u64() {
                Value::from(u)
            } else {
                n.as_f64().and_then(serde_json::Number::from_f64).map_or(Value::Null, Value::Number)
            }
        }
        Y::String(s) => Value::String(s),
        Y::Sequence(items) => Value::Array(items.into_iter().map(yaml_to_json).collect()),
        Y::Mapping(map) => Value::Object(
            map.into_iter()
                .map(|(k, v)| {
                    let key = match yaml_to_json(k) {
                        Value::String(s) => s,
                        other => other.to_string(),
                    };
                    (key, yaml_to_json(v))
                })
                .collect(),
        ),
        Y::Tagged(tagged) => yaml_to_json(tagged.value),
    }
}

/// The first place the text names `needle` as a key or a value, for error positions.
fn locate(text: &str, needle: &str) -> Option<Location> {
    let quoted = format!("\"{needle}\"");
    let at = text.find(&quoted).or_else(|| text.find(needle))?;
    let before = &text[..at];
    let line = before.matches('\n').count() + 1;
    let column = before.rsplit('\n').next().map_or(0, |l| l.chars().count()) + 1;
    Some(Location { line, column })
}

/// Escapes a key for a JSON pointer (`/` is `~1`, `~` is `~0`).
fn escape(key: &str) -> String {
    key.replace('~', "~0").replace('/', "~1")
}

const METHODS: [(&str, Method); 5] = [
    ("get", Method::Get),
    ("put", Method::Put),
    ("post", Method::Post),
    ("delete", Method::Delete),
    ("patch", Method::Patch),
];

struct Reader<'a> {
    file: &'a str,
    text: &'a str,
    root: &'a Value,
    /// What is left of [`MAX_FIELDS`].
    budget: std::cell::Cell<usize>,
    /// How many places were located so far (at most [`MAX_LOCATED`]).
    located: std::cell::Cell<usize>,
}

/// A path key split into its path and the query parameters written inside it.
struct PathKey {
    path: String,
    query: Vec<(String, bool)>,
}

fn split_path_key(key: &str) -> PathKey {
    let Some((path, query)) = key.split_once('?') else {
        return PathKey { path: key.to_owned(), query: Vec::new() };
    };
    let query = query
        .split('&')
        .filter(|pair| !pair.is_empty())
        .map(|pair| {
            let (name, value) = pair.split_once('=').unwrap_or((pair, ""));
            (name.to_owned(), value.starts_with('{') && value.ends_with('}'))
        })
        .collect();
    PathKey { path: path.to_owned(), query }
}

impl<'a> Reader<'a> {
    /// The line and column of `needle`, while fewer than [`MAX_LOCATED`] were looked up.
    fn locate_some(&self, needle: &str) -> Option<Location> {
        let done = self.located.get();
        if done >= MAX_LOCATED {
            return None;
        }
        self.located.set(done + 1);
        locate(self.text, needle)
    }

    /// Takes one from the document's budget of fields.
    fn spend(&self, pointer: &str) -> Result<(), DocumentError> {
        match self.budget.get().checked_sub(1) {
            Some(left) => {
                self.budget.set(left);
                Ok(())
            }
            None => {
                Err(self.error(pointer, "", format!("the document expands to more than {MAX_FIELDS} fields")))
            }
        }
    }

    fn error(&self, pointer: &str, needle: &str, message: String) -> DocumentError {
        DocumentError {
            file: self.file.to_owned(),
            location: locate(self.text, needle),
            pointer: pointer.to_owned(),
            message,
        }
    }

    /// Follows `$ref` until a value that is not a reference.
    fn resolve(&self, mut value: &'a Value, pointer: &str) -> Result<&'a Value, DocumentError> {
        for _ in 0..MAX_REF_HOPS {
            let Some(reference) = value.get("$ref") else { return Ok(value) };
            let Some(reference) = reference.as_str() else {
                return Err(self.error(pointer, "$ref", "`$ref` is not a string".to_owned()));
            };
            let Some(target) = reference.strip_prefix('#') else {
                return Err(self.error(
                    pointer,
                    reference,
                    format!("`$ref: {reference}` points outside the document; only local references (`#/...`) are read"),
                ));
            };
            let target = percent_decode(target);
            value = match self.root.pointer(&target) {
                Some(found) => found,
                None => {
                    return Err(self.error(
                        pointer,
                        reference,
                        format!("broken `$ref: {reference}`: the document has nothing there"),
                    ));
                }
            };
        }
        Err(self.error(pointer, "$ref", format!("`$ref` chain longer than {MAX_REF_HOPS} hops (a loop?)")))
    }

    fn read_path(&self, key: &str, item: &'a Value, document: &mut ApiDocument) -> Result<(), DocumentError> {
        let pointer = format!("/paths/{}", escape(key));
        let item = self.resolve(item, &pointer)?;
        let Value::Object(item) = item else {
            return Err(self.error(&pointer, key, format!("the path item `{key}` is not a mapping")));
        };
        let split = split_path_key(key);
        let location = self.locate_some(key);
        if !split.query.is_empty() {
            let names: Vec<&str> = split.query.iter().map(|(n, _)| n.as_str()).collect();
            document.quirks.push(Quirk {
                method: None,
                path: key.to_owned(),
                location,
                message: format!(
                    "the path key carries a query string; read as the path `{}` with the query parameter{} {}",
                    split.path,
                    if names.len() == 1 { "" } else { "s" },
                    names.join(", ")
                ),
            });
        }
        let shared = match item.get("parameters") {
            Some(list) => self.parameters(list, &format!("{pointer}/parameters"))?,
            None => Vec::new(),
        };
        for (name, method) in METHODS {
            let Some(operation) = item.get(name) else { continue };
            let at = format!("{pointer}/{name}");
            let op = self.read_operation(&split, key, method, operation, &shared, &at, location, document)?;
            document.operations.push(op);
        }
        Ok(())
    }

    #[allow(clippy::too_many_arguments)]
    fn read_operation(
        &self,
        split: &PathKey,
        key: &str,
        method: Method,
        operation: &'a Value,
        shared: &[RawParameter],
        pointer: &str,
        location: Option<Location>,
        document: &mut ApiDocument,
    ) -> Result<ApiOperation, DocumentError> {
        let operation = self.resolve(operation, pointer)?;
        let Value::Object(operation) = operation else {
            return Err(self.error(pointer, key, format!("the operation {method} {key} is not a mapping")));
        };
        let mut quirk = |message: String| {
            document.quirks.push(Quirk { method: Some(method), path: key.to_owned(), location, message });
        };
        // Operation parameters replace path-level ones of the same name and location.
        let mut raw: Vec<RawParameter> = match operation.get("parameters") {
            Some(list) => self.parameters(list, &format!("{pointer}/parameters"))?,
            None => Vec::new(),
        };
        for param in shared {
            if !raw.iter().any(|p| p.location == param.location && p.name == param.name) {
                raw.push(param.clone());
            }
        }
        let mut bearer = false;
        let mut account = false;
        let mut params = Vec::new();
        for param in raw {
            match param.location {
                Some(ParamLocation::Header) if param.name.eq_ignore_ascii_case("authorization") => {
                    bearer = true
                }
                Some(ParamLocation::Header) if param.name.eq_ignore_ascii_case("accountid") => account = true,
                Some(ParamLocation::Path) if split.query.iter().any(|(n, _)| *n == param.name) => {
                    params.push(param.into_param(ParamLocation::Query))
                }
                Some(location) => params.push(param.into_param(location)),
                None => quirk(format!(
                    "the parameter `{}` is in `{}`, which payspec does not compare",
                    param.name, param.raw_in
                )),
            }
        }
        for (name, variable) in &split.query {
            if !params.iter().any(|p| p.location == ParamLocation::Query && p.key == *name) {
                params.push(ApiParam {
                    location: ParamLocation::Query,
                    key: name.clone(),
                    ty: WireType::String,
                    required: *variable,
                });
            }
        }
        let variables = PathTemplate::variables_of(&split.path);
        for variable in &variables {
            if !params.iter().any(|p| p.location == ParamLocation::Path && p.key == *variable) {
                quirk(format!(
                    "the path variable `{variable}` has no declared parameter; read as a required string"
                ));
                params.push(ApiParam {
                    location: ParamLocation::Path,
                    key: (*variable).to_owned(),
                    ty: WireType::String,
                    required: true,
                });
            }
        }
        params.retain(|p| {
            let stray = p.location == ParamLocation::Path && !variables.contains(&p.key.as_str());
            if stray {
                quirk(format!("the path parameter `{}` does not appear in the path; ignored", p.key));
            }
            !stray
        });
        for p in &mut params {
            if p.location == ParamLocation::Path {
                p.required = true;
            }
        }
        if let Some(body) = operation.get("requestBody") {
            let at = format!("{pointer}/requestBody");
            let body = self.resolve(body, &at)?;
            if let Some((schema, at)) = json_schema(body, &at) {
                self.body_fields(schema, String::new(), true, 0, &at, &mut params)?;
            }
        }
        let answer = match operation.get("responses") {
            Some(responses) => self.answer(responses, &format!("{pointer}/responses"))?,
            None => None,
        };
        let security = operation.get("security").or_else(|| self.root.get("security"));
        if let Some(Value::Array(requirements)) = security {
            let (b, a) = self.security(requirements)?;
            bearer |= b;
            account |= a;
        }
        Ok(ApiOperation {
            method,
            path: split.path.clone(),
            operation_id: operation.get("operationId").and_then(Value::as_str).map(str::to_owned),
            pointer: pointer.to_owned(),
            location,
            params,
            answer,
            bearer,
            account,
            alias_of: operation.get("x-payspec-alias-of").and_then(Value::as_str).map(str::to_owned),
        })
    }

    fn parameters(&self, list: &'a Value, pointer: &str) -> Result<Vec<RawParameter>, DocumentError> {
        let Value::Array(list) = list else {
            return Err(self.error(pointer, "parameters", "`parameters` is not a list".to_owned()));
        };
        let mut out = Vec::with_capacity(list.len());
        for (i, param) in list.iter().enumerate() {
            let at = format!("{pointer}/{i}");
            let param = self.resolve(param, &at)?;
            let name = param.get("name").and_then(Value::as_str);
            let raw_in = param.get("in").and_then(Value::as_str);
            let (Some(name), Some(raw_in)) = (name, raw_in) else {
                return Err(self.error(
                    &at,
                    "parameters",
                    "a parameter without a `name` or an `in`".to_owned(),
                ));
            };
            let location = match raw_in {
                "path" => Some(ParamLocation::Path),
                "query" => Some(ParamLocation::Query),
                "header" => Some(ParamLocation::Header),
                _ => None,
            };
            let ty = match param.get("schema") {
                Some(schema) => wire_type(self.resolve(schema, &format!("{at}/schema"))?),
                None => WireType::Any,
            };
            out.push(RawParameter {
                name: name.to_owned(),
                raw_in: raw_in.to_owned(),
                location,
                ty,
                required: param.get("required").and_then(Value::as_bool).unwrap_or(false),
            });
        }
        Ok(out)
    }

    /// Body fields as dotted keys; a field is required when it and every object above it
    /// are listed as required.
    #[allow(clippy::too_many_arguments)]
    fn body_fields(
        &self,
        schema: &'a Value,
        key: String,
        required: bool,
        depth: usize,
        pointer: &str,
        out: &mut Vec<ApiParam>,
    ) -> Result<(), DocumentError> {
        let schema = self.resolve(schema, pointer)?;
        let ty = wire_type(schema);
        let Members { properties, required: needed } = self.members(schema, pointer)?;
        if ty == WireType::Object && !properties.is_empty() && depth < MAX_SCHEMA_DEPTH {
            for (name, sub) in properties {
                let sub_key = if key.is_empty() { name.clone() } else { format!("{key}.{name}") };
                let sub_required = required && needed.iter().any(|n| n == name);
                self.body_fields(sub, sub_key, sub_required, depth + 1, pointer, out)?;
            }
            return Ok(());
        }
        self.spend(pointer)?;
        out.push(ApiParam { location: ParamLocation::Body, key, ty, required });
        Ok(())
    }

    /// The fields of the first `2xx` answer with a JSON schema (`200` first).
    fn answer(&self, responses: &'a Value, pointer: &str) -> Result<Option<Vec<ApiField>>, DocumentError> {
        let Value::Object(responses) = self.resolve(responses, pointer)? else { return Ok(None) };
        let mut codes: Vec<&String> = responses.keys().filter(|code| code.starts_with('2')).collect();
        codes.sort_by_key(|code| (code.as_str() != "200", code.as_str()));
        for code in codes {
            let at = format!("{pointer}/{code}");
            let response = self.resolve(&responses[code.as_str()], &at)?;
            if let Some((schema, at)) = json_schema(response, &at) {
                let mut fields = Vec::new();
                self.answer_fields(schema, String::new(), 0, &at, &mut fields)?;
                return Ok(Some(fields));
            }
        }
        Ok(None)
    }

    fn answer_fields(
        &self,
        schema: &'a Value,
        key: String,
        depth: usize,
        pointer: &str,
        out: &mut Vec<ApiField>,
    ) -> Result<(), DocumentError> {
        let schema = self.resolve(schema, pointer)?;
        let mut ty = wire_type(schema);
        let properties = self.members(schema, pointer)?.properties;
        if ty == WireType::Any && !properties.is_empty() {
            ty = WireType::Object;
        }
        self.spend(pointer)?;
        out.push(ApiField { key: key.clone(), ty });
        if depth >= MAX_SCHEMA_DEPTH {
            return Ok(());
        }
        match ty {
            WireType::Object => {
                for (name, sub) in properties {
                    let sub_key = if key.is_empty() { name.clone() } else { format!("{key}.{name}") };
                    self.answer_fields(sub, sub_key, depth + 1, pointer, out)?;
                }
            }
            WireType::Array => {
                if let Some(items) = schema.get("items") {
                    self.answer_fields(items, format!("{key}[]"), depth + 1, pointer, out)?;
                }
            }
            _ => {}
        }
        Ok(())
    }

    /// A schema's properties and required names, with those of its `allOf` members (the
    /// first definition of a name wins). Members are visited breadth first, at most
    /// [`MAX_REF_HOPS`] levels deep, each one spending the document's budget, so an
    /// `allOf` that holds itself, or multiplies, ends with an error.
    fn members(&self, schema: &'a Value, pointer: &str) -> Result<Members<'a>, DocumentError> {
        let mut found = Members::default();
        let mut names: HashSet<&'a str> = HashSet::new();
        let mut level = vec![schema];
        for _ in 0..MAX_REF_HOPS {
            let mut next = Vec::new();
            for schema in level {
                if let Some(Value::Object(properties)) = schema.get("properties") {
                    for (name, sub) in properties {
                        if names.insert(name.as_str()) {
                            found.properties.push((name, sub));
                        }
                    }
                }
                if let Some(Value::Array(required)) = schema.get("required") {
                    found.required.extend(required.iter().filter_map(Value::as_str).map(str::to_owned));
                }
                if let Some(Value::Array(all)) = schema.get("allOf") {
                    for member in all {
                        self.spend(pointer)?;
                        next.push(self.resolve(member, pointer)?);
                    }
                }
            }
            if next.is_empty() {
                return Ok(found);
            }
            level = next;
        }
        Err(self.error(
            pointer,
            "allOf",
            format!("`allOf` nests deeper than {MAX_REF_HOPS} levels (a loop?)"),
        ))
    }

    /// Whether the security requirements ask for a bearer token and for the `accountId`
    /// header (an API-key scheme in the header of that name).
    fn security(&self, requirements: &[Value]) -> Result<(bool, bool), DocumentError> {
        let schemes = self.root.pointer("/components/securitySchemes").and_then(Value::as_object);
        let mut bearer = false;
        let mut account = false;
        for requirement in requirements {
            let Some(requirement) = requirement.as_object() else { continue };
            for name in requirement.keys() {
                let pointer = format!("/components/securitySchemes/{}", escape(name));
                let Some(scheme) = schemes.and_then(|s| s.get(name)) else {
                    return Err(self.error(
                        &pointer,
                        name,
                        format!("the security requirement names `{name}`, which `components.securitySchemes` does not define"),
                    ));
                };
                let scheme = self.resolve(scheme, &pointer)?;
                let kind = scheme.get("type").and_then(Value::as_str).unwrap_or("");
                let is_bearer = match kind {
                    "http" => scheme
                        .get("scheme")
                        .and_then(Value::as_str)
                        .is_some_and(|s| s.eq_ignore_ascii_case("bearer")),
                    "oauth2" | "openIdConnect" => true,
                    _ => false,
                };
                let is_account = kind == "apiKey"
                    && scheme.get("in").and_then(Value::as_str) == Some("header")
                    && scheme
                        .get("name")
                        .and_then(Value::as_str)
                        .is_some_and(|n| n.eq_ignore_ascii_case("accountid"));
                bearer |= is_bearer;
                account |= is_account;
            }
        }
        Ok((bearer, account))
    }
}

/// What [`Reader::members`] gathers.
#[derive(Default)]
struct Members<'a> {
    properties: Vec<(&'a String, &'a Value)>,
    required: Vec<String>,
}

#[derive(Debug, Clone)]
struct RawParameter {
    name: String,
    raw_in: String,
    location: Option<ParamLocation>,
    ty: WireType,
    required: bool,
}

impl RawParameter {
    fn into_param(self, location: ParamLocation) -> ApiParam {
        ApiParam { location, key: self.name, ty: self.ty, required: self.required }
    }
}

/// The JSON schema of a request body or an answer, with its pointer below `at`: its
/// `application/json` content, or any JSON-like content when that is absent.
fn json_schema<'v>(value: &'v Value, at: &str) -> Option<(&'v Value, String)> {
    let content = value.get("content")?.as_object()?;
    let (kind, media) = content
        .get_key_value("application/json")
        .or_else(|| content.iter().find(|(kind, _)| kind.contains("json")))?;
    let schema = media.get("schema")?;
    Some((schema, format!("{at}/content/{}/schema", escape(kind))))
}

/// The wire type a schema declares: `type` (a list of types without `null` counts as its
/// one type, `[number, string]` as the pair), else what its keywords imply.
fn wire_type(schema: &Value) -> WireType {
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

/// `%7B` and the like in a reference, decoded.
fn percent_decode(text: &str) -> String {
    if !text.contains('%') {
        return text.to_owned();
    }
    let bytes = text.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] == b'%'
            && let Some(hex) = text.get(i + 1..i + 3)
            && let Ok(byte) = u8::from_str_radix(hex, 16)
        {
            out.push(byte);
            i += 3;
            continue;
        }
        out.push(bytes[i]);
        i += 1;
    }
    String::from_utf8_lossy(&out).into_owned()
}

/// One route listed twice (same method, same shape, other variable names): both are kept,
/// and the repetition is reported.
fn report_repeated_routes(document: &mut ApiDocument) {
    let mut first: HashMap<(Method, String), usize> = HashMap::new();
    let mut quirks = Vec::new();
    for (i, op) in document.operations.iter().enumerate() {
        let key = (op.method, PathTemplate::shape_of(&op.path));
        match first.get(&key) {
            Some(&earlier) => {
                let earlier = &document.operations[earlier];
                quirks.push(Quirk {
                    method: Some(op.method),
                    path: op.path.clone(),
                    location: op.location,
                    message: format!(
                        "the same route as {} {} under other variable names; compared as one operation",
                        earlier.method, earlier.path
                    ),
                });
            }
            None => {
                first.insert(key, i);
            }
        }
    }
    document.quirks.extend(quirks);
}
