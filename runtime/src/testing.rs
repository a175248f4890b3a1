//! Test doubles: a [`Script`] is a [`Transport`] that answers each operation from replies
//! queued for it and records every request it was sent, so a unit test of code that calls
//! the client ("what does my code do when a transfer is pending?") needs no server.
//!
//! A reply is written as the service would send it, in the service's envelope (from the
//! spec's data, [`Service`] and each route's [`Answers`]): the client reads
//! it as it reads the service's, so the test sees the outcome the service would give. The
//! token operations are answered by the script itself, with a token valid for an hour,
//! unless a reply is queued for them.
//!
//! The generated client's docs show a whole test (`payspec_client`, feature `testing`).
//!
//! ```
//! use payspec_runtime::testing::{Reply, Script};
//! use serde_json::json;
//!
//! # static SERVICE: payspec_runtime::Service = payspec_runtime::Service::PLAIN;
//! let script = Script::new(&SERVICE);
//! script
//!     .reply("bank_transfer", Reply::pending(json!({"reference": "t-1"})))
//!     .reply("bank_transfer", Reply::refusal("06", "insufficient funds"))
//!     .always("get_balance", Reply::data(json!({"balance": "10.00"})));
//! // `ClientBuilder::transport(script.clone())`, then call; afterwards:
//! assert!(script.sent().is_empty());
//! ```

use std::collections::{HashMap, VecDeque};
use std::fmt::{self, Write as _};
use std::sync::{Arc, Mutex};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use bytes::Bytes;
use reqwest::header::{HeaderMap, HeaderName, HeaderValue};

use crate::service::{Answers, EnvelopeKind, Route, Service};
use crate::transport::{Incoming, Outgoing, SendFuture, Transport, TransportError};

/// What the script answers one request with.
#[derive(Clone, Debug)]
#[must_use]
pub struct Reply {
    kind: Kind,
    status: Option<u16>,
    headers: HeaderMap,
    after: Option<Duration>,
}

#[derive(Clone, Debug)]
enum Kind {
    /// A success with this data (JSON text).
    Data(String),
    /// A success that the service is still processing, with this data.
    Pending(String),
    /// A refusal with this code and description.
    Refusal { code: String, description: String },
    /// This status and body, as they are.
    Raw { status: u16, body: Bytes },
    /// No answer ever: the call's deadline ends it.
    Silence,
    /// The connection was refused: nothing was sent.
    Unreachable,
}

impl Reply {
    fn of(kind: Kind) -> Self {
        Reply { kind, status: None, headers: HeaderMap::new(), after: None }
    }

    /// A success carrying `data` (a `serde_json::Value`, or JSON text as it is, which
    /// keeps every number's exact text), in the service's envelope with its first
    /// success code.
    pub fn data(data: impl fmt::Display) -> Self {
        Reply::of(Kind::Data(data.to_string()))
    }

    /// A success the service is still processing: `data` with the operation's first
    /// pending state in its state field (unless `data` has one), or the envelope's
    /// pending code or description where the operation is pending by those. An operation
    /// that is never pending answers with a transport error saying so.
    pub fn pending(data: impl fmt::Display) -> Self {
        Reply::of(Kind::Pending(data.to_string()))
    }

    /// A refusal: HTTP `400` (see [`status`](Self::status)) with `code` and `description`
    /// in the service's envelope.
    pub fn refusal(code: impl Into<String>, description: impl Into<String>) -> Self {
        Reply::of(Kind::Refusal { code: code.into(), description: description.into() })
    }

    /// `status` with `body` as it is (any text: an HTML error page, JSON of any shape).
    pub fn raw(status: u16, body: impl Into<Bytes>) -> Self {
        Reply::of(Kind::Raw { status, body: body.into() })
    }

    /// No answer: the attempt waits until the client's deadline ends it, as a service
    /// that took the request and never answered.
    pub fn silence() -> Self {
        Reply::of(Kind::Silence)
    }

    /// The connection is refused: nothing reaches the service, so the client may send the
    /// request again.
    pub fn unreachable() -> Self {
        Reply::of(Kind::Unreachable)
    }

    /// Answers with `status` in place of the reply's own (`200`; a refusal's `400`).
    pub fn status(mut self, status: u16) -> Self {
        self.status = Some(status);
        self
    }

    /// Adds a header to the answer (`Retry-After`, the rate-limit headers).
    ///
    /// # Panics
    /// When `name` or `value` cannot be a header: a test's own mistake.
    pub fn header(mut self, name: &str, value: &str) -> Self {
        let name = HeaderName::from_bytes(name.as_bytes()).unwrap_or_else(|e| panic!("{name}: {e}"));
        let value = HeaderValue::from_str(value).unwrap_or_else(|e| panic!("{value}: {e}"));
        self.headers.append(name, value);
        self
    }

    /// Answers only after `wait` (on the runtime's clock, so a test with paused time does
    /// not wait).
    pub fn after(mut self, wait: Duration) -> Self {
        self.after = Some(wait);
        self
    }
}

/// A request the script was sent, as it was sent.
#[derive(Clone, Debug)]
#[non_exhaustive]
pub struct Sent {
    /// The operation's name in the spec.
    pub operation: &'static str,
    /// The HTTP method.
    pub method: http::Method,
    /// The whole URL.
    pub url: String,
    /// Every header, the token and the idempotency key among them.
    pub headers: HeaderMap,
    /// The body, if there was one.
    pub body: Option<Bytes>,
}

impl Sent {
    /// A header's value as text.
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers.get(name).and_then(|v| v.to_str().ok())
    }

    /// The body as JSON, if it is.
    pub fn json(&self) -> Option<serde_json::Value> {
        serde_json::from_slice(self.body.as_deref()?).ok()
    }
}

/// A [`Transport`] that answers from replies queued per operation and records what it was
/// sent. Clones share the queues and the record: give the client one
/// (`ClientBuilder::transport(script.clone())`) and read the record from another.
#[derive(Clone)]
pub struct Script {
    service: &'static Service,
    state: Arc<Mutex<State>>,
}

#[derive(Default)]
struct State {
    queued: HashMap<String, VecDeque<Reply>>,
    always: HashMap<String, Reply>,
    sent: Vec<Sent>,
    tokens: u64,
}

impl fmt::Debug for Script {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Script").field("sent", &self.lock().sent.len()).finish_non_exhaustive()
    }
}

impl Script {
    /// A script for a client of `service` (a generated crate's `routes::SERVICE`).
    pub fn new(service: &'static Service) -> Self {
        Script { service, state: Arc::default() }
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(|poisoned| poisoned.into_inner())
    }

    /// Queues `reply` for the next request of `operation` (its name in the spec): replies
    /// queued for one operation answer in order, once each.
    pub fn reply(&self, operation: &str, reply: Reply) -> &Self {
        self.lock().queued.entry(operation.to_owned()).or_default().push_back(reply);
        self
    }

    /// Answers every request of `operation` with `reply` once its queue is spent.
    pub fn always(&self, operation: &str, reply: Reply) -> &Self {
        self.lock().always.insert(operation.to_owned(), reply);
        self
    }

    /// Every request sent so far, in order, the token operations' among them.
    pub fn sent(&self) -> Vec<Sent> {
        self.lock().sent.clone()
    }

    /// The requests sent so far of `operation`.
    pub fn sent_to(&self, operation: &str) -> Vec<Sent> {
        self.lock().sent.iter().filter(|sent| sent.operation == operation).cloned().collect()
    }

    /// The reply for a request of `route`: the next queued, the standing one, a token
    /// grant, or a refusal that says none was scripted.
    fn next_reply(&self, route: &'static Route) -> Reply {
        let mut state = self.lock();
        if let Some(reply) = state.queued.get_mut(route.operation).and_then(VecDeque::pop_front) {
            return reply;
        }
        if let Some(reply) = state.always.get(route.operation) {
            return reply.clone();
        }
        match self.service.tokens {
            // By name: generated routes are constants, each use a copy at its own address.
            Some(tokens)
                if route.operation == tokens.issue.operation
                    || tokens.refresh.is_some_and(|refresh| route.operation == refresh.operation) =>
            {
                state.tokens += 1;
                let grant = tokens.grant;
                let expires = SystemTime::now().duration_since(UNIX_EPOCH).map_or(0, |d| d.as_secs()) + 3600;
                let mut data = format!("{{{}:\"test-token-{}\"", quoted(grant.access_token), state.tokens);
                if let Some(key) = grant.refresh_token {
                    let _ = write!(data, ",{}:\"test-refresh-{}\"", quoted(key), state.tokens);
                }
                if let Some(key) = grant.expires_at {
                    let _ = write!(data, ",{}:{expires}", quoted(key));
                } else if let Some(key) = grant.expires_in {
                    let _ = write!(data, ",{}:3600", quoted(key));
                }
                data.push('}');
                Reply::data(data)
            }
            Some(tokens) if tokens.revoke.is_some_and(|revoke| route.operation == revoke.operation) => {
                Reply::data("{}")
            }
            // A refusal no client retries, that names what is missing.
            _ => Reply::refusal(
                "unscripted",
                format!(
                    "the test script has no reply for `{}`: queue one with `Script::reply` or `Script::always`",
                    route.operation
                ),
            )
            .status(501),
        }
    }
}

impl Transport for Script {
    fn send(&self, request: Outgoing) -> SendFuture<'_> {
        Box::pin(async move {
            let route = request.route;
            self.lock().sent.push(Sent {
                operation: route.operation,
                method: request.method,
                url: request.uri.to_string(),
                headers: request.headers,
                body: request.body,
            });
            let reply = self.next_reply(route);
            if let Some(wait) = reply.after {
                tokio::time::sleep(wait).await;
            }
            let (status, body) = match reply.kind {
                Kind::Data(data) => (200, success(route.answers, &data, Pace::Done)),
                Kind::Pending(data) => {
                    let Some(pace) = pending_form(route.answers) else {
                        return Err(TransportError::not_sent(format!(
                            "`{}` is never pending: its answers have no pending state, code or description",
                            route.operation
                        )));
                    };
                    (200, success(route.answers, &data, pace))
                }
                Kind::Refusal { code, description } => (400, refusal(route.answers, &code, &description)),
                Kind::Raw { status, body } => (status, body),
                Kind::Silence => std::future::pending().await,
                Kind::Unreachable => {
                    return Err(TransportError::not_sent(std::io::Error::new(
                        std::io::ErrorKind::ConnectionRefused,
                        "connection refused (a test script's reply)",
                    )));
                }
            };
            Ok(Incoming::full(reply.status.unwrap_or(status), reply.headers, body))
        })
    }
}

/// How a success says it is done or still in flight.
#[derive(Clone, Copy)]
enum Pace {
    Done,
    State(&'static str, &'static str),
    Code(&'static str),
    Description(&'static str),
}

/// How `answers` are made pending: a state in the data, a code, or a description.
fn pending_form(answers: &Answers) -> Option<Pace> {
    if let Some(state) = answers.pending_statuses.first() {
        return Some(Pace::State(answers.status_field, state));
    }
    if let Some(code) = answers.pending_codes.first() {
        return Some(Pace::Code(code));
    }
    answers.pending_descriptions.first().map(|d| Pace::Description(d))
}

/// `text` as a JSON string.
fn quoted(text: &str) -> String {
    serde_json::Value::from(text).to_string()
}

/// A success's body: `data` in the envelope, made pending as `pace` says.
fn success(answers: &Answers, data: &str, pace: Pace) -> Bytes {
    let data = match pace {
        Pace::State(field, state) => with_state(data, field, state),
        _ => data.to_owned(),
    };
    let (EnvelopeKind::Wrapped { keys, .. }, Some((code_key, description_key))) =
        (answers.envelope, answers.envelope.spelled())
    else {
        return data.into();
    };
    let code = match pace {
        Pace::Code(code) => Some(code),
        _ => answers.success_codes.first().copied(),
    };
    let description = match pace {
        Pace::Description(description) => description,
        _ => "success",
    };
    let mut body = String::from("{");
    // As the operation's answers spell the code and the description.
    if let (Some(key), Some(code)) = (code_key, code) {
        let _ = write!(body, "{}:{},", quoted(key), quoted(code));
    }
    if let Some(key) = description_key {
        let _ = write!(body, "{}:{},", quoted(key), quoted(description));
    }
    if let Some(flag) = keys.flag {
        let _ = write!(body, "{}:true,", quoted(flag));
    }
    let _ = write!(body, "{}:{data}}}", quoted(keys.data));
    body.into()
}

/// A refusal's body: the code and description in the envelope (or alone, unwrapped), and
/// a false flag where the envelope has one.
fn refusal(answers: &Answers, code: &str, description: &str) -> Bytes {
    let (code_key, description_key) = match answers.envelope.spelled() {
        Some((code_key, description_key)) => (code_key, description_key),
        None => (Some("code"), Some("message")),
    };
    let flag = answers.envelope.keys().and_then(|keys| keys.flag);
    let mut fields = Vec::new();
    if let Some(key) = code_key {
        fields.push(format!("{}:{}", quoted(key), quoted(code)));
    }
    if let Some(key) = description_key {
        fields.push(format!("{}:{}", quoted(key), quoted(description)));
    }
    if let Some(flag) = flag {
        fields.push(format!("{}:false", quoted(flag)));
    }
    format!("{{{}}}", fields.join(",")).into()
}

/// `data` (JSON text) with `field` set to `state`, unless it is not an object or has the
/// field already: its own text is kept, numbers as written.
fn with_state(data: &str, field: &str, state: &str) -> String {
    let trimmed = data.trim();
    let Some(rest) = trimmed.strip_prefix('{') else { return data.to_owned() };
    if serde_json::from_str::<serde_json::Map<String, serde_json::Value>>(trimmed)
        .is_ok_and(|object| object.contains_key(field))
    {
        return data.to_owned();
    }
    let comma = if rest.trim_start().starts_with('}') { "" } else { "," };
    format!("{{{}:{}{comma}{rest}", quoted(field), quoted(state))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::service::{EnvelopeKeys, fixture};

    static KEYS: EnvelopeKeys = EnvelopeKeys {
        success: payspec_vocabulary::SuccessBy::Code,
        code: &["responseCode"],
        description: &["responseMessage"],
        data: "data",
        flag: Some("status"),
    };

    #[test]
    fn a_pending_reply_sets_the_first_pending_state_and_keeps_numbers_as_written() {
        assert_eq!(
            with_state(r#"{"amount": 10.50}"#, "status", "PENDING"),
            r#"{"status":"PENDING","amount": 10.50}"#
        );
        assert_eq!(with_state("{}", "status", "PENDING"), r#"{"status":"PENDING"}"#);
        assert_eq!(with_state(r#"{"status":"NEW"}"#, "status", "PENDING"), r#"{"status":"NEW"}"#);
        assert_eq!(with_state("[1]", "status", "PENDING"), "[1]");
    }

    #[test]
    fn replies_are_written_in_the_services_envelope() {
        let answers = Answers {
            success_codes: &["00"] as &[&str],
            envelope: EnvelopeKind::Wrapped { keys: &KEYS, spelling: 0 },
            ..fixture::ANSWERS
        };
        let body = success(&answers, r#"{"a":1}"#, Pace::Done);
        assert_eq!(
            std::str::from_utf8(&body).ok(),
            Some(r#"{"responseCode":"00","responseMessage":"success","status":true,"data":{"a":1}}"#)
        );
        let body = refusal(&answers, "06", "no funds");
        assert_eq!(
            std::str::from_utf8(&body).ok(),
            Some(r#"{"responseCode":"06","responseMessage":"no funds","status":false}"#)
        );
    }
}
