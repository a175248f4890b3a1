//! Routing and checking requests against the spec: the route and method (aliases
//! included), then every path, query and body value: its key, type, required flag, allowed
//! values, constant, limit, date layout and an amount's decimals. A request that fails is
//! a [`Refusal`]: the service's error envelope with the status the reference uses.

use payspec_codegen::model::{
    BodyEncoding, Method, Operation, Param, ParamLocation, PathTemplate, Spec, TakenRule, Type,
};
use payspec_runtime::__private::{Broken, TextRule, amount_from_wire, at_most, fits_layout};
use payspec_runtime::{Json, JsonObject};
use percent_encoding::percent_decode_str;
use rust_decimal::Decimal;
use serde_json::Value;
use std::collections::HashMap;
use std::str::FromStr;

/// A request the sandbox refuses, as the service would.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Refusal {
    /// The HTTP status.
    pub status: u16,
    /// The envelope's `code`: `01` generic, `02` validation, `05` not permitted, `06` do not retry.
    pub code: &'static str,
    /// What is wrong, naming the key or value.
    pub description: String,
    /// The envelope's data, where the service sends some with its refusal (`null`
    /// otherwise).
    pub data: Option<serde_json::Value>,
}

impl Refusal {
    /// The codes of the sandbox's own kinds of refusal (validation, not permitted, ...),
    /// which a spec may or may not document; a refusal the service is seen to send has a
    /// code of its own (`"404"`), kept as it is.
    pub(crate) const KIND_CODES: [&'static str; 4] = ["01", "02", "05", "06"];

    /// A validation failure: 400 with code `02`.
    pub(crate) fn invalid(description: impl Into<String>) -> Refusal {
        Refusal { status: 400, code: "02", description: description.into(), data: None }
    }

    pub(crate) fn not_found(description: impl Into<String>) -> Refusal {
        Refusal { status: 404, code: "05", description: description.into(), data: None }
    }

    /// A lookup that matches no transaction, answered as the live service answers it:
    /// HTTP 404 with the body code `"404"` (published live traffic; see the spec's
    /// `fetch_transaction`).
    pub(crate) fn transaction_not_found() -> Refusal {
        Refusal {
            status: 404,
            code: "404",
            description: "Transaction matching query not found".to_owned(),
            data: None,
        }
    }

    /// An order reference used before, refused as the live service refuses it: HTTP 400
    /// with the body code `"400"` and the reason in `data.message` (published live
    /// traffic; see the spec's `charge_tokenized_card`).
    pub(crate) fn order_reference_taken() -> Refusal {
        Refusal {
            status: 400,
            code: "400",
            description: "tokenized transaction failed".to_owned(),
            data: Some(serde_json::json!({
                "status": false,
                "message": "An order already exists with this order reference",
            })),
        }
    }

    pub(crate) fn unauthorized(description: impl Into<String>) -> Refusal {
        Refusal { status: 401, code: "01", description: description.into(), data: None }
    }

    pub(crate) fn forbidden(description: impl Into<String>) -> Refusal {
        Refusal { status: 403, code: "05", description: description.into(), data: None }
    }

    /// A request the state forbids (a balance too low, a reference reused with another
    /// body): 422 with code `06`, do not retry.
    pub(crate) fn unprocessable(description: impl Into<String>) -> Refusal {
        Refusal { status: 422, code: "06", description: description.into(), data: None }
    }
}

#[derive(Debug)]
struct Route {
    operation: usize,
    method: Method,
    path: PathTemplate,
}

/// Every route of the spec, canonical and alternative, the other spellings of path
/// prefixes the live service answers (`service.also_paths`), and whether it answers a path
/// written with a trailing slash as the path without (`service.also_takes`).
#[derive(Debug)]
pub(crate) struct RouteTable {
    routes: Vec<Route>,
    also_paths: Vec<payspec_codegen::model::AlsoPath>,
    trailing_slash: bool,
}

impl RouteTable {
    pub(crate) fn new(spec: &Spec) -> RouteTable {
        let index: HashMap<&str, usize> =
            spec.operations.iter().enumerate().map(|(i, op)| (op.name.as_str(), i)).collect();
        let routes = spec
            .routes()
            .map(|route| Route {
                operation: index[route.operation.name.as_str()],
                method: route.method,
                path: route.path.clone(),
            })
            .collect();
        let trailing_slash = spec
            .also_takes
            .iter()
            .any(|taken| taken.rule == payspec_codegen::model::ServiceRule::TrailingSlash);
        RouteTable { routes, also_paths: spec.also_paths.clone(), trailing_slash }
    }

    /// The operation a method and path name, and its path variables (decoded). A path in a
    /// spelling only the live service answers (`service.also_paths`, one trailing slash where
    /// `service.also_takes` says the service takes it) is routed as its documented form
    /// unless the sandbox is strict.
    /// `strictness` is asked only for a path no route spells.
    pub(crate) fn find(
        &self,
        method: &str,
        path: &str,
        strictness: impl FnOnce() -> Strictness,
    ) -> Result<(usize, HashMap<String, String>), Refusal> {
        let found = self.find_literal(method, path);
        let other_spellings = !self.also_paths.is_empty() || self.trailing_slash;
        if found.is_ok() || !other_spellings || strictness() == Strictness::Document {
            return found;
        }
        let trimmed = path
            .strip_suffix('/')
            .filter(|rest| self.trailing_slash && rest.len() > 1 && !rest.ends_with('/'));
        let path = match trimmed {
            Some(trimmed) => match self.find_literal(method, trimmed) {
                Ok(route) => return Ok(route),
                Err(_) => trimmed,
            },
            None => path,
        };
        match self.also_paths.iter().find_map(|also| also.documented(path)) {
            Some(documented) => self.find_literal(method, &documented),
            None => found,
        }
    }

    /// The operation a method and path name as the spec writes its routes. The most
    /// literal route wins, so `/v1/accounts/balance` is not `/v1/accounts/{id}`.
    fn find_literal(&self, method: &str, path: &str) -> Result<(usize, HashMap<String, String>), Refusal> {
        let mut best: Option<(&Route, HashMap<String, String>)> = None;
        let mut other_method = false;
        for route in &self.routes {
            let Some(values) = route.path.match_path(path) else { continue };
            let vars: HashMap<String, String> = values
                .into_iter()
                .map(|(name, raw)| {
                    (name.to_owned(), percent_decode_str(raw).decode_utf8_lossy().into_owned())
                })
                .collect();
            if vars.values().any(String::is_empty) {
                continue;
            }
            if !route.method.as_str().eq_ignore_ascii_case(method) {
                other_method = true;
                continue;
            }
            if best.as_ref().is_none_or(|(b, _)| route.path.literals() > b.path.literals()) {
                best = Some((route, vars));
            }
        }
        match best {
            Some((route, vars)) => Ok((route.operation, vars)),
            None if other_method => Err(Refusal {
                status: 405,
                code: "05",
                description: format!("{path} does not answer {method}"),
                data: None,
            }),
            None => Err(Refusal::not_found(format!("no operation at {method} {path}"))),
        }
    }
}

/// A request that passed the checks: its values by wire key (body keys dotted).
#[derive(Debug, Default, Clone)]
pub(crate) struct Checked {
    pub values: HashMap<String, Value>,
    /// The body as sent (an object, or null when there was none).
    pub body: Value,
    /// Query and body keys the spec does not describe, which the service-like sandbox
    /// ignores (as the service does) and lists in its state.
    pub unknown: Vec<String>,
}

/// How closely the sandbox holds requests to the spec.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum Strictness {
    /// As the service: what the service is known to accept is accepted (a number the spec
    /// records it also takes as text), and keys the spec does not describe are ignored.
    #[default]
    Service,
    /// As the vendor's document: anything it does not describe is refused.
    Document,
}

impl Checked {
    pub(crate) fn text(&self, key: &str) -> Option<&str> {
        self.values.get(key).and_then(Value::as_str)
    }

    /// A decimal sent as a JSON number or as text.
    pub(crate) fn decimal(&self, key: &str) -> Option<Decimal> {
        let text = match self.values.get(key)? {
            Value::Number(n) => n.to_string(),
            Value::String(s) => s.clone(),
            _ => return None,
        };
        Decimal::from_str(&text).or_else(|_| Decimal::from_scientific(&text)).ok()
    }

    pub(crate) fn integer(&self, key: &str) -> Option<i64> {
        match self.values.get(key)? {
            Value::Number(n) => n.as_i64(),
            Value::String(s) => s.parse().ok(),
            _ => None,
        }
    }
}

/// The most bytes of body the sandbox reads.
pub const MAX_BODY_BYTES: usize = 1 << 20;

/// Checks the query, path variables and body of a request to `op`.
/// Every problem of the request is found and named, not only the first: a refusal's
/// description lists them all, separated by `; `.
pub(crate) fn check_request(
    op: &Operation,
    path_vars: HashMap<String, String>,
    query: Option<&str>,
    body: &[u8],
    reading: Reading<'_>,
) -> Result<Checked, Refusal> {
    let strictness = reading.strictness;
    let mut checked = Checked::default();
    let mut problems = Problems { list: Vec::new(), reading, shaped: None };
    for (name, value) in path_vars {
        if let Some(param) = op.params.iter().find(|p| p.location == ParamLocation::Path && p.wire == name) {
            problems.note(check_text(param, &value, reading));
        }
        checked.values.insert(name, Value::String(value));
    }

    let mut seen: Vec<String> = Vec::new();
    for pair in query.unwrap_or("").split('&').filter(|p| !p.is_empty()) {
        let (key, value) = pair.split_once('=').unwrap_or((pair, ""));
        let key = decode_query(key);
        let value = decode_query(value);
        let Some(param) = op.params.iter().find(|p| p.location == ParamLocation::Query && p.wire == key)
        else {
            match strictness {
                Strictness::Document => problems
                    .push(format!("unknown query parameter `{key}`{}", known(op, ParamLocation::Query))),
                Strictness::Service => checked.unknown.push(format!("query `{key}`")),
            }
            continue;
        };
        if seen.contains(&key) {
            problems.push(format!("query parameter `{key}` is given twice"));
            continue;
        }
        problems.note(check_text(param, &value, reading));
        seen.push(key.clone());
        checked.values.insert(key, Value::String(value));
    }

    let body_params: Vec<&Param> = op.params_in(ParamLocation::Body).collect();
    let body_text = std::str::from_utf8(body).map_err(|_| Refusal::invalid("the body is not UTF-8"))?;
    // A form is read as the JSON object it encodes, its values typed by the spec's params.
    let form_json;
    let body_text = if op.body_encoding == BodyEncoding::Form {
        form_json = form_as_json(&body_params, body_text)?;
        form_json.as_str()
    } else {
        body_text
    };
    if body_text.trim().is_empty() {
        checked.body = Value::Null;
    } else {
        // Read with the client's exact reader: an amount keeps its text and never passes
        // through a float; nesting is bounded.
        let value = Json::parse(body_text).map_err(|e| {
            Refusal::invalid(if e.reason == payspec_runtime::__private::REPEATED_KEY {
                format!("the body gives a key twice: {e}; give each key once")
            } else {
                format!("the body is not JSON: {e}")
            })
        })?;
        let Json::Object(object) = &value else {
            return Err(Refusal::invalid("the body is not a JSON object"));
        };
        if body_params.is_empty() && !object.is_empty() && strictness == Strictness::Document {
            problems.push(format!("{} {} takes no body", op.method, op.path.as_str()));
        }
        walk_body(op, &body_params, object, "", &mut checked, &mut problems);
        checked.body = plain(&value);
    }

    for param in &op.params {
        // What the document requires and the service does without (`document_requires`)
        // only the strict sandbox holds a request to.
        let required = param.required
            || param.fixed.is_some()
            || (param.document_requires && strictness == Strictness::Document);
        if required && param.location != ParamLocation::Header && !checked.values.contains_key(&param.wire) {
            problems.push(format!("`{}` is required ({})", param.wire, param.location.as_str()));
        }
    }
    // The document makes each key of a set optional and says nothing of none or two; the
    // spec sends exactly one, and only a strict sandbox holds a request to that.
    if strictness == Strictness::Document {
        for set in &op.one_of {
            let wires: Vec<&str> =
                set.params.iter().filter_map(|name| op.param(name)).map(|p| p.wire.as_str()).collect();
            let given = wires.iter().filter(|wire| checked.values.contains_key(**wire)).count();
            if given != 1 {
                problems.push(format!("exactly one of {} is needed; {given} given", wires.join(", ")));
            }
        }
    }
    if problems.list.is_empty() { Ok(checked) } else { Err(problems.refusal()) }
}

/// How the sandbox reads a request: as the document writes it, or as the live service
/// takes it (with the rules of the service the spec records, `service.also_takes`).
#[derive(Clone, Copy)]
pub(crate) struct Reading<'s> {
    pub(crate) strictness: Strictness,
    pub(crate) rules: &'s [TakenRule],
}

/// The problems of one request, in the order they were found.
struct Problems<'s> {
    list: Vec<String>,
    reading: Reading<'s>,
    /// The first problem refused in the service's own form (not a plain 400).
    shaped: Option<Refusal>,
}

impl Problems<'_> {
    fn push(&mut self, problem: String) {
        self.list.push(problem);
    }

    fn note(&mut self, checked: Result<(), Refusal>) {
        if let Err(refusal) = checked {
            self.list.push(refusal.description.clone());
            // The strict sandbox answers as the document does: a plain 400.
            if refusal.status != 400
                && self.shaped.is_none()
                && self.reading.strictness == Strictness::Service
            {
                self.shaped = Some(refusal);
            }
        }
    }

    /// The refusal of these problems: the service's own form of it where the only
    /// problem is one the service answers in a form of its own, else a 400 naming them all.
    fn refusal(self) -> Refusal {
        match self.shaped {
            Some(shaped) if self.list.len() == 1 => shaped,
            _ => Refusal::invalid(self.list.join("; ")),
        }
    }
}

/// How deep a form key may nest (`a[b][c]` is three).
const MAX_FORM_DEPTH: usize = 8;

/// A form body (`amount=2000&metadata[order_id]=6735`) as the JSON text of the object it
/// encodes: each bracket a key further in, keys `0`, `1`, ... a list, and each value typed
/// by the parameter at its dotted key (an integer, an amount or a flag as the JSON value it
/// reads as; anything else text). Empty when the form is.
fn form_as_json(params: &[&Param], text: &str) -> Result<String, Refusal> {
    let mut root = serde_json::Map::new();
    for pair in text.split('&').filter(|p| !p.is_empty()) {
        let (key, value) = pair.split_once('=').unwrap_or((pair, ""));
        let (key, value) = (decode_query(key), decode_query(value));
        let segments = form_key(&key)
            .ok_or_else(|| Refusal::invalid(format!("`{key}` is not a form key (name, then `[key]`s)")))?;
        let dotted = segments.join(".");
        let typed = match params.iter().find(|p| p.wire == dotted).map(|p| &p.ty) {
            Some(Type::Integer) => {
                value.parse::<i64>().map_or_else(|_| Value::String(value.clone()), Value::from)
            }
            Some(Type::Decimal) => serde_json::from_str::<serde_json::Number>(&value)
                .map_or_else(|_| Value::String(value.clone()), Value::Number),
            Some(Type::Boolean) if value == "true" || value == "false" => Value::Bool(value == "true"),
            _ => Value::String(value),
        };
        let (last, parents) = segments.split_last().ok_or_else(|| Refusal::invalid("a form key is empty"))?;
        let mut node = &mut root;
        for part in parents {
            let next =
                node.entry((*part).to_owned()).or_insert_with(|| Value::Object(serde_json::Map::new()));
            node = next
                .as_object_mut()
                .ok_or_else(|| Refusal::invalid(format!("`{key}` nests under a value given before")))?;
        }
        if node.insert((*last).to_owned(), typed).is_some() {
            return Err(Refusal::invalid(format!("the form gives `{key}` twice; give each key once")));
        }
    }
    if root.is_empty() {
        return Ok(String::new());
    }
    let mut value = Value::Object(root);
    lists_by_index(&mut value);
    Ok(value.to_string())
}

/// The segments of a form key: `metadata[order_id]` is `metadata`, `order_id`. `None` when
/// it is not a name followed by bracketed keys, or nests too deep.
fn form_key(key: &str) -> Option<Vec<&str>> {
    let (head, mut rest) = key.split_once('[').map_or((key, ""), |(head, _)| (head, &key[head.len()..]));
    let mut segments = vec![head];
    while !rest.is_empty() {
        let inner = rest.strip_prefix('[')?;
        let close = inner.find(']')?;
        segments.push(&inner[..close]);
        rest = &inner[close + 1..];
    }
    (segments.iter().all(|s| !s.is_empty()) && segments.len() <= MAX_FORM_DEPTH).then_some(segments)
}

/// Objects whose keys are exactly `0`, `1`, ... become lists, as a form writes a list.
fn lists_by_index(value: &mut Value) {
    let Value::Object(map) = value else { return };
    for inner in map.values_mut() {
        lists_by_index(inner);
    }
    let indexed = !map.is_empty() && (0..map.len()).all(|i| map.contains_key(&i.to_string()));
    if indexed {
        let items = (0..map.len()).filter_map(|i| map.remove(&i.to_string())).collect();
        *value = Value::Array(items);
    }
}

fn decode_query(text: &str) -> String {
    percent_decode_str(&text.replace('+', " ")).decode_utf8_lossy().into_owned()
}

fn known(op: &Operation, location: ParamLocation) -> String {
    let keys: Vec<&str> = op.params_in(location).map(|p| p.wire.as_str()).collect();
    if keys.is_empty() {
        String::from("; this operation takes none")
    } else {
        format!("; known: {}", keys.join(", "))
    }
}

/// Every body key must be a parameter's wire key or an object above one, and appear once;
/// a key the spec does not describe is a problem only to the strict sandbox.
fn walk_body(
    op: &Operation,
    params: &[&Param],
    object: &JsonObject,
    prefix: &str,
    checked: &mut Checked,
    problems: &mut Problems,
) {
    // The reader refused a key given twice before this walk.
    for (key, value) in object.iter() {
        let wire = if prefix.is_empty() { key.to_owned() } else { format!("{prefix}.{key}") };
        if let Some(param) = params.iter().find(|p| p.wire == wire) {
            problems.note(check_json(param, value, problems.reading));
            checked.values.insert(wire, plain(value));
            continue;
        }
        let parent = format!("{wire}.");
        if params.iter().any(|p| p.wire.starts_with(&parent)) {
            let Json::Object(inner) = value else {
                problems.push(format!("`{wire}` must be an object"));
                continue;
            };
            walk_body(op, params, inner, &wire, checked, problems);
            continue;
        }
        match problems.reading.strictness {
            Strictness::Document => {
                problems.push(format!("unknown body key `{wire}`{}", known(op, ParamLocation::Body)));
            }
            Strictness::Service => checked.unknown.push(format!("body `{wire}`")),
        }
    }
}

/// A value as the state keeps it: an integer stays a number, any other number becomes
/// its exact text (a decimal never becomes a float).
fn plain(value: &Json) -> Value {
    match value {
        Json::Null => Value::Null,
        Json::Bool(b) => Value::Bool(*b),
        Json::Number(n) => match n.as_i64() {
            Some(i) => Value::from(i),
            None => Value::String(n.as_str().to_owned()),
        },
        Json::String(s) => Value::String(s.clone()),
        Json::Array(items) => Value::Array(items.iter().map(plain).collect()),
        Json::Object(object) => Value::Object(object.iter().map(|(k, v)| (k.to_owned(), plain(v))).collect()),
    }
}

/// A query or path value (always text on the wire).
fn check_text(param: &Param, text: &str, reading: Reading<'_>) -> Result<(), Refusal> {
    let key = &param.wire;
    match &param.ty {
        Type::String | Type::Identifier(_) => check_rule(param, text)?,
        _ => {}
    }
    match &param.ty {
        Type::Integer => {
            let n: i64 = text.parse().map_err(|_| {
                Refusal::invalid(format!("`{key}` must be an integer, not {}", shown(param, text)))
            })?;
            check_max(param, n)?;
        }
        Type::Boolean if !matches!(text, "true" | "false") => {
            return Err(Refusal::invalid(format!(
                "`{key}` must be true or false, not {}",
                shown(param, text)
            )));
        }
        Type::Decimal => check_decimal(param, text)?,
        Type::DateTime => check_layout(param, text, reading)?,
        _ => check_values(param, text, reading.strictness)?,
    }
    Ok(())
}

/// A text value as the service checks it: a required one is never blank, and the format
/// and length the vendor states hold, by the rule the client's request writer keeps
/// (`payspec_runtime::__private::TextRule`, from the same spec data).
fn check_rule(param: &Param, text: &str) -> Result<(), Refusal> {
    let rule = TextRule {
        not_blank: param.required && param.fixed.is_none(),
        format: param.format.unwrap_or_default(),
        length: param.length.map(|n| n as usize),
    };
    // An optional value left empty is not sent by the client, and not checked here.
    if text.is_empty() && !rule.not_blank {
        return Ok(());
    }
    match rule.check(text) {
        Ok(()) => Ok(()),
        // As the live service refuses such a name: HTTP 200, code "400", the reason in
        // `message` (published live traffic; see the spec's `create_virtual_account`).
        Err(Broken::NotName) => Err(Refusal {
            status: 200,
            code: "400",
            description: "Account name must not contain special characters.".to_owned(),
            data: None,
        }),
        Err(broken) => Err(Refusal::invalid(format!("`{}` {broken}", param.wire))),
    }
}

/// A body value: its JSON type, then what its text must be. The service-like sandbox also
/// takes, as text, a number or flag the spec records the service takes so.
fn check_json(param: &Param, value: &Json, reading: Reading<'_>) -> Result<(), Refusal> {
    let key = &param.wire;
    let wrong =
        |expected: &str| Refusal::invalid(format!("`{key}` must be {expected}, not {}", value.kind()));
    match (&param.ty, value) {
        (Type::Json, _) => Ok(()),
        (_, Json::String(text)) if param.as_string => check_text(param, text, reading),
        (_, Json::String(text)) if param.accepts_text && reading.strictness == Strictness::Service => {
            check_text(param, text.trim(), reading)
        }
        (_, _) if param.as_string => Err(wrong("a string")),
        (Type::Decimal, Json::Number(n)) => check_decimal(param, n.as_str()),
        (Type::Decimal, _) => Err(wrong("a number")),
        (Type::Integer, Json::Number(n)) => match n.as_i64() {
            Some(n) => check_max(param, n),
            None => Err(wrong("an integer")),
        },
        (Type::Integer, _) => Err(wrong("an integer")),
        (Type::Boolean, Json::Bool(_)) => Ok(()),
        (Type::Boolean, _) => Err(wrong("true or false")),
        (Type::StringList, Json::Array(items)) if items.iter().all(|i| matches!(i, Json::String(_))) => {
            Ok(())
        }
        (Type::StringList, _) => Err(wrong("a list of strings")),
        (Type::DateTime, Json::String(text)) => check_layout(param, text, reading),
        (Type::String | Type::Identifier(_) | Type::Shape(_), Json::String(text)) => {
            check_rule(param, text)?;
            check_values(param, text, reading.strictness)
        }
        _ => Err(wrong("a string")),
    }
}

/// A value as an error may quote it: a secret is never quoted.
fn shown(param: &Param, text: &str) -> String {
    if param.secret { "the value given (a secret, not repeated)".to_owned() } else { format!("`{text}`") }
}

fn check_values(param: &Param, text: &str, strictness: Strictness) -> Result<(), Refusal> {
    // What the live service also takes (the spec's `also_accepts`), unless strict.
    if strictness == Strictness::Service && param.also_accepts.iter().any(|v| v == text) {
        return Ok(());
    }
    // `fixed` is what the client always sends; the service takes any documented value.
    if let Some(fixed) = &param.fixed
        && text != fixed
        && !param.values.iter().any(|v| v == text)
    {
        return Err(Refusal::invalid(format!(
            "`{}` must be `{fixed}`, not {}",
            param.wire,
            shown(param, text)
        )));
    }
    if !param.values.is_empty() && !param.values.iter().any(|v| v == text) {
        return Err(Refusal::invalid(format!(
            "`{}` must be one of {}, not {}",
            param.wire,
            param.values.join(", "),
            shown(param, text)
        )));
    }
    Ok(())
}

fn check_max(param: &Param, n: i64) -> Result<(), Refusal> {
    match param.max.map(|max| (max, at_most(n, max))) {
        // A secret's value is never quoted back.
        Some((max, Err(_))) if param.secret => {
            Err(Refusal::invalid(format!("`{}` is more than the {max} the service accepts", param.wire)))
        }
        Some((_, Err(broken))) => Err(Refusal::invalid(format!("`{}` {broken}", param.wire))),
        _ => Ok(()),
    }
}

/// A decimal's text, by the client's amount rule (every decimal of the spec is an amount:
/// the client sends it as `Amount`): at most two decimals (kobo), not negative.
fn check_decimal(param: &Param, text: &str) -> Result<(), Refusal> {
    amount_from_wire(text)
        .map(drop)
        .map_err(|broken| Refusal::invalid(format!("`{}` {broken}: {}", param.wire, shown(param, text))))
}

fn check_layout(param: &Param, text: &str, reading: Reading<'_>) -> Result<(), Refusal> {
    let written = fits_layout(text, param.layout);
    // Other layouts the live service reads (`also_layouts`, the service's rules), unless
    // strict.
    let also = || {
        reading.strictness == Strictness::Service
            && param.layouts_taken(reading.rules).any(|layout| fits_layout(text, layout).is_ok())
    };
    match written {
        Ok(()) => Ok(()),
        Err(_) if also() => Ok(()),
        Err(broken) => {
            Err(Refusal::invalid(format!("`{}` {broken}, not {}", param.wire, shown(param, text))))
        }
    }
}
