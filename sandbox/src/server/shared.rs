//! What every connection shares (the spec, its routes and handlers, the state, the HTTP
//! client of deliveries), and how an answer or a refusal is written.

use crate::check::{Refusal, RouteTable};
use crate::handlers::Table;
use crate::state::State;
use crate::webhooks::{Outbox, OutboxHost};
use bytes::Bytes;
use http_body_util::Full;
use hyper::Response;
use hyper::StatusCode;
use hyper::header::{CONTENT_TYPE, HeaderValue};
use payspec_codegen::model::{Spec, SuccessBy};
use serde_json::{Value, json};
use std::sync::{Mutex, MutexGuard};
use std::time::Duration;

/// What every connection shares.
pub(crate) struct Shared {
    pub spec: Spec,
    pub routes: RouteTable,
    /// The handler of each operation that has one.
    pub handlers: Table,
    pub state: Mutex<State>,
    /// Sends webhooks, signed by the spec's scheme.
    pub outbox: Outbox,
    /// The runtime the sandbox was started on: deliveries and later settlements run there,
    /// whichever thread asks for them (a test's synchronous code too).
    pub runtime: tokio::runtime::Handle,
}

impl OutboxHost for Shared {
    fn state(&self) -> MutexGuard<'_, State> {
        Shared::state(self)
    }

    fn outbox(&self) -> &Outbox {
        &self.outbox
    }

    fn runtime(&self) -> &tokio::runtime::Handle {
        &self.runtime
    }
}

impl Shared {
    /// The state; a panic elsewhere while it was held does not poison the sandbox.
    pub(crate) fn state(&self) -> MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(|poisoned| poisoned.into_inner())
    }

    /// Forgets everything but the configuration (webhook receiver included): balances,
    /// records, tokens, faults, counts and deliveries start again.
    pub(crate) fn reset(&self) {
        let mut state = self.state();
        let config = state.config.clone();
        *state = State::new(config);
    }
}

/// Returned instead of an answer to close the connection (the `Drop` fault).
#[derive(Debug)]
pub(crate) struct Dropped;

impl std::fmt::Display for Dropped {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("connection dropped on purpose")
    }
}

impl std::error::Error for Dropped {}

pub(crate) type Answer = Response<Full<Bytes>>;

/// How long a request's head, and then its body, may take to arrive.
pub(crate) const READ_TIMEOUT: Duration = Duration::from_secs(30);

pub(crate) fn json_response(status: u16, body: &Value) -> Answer {
    let mut response = Response::new(Full::new(Bytes::from(serde_json::to_vec(body).unwrap_or_default())));
    *response.status_mut() = StatusCode::from_u16(status).unwrap_or(StatusCode::INTERNAL_SERVER_ERROR);
    response.headers_mut().insert(CONTENT_TYPE, HeaderValue::from_static("application/json"));
    response
}

/// A page: HTML, never cached (it is the sandbox's state as it stands).
pub(crate) fn html_response(page: &'static str) -> Answer {
    let mut response = Response::new(Full::new(Bytes::from_static(page.as_bytes())));
    let headers = response.headers_mut();
    headers.insert(CONTENT_TYPE, HeaderValue::from_static("text/html; charset=utf-8"));
    headers.insert(hyper::header::CACHE_CONTROL, HeaderValue::from_static("no-store"));
    response
}

/// A refusal in the service's error envelope, under the spec's envelope keys.
/// The code a refusal carries, in the spec's words: a kind's code (`01`, `02`, `05`, `06`)
/// where the spec documents it (`service.codes`), else the spec's first code that proves a
/// request was not applied (`answers.refusal_codes`), else none, rather than a code of the
/// sandbox's in this service's key; a code the service is seen to send as it is.
fn refusal_code<'s>(spec: &'s Spec, own: &'s str) -> Option<&'s str> {
    if !Refusal::KIND_CODES.contains(&own) || spec.codes.iter().any(|c| c.code == own) {
        return Some(own);
    }
    spec.answers.reading.refusal_codes.first().map(String::as_str)
}

pub(crate) fn refusal(spec: &Spec, refusal: &Refusal) -> Answer {
    // Where the spec says an error holds its code and description (`service.errors`),
    // they go there: at the top level, or in the object it names.
    if let Some(errors) = &spec.answers.reading.errors
        && refusal.status != 200
    {
        let mut error = serde_json::Map::new();
        if let (Some(key), Some(code)) = (errors.code.first(), refusal_code(spec, refusal.code)) {
            error.insert(key.clone(), json!(code));
        }
        if let Some(key) = errors.description.first() {
            error.insert(key.clone(), json!(refusal.description));
        }
        let body = match &errors.at {
            Some(at) => json!({ at: error }),
            None => Value::Object(error),
        };
        return json_response(refusal.status, &body);
    }
    let keys = &spec.envelope;
    let mut body = serde_json::Map::new();
    if let (Some(key), Some(code)) = (keys.code.first(), refusal_code(spec, refusal.code)) {
        body.insert(key.clone(), json!(code));
    }
    // An envelope whose flag says success says a refusal with a false flag, whatever the
    // status.
    if let (SuccessBy::Flag, Some(flag)) = (keys.success, &keys.flag) {
        body.insert(flag.clone(), json!(false));
    }
    // A refusal the service sends with HTTP 200 carries its reason in `message` (the last
    // spelling of the description the spec lists) beside a false flag, with no data
    // (published live traffic: a refused virtual account name).
    if refusal.status == 200 {
        if let Some(flag) = &keys.flag {
            body.insert(flag.clone(), json!(false));
        }
        if let Some(key) = keys.description.last() {
            body.insert(key.clone(), json!(refusal.description));
        }
        return json_response(200, &Value::Object(body));
    }
    if let Some(key) = keys.description.first() {
        body.insert(key.clone(), json!(refusal.description));
    }
    body.insert(keys.data.clone(), json!(refusal.data));
    json_response(refusal.status, &Value::Object(body))
}
