//! What a client takes from the environment
//! ([`ClientBuilder::from_env`](crate::ClientBuilder::from_env)): where it sends, its
//! credentials and its timeouts, every variable checked and every wrong one named (never a
//! secret's value).

use std::time::Duration;

use super::base_url::{check_base_url, shown_url};
use crate::error::{Error, ErrorDetail};
use crate::service::Service;
use crate::values::{Credentials, Secret};

/// The variable the base URL is read from.
pub(super) const BASE_URL_VAR: &str = "PAYSPEC_BASE_URL";
/// The variable an environment's name is read from.
pub(super) const ENVIRONMENT_VAR: &str = "PAYSPEC_ENVIRONMENT";
/// The variable each attempt's timeout is read from.
pub(super) const TIMEOUT_VAR: &str = "PAYSPEC_TIMEOUT";
/// The variable the whole call's deadline is read from.
pub(super) const CALL_TIMEOUT_VAR: &str = "PAYSPEC_CALL_TIMEOUT";

/// What the environment says, each part only when it says it.
#[derive(Default)]
pub(super) struct FromEnv {
    pub(super) environment: Option<String>,
    pub(super) credentials: Option<Credentials>,
    /// The service's key credentials set (`PAYSPEC_<NAME>`), by name.
    pub(super) keys: Vec<(&'static str, Secret)>,
    pub(super) timeout: Option<Duration>,
    pub(super) call_timeout: Option<Duration>,
}

/// What the variables `read` finds say for a client of `service` (the credentials are
/// required when the service uses tokens and the builder has none yet: `has_credentials`).
/// An empty variable counts as unset.
pub(super) fn read(
    service: &Service,
    has_credentials: bool,
    read: impl Fn(&str) -> Option<String>,
) -> Result<FromEnv, Error> {
    let var = |name: &str| read(name).map(|v| v.trim().to_owned()).filter(|v| !v.is_empty());
    let mut found = FromEnv::default();
    let mut problems = Vec::new();
    // An environment's name in any case, with or without `_` and `-` (`hosted_sandbox`,
    // `HostedSandbox`, the generated `Environment`'s variant).
    let plain =
        |name: &str| name.chars().filter(|c| !matches!(c, '_' | '-')).collect::<String>().to_lowercase();
    let named = |name: &str| service.environments.iter().find(|(known, _)| plain(known) == plain(name));
    match (var(BASE_URL_VAR), var(ENVIRONMENT_VAR)) {
        (Some(url), Some(name)) if named(&name).is_none_or(|(_, known)| *known != url) => {
            problems.push(format!(
                "both {BASE_URL_VAR} (`{}`) and {ENVIRONMENT_VAR} (`{name}`) are set, and say different things: unset one",
                shown_url(&url),
            ));
        }
        (Some(url), _) => match check_base_url(&url) {
            Ok(_) => found.environment = Some(url),
            Err(error) => problems.push(format!("{BASE_URL_VAR}: {}", reason(error))),
        },
        (None, Some(name)) => match named(&name) {
            Some((_, url)) => found.environment = Some((*url).to_owned()),
            None => {
                let known: Vec<&str> = service.environments.iter().map(|(n, _)| *n).collect();
                problems.push(format!(
                    "{ENVIRONMENT_VAR} is `{name}`, which names no environment of the spec ({}); or set {BASE_URL_VAR} to a URL",
                    known.join(", "),
                ));
            }
        },
        (None, None) => {}
    }
    let names = [Credentials::CLIENT_ID_VAR, Credentials::CLIENT_SECRET_VAR, Credentials::ACCOUNT_ID_VAR];
    let needed = service.tokens.is_some() && !has_credentials;
    if needed || names.iter().any(|name| var(name).is_some()) {
        match Credentials::from_vars(var, service.account_header.is_some()) {
            Ok(credentials) => found.credentials = Some(credentials),
            Err(error) => problems.push(reason(error)),
        }
    }
    for key in service.keys {
        if let Some(value) = var(&key.variable()) {
            found.keys.push((key.name, Secret::new(value)));
        }
    }
    for name in [TIMEOUT_VAR, CALL_TIMEOUT_VAR] {
        let Some(text) = var(name) else { continue };
        match parse_duration(&text) {
            Some(duration) if name == TIMEOUT_VAR => found.timeout = Some(duration),
            Some(duration) => found.call_timeout = Some(duration),
            None => problems.push(format!(
                "{name} is `{text}`, not a duration: write `30s`, `1500ms`, `2m` or whole seconds"
            )),
        }
    }
    if problems.is_empty() { Ok(found) } else { Err(Error::config(problems.join("; "))) }
}

/// A configuration error's reason; any other error's text.
fn reason(error: Error) -> String {
    match error.into_detail() {
        ErrorDetail::Config { reason } => reason,
        other => Error::from(other).to_string(),
    }
}

/// A duration as configuration writes one: `30s`, `1500ms`, `2m`, or whole seconds; never
/// zero.
fn parse_duration(text: &str) -> Option<Duration> {
    let (number, unit) = match text.find(|c: char| !c.is_ascii_digit()) {
        Some(at) => text.split_at(at),
        None => (text, "s"),
    };
    let n: u64 = number.parse().ok()?;
    let duration = match unit.trim() {
        "ms" => Duration::from_millis(n),
        "s" => Duration::from_secs(n),
        "m" => Duration::from_secs(n.checked_mul(60)?),
        _ => return None,
    };
    (!duration.is_zero()).then_some(duration)
}
