//! The HTTP/1 server: routes a request, plays a queued fault, checks authentication and
//! the request, and answers from the ledger. Webhooks are delivered after the answer, each
//! on its own task. The control API lives under `/__sandbox/`.

use crate::check::{MAX_BODY_BYTES, Refusal, RouteTable, check_request};
use crate::ledger::{Delivery, Fault, Ledger, Notification, Play, RateCount, SettleTo, faults, snapshot};
use bytes::Bytes;
use http_body_util::{BodyExt, Full, Limited};
use hyper::body::Incoming;
use hyper::header::{CONTENT_TYPE, HeaderName, HeaderValue, RETRY_AFTER};
use hyper::{Request, Response, StatusCode};
use payspec_codegen::model::{Auth, Spec};
use serde_json::{Value, json};
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::{Duration, SystemTime};

/// What every connection shares.
pub(crate) struct Shared {
    pub spec: Spec,
    pub routes: RouteTable,
    pub ledger: Mutex<Ledger>,
    /// Sends webhooks; `None` when no HTTP client could be built (each delivery then fails).
    pub http: Option<reqwest::Client>,
    /// The runtime the sandbox was started on: deliveries and later settlements run there,
    /// whichever thread asks for them (a test's synchronous code too).
    pub runtime: tokio::runtime::Handle,
}

impl Shared {
    /// The ledger; a panic elsewhere while it was held does not poison the sandbox.
    pub(crate) fn ledger(&self) -> MutexGuard<'_, Ledger> {
        self.ledger.lock().unwrap_or_else(|poisoned| poisoned.into_inner())
    }

    /// Forgets everything but the configuration (webhook receiver included): balances,
    /// records, tokens, faults, counts and deliveries start again.
    pub(crate) fn reset(&self) {
        let mut ledger = self.ledger();
        let config = ledger.config.clone();
        *ledger = Ledger::new(config);
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

type Answer = Response<Full<Bytes>>;

/// How long a request's head, and then its body, may take to arrive.
pub(crate) const READ_TIMEOUT: Duration = Duration::from_secs(30);

fn json_response(status: u16, body: &Value) -> Answer {
    let mut response = Response::new(Full::new(Bytes::from(serde_json::to_vec(body).unwrap_or_default())));
    *response.status_mut() = StatusCode::from_u16(status).unwrap_or(StatusCode::INTERNAL_SERVER_ERROR);
    response.headers_mut().insert(CONTENT_TYPE, HeaderValue::from_static("application/json"));
    response
}

fn refusal(refusal: &Refusal) -> Answer {
    // A refusal the service sends with HTTP 200 carries its reason in `message`, with no
    // description and no data (published live traffic: a refused virtual account name).
    if refusal.status == 200 {
        return json_response(
            200,
            &json!({"code": refusal.code, "status": false, "message": refusal.description}),
        );
    }
    json_response(
        refusal.status,
        &json!({"code": refusal.code, "description": refusal.description, "data": refusal.data}),
    )
}

pub(crate) async fn serve(shared: Arc<Shared>, request: Request<Incoming>) -> Result<Answer, Dropped> {
    let method = request.method().as_str().to_owned();
    let path = request.uri().path().to_owned();
    let query = request.uri().query().map(str::to_owned);
    if let Some(rest) = path.strip_prefix("/__sandbox/") {
        let body = match read_body(request).await {
            Ok(body) => body,
            Err(refused) => return Ok(refusal(&refused)),
        };
        return Ok(control(&shared, &method, rest, &body));
    }
    let (index, vars) = match shared.routes.find(&method, &path) {
        Ok(found) => found,
        Err(refused) => return Ok(refusal(&refused)),
    };
    let op = &shared.spec.operations[index];
    let (fault, rate) = {
        let mut ledger = shared.ledger();
        *ledger.received.entry(op.name.clone()).or_default() += 1;
        let rate = ledger.count_request(std::time::Instant::now());
        let fault =
            if rate.is_some_and(|r| r.refused_for.is_some()) { None } else { ledger.next_fault(&op.name) };
        (fault, rate)
    };
    let mut answer = match rate {
        Some(RateCount { refused_for: Some(wait), .. }) => {
            let mut answer = refusal(&Refusal {
                status: 429,
                code: "01",
                description: "too many requests: the rate limit's window is spent".to_owned(),
                data: None,
            });
            // Whole seconds, rounded up: never sooner than the window ends.
            let seconds = wait.as_secs() + u64::from(wait.subsec_nanos() > 0);
            answer.headers_mut().insert(RETRY_AFTER, HeaderValue::from(seconds.max(1)));
            answer
        }
        _ => answer_operation(&shared, index, vars, query, request, fault).await?,
    };
    // Under the names the spec gives the service's rate-limit headers, when it does.
    if let (Some(rate), Some([limit, remaining, window_name])) = (rate, &shared.spec.rate_limit) {
        let window = rate.window;
        let window = if window.subsec_millis() == 0 {
            format!("{}s", window.as_secs())
        } else {
            format!("{}ms", window.as_millis())
        };
        let values =
            [(limit, rate.limit.to_string()), (remaining, rate.remaining.to_string()), (window_name, window)];
        let headers = answer.headers_mut();
        for (name, value) in values {
            if let (Ok(name), Ok(value)) =
                (HeaderName::from_bytes(name.as_bytes()), HeaderValue::from_str(&value))
            {
                headers.insert(name, value);
            }
        }
    }
    Ok(answer)
}

/// Plays an operation's fault, if one is queued, or checks and answers its request.
async fn answer_operation(
    shared: &Arc<Shared>,
    index: usize,
    vars: std::collections::HashMap<String, String>,
    query: Option<String>,
    request: Request<Incoming>,
    fault: Option<Fault>,
) -> Result<Answer, Dropped> {
    let op = &shared.spec.operations[index];
    let mut play = Play::AsUsual;
    match fault {
        None => {}
        Some(Fault::Drop) => return Err(Dropped),
        Some(Fault::Delay(wait)) => tokio::time::sleep(wait).await,
        Some(Fault::TooManyRequests { retry_after }) => {
            let mut answer = refusal(&Refusal {
                status: 429,
                code: "01",
                description: "too many requests (a fault the sandbox was asked to play)".to_owned(),
                data: None,
            });
            answer.headers_mut().insert(RETRY_AFTER, HeaderValue::from(retry_after.as_secs()));
            return Ok(answer);
        }
        Some(Fault::ServerError) => {
            return Ok(refusal(&Refusal {
                status: 500,
                code: "01",
                description: "downstream system error (a fault the sandbox was asked to play)".to_owned(),
                data: None,
            }));
        }
        Some(Fault::Pending) => play = Play::Pending,
        Some(Fault::Declined) => play = Play::Declined,
    }
    let headers = request.headers().clone();
    let body = match read_body(request).await {
        Ok(body) => body,
        Err(refused) => return Ok(refusal(&refused)),
    };
    let header = |name: &str| headers.get(name).and_then(|v| v.to_str().ok()).map(str::to_owned);

    let outcome = {
        let mut ledger = shared.ledger();
        let authorized =
            authorize(&ledger, op.auth, &shared.spec.account_header, op.name == "refresh_token", &header);
        let result = authorized
            .and_then(|()| check_request(op, vars, query.as_deref(), &body, ledger.config.strictness))
            .and_then(|checked| {
                ledger.note_ignored(&op.name, &checked.unknown);
                let key = op.idempotency_header.as_ref().and_then(|h| header(&h.wire));
                ledger.handle(&shared.spec, op, &checked, key.as_deref(), play)
            });
        match result {
            Ok(outcome) => outcome,
            Err(refused) => return Ok(refusal(&refused)),
        }
    };
    deliver(shared, outcome.webhooks);
    Ok(json_response(outcome.status, &outcome.body))
}

/// The token and the account header the operation's authentication asks for.
fn authorize(
    ledger: &Ledger,
    auth: Auth,
    account_header: &str,
    refresh: bool,
    header: &dyn Fn(&str) -> Option<String>,
) -> Result<(), Refusal> {
    let (bearer, account) = match auth {
        Auth::BearerAndAccount => (true, true),
        Auth::Bearer => (true, false),
        Auth::Account => (false, true),
        Auth::None => (false, false),
    };
    if bearer {
        let given =
            header("authorization").ok_or_else(|| Refusal::unauthorized("no Authorization header"))?;
        let token = given
            .strip_prefix("Bearer ")
            .ok_or_else(|| Refusal::unauthorized("the Authorization header is not `Bearer <token>`"))?;
        ledger.token_valid(token.trim(), refresh)?;
    }
    if account {
        match header(account_header) {
            None => return Err(Refusal::forbidden(format!("no {account_header} header"))),
            Some(id) if id != ledger.config.account_id => {
                return Err(Refusal::forbidden(format!(
                    "the {account_header} header names another parent account"
                )));
            }
            Some(_) => {}
        }
    }
    Ok(())
}

async fn read_body(request: Request<Incoming>) -> Result<Vec<u8>, Refusal> {
    let body = Limited::new(request.into_body(), MAX_BODY_BYTES).collect();
    match tokio::time::timeout(READ_TIMEOUT, body).await {
        Ok(Ok(collected)) => Ok(collected.to_bytes().to_vec()),
        Err(_) => Err(Refusal {
            status: 408,
            code: "02",
            description: format!("the body did not arrive within {} s", READ_TIMEOUT.as_secs()),
            data: None,
        }),
        Ok(Err(_)) => Err(Refusal {
            status: 413,
            code: "02",
            description: format!("the body is larger than {MAX_BODY_BYTES} bytes, or was cut off"),
            data: None,
        }),
    }
}

/// The runtime's form of a spec's signature scheme: made once per distinct scheme in the
/// process (the runtime keeps schemes for the life of the program, as generated code
/// does), so that sandboxes started over and over hold one copy.
fn scheme_of(webhooks: &payspec_codegen::model::Webhooks) -> &'static payspec_runtime::webhook::Scheme {
    use payspec_runtime::webhook::{Scheme, SignedValue};
    type Made = Vec<(payspec_codegen::model::Webhooks, &'static Scheme)>;
    static MADE: std::sync::Mutex<Made> = std::sync::Mutex::new(Vec::new());
    let mut made = MADE.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
    if let Some((_, scheme)) = made.iter().find(|(w, _)| w == webhooks) {
        return scheme;
    }
    let text = |s: &str| -> &'static str { Box::leak(s.to_owned().into_boxed_str()) };
    let fixed = |h: &Option<(String, String)>| h.as_ref().map(|(name, value)| (text(name), text(value)));
    let signed: Vec<SignedValue> = webhooks
        .signed
        .iter()
        .map(|v| SignedValue { name: text(&v.name), path: text(&v.path), instant: v.instant })
        .collect();
    let scheme: &'static Scheme = Box::leak(Box::new(Scheme {
        signature_header: text(&webhooks.signature_header),
        timestamp_header: text(&webhooks.timestamp_header),
        algorithm: fixed(&webhooks.algorithm),
        version: fixed(&webhooks.version),
        event_type: text(&webhooks.event_type),
        request_id: text(&webhooks.request_id),
        signed: Box::leak(signed.into_boxed_slice()),
    }));
    made.push((webhooks.clone(), scheme));
    scheme
}

/// Sends each webhook on its own task, signed as the service signs them; the outcome is
/// recorded in the ledger.
pub(crate) fn deliver(shared: &Arc<Shared>, webhooks: Vec<Notification>) {
    for Notification { url, event, body } in webhooks {
        let task_shared = Arc::clone(shared);
        shared.runtime.spawn(async move {
            let shared = task_shared;
            let key = shared.ledger().config.webhook.as_ref().map(|(_, key)| key.clone()).unwrap_or_default();
            let transaction_id = serde_json::from_slice::<Value>(&body)
                .ok()
                .and_then(|v| {
                    v.pointer("/data/transaction/transactionId").and_then(Value::as_str).map(str::to_owned)
                })
                .unwrap_or_default();
            // A spec without a signature scheme gets its deliveries unsigned; a key the
            // runtime refuses (empty) gets none sent.
            let headers = match &shared.spec.webhooks {
                Some(webhooks) => payspec_runtime::webhook::sign(
                    scheme_of(webhooks),
                    &body,
                    SystemTime::now(),
                    key.as_bytes(),
                )
                .ok()
                .map(|signed| signed.headers()),
                None => Some(reqwest::header::HeaderMap::new()),
            };
            let status = match (headers, &shared.http) {
                (Some(headers), Some(http)) => http
                    .post(&url)
                    .headers(headers)
                    .header(CONTENT_TYPE, "application/json")
                    .body(body)
                    .send()
                    .await
                    .ok()
                    .map(|r| r.status().as_u16()),
                _ => None,
            };
            shared.ledger().deliveries.push(Delivery { event_type: event, transaction_id, status });
        });
    }
}

/// The control API: faults, paying an order, settling pending transfers, the webhook
/// receiver, and a snapshot of the state.
fn control(shared: &Arc<Shared>, method: &str, rest: &str, body: &[u8]) -> Answer {
    let request: Value =
        if body.is_empty() { json!({}) } else { serde_json::from_slice(body).unwrap_or(Value::Null) };
    let bad = |message: String| refusal(&Refusal::invalid(message));
    match (method, rest.split('/').collect::<Vec<_>>().as_slice()) {
        ("GET", ["state"]) => json_response(200, &snapshot(&shared.ledger())),
        ("GET", ["faults"]) => json_response(200, &faults(&shared.ledger())),
        ("DELETE", ["faults"]) => {
            let mut ledger = shared.ledger();
            let cleared: usize = ledger.faults.values().map(|q| q.len()).sum();
            ledger.faults.clear();
            json_response(200, &json!({"cleared": cleared}))
        }
        ("POST", ["reset"]) => {
            shared.reset();
            json_response(200, &json!({"reset": true}))
        }
        ("POST", ["faults"]) => {
            let operation = request.get("operation").and_then(Value::as_str).unwrap_or_default();
            if shared.spec.operation(operation).is_none() {
                return bad(format!("no operation `{operation}` in the spec"));
            }
            let times = request.get("times").and_then(Value::as_u64).unwrap_or(1).min(10_000) as usize;
            let seconds =
                |key: &str, default: u64| request.get(key).and_then(Value::as_u64).unwrap_or(default);
            let fault = match request.get("fault").and_then(Value::as_str).unwrap_or_default() {
                "too_many_requests" => Fault::TooManyRequests {
                    retry_after: Duration::from_secs(seconds("retry_after_seconds", 1)),
                },
                "server_error" => Fault::ServerError,
                "delay" => Fault::Delay(Duration::from_millis(seconds("delay_ms", 1000).min(600_000))),
                "drop" => Fault::Drop,
                "pending" => Fault::Pending,
                "declined" => Fault::Declined,
                other => {
                    return bad(format!(
                        "unknown fault `{other}`: too_many_requests, server_error, delay, drop, pending or declined"
                    ));
                }
            };
            let mut ledger = shared.ledger();
            ledger.faults.entry(operation.to_owned()).or_default().extend(std::iter::repeat_n(fault, times));
            json_response(200, &json!({"operation": operation, "queued": ledger.faults[operation].len()}))
        }
        ("POST", ["orders", reference, "pay"]) => {
            let paid = shared.ledger().pay_order(reference);
            match paid {
                Ok((id, webhooks)) => {
                    deliver(shared, webhooks);
                    json_response(200, &json!({"transactionId": id}))
                }
                Err(refused) => refusal(&refused),
            }
        }
        ("POST", ["settle"]) => {
            let to = match request.get("to").and_then(Value::as_str) {
                None | Some("success") => SettleTo::Success,
                Some("failed") => SettleTo::Failed,
                Some("refund") => SettleTo::Refund,
                Some(other) => {
                    return refusal(&Refusal::unprocessable(format!(
                        "unknown settlement `{other}`: success, failed or refund"
                    )));
                }
            };
            let (settled, webhooks) = shared.ledger().settle_pending(to);
            deliver(shared, webhooks);
            json_response(200, &json!({"settled": settled, "to": to.name()}))
        }
        ("POST", ["reverse", id]) => match shared.ledger().reverse(id) {
            Ok(webhooks) => {
                deliver(shared, webhooks);
                json_response(200, &json!({"reversed": id}))
            }
            Err(refused) => refusal(&refused),
        },
        ("PUT", ["webhook"]) => {
            let url = request.get("url").and_then(Value::as_str);
            let key = request.get("signing_key").and_then(Value::as_str);
            match (url, key) {
                (Some(url), Some(key)) => {
                    shared.ledger().config.webhook = Some((url.to_owned(), key.to_owned()));
                    json_response(200, &json!({"url": url}))
                }
                _ => bad("give `url` and `signing_key`".to_owned()),
            }
        }
        _ => refusal(&Refusal::not_found(format!(
            "no control call {method} /__sandbox/{rest}: GET state, GET faults, POST faults, DELETE faults, POST reset, POST orders/<reference>/pay, POST settle, POST reverse/<id>, PUT webhook"
        ))),
    }
}
