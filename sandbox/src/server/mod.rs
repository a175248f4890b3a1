//! The HTTP/1 server: routes a request, counts it, applies the rate limit and plays a
//! queued fault (all before any handler), checks authentication and the request, and
//! hands it to its handler. Webhooks are delivered after the answer, each on its own task
//! (`deliver`). The control API lives under `/__sandbox/` (`control`).

mod control;
mod shared;

use shared::{Answer, Dropped, json_response, refusal};
pub(crate) use shared::{READ_TIMEOUT, Shared};

use crate::check::{MAX_BODY_BYTES, Reading, Refusal, check_request};
use crate::state::{Fault, Play, RateCount, State};
use http_body_util::{BodyExt, Limited};
use hyper::Request;
use hyper::body::Incoming;
use hyper::header::{HeaderName, HeaderValue, RETRY_AFTER};
use payspec_codegen::model::Auth;
use std::sync::Arc;

pub(crate) async fn serve(shared: Arc<Shared>, request: Request<Incoming>) -> Result<Answer, Dropped> {
    let method = request.method().as_str().to_owned();
    let path = request.uri().path().to_owned();
    let query = request.uri().query().map(str::to_owned);
    if path == "/__sandbox" {
        return Ok(control::control(&shared, &method, "", &[]));
    }
    if let Some(rest) = path.strip_prefix("/__sandbox/") {
        let body = match read_body(request).await {
            Ok(body) => body,
            Err(refused) => return Ok(refusal(&shared.spec, &refused)),
        };
        return Ok(control::control(&shared, &method, rest, &body));
    }
    let strictness = || shared.state().config.strictness;
    let (index, vars) = match shared.routes.find(&method, &path, strictness) {
        Ok(found) => found,
        Err(refused) => return Ok(refusal(&shared.spec, &refused)),
    };
    let op = &shared.spec.operations[index];
    let (fault, rate) = {
        let traffic = &mut shared.state().traffic;
        let rate = traffic.arrive(&op.name, std::time::Instant::now());
        let fault =
            if rate.is_some_and(|r| r.refused_for.is_some()) { None } else { traffic.next_fault(&op.name) };
        (fault, rate)
    };
    let mut answer = match rate {
        Some(RateCount { refused_for: Some(wait), .. }) => {
            let mut answer = refusal(
                &shared.spec,
                &Refusal {
                    status: 429,
                    code: "01",
                    description: "too many requests: the rate limit's window is spent".to_owned(),
                    data: None,
                },
            );
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
            let mut answer = refusal(
                &shared.spec,
                &Refusal {
                    status: 429,
                    code: "01",
                    description: "too many requests (a fault the sandbox was asked to play)".to_owned(),
                    data: None,
                },
            );
            answer.headers_mut().insert(RETRY_AFTER, HeaderValue::from(retry_after.as_secs()));
            return Ok(answer);
        }
        Some(Fault::ServerError) => {
            return Ok(refusal(
                &shared.spec,
                &Refusal {
                    status: 500,
                    code: "01",
                    description: "downstream system error (a fault the sandbox was asked to play)".to_owned(),
                    data: None,
                },
            ));
        }
        Some(Fault::Pending) => play = Play::Pending,
        Some(Fault::Declined) => play = Play::Declined,
    }
    let headers = request.headers().clone();
    let body = match read_body(request).await {
        Ok(body) => body,
        Err(refused) => return Ok(refusal(&shared.spec, &refused)),
    };
    let header = |name: &str| headers.get(name).and_then(|v| v.to_str().ok()).map(str::to_owned);

    let outcome = {
        let mut state = shared.state();
        let state = &mut *state;
        // The operation's own authentication, else (as the service) any other it takes.
        let refresh =
            crate::handlers::token_step(&shared.spec, &op.name) == Some(crate::handlers::TokenStep::Refresh);
        let mut authorized = authorize(state, op.auth, &shared.spec, refresh, &header);
        if authorized.is_err() && state.config.strictness == crate::check::Strictness::Service {
            for also in &op.also_auth {
                if authorize(state, also.auth, &shared.spec, refresh, &header).is_ok() {
                    authorized = Ok(());
                    break;
                }
            }
        }
        let result = authorized
            .and_then(|()| {
                let reading = Reading { strictness: state.config.strictness, rules: &shared.spec.also_takes };
                check_request(op, vars, query.as_deref(), &body, reading)
            })
            .and_then(|checked| {
                state.traffic.note_ignored(&op.name, &checked.unknown);
                let key = op.idempotency_header.as_ref().and_then(|h| header(&h.wire));
                shared.handlers.answer(&shared.spec, op, &checked, key.as_deref(), play, state)
            });
        match result {
            Ok(outcome) => outcome,
            Err(refused) => return Ok(refusal(&shared.spec, &refused)),
        }
    };
    crate::webhooks::deliver(shared, outcome.webhooks);
    Ok(json_response(outcome.status, &outcome.body))
}

/// The token and the account header the operation's authentication asks for, or the
/// credential of the spec's own it names (any value, after its prefix: the sandbox keeps no
/// merchant's keys).
fn authorize(
    state: &State,
    auth: Auth,
    spec: &payspec_codegen::model::Spec,
    refresh: bool,
    header: &dyn Fn(&str) -> Option<String>,
) -> Result<(), Refusal> {
    let account_header = spec.account_header.as_str();
    let (bearer, account) = match auth {
        Auth::BearerAndAccount => (true, true),
        Auth::Bearer => (true, false),
        Auth::Account => (false, true),
        Auth::Basic => {
            let given = header("authorization").unwrap_or_default();
            if !crate::handlers::basic_matches(&given, &state.config.client_id, &state.config.client_secret) {
                return Err(Refusal::unauthorized(
                    "the Authorization header is not `Basic <client id:client secret in base64>` of this sandbox's client",
                ));
            }
            (false, false)
        }
        Auth::None => (false, false),
        Auth::Key(place) => {
            let Some(credential) = spec.credentials.get(usize::from(place)) else {
                return Err(Refusal::unauthorized(
                    "the operation names a credential the spec does not declare",
                ));
            };
            let given = header(&credential.header)
                .ok_or_else(|| Refusal::unauthorized(format!("no {} header", credential.header)))?;
            let value = given.strip_prefix(credential.prefix.as_str()).map(str::trim).unwrap_or_default();
            if value.is_empty() {
                return Err(Refusal::unauthorized(format!(
                    "the {} header is not `{}<{}>`",
                    credential.header, credential.prefix, credential.name
                )));
            }
            (false, false)
        }
    };
    if bearer {
        let given =
            header("authorization").ok_or_else(|| Refusal::unauthorized("no Authorization header"))?;
        let token = given
            .strip_prefix("Bearer ")
            .ok_or_else(|| Refusal::unauthorized("the Authorization header is not `Bearer <token>`"))?;
        state.tokens.valid(token.trim(), refresh)?;
    }
    if account {
        match header(account_header) {
            None => return Err(Refusal::forbidden(format!("no {account_header} header"))),
            Some(id) if id != state.config.account_id => {
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
