//! The one checker of the generated wire tests: given an operation's name, the sample value
//! the test gave each parameter and the requests a loopback server received, it says whether
//! the request is the one the spec describes. Every expectation (method, path, where each
//! parameter travels and under which key, nesting, credentials) is read from the spec model;
//! the generated tests supply data only.

use std::collections::{BTreeMap, BTreeSet};
use std::fmt;
use std::sync::OnceLock;
use std::time::Duration;

use payspec_client::runtime::__private::ToJson;
use payspec_client::runtime::{FromJson, Json};
use payspec_client::{Client, Credentials, Environment, Outcome};
use payspec_codegen::Spec;
use payspec_codegen::model::{Auth, EnvelopeKind, Method, Operation, Param, ParamLocation, Segment, Type};
use payspec_tests::mock::{MockServer, Recorded, Reply};
use percent_encoding::{AsciiSet, NON_ALPHANUMERIC, percent_decode_str, utf8_percent_encode};
use serde_json::value::RawValue;
use serde_json::{Map, Value, json};

pub const CLIENT_ID: &str = "client-wire";
pub const CLIENT_SECRET: &str = "sk_wire_very_secret_value";
pub const ACCOUNT_ID: &str = "acct-parent-wire";

/// What a wire test returns: a client error, a server that did not start, or a mismatch.
pub type CaseResult = Result<(), Box<dyn std::error::Error>>;

/// RFC 3986 unreserved characters stay; every other byte of a path value is encoded, so a
/// value can never add a segment, a query or a fragment.
const PATH_VALUE: &AsciiSet = &NON_ALPHANUMERIC.remove(b'-').remove(b'.').remove(b'_').remove(b'~');

/// Where a request differs from the spec, one line per difference.
pub struct Mismatch {
    pub operation: String,
    pub problems: Vec<String>,
}

impl Mismatch {
    fn one(operation: &str, problem: impl Into<String>) -> Mismatch {
        Mismatch { operation: operation.to_owned(), problems: vec![problem.into()] }
    }
}

impl fmt::Display for Mismatch {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "`{}` does not match the spec:", self.operation)?;
        for problem in &self.problems {
            write!(f, "\n  - {problem}")?;
        }
        Ok(())
    }
}

// The test harness prints a failing test's error with `Debug`: keep it readable.
impl fmt::Debug for Mismatch {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Display::fmt(self, f)
    }
}

impl std::error::Error for Mismatch {}

/// The built-in spec, loaded once per test binary.
pub fn spec() -> Result<&'static Spec, Mismatch> {
    static SPEC: OnceLock<Result<Spec, String>> = OnceLock::new();
    SPEC.get_or_init(|| payspec_tests::load_builtin().map_err(|e| e.to_string()))
        .as_ref()
        .map_err(|e| Mismatch::one("(spec)", format!("the built-in spec does not load: {e}")))
}

fn operation<'a>(spec: &'a Spec, name: &str) -> Result<&'a Operation, Mismatch> {
    spec.operation(name).ok_or_else(|| Mismatch::one(name, "the spec has no such operation"))
}

/// The sample value a generated test gave each settable parameter, by parameter name.
#[derive(Clone, Debug)]
pub struct Samples {
    operation: String,
    values: Map<String, Value>,
}

impl Samples {
    /// Reads the samples the build script wrote for `operation`.
    pub fn parse(operation: &str, text: &str) -> Result<Samples, Mismatch> {
        match serde_json::from_str(text) {
            Ok(Value::Object(values)) => Ok(Samples { operation: operation.to_owned(), values }),
            _ => Err(Mismatch::one(operation, "the generated samples are not a JSON object")),
        }
    }

    /// The samples of `operation` in a table of generated samples.
    pub fn lookup(table: &[(&str, &str)], operation: &str) -> Result<Samples, Mismatch> {
        let text = table
            .iter()
            .find(|(name, _)| *name == operation)
            .map(|(_, text)| *text)
            .ok_or_else(|| Mismatch::one(operation, "no samples were generated for it"))?;
        Samples::parse(operation, text)
    }

    fn missing(&self, name: &str) -> Mismatch {
        Mismatch::one(&self.operation, format!("no sample for parameter `{name}`"))
    }

    /// A text sample, for parameters the client takes as `impl Into<..>`.
    pub fn text(&self, name: &str) -> Result<&str, Mismatch> {
        self.values.get(name).and_then(Value::as_str).ok_or_else(|| self.missing(name))
    }

    /// A date-time sample, read as the client reads text (UTC unless it has an offset).
    pub fn date(&self, name: &str) -> Result<payspec_client::runtime::DateTime, Mismatch> {
        let text = self.text(name)?;
        text.parse()
            .map_err(|e| Mismatch::one(&self.operation, format!("the sample of `{name}` ({text}): {e}")))
    }

    /// A sample turned into whatever type the client's signature names (enum, amount,
    /// number, flag, JSON, list).
    pub fn value<T: serde::de::DeserializeOwned>(&self, name: &str) -> Result<T, Mismatch> {
        let sample = self.values.get(name).ok_or_else(|| self.missing(name))?;
        serde_json::from_value(sample.clone()).map_err(|e| {
            Mismatch::one(
                &self.operation,
                format!("the sample of `{name}` ({sample}) does not fit its type: {e}"),
            )
        })
    }

    /// The sample of a parameter, if the test gave one.
    pub fn get(&self, name: &str) -> Option<&Value> {
        self.values.get(name)
    }

    /// Replaces a sample (for tests of the checker itself).
    pub fn set(&mut self, name: &str, value: Value) {
        self.values.insert(name.to_owned(), value);
    }
}

/// A sample value of an answer type: every field of a shape (nested shapes and lists
/// included), by type.
/// A listed value is the first that does not mean "still in flight" (`avoid`), so that a
/// sample answer is a finished one.
fn type_sample(
    spec: &Spec,
    ty: &Type,
    list: bool,
    field: (&[String], &str),
    avoid: &[String],
    depth: usize,
) -> Value {
    let (values, wire) = field;
    let one = match ty {
        _ if !values.is_empty() => {
            let finished = values.iter().find(|v| !avoid.iter().any(|a| a.eq_ignore_ascii_case(v)));
            json!(finished.unwrap_or(&values[0]))
        }
        Type::String | Type::Identifier(_) => json!(format!("s-{wire}")),
        // Far in the future, so a token answer is never due for renewal.
        Type::DateTime => json!("2099-01-01T00:00:00Z"),
        Type::Integer => json!(1),
        // `false` where it is a state to avoid (a declined card charge), else `false`.
        Type::Boolean => json!(avoid.iter().any(|a| a.eq_ignore_ascii_case("false"))),
        Type::Decimal => json!(100),
        Type::Json | Type::StringList => json!([]),
        Type::Shape(name) => match spec.shape(name) {
            Some(shape) if depth < 8 => Value::Object(
                shape
                    .fields
                    .iter()
                    .map(|f| {
                        let sample = type_sample(spec, &f.ty, f.list, (&f.values, &f.wire), avoid, depth + 1);
                        (f.wire.clone(), sample)
                    })
                    .collect::<Map<String, Value>>(),
            ),
            _ => json!({}),
        },
    };
    if list { json!([one]) } else { one }
}

/// The `data` the mock answers an operation with: a sample of its declared answer type (a
/// finished one: no state the operation reads as pending or failed), or an empty object
/// when the answer is untyped.
pub fn answer_data(spec: &Spec, op: &Operation) -> Value {
    let avoid: Vec<String> = op
        .answers
        .reading
        .pending_statuses
        .iter()
        .chain(&op.answers.reading.failed_statuses)
        .cloned()
        .collect();
    match &op.response {
        Some(answer) => type_sample(spec, &answer.ty, answer.list, (&[], "data"), &avoid, 0),
        None => json!({}),
    }
}

/// The whole answer, in the operation's envelope.
fn envelope(op: &Operation, data: Value) -> Reply {
    let success = op.answers.reading.success_codes.first().cloned().unwrap_or_default();
    match op.answers.reading.envelope.spelled() {
        Some((code, description)) => {
            let (code, description) = (code.unwrap_or("code"), description.unwrap_or("description"));
            Reply::json(200, json!({code: success, description: "ok", "data": data}))
        }
        None => Reply::json(200, data),
    }
}

/// The access token the mock issues, read from the issue operation's answer.
pub fn issued_token(spec: &Spec) -> Result<String, Mismatch> {
    let issue = operation(spec, spec.token_operations.as_ref().map_or("", |t| t.issue.as_str()))?;
    answer_data(spec, issue)
        .get("access_token")
        .and_then(Value::as_str)
        .map(str::to_owned)
        .ok_or_else(|| Mismatch::one(&issue.name, "its answer shape has no access_token"))
}

/// A loopback server for one operation's test: token issue is answered with a token, every
/// other request with the answer of `operation`'s declared shape.
pub async fn server_for(operation_name: &str) -> Result<MockServer, Box<dyn std::error::Error>> {
    let spec = spec()?;
    let op = operation(spec, operation_name)?;
    let issue = operation(spec, spec.token_operations.as_ref().map_or("", |t| t.issue.as_str()))?;
    let issue_path = issue.path.as_str().to_owned();
    let grant = envelope(issue, answer_data(spec, issue));
    let answer = envelope(op, answer_data(spec, op));
    let server =
        MockServer::start(
            move |request, _| {
                if request.is("POST", &issue_path) { grant.clone() } else { answer.clone() }
            },
        )
        .await?;
    Ok(server)
}

/// The generated client of `server`, built the way a user builds it.
pub fn client(server: &MockServer) -> Result<payspec_client::Client, payspec_client::Error> {
    Client::builder()
        .environment(Environment::Custom(server.url()))
        .credentials(Credentials::new(CLIENT_ID, CLIENT_SECRET, ACCOUNT_ID))
        .timeout(Duration::from_secs(10))
        .build()
}

/// The value a parameter carries: its fixed text, or the test's sample.
fn carried(param: &Param, samples: &Samples) -> Option<Value> {
    match &param.fixed {
        Some(fixed) => Some(Value::String(fixed.clone())),
        None => samples.get(&param.name).cloned(),
    }
}

/// A value as it travels in a path, query or header: text as is, lists comma-joined,
/// numbers and flags as their JSON text.
fn wire_text(value: &Value) -> String {
    match value {
        Value::String(s) => s.clone(),
        Value::Array(items) => items.iter().map(wire_text).collect::<Vec<_>>().join(","),
        other => other.to_string(),
    }
}

/// What one body leaf must hold.
#[derive(Debug)]
enum Leaf {
    /// This JSON value.
    Json(Value),
    /// A JSON number with exactly this text (amounts: `1234.50`, never `1234.5`).
    ExactNumber(String),
}

fn body_leaf(param: &Param, value: Value) -> Leaf {
    if param.fixed.is_some() {
        return Leaf::Json(value);
    }
    if param.as_string {
        return Leaf::Json(Value::String(wire_text(&value)));
    }
    if param.ty == Type::Decimal && param.values.is_empty() {
        return Leaf::ExactNumber(wire_text(&value));
    }
    Leaf::Json(value)
}

/// The body the spec describes: dotted wire keys nest (`order.amount`).
#[derive(Debug, Default)]
struct Expected {
    keys: BTreeMap<String, Node>,
}

#[derive(Debug)]
enum Node {
    Leaf { param: String, leaf: Leaf },
    Object(Expected),
}

impl Expected {
    fn insert(&mut self, wire: &str, param: &str, leaf: Leaf) -> Result<(), String> {
        let (head, rest) = match wire.split_once('.') {
            Some((head, rest)) => (head, Some(rest)),
            None => (wire, None),
        };
        match rest {
            None => {
                if self.keys.contains_key(head) {
                    return Err(format!("the spec puts two values at body key `{wire}`"));
                }
                self.keys.insert(head.to_owned(), Node::Leaf { param: param.to_owned(), leaf });
                Ok(())
            }
            Some(rest) => {
                let node =
                    self.keys.entry(head.to_owned()).or_insert_with(|| Node::Object(Expected::default()));
                match node {
                    Node::Object(inner) => inner.insert(rest, param, leaf),
                    Node::Leaf { .. } => Err(format!("the spec nests `{wire}` under a plain value")),
                }
            }
        }
    }
}

/// Compares one JSON object of the body with what the spec describes at that level.
fn compare_object(expected: &Expected, raw: &RawValue, at: &str, problems: &mut Vec<String>) {
    let shown = if at.is_empty() { "the body".to_owned() } else { format!("body key `{at}`") };
    let actual: BTreeMap<String, Box<RawValue>> = match serde_json::from_str(raw.get()) {
        Ok(map) => map,
        Err(_) => {
            problems.push(format!("{shown} is not a JSON object: {}", raw.get()));
            return;
        }
    };
    for (key, node) in &expected.keys {
        let path = if at.is_empty() { key.clone() } else { format!("{at}.{key}") };
        let Some(value) = actual.get(key) else {
            let param = match node {
                Node::Leaf { param, .. } => format!(" (parameter `{param}`)"),
                Node::Object(_) => String::new(),
            };
            problems.push(format!("the body has no `{path}`{param}"));
            continue;
        };
        match node {
            Node::Object(inner) => compare_object(inner, value, &path, problems),
            Node::Leaf { param, leaf: Leaf::ExactNumber(text) } => {
                if value.get().trim() != text {
                    problems.push(format!(
                        "body `{path}` (parameter `{param}`) is `{}`, expected the JSON number `{text}` exactly",
                        value.get()
                    ));
                }
            }
            Node::Leaf { param, leaf: Leaf::Json(want) } => {
                match serde_json::from_str::<Value>(value.get()) {
                    Ok(got) if got == *want => {}
                    _ => problems.push(format!(
                        "body `{path}` (parameter `{param}`) is `{}`, expected `{want}`",
                        value.get()
                    )),
                }
            }
        }
    }
    for key in actual.keys().filter(|k| !expected.keys.contains_key(*k)) {
        let path = if at.is_empty() { key.clone() } else { format!("{at}.{key}") };
        problems.push(format!("the body has `{path}`, which the spec does not describe"));
    }
}

fn check_body(op: &Operation, samples: &Samples, request: &Recorded, problems: &mut Vec<String>) {
    let mut expected = Expected::default();
    for param in op.params_in(ParamLocation::Body) {
        let Some(value) = carried(param, samples) else { continue };
        if let Err(problem) = expected.insert(&param.wire, &param.name, body_leaf(param, value)) {
            problems.push(problem);
        }
    }
    let body = request.body_text();
    if expected.keys.is_empty() {
        match op.method {
            // A read or delete without body parameters carries no body at all.
            Method::Get | Method::Delete => {
                if !body.is_empty() {
                    problems.push(format!("a {} without body parameters sent a body: {body}", op.method));
                }
            }
            // A write without body parameters may send nothing or an empty object.
            _ => {
                if !body.is_empty() && request.json() != Some(json!({})) {
                    problems.push(format!("the spec has no body parameters, but the body is {body}"));
                }
            }
        }
        return;
    }
    if !request.header("content-type").is_some_and(|v| v.starts_with("application/json")) {
        problems
            .push(format!("the body is not sent as application/json: {:?}", request.header("content-type")));
    }
    match serde_json::from_str::<Box<RawValue>>(&body) {
        Ok(raw) => compare_object(&expected, &raw, "", problems),
        Err(_) => problems.push(format!("the body is not JSON: {body:?}")),
    }
}

fn expected_path(op: &Operation, samples: &Samples, problems: &mut Vec<String>) -> String {
    let mut path = String::new();
    for segment in op.path.segments() {
        path.push('/');
        match segment {
            Segment::Literal(text) => path.push_str(text),
            Segment::Variable(variable) => {
                let value = op
                    .params_in(ParamLocation::Path)
                    .find(|p| p.wire == *variable)
                    .and_then(|p| carried(p, samples));
                match value {
                    Some(value) => path.extend(utf8_percent_encode(&wire_text(&value), PATH_VALUE)),
                    None => problems.push(format!("no value for path variable `{{{variable}}}`")),
                }
            }
        }
    }
    path
}

fn check_query(op: &Operation, samples: &Samples, request: &Recorded, problems: &mut Vec<String>) {
    let mut expected: BTreeMap<&str, String> = BTreeMap::new();
    for param in op.params_in(ParamLocation::Query) {
        if let Some(value) = carried(param, samples) {
            expected.insert(&param.wire, wire_text(&value));
        }
    }
    let mut seen: BTreeSet<String> = BTreeSet::new();
    for pair in request.query().unwrap_or_default().split('&').filter(|p| !p.is_empty()) {
        let (raw_key, raw_value) = pair.split_once('=').unwrap_or((pair, ""));
        let decode = |raw: &str| percent_decode_str(raw).decode_utf8().map(|t| t.into_owned());
        let (Ok(key), Ok(value)) = (decode(raw_key), decode(raw_value)) else {
            problems.push(format!("the query pair `{pair}` is not percent-encoded UTF-8"));
            continue;
        };
        if !seen.insert(key.clone()) {
            problems.push(format!("the query has `{key}` twice"));
        }
        match expected.get(key.as_str()) {
            None => problems.push(format!("the query has `{key}`, which the spec does not describe")),
            Some(want) if *want != value => {
                problems
                    .push(format!("query `{key}` is {value:?} (sent as `{raw_value}`), expected {want:?}"));
            }
            Some(_) => {}
        }
    }
    for key in expected.keys().filter(|k| !seen.contains(**k)) {
        problems.push(format!("the query has no `{key}`"));
    }
}

fn header_count(request: &Recorded, name: &str) -> usize {
    request.headers.iter().filter(|(k, _)| k.eq_ignore_ascii_case(name)).count()
}

fn check_headers(
    spec: &Spec,
    op: &Operation,
    samples: &Samples,
    request: &Recorded,
    problems: &mut Vec<String>,
) {
    let bearer = match issued_token(spec) {
        Ok(token) => format!("Bearer {token}"),
        Err(m) => {
            problems.extend(m.problems);
            return;
        }
    };
    let (authorization, account) = match op.auth {
        Auth::BearerAndAccount => (Some(bearer), Some(ACCOUNT_ID.to_owned())),
        Auth::Bearer => (Some(bearer), None),
        Auth::Account => (None, Some(ACCOUNT_ID.to_owned())),
        Auth::Basic => {
            let pair = format!("{CLIENT_ID}:{CLIENT_SECRET}");
            (Some(format!("Basic {}", base64::Engine::encode(&base64::prelude::BASE64_STANDARD, pair))), None)
        }
        // A credential of the spec's own travels in its own header (tests/credentials.rs):
        // neither the token nor the account id.
        Auth::None | Auth::Key(_) => (None, None),
    };
    let mut wanted: Vec<(String, Option<String>, String)> = vec![
        ("Authorization".to_owned(), authorization, format!("auth `{}`", op.auth.as_str())),
        ("accountId".to_owned(), account, format!("auth `{}`", op.auth.as_str())),
    ];
    // The deduplicating header carries the operation's reference, and no other operation
    // sends it.
    for other in spec.operations.iter().filter_map(|o| o.idempotency_header.as_ref()) {
        if !wanted.iter().any(|(name, _, _)| name.eq_ignore_ascii_case(&other.wire)) {
            wanted.push((other.wire.clone(), None, "an operation without `idempotency_header`".to_owned()));
        }
    }
    if let (Some(header), Some(key)) =
        (&op.idempotency_header, op.idempotency.as_deref().and_then(|k| op.param(k)))
    {
        let value = carried(key, samples).map(|v| wire_text(&v));
        wanted.retain(|(name, _, _)| !name.eq_ignore_ascii_case(&header.wire));
        wanted.push((header.wire.clone(), value, format!("`idempotency_header` with `{}`", key.name)));
    }
    for param in op.params_in(ParamLocation::Header) {
        let value = carried(param, samples).map(|v| wire_text(&v));
        // A header parameter of the same name as a credential header replaces it.
        wanted.retain(|(name, _, _)| !name.eq_ignore_ascii_case(&param.wire));
        wanted.push((param.wire.clone(), value, format!("parameter `{}`", param.name)));
    }
    for (name, want, why) in wanted {
        let count = header_count(request, &name);
        match (want, request.header(&name)) {
            (None, Some(_)) => {
                problems.push(format!("the header `{name}` was sent, but {why} does not send it"))
            }
            (Some(want), None) => {
                problems.push(format!("the header `{name}` is missing ({why} sends `{want}`)"))
            }
            (Some(want), Some(got)) if got != want => {
                problems.push(format!("the header `{name}` is `{got}`, expected `{want}` ({why})"));
            }
            (Some(_), Some(_)) if count > 1 => {
                problems.push(format!("the header `{name}` was sent {count} times"))
            }
            _ => {}
        }
    }
}

/// Every way the requests the server received differ from what the spec says `operation`
/// sends with these samples. Empty when they match.
pub fn problems(spec: &Spec, operation_name: &str, samples: &Samples, requests: &[Recorded]) -> Vec<String> {
    let op = match operation(spec, operation_name) {
        Ok(op) => op,
        Err(m) => return m.problems,
    };
    let mut problems = Vec::new();

    // Every parameter the caller sets, and of each `one_of` set exactly one.
    let settable: BTreeSet<&str> = op
        .params
        .iter()
        .filter(|p| p.fixed.is_none() && op.one_of_with(&p.name).is_none())
        .map(|p| p.name.as_str())
        .collect();
    let sampled: BTreeSet<&str> =
        samples.values.keys().map(String::as_str).filter(|name| op.one_of_with(name).is_none()).collect();
    if settable != sampled {
        problems
            .push(format!("the test sets {sampled:?}, but the spec's settable parameters are {settable:?}"));
    }
    for set in &op.one_of {
        let chosen = set.params.iter().filter(|p| samples.values.contains_key(p.as_str())).count();
        if chosen != 1 {
            problems.push(format!("the test sets {chosen} of `{}`, which sends exactly one", set.name));
        }
    }

    // A call that sends a bearer token first obtains one; nothing else may reach the server.
    let sends_bearer = matches!(op.auth, Auth::Bearer | Auth::BearerAndAccount);
    let wanted = if sends_bearer { 2 } else { 1 };
    if requests.len() != wanted {
        let seen: Vec<String> = requests.iter().map(|r| format!("{} {}", r.method, r.target)).collect();
        problems
            .push(format!("expected {wanted} request(s), the server received {}: {seen:?}", requests.len()));
    }
    if sends_bearer && requests.len() > 1 {
        let found = token_request_problems(spec, &requests[0]);
        problems.extend(found.into_iter().map(|p| format!("the token request before the call: {p}")));
    }
    let Some(request) = requests.last() else {
        problems.push("no request reached the server".to_owned());
        return problems;
    };
    request_problems(spec, op, samples, request, &mut problems);
    problems
}

/// How the runtime's own token request differs from the spec's issue operation, sent with
/// the client's credentials.
fn token_request_problems(spec: &Spec, request: &Recorded) -> Vec<String> {
    let issue = match operation(spec, spec.token_operations.as_ref().map_or("", |t| t.issue.as_str())) {
        Ok(op) => op,
        Err(m) => return m.problems,
    };
    let mut problems = Vec::new();
    let mut samples = Samples { operation: issue.name.clone(), values: Map::new() };
    for param in issue.params.iter().filter(|p| p.fixed.is_none()) {
        let credential = match param.name.as_str() {
            "client_id" => CLIENT_ID,
            "client_secret" => CLIENT_SECRET,
            other => {
                problems.push(format!("the runtime sets no value for the issue parameter `{other}`"));
                continue;
            }
        };
        samples.set(&param.name, json!(credential));
    }
    request_problems(spec, issue, &samples, request, &mut problems);
    problems
}

/// How one request differs from what the spec says `op` sends with these samples.
fn request_problems(
    spec: &Spec,
    op: &Operation,
    samples: &Samples,
    request: &Recorded,
    problems: &mut Vec<String>,
) {
    if request.method != op.method.as_str() {
        problems.push(format!("the method is {}, the spec says {}", request.method, op.method));
    }
    let path = expected_path(op, samples, problems);
    if request.path() != path {
        problems.push(format!("the path is `{}`, expected `{path}`", request.path()));
    }
    check_query(op, samples, request, problems);
    check_headers(spec, op, samples, request, problems);
    check_body(op, samples, request, problems);
}

/// Checks a generated test's call: the answer was read as done, and the one request the
/// operation sent is the one the spec describes.
pub fn check<T>(
    operation_name: &str,
    samples: &Samples,
    outcome: &Outcome<T>,
    requests: &[Recorded],
) -> Result<(), Mismatch> {
    let spec = spec()?;
    let mut found = Vec::new();
    // The server answered with the operation's first success code (most: "00").
    let success =
        operation(spec, operation_name)?.answers.reading.success_codes.first().cloned().unwrap_or_default();
    match outcome {
        Outcome::Done(envelope) if envelope.code == success && envelope.data.is_some() => {}
        Outcome::Done(envelope) => found.push(format!(
            "the answer was read with code {:?} and data present: {}",
            envelope.code,
            envelope.data.is_some()
        )),
        Outcome::Pending(_) => found.push("a plain 200 answer was read as pending".to_owned()),
        Outcome::Failed(_) => found.push("a plain 200 answer was read as failed".to_owned()),
    }
    found.extend(problems(spec, operation_name, samples, requests));
    if found.is_empty() {
        Ok(())
    } else {
        Err(Mismatch { operation: operation_name.to_owned(), problems: found })
    }
}

/// Checks that a request's `Debug` text shows none of its secret parameters' values.
pub fn check_debug(operation_name: &str, samples: &Samples, debug: &str) -> Result<(), Mismatch> {
    let spec = spec()?;
    let op = operation(spec, operation_name)?;
    let leaked: Vec<String> = op
        .params
        .iter()
        .filter(|p| p.secret)
        .filter_map(|p| samples.get(&p.name).map(|v| (p, wire_text(v))))
        .filter(|(_, text)| debug.contains(text.as_str()))
        .map(|(p, _)| format!("`Debug` shows the secret `{}`: {debug}", p.name))
        .collect();
    if leaked.is_empty() {
        Ok(())
    } else {
        Err(Mismatch { operation: operation_name.to_owned(), problems: leaked })
    }
}

/// A loopback server whose token issue answers a token and every other request `answer`,
/// the whole body as given.
pub async fn server_answering(
    operation_name: &str,
    answer: &'static str,
) -> Result<MockServer, Box<dyn std::error::Error>> {
    server_answering_with(operation_name, 200, answer).await
}

/// [`server_answering`] with the HTTP status the answer came with.
pub async fn server_answering_with(
    operation_name: &str,
    status: u16,
    answer: &'static str,
) -> Result<MockServer, Box<dyn std::error::Error>> {
    let spec = spec()?;
    let op = operation(spec, operation_name)?;
    let issue = operation(spec, spec.token_operations.as_ref().map_or("", |t| t.issue.as_str()))?;
    // The token issue itself is answered with the answer under test, which is a token too.
    let issue_path = if op.name == issue.name { String::new() } else { issue.path.as_str().to_owned() };
    let grant = envelope(issue, answer_data(spec, issue));
    let server = MockServer::start(move |request, _| {
        if request.is("POST", &issue_path) {
            grant.clone()
        } else {
            Reply::text(status, answer).header("Content-Type", "application/json")
        }
    })
    .await?;
    Ok(server)
}

/// An answer that repeats a key came back as a decode error that says so (inside an auth
/// error for the token issue, whose answer it was), and the operation was sent once.
pub fn check_repeated_key_refused(
    operation_name: &str,
    result: Result<(), payspec_client::Error>,
    requests: &[Recorded],
) -> Result<(), Mismatch> {
    let spec = spec()?;
    let op = operation(spec, operation_name)?;
    let error = match result {
        Ok(()) => {
            return Err(Mismatch::one(
                operation_name,
                "an answer with a repeated key was read as an outcome",
            ));
        }
        Err(error) => match error.detail() {
            payspec_client::ErrorDetail::Auth { cause, .. } => (**cause).clone(),
            _ => error,
        },
    };
    let mut problems = Vec::new();
    match error.detail() {
        payspec_client::ErrorDetail::Decode { reason, .. } if reason.contains("repeated") => {}
        other => problems.push(format!("expected a decode error naming the repeated key, got {other:?}")),
    }
    if error.may_have_been_applied() && op.effect == payspec_codegen::model::Effect::Read {
        problems.push("a read's decode error says it may have been applied".to_owned());
    }
    let issue = operation(spec, spec.token_operations.as_ref().map_or("", |t| t.issue.as_str()))?;
    let sent = if op.name == issue.name {
        requests.len()
    } else {
        requests.iter().filter(|r| !r.is("POST", issue.path.as_str())).count()
    };
    if sent != 1 {
        problems.push(format!("the operation was sent {sent} times, not once"));
    }
    if problems.is_empty() {
        Ok(())
    } else {
        Err(Mismatch { operation: operation_name.to_owned(), problems })
    }
}

/// Drops `null` members and sorts object keys, so that a field left out and a field sent
/// as `null` compare equal, and key order does not matter.
fn normalized(value: Json) -> Json {
    match value {
        Json::Object(object) => {
            let mut entries: Vec<(String, Json)> = object
                .iter()
                .filter(|(_, v)| !v.is_null())
                .map(|(k, v)| (k.to_owned(), normalized(v.clone())))
                .collect();
            entries.sort_by(|a, b| a.0.cmp(&b.0));
            let mut out = payspec_client::runtime::JsonObject::new();
            for (k, v) in entries {
                out.push(k, v);
            }
            Json::Object(out)
        }
        Json::Array(items) => Json::Array(items.into_iter().map(normalized).collect()),
        other => other,
    }
}

/// The typed answer written back is the answer's `data` as served: every field kept,
/// every number with its text. A pending answer's data is decoded into the type too.
pub fn check_round_trip<T: FromJson + ToJson>(
    operation_name: &str,
    served: &str,
    outcome: Outcome<T>,
) -> Result<(), Mismatch> {
    let spec = spec()?;
    let op = operation(spec, operation_name)?;
    let served =
        Json::parse(served).map_err(|e| Mismatch::one(operation_name, format!("bad test answer: {e}")))?;
    let sent_data = match op.answers.reading.envelope {
        EnvelopeKind::Unwrapped => Some(served),
        _ => served.get("data").cloned(),
    };
    let decoded = match outcome {
        Outcome::Done(envelope) | Outcome::Pending(envelope) | Outcome::Failed(envelope) => {
            if !envelope.unread.is_empty() {
                return Err(Mismatch::one(
                    operation_name,
                    format!("values were not read: {}", envelope.unread),
                ));
            }
            envelope.data.map(|d| d.to_json())
        }
    };
    let (sent, got) = (sent_data.map(normalized), decoded.map(normalized));
    if sent != got {
        let text =
            |v: &Option<Json>| v.as_ref().and_then(|v| serde_json::to_string(v).ok()).unwrap_or_default();
        return Err(Mismatch::one(
            operation_name,
            format!(
                "the typed answer does not write back what came:\n  sent {}\n  got  {}",
                text(&sent),
                text(&got)
            ),
        ));
    }
    Ok(())
}
