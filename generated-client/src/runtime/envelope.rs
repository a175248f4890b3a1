//! The answer envelope (`{code, description, data}` or `{responseCode, responseMessage,
//! data}`) and what a successful call returns.

use serde::Deserialize;
use serde_json::value::RawValue;

use super::error::Error;
use super::json::{Json, Key};
use super::json_parse;
use super::redact::{self, Secrets};
use super::route::{Answers, Effect, EnvelopeKind, Route};

/// The code of a successful answer.
pub const SUCCESS_CODE: &str = "00";

/// An answer: the service's code and description, and its `data`.
#[derive(Clone, Debug, PartialEq)]
pub struct Envelope<T> {
    /// `"00"` on success.
    pub code: String,
    /// The service's description of the outcome.
    pub description: String,
    /// The answer's payload, absent when the service sent `null` or nothing.
    pub data: Option<T>,
}

impl<T> Envelope<T> {
    /// Whether the code is `"00"`.
    pub fn is_success(&self) -> bool {
        self.code == SUCCESS_CODE
    }
}

/// Both envelope spellings, as they appear on the wire.
#[derive(Deserialize)]
#[serde(bound = "T: Deserialize<'de>")]
struct EnvelopeWire<T> {
    #[serde(default)]
    code: Option<CodeText>,
    #[serde(default, rename = "responseCode")]
    response_code: Option<CodeText>,
    #[serde(default)]
    description: Option<String>,
    #[serde(default, rename = "responseMessage")]
    response_message: Option<String>,
    #[serde(default)]
    message: Option<String>,
    #[serde(default)]
    data: Option<T>,
}

impl<T> EnvelopeWire<T> {
    fn into_parts(self) -> (Option<String>, Option<String>, Option<T>) {
        let code = self.code.or(self.response_code).map(|c| c.0);
        let description = self.description.or(self.response_message).or(self.message);
        (code, description, self.data)
    }
}

/// A code that may arrive as a string (`"00"`) or a number (`0`, kept as its text).
struct CodeText(String);

impl<'de> Deserialize<'de> for CodeText {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let raw = Box::<RawValue>::deserialize(deserializer)?;
        let text = raw.get();
        if text.starts_with('"') {
            serde_json::from_str::<String>(text).map(CodeText).map_err(serde::de::Error::custom)
        } else {
            Ok(CodeText(text.to_owned()))
        }
    }
}

impl<'de, T: Deserialize<'de>> Deserialize<'de> for Envelope<T> {
    /// Accepts `{code, description, data}` and `{responseCode, responseMessage, data}`.
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let wire = EnvelopeWire::<T>::deserialize(deserializer)?;
        let (code, description, data) = wire.into_parts();
        Ok(Envelope {
            code: code.ok_or_else(|| serde::de::Error::missing_field("code"))?,
            description: description.unwrap_or_default(),
            data,
        })
    }
}

/// What a successful call returns.
#[derive(Clone, Debug, PartialEq)]
pub enum Outcome<T> {
    /// The service finished the operation.
    Done(Envelope<T>),
    /// The service accepted the operation and is still processing it (HTTP 201/202
    /// "PROCESSING", e.g. a transfer in `PENDING_BILLING`). It must not be sent again
    /// under a new reference; look its status up instead.
    Pending(Envelope<Json>),
}

impl<T> Outcome<T> {
    /// Whether the operation is still being processed.
    pub fn is_pending(&self) -> bool {
        matches!(self, Outcome::Pending(_))
    }

    /// The finished answer's data, if the operation is done and the answer had data.
    pub fn data(&self) -> Option<&T> {
        match self {
            Outcome::Done(e) => e.data.as_ref(),
            Outcome::Pending(_) => None,
        }
    }

    /// The finished answer's data, if the operation is done and the answer had data.
    pub fn into_data(self) -> Option<T> {
        match self {
            Outcome::Done(e) => e.data,
            Outcome::Pending(_) => None,
        }
    }

    /// The finished answer, or the pending one as the error side.
    pub fn into_result(self) -> Result<Envelope<T>, Envelope<Json>> {
        match self {
            Outcome::Done(e) => Ok(e),
            Outcome::Pending(p) => Err(p),
        }
    }

    /// The service's code.
    pub fn code(&self) -> &str {
        match self {
            Outcome::Done(e) => &e.code,
            Outcome::Pending(p) => &p.code,
        }
    }

    /// The service's description.
    pub fn description(&self) -> &str {
        match self {
            Outcome::Done(e) => &e.description,
            Outcome::Pending(p) => &p.description,
        }
    }
}

/// A successful answer, read once into a tree: its data is decoded into the operation's
/// type after the envelope and the in-flight check read what they need from it.
#[derive(Debug)]
pub(crate) struct RawAnswer {
    pub(crate) status: u16,
    /// The operation answered, for decode errors.
    pub(crate) operation: &'static str,
    pub(crate) code: String,
    pub(crate) description: String,
    pub(crate) data: Option<Json>,
    pub(crate) pending: bool,
    /// The secret parameters of the request answered, removed from any decode error.
    pub(crate) request_secrets: Vec<String>,
    /// The body as it came, for the excerpt of a decode error.
    pub(crate) body: bytes::Bytes,
}

/// The code and description of any answer body, if it has them (for error statuses).
pub(crate) fn peek_code(body: &[u8]) -> (Option<String>, Option<String>) {
    match serde_json::from_slice::<EnvelopeWire<serde::de::IgnoredAny>>(body) {
        Ok(wire) => {
            let (code, description, _) = wire.into_parts();
            (code, description)
        }
        Err(_) => (None, None),
    }
}

/// Reads a 2xx answer as the route's [`Answers`] say: success, pending, a refusal, or
/// (for money) an outcome the answer does not settle. The body is parsed once.
pub(crate) fn read_success(
    status: u16,
    body: &bytes::Bytes,
    route: &Route,
    secrets: &dyn Fn() -> Secrets,
) -> Result<RawAnswer, Error> {
    let unreadable = |reason: String| Error::Decode {
        status,
        operation: route.operation,
        path: None,
        reason,
        excerpt: redact::excerpt(body, &secrets()),
    };
    let answer = |code: String, description: String, data: Option<Json>, pending: bool| RawAnswer {
        status,
        operation: route.operation,
        code,
        description,
        data: data.filter(|d| !d.is_null()),
        pending,
        request_secrets: Vec::new(),
        body: body.clone(),
    };
    if route.answers.envelope == EnvelopeKind::Unwrapped {
        let tree = Json::parse_bytes(body).map_err(|e| unreadable(e.to_string()))?;
        let code = route.answers.success_codes.first().copied().unwrap_or(SUCCESS_CODE).to_owned();
        return Ok(answer(code, String::new(), Some(tree), status == 202));
    }
    // The envelope's own keys are kept as they pass (the first of each, in order of
    // preference); the object around them is never built.
    let (mut code, mut description, mut data) = ([None, None], [None, None, None], None);
    let mut keep = |key: Key, value: Json| {
        let text = |value: Json| match value {
            Json::String(text) => Some(text),
            Json::Number(number) => Some(number.as_str().to_owned()),
            Json::Bool(flag) => Some(flag.to_string()),
            _ => None,
        };
        let slot = match key.as_str() {
            "code" => &mut code[0],
            "responseCode" => &mut code[1],
            "description" => &mut description[0],
            "responseMessage" => &mut description[1],
            "message" => &mut description[2],
            "data" => {
                if data.is_none() {
                    data = Some(value);
                }
                return;
            }
            _ => return,
        };
        if slot.is_none() {
            // A description is text; a code may also be a number.
            *slot = if matches!(key.as_str(), "code" | "responseCode") {
                text(value)
            } else if let Json::String(t) = value {
                Some(t)
            } else {
                None
            };
        }
    };
    json_parse::parse_entries(body, &mut keep).map_err(|e| unreadable(e.to_string()))?;
    let Some(code) = code.into_iter().flatten().next() else {
        return Err(unreadable("the answer has no code".to_owned()));
    };
    let description = description.into_iter().flatten().next().unwrap_or_default();
    let answers = route.answers;
    let success = answers.success_codes.contains(&code.as_str());
    let pending = (status == 202 && success) || is_pending(answers, &description, data.as_ref());
    if pending || success {
        return Ok(answer(code, description, data, pending));
    }
    let description = redact::redact_text(&description, &secrets());
    if route.effect == Effect::Money && !answers.refusal_codes.contains(&code.as_str()) {
        return Err(Error::OutcomeUnknown { status, code, description });
    }
    Err(Error::Service { code, description })
}

fn one_of(list: &[&str], value: &str) -> bool {
    list.iter().any(|item| item.eq_ignore_ascii_case(value.trim()))
}

/// Whether the description or `data.status` is one the spec lists as still in flight.
fn is_pending(answers: &Answers, description: &str, data: Option<&Json>) -> bool {
    if one_of(answers.pending_descriptions, description) {
        return true;
    }
    // `status` may be any JSON type; only text can name a pending state.
    data.and_then(|d| d.get("status"))
        .and_then(Json::as_str)
        .is_some_and(|s| one_of(answers.pending_statuses, s))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_both_envelope_spellings() {
        let a: Result<Envelope<serde_json::Value>, _> =
            serde_json::from_str(r#"{"code":"00","description":"ok","data":{"x":1}}"#);
        let b: Result<Envelope<serde_json::Value>, _> =
            serde_json::from_str(r#"{"responseCode":"00","responseMessage":"ok","data":{"x":1}}"#);
        assert_eq!(a.ok(), b.ok());
        let none: Result<Envelope<serde_json::Value>, _> = serde_json::from_str(r#"{"data":1}"#);
        assert!(none.is_err());
    }

    static TRANSFER_ANSWERS: Answers = Answers {
        success_codes: &["00", "200"],
        pending_statuses: &["PENDING_BILLING", "NEW"],
        pending_descriptions: &["PROCESSING"],
        ..Answers::STANDARD
    };

    fn route(effect: Effect, answers: &'static Answers) -> Route {
        Route {
            operation: "op",
            group: "g",
            method: crate::runtime::Method::Post,
            path: "/x",
            aliases: &[],
            auth: crate::runtime::Auth::BearerAndAccount,
            effect,
            reserved: &[],
            idempotency_header: None,
            answers,
        }
    }

    fn read(status: u16, body: &str, route: &Route) -> Result<RawAnswer, Error> {
        read_success(status, &bytes::Bytes::copy_from_slice(body.as_bytes()), route, &Secrets::none)
    }

    #[test]
    fn classifies_success_pending_and_failure() {
        let plain = route(Effect::Write, &Answers::STANDARD);
        let transfer = route(Effect::Money, &TRANSFER_ANSWERS);
        let ok = read(200, r#"{"code":"00","description":"ok","data":{"a":1}}"#, &plain);
        assert!(ok.is_ok_and(|a| !a.pending && a.data.is_some()));
        let processing = read(
            201,
            r#"{"code":"201","description":"PROCESSING","data":{"status":"PENDING_BILLING"}}"#,
            &transfer,
        );
        assert!(processing.is_ok_and(|a| a.pending));
        let pending_200 =
            read(200, r#"{"code":"00","description":"x","data":{"status":"pending_billing"}}"#, &transfer);
        assert!(pending_200.is_ok_and(|a| a.pending));
        let created = read(201, r#"{"code":"00","description":"created","data":{"id":"1"}}"#, &plain);
        assert!(created.is_ok_and(|a| !a.pending));
        let accepted = read(202, r#"{"code":"00","description":"accepted"}"#, &plain);
        assert!(accepted.is_ok_and(|a| a.pending));
        let code_200 =
            read(200, r#"{"code":"200","description":"SUCCESS","data":{"status":"SUCCESS"}}"#, &transfer);
        assert!(code_200.is_ok_and(|a| !a.pending));
        let failed = read(200, r#"{"code":"02","description":"bad amount","data":null}"#, &plain);
        assert!(matches!(failed, Err(Error::Service { ref code, .. }) if code == "02"));
        let refused = read(200, r#"{"code":"06","description":"do not retry"}"#, &transfer);
        assert!(matches!(refused, Err(Error::Service { ref code, .. }) if code == "06"));
        let unknown = read(200, r#"{"code":"99","description":"try later"}"#, &transfer);
        assert!(matches!(unknown, Err(Error::OutcomeUnknown { ref code, .. }) if code == "99"));
        let numeric = read(200, r#"{"code":0,"description":"x"}"#, &plain);
        assert!(matches!(numeric, Err(Error::Service { ref code, .. }) if code == "0"));
        let bad = read(200, r#"{"code":"00","data":{"access_token":"abcdefgh""#, &plain);
        match bad {
            Err(Error::Decode { excerpt, .. }) => assert!(!excerpt.contains("abcdefgh")),
            other => panic!("expected a decode error, got {other:?}"),
        }
    }
}
