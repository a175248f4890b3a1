//! Reads an OpenAPI 3.x document (JSON or YAML) into the flat view the diff compares: each
//! operation's route, its parameters by wire key (body fields dotted), the fields of its
//! answer, and its authentication.
//!
//! Documents in the wild have quirks. The ones met in the vendor's own document are read
//! and reported, not refused: a query string written inside a path key, a path variable
//! with no declared parameter, and one route listed twice under two variable names.
//! What cannot be read (not JSON or YAML, not OpenAPI 3.x, a `$ref` that leads nowhere)
//! is a [`DocumentError`] that says where.

use super::document::{
    ApiDocument, ApiField, ApiOperation, ApiParam, DocumentError, Quirk, WireType, wire_type,
};
use super::refs::{MAX_REF_HOPS, resolve};
use super::text::{escape, locate, parse};
use crate::model::{Location, Method, ParamLocation, PathTemplate};
use serde_json::Value;
use std::collections::{HashMap, HashSet};

/// The largest document read, in bytes.
pub const MAX_DOCUMENT_BYTES: usize = 64 << 20;
/// How deep a schema is followed (nested objects and list items); deeper levels are cut,
/// on both sides of a diff alike, so a schema that holds itself is read in bounded time.
pub const MAX_SCHEMA_DEPTH: usize = 12;
/// The most parameters, answer fields and `allOf` members a whole document may expand to.
/// References can multiply a small document into an enormous one; past this it is refused.
const MAX_FIELDS: usize = 200_000;
/// How many quirks and operations get a line and column (each is a search of the text);
/// past this they are reported without one, so a huge document is not searched over and over.
const MAX_LOCATED: usize = 256;

/// A document's text, parsed: its top level, and the `openapi` version it declares; or why it
/// is no OpenAPI 3.x document (too large, not JSON or YAML, not a mapping, another version).
pub(super) fn open_document(file: &str, text: &str) -> Result<(Value, String), DocumentError> {
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
    Ok((root, version))
}

/// Reads a document from its text. `file` names it in errors.
pub fn read_document(file: &str, text: &str) -> Result<ApiDocument, DocumentError> {
    let error = |location: Option<Location>, pointer: &str, message: String| DocumentError {
        file: file.to_owned(),
        location,
        pointer: pointer.to_owned(),
        message,
    };
    // A mapping: `open_document` refuses anything else.
    let (root, version) = open_document(file, text)?;
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
        payspec_export: root.get("x-payspec").is_some(),
    };
    let paths = match root.get("paths") {
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
pub(super) struct PathKey {
    /// The path, without the query string.
    pub path: String,
    /// Each query parameter written in the key, and whether its value is a `{variable}`.
    pub query: Vec<(String, bool)>,
}

pub(super) fn split_path_key(key: &str) -> PathKey {
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
    fn resolve(&self, value: &'a Value, pointer: &str) -> Result<&'a Value, DocumentError> {
        resolve(self.root, value).map_err(|e| self.error(pointer, &e.needle, e.message))
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
pub(super) fn json_schema<'v>(value: &'v Value, at: &str) -> Option<(&'v Value, String)> {
    let content = value.get("content")?.as_object()?;
    let (kind, media) = content
        .get_key_value("application/json")
        .or_else(|| content.iter().find(|(kind, _)| kind.contains("json")))?;
    let schema = media.get("schema")?;
    Some((schema, format!("{at}/content/{}/schema", escape(kind))))
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
