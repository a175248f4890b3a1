//! What a session holds, shared by its clones, and reading an answer it received.

use std::borrow::Cow;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use reqwest::header::{HeaderName, HeaderValue};
use tokio::time::Instant;

use super::envelope::{self, DataAt, Outcome, RawAnswer, State, Unread, settled_state};
use super::retry::RetryPolicy;
use super::token::TokenCell;
use super::urls::UrlCache;
use crate::error::Error;
use crate::json::{DecodeError, FromJson, Path, Reader};
use crate::redact::{self, Secrets};
use crate::service::AuthRoutes;
use crate::transport::Transport;
use crate::values::secret::Credentials;

/// What carries a client's requests.
pub(crate) enum Sender {
    /// A reqwest client: one built here from HTTP client settings (following no
    /// redirect), or one the application shares (`shared`: a
    /// redirect it followed is refused once seen).
    Reqwest { client: reqwest::Client, shared: bool },
    /// The client's own sender (`transport::direct`), or a transport of the caller's own.
    Transport(Arc<dyn Transport>),
}

pub(crate) struct ClientInner {
    pub(super) sender: Sender,
    /// The `User-Agent` each request carries, unless the sender is a reqwest client built
    /// here (which sets it once).
    pub(super) user_agent: Option<HeaderValue>,
    /// The client-wide pacer, when the caller asked for one.
    pub(super) pacer: Option<Arc<dyn super::pace::PaceStore>>,
    pub(crate) base_url: String,
    /// The base URL's scheme, host and port, which connection errors name.
    pub(super) origin: String,
    /// The base URL's host and port, which traces name (`server.address`, `server.port`).
    pub(super) host: String,
    pub(super) port: u16,
    pub(crate) credentials: Option<Credentials>,
    /// The account header and its value, for operations that send it.
    pub(super) account: Option<(HeaderName, HeaderValue)>,
    pub(crate) auth_routes: Option<AuthRoutes>,
    /// The headers the service announces its rate limit in, if it does.
    pub(super) rate_limit: Option<super::attempt::RateLimitNames>,
    /// The header each call sends its request id in, and reads the service's from.
    pub(super) request_id: Option<HeaderName>,
    /// The caller's code around each attempt.
    pub(super) hooks: Vec<std::sync::Arc<dyn super::hooks::Hook>>,
    pub(crate) timeout: Duration,
    pub(super) call_timeout: Duration,
    pub(super) retry: RetryPolicy,
    pub(crate) refresh_margin: Duration,
    pub(super) max_answer_bytes: usize,
    /// The longest an answer's body may go without a byte.
    pub(super) stall_timeout: Duration,
    /// A request the service would apply twice asks its sender for a new connection
    /// (`Outgoing::fresh_connection`); off with `ClientBuilder::pool_every_request`.
    pub(super) fresh_connections: bool,
    pub(crate) tokens: TokenCell,
    /// The parsed URLs of routes without variables.
    pub(super) urls: Mutex<UrlCache>,
    /// Until when the service's rate limit is spent, as its last answer that said so
    /// announced (`X-Rate-Limit-Remaining: 0`, or a 429). Settling waits it out; a call
    /// the caller makes is not held back by it.
    pub(super) rate_spent_until: Mutex<Option<Instant>>,
}

impl ClientInner {
    /// The secrets to remove from an error: the client secret, the tokens held, and the
    /// secret parameters of `request`.
    pub(crate) fn secrets<'a>(&'a self, request_secrets: &'a [String]) -> Secrets<'a> {
        let client = self.credentials.as_ref().map(|c| c.client_secret.expose());
        Secrets::of(client, self.tokens.values(), request_secrets)
    }

    /// The outcome of a `2xx` answer: its data read as far as it can be (a success is
    /// never turned into an error by its data's shape; only text that is not JSON is), and
    /// its state read as the route's [`Answers`](crate::Answers) say.
    pub(crate) fn decode_outcome<T: FromJson>(
        &self,
        mut answer: Box<RawAnswer>,
    ) -> Result<Outcome<T>, Error> {
        let Some(data) = answer.data.clone() else {
            if answer.pending {
                // Checked whole: nothing else reads a pending answer's body.
                crate::json::span(&answer.body)
                    .map_err(|fault| self.unreadable(&answer, None, fault.to_string()))?;
            }
            let state = settled_state(&answer, None, answer.flag);
            return Ok(state.outcome(Box::new(answer.into_envelope(None, Unread::default(), None, None))));
        };
        let mut reader = answer.data_reader(&data);
        reader.watch_status(answer.status_field);
        let read = reader.read_or_note::<T>(&Path::root("data"));
        // Read whole, the data ends where the reader is: its text need not be found again.
        let data_end = read.is_ok().then(|| reader.position());
        let end = read.is_ok().then_some(data.end);
        if let Some(fault) = reader.fault(end) {
            return Err(self.unreadable(&answer, None, fault.to_string()));
        }
        let read = match read {
            Ok(read) => read.ok(),
            // A read stopped by text that is not JSON; a full check places the fault.
            Err(e) => {
                let reason = crate::json::span(&answer.body).err().map_or(e.problem, |f| f.to_string());
                return Err(self.unreadable(&answer, None, reason));
            }
        };
        // Noted in the same pass; or, when the data was not of its type, read on its own.
        let status = match (&read, reader.noted_status()) {
            (Some(_), status) => status,
            (None, _) => answer.status_text().map(Cow::Owned),
        };
        let (notes, total) = reader.take_unread();
        if total > 0 {
            tracing::warn!(
                operation = answer.operation,
                unread = total,
                first = %notes.first().map(ToString::to_string).unwrap_or_default(),
                "the answer has values that do not fit the spec; they are kept as sent"
            );
        }
        let tail_flag = reader.tail_flag;
        let mut state = settled_state(&answer, status.as_deref(), answer.flag.or(tail_flag));
        if let (Some(at), Some(end)) = (answer.data.as_mut(), data_end) {
            at.end.get_or_insert(end);
        }
        // A finished answer may still wait on someone (the customer's OTP): pending.
        let awaits = if state == State::Done && !answer.answers.awaiting.is_empty() {
            envelope::awaited(&answer)
        } else {
            None
        };
        if awaits.is_some() {
            state = State::Pending;
        }
        // Made in its box: the typed data is not moved once more on the way.
        let envelope = Box::new(answer.into_envelope(read, Unread::new(notes, total), tail_flag, awaits));
        Ok(state.outcome(envelope))
    }

    /// Reads an answer's data (at `data` in its body) as `T` straight from the text,
    /// checking that text as JSON as it goes: text that is not JSON is reported as the
    /// whole answer's fault, with its place in the body, as data of the wrong kind is with
    /// its path. Values inside it that do not fit are left out ([`Reader::read_or_note`]).
    pub(crate) fn decode_data<T: FromJson>(&self, answer: &RawAnswer, data: &DataAt) -> Result<T, Error> {
        self.decode_data_with(answer, data, T::read)
    }

    /// [`decode_data`](Self::decode_data) with a reader of its own.
    pub(crate) fn decode_data_with<T>(
        &self,
        answer: &RawAnswer,
        data: &DataAt,
        read: impl FnOnce(&mut Reader<'_>, &Path<'_>) -> Result<T, DecodeError>,
    ) -> Result<T, Error> {
        let mut reader = answer.data_reader(data);
        let read = read(&mut reader, &Path::root("data"));
        let end = read.is_ok().then_some(data.end);
        let (path, reason) = match (reader.fault(end), read) {
            (None, Ok(value)) => return Ok(value),
            (Some(fault), _) => (None, fault.to_string()),
            // A value of the wrong kind stops the read: text past it that is not JSON is
            // the first fault to report, as it would be had the whole body been read.
            (None, Err(e)) => match crate::json::span(&answer.body) {
                Err(fault) => (None, fault.to_string()),
                Ok(_) => (Some(e.path), e.problem),
            },
        };
        Err(self.unreadable(answer, path, reason))
    }

    /// A decode error for `answer`, its excerpt with every secret removed.
    fn unreadable(&self, answer: &RawAnswer, path: Option<String>, reason: String) -> Error {
        Error::Decode {
            meta: answer.meta.clone().map(Box::new),
            status: answer.status,
            operation: answer.operation,
            path,
            reason,
            excerpt: redact::answer_excerpt(
                &answer.body,
                &self.secrets(&answer.request_secrets),
                answer.answers.secret_values,
            ),
            effect: answer.effect,
        }
    }
}
