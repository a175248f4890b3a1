//! Turns an operation's fields into a request: path values (encoded and checked), query
//! pairs, a JSON body with dotted keys nested, and headers.

use std::fmt;

use percent_encoding::{AsciiSet, NON_ALPHANUMERIC, utf8_percent_encode};
use reqwest::header::{HeaderName, HeaderValue};
use serde_json::value::RawValue;

use super::error::Error;
use super::route::{Method, Route};

/// Every byte outside RFC 3986's unreserved characters (`A-Z a-z 0-9 - . _ ~`) is encoded,
/// so a value can never add a `/`, `?`, `#` or `%` of its own to the URL.
const COMPONENT: &AsciiSet = &NON_ALPHANUMERIC.remove(b'-').remove(b'.').remove(b'_').remove(b'~');

/// Fields the spec does not know, by dotted wire key (`order.metadata.channel`), sent in
/// the body beside the known ones (in the query string of a GET, which has no body). Keeps
/// insertion order; `Debug` shows keys only, since values may be personal data.
#[derive(Clone, Default)]
pub struct ExtraFields {
    entries: Vec<(String, serde_json::Value)>,
}

impl ExtraFields {
    /// No extra fields.
    pub fn new() -> Self {
        Self::default()
    }

    /// Sets a field by dotted wire key, replacing an earlier value for the same key.
    pub fn insert(&mut self, key: impl Into<String>, value: serde_json::Value) -> &mut Self {
        let key = key.into();
        match self.entries.iter_mut().find(|(k, _)| *k == key) {
            Some(entry) => entry.1 = value,
            None => self.entries.push((key, value)),
        }
        self
    }

    /// Whether no field is set.
    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }

    /// The number of fields.
    pub fn len(&self) -> usize {
        self.entries.len()
    }

    /// The fields, in insertion order.
    pub fn iter(&self) -> impl Iterator<Item = (&str, &serde_json::Value)> {
        self.entries.iter().map(|(k, v)| (k.as_str(), v))
    }
}

impl fmt::Debug for ExtraFields {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_set().entries(self.entries.iter().map(|(k, _)| k)).finish()
    }
}

/// A JSON object whose leaves keep their exact serialized text (amounts stay exact).
#[derive(Default)]
struct BodyObject {
    entries: Vec<(String, BodyNode)>,
}

enum BodyNode {
    Leaf(Box<RawValue>),
    Object(BodyObject),
}

impl BodyObject {
    fn insert(&mut self, dotted: &str, value: Box<RawValue>) -> Result<(), Error> {
        let mut parts = dotted.split('.').peekable();
        let mut object = self;
        while let Some(part) = parts.next() {
            if part.is_empty() {
                return Err(Error::invalid(format!("the body key `{dotted}` has an empty segment")));
            }
            let position = object.entries.iter().position(|(k, _)| k == part);
            if parts.peek().is_none() {
                if position.is_some() {
                    return Err(Error::invalid(format!("the body field `{dotted}` is set twice")));
                }
                object.entries.push((part.to_owned(), BodyNode::Leaf(value)));
                return Ok(());
            }
            let index = match position {
                Some(i) => i,
                None => {
                    object.entries.push((part.to_owned(), BodyNode::Object(BodyObject::default())));
                    object.entries.len() - 1
                }
            };
            object = match &mut object.entries[index].1 {
                BodyNode::Object(inner) => inner,
                BodyNode::Leaf(_) => {
                    return Err(Error::invalid(format!(
                        "the body field `{dotted}` is nested under a field that already has a value"
                    )));
                }
            };
        }
        Ok(())
    }
}

impl serde::Serialize for BodyObject {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        use serde::ser::SerializeMap;
        let mut map = serializer.serialize_map(Some(self.entries.len()))?;
        for (k, v) in &self.entries {
            map.serialize_entry(k, v)?;
        }
        map.end()
    }
}

impl serde::Serialize for BodyNode {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        match self {
            BodyNode::Leaf(raw) => raw.serialize(serializer),
            BodyNode::Object(o) => o.serialize(serializer),
        }
    }
}

/// Collects what an operation's generated `write` says about its request. Every value is
/// checked here, before anything is sent.
pub struct RequestWriter {
    route: &'static Route,
    path_values: Vec<(&'static str, String)>,
    query: Vec<(String, String)>,
    body: BodyObject,
    has_body: bool,
    headers: Vec<(HeaderName, HeaderValue)>,
    secrets: Vec<String>,
}

impl fmt::Debug for RequestWriter {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("RequestWriter").field("operation", &self.route.operation).finish_non_exhaustive()
    }
}

/// A fully written request, ready to be sent (possibly several times, identically).
#[derive(Clone, Debug)]
pub(crate) struct PreparedRequest {
    pub(crate) route: &'static Route,
    /// Encoded path and query, e.g. `/v1/accounts/a%2Fb?limit=10`.
    pub(crate) path_and_query: String,
    pub(crate) headers: Vec<(HeaderName, HeaderValue)>,
    pub(crate) body: Option<String>,
    /// The values of the request's secret parameters, removed from any error.
    pub(crate) secrets: Vec<String>,
}

impl RequestWriter {
    /// A writer for one request of `route`.
    pub fn new(route: &'static Route) -> Self {
        RequestWriter {
            route,
            path_values: Vec::new(),
            query: Vec::new(),
            body: BodyObject::default(),
            has_body: false,
            headers: Vec::new(),
            secrets: Vec::new(),
        }
    }

    /// Refuses a value above the largest the service accepts (`limit` at most 50).
    pub fn at_most(&mut self, key: &str, value: Option<&i64>, max: i64) -> Result<(), Error> {
        match value {
            Some(v) if *v > max => {
                Err(Error::invalid(format!("`{key}` is {v}, more than the {max} the service accepts")))
            }
            _ => Ok(()),
        }
    }

    /// Notes the value of a secret parameter (PIN, OTP, card details, BVN), so that the
    /// client removes it from any error or excerpt, in any spelling.
    pub fn secret<T: serde::Serialize + ?Sized>(&mut self, value: &T) {
        match serde_json::to_value(value) {
            Ok(serde_json::Value::String(text)) => self.secrets.push(text),
            Ok(serde_json::Value::Null) | Err(_) => {}
            Ok(other) => self.secrets.push(other.to_string()),
        }
    }

    /// Notes the value of a secret parameter when it is set.
    pub fn secret_opt<T: serde::Serialize>(&mut self, value: Option<&T>) {
        if let Some(v) = value {
            self.secret(v);
        }
    }

    /// Sets a path variable. The value is percent-encoded so it cannot change the route;
    /// empty values, `.` and `..`, and the route's reserved literals are refused.
    pub fn path(&mut self, variable: &'static str, value: &str) -> Result<(), Error> {
        if value.is_empty() {
            return Err(Error::invalid(format!("the path value `{variable}` is empty")));
        }
        if value == "." || value == ".." {
            return Err(Error::invalid(format!(
                "the path value `{variable}` is a dot segment, which would change the route"
            )));
        }
        if let Some(reserved) = self
            .route
            .reserved
            .iter()
            .find(|r| r.variable == variable && r.literal.eq_ignore_ascii_case(value))
        {
            return Err(Error::invalid(format!(
                "the path value `{variable}` is the reserved word `{}`, which {} would receive instead of {}",
                reserved.literal, reserved.shadowed_by, self.route.operation
            )));
        }
        if self.path_values.iter().any(|(v, _)| *v == variable) {
            return Err(Error::invalid(format!("the path value `{variable}` is set twice")));
        }
        self.path_values.push((variable, utf8_percent_encode(value, COMPONENT).to_string()));
        Ok(())
    }

    /// Adds a query pair.
    pub fn query<T: fmt::Display + ?Sized>(&mut self, key: &'static str, value: &T) {
        self.query.push((key.to_owned(), value.to_string()));
    }

    /// Adds a query pair when the value is set.
    pub fn query_opt<T: fmt::Display + ?Sized>(&mut self, key: &'static str, value: Option<&T>) {
        if let Some(v) = value {
            self.query(key, v);
        }
    }

    /// Sets a body field by dotted wire key (`order.amount` nests under `order`).
    pub fn body<T: serde::Serialize + ?Sized>(&mut self, key: &'static str, value: &T) -> Result<(), Error> {
        self.body_dynamic(key, value)
    }

    /// Sets a body field when the value is set.
    pub fn body_opt<T: serde::Serialize>(
        &mut self,
        key: &'static str,
        value: Option<&T>,
    ) -> Result<(), Error> {
        match value {
            Some(v) => self.body(key, v),
            None => Ok(()),
        }
    }

    fn body_dynamic<T: serde::Serialize + ?Sized>(&mut self, key: &str, value: &T) -> Result<(), Error> {
        let text = serde_json::to_string(value).map_err(|e| {
            // The message is the value's own refusal (an amount's), never the value.
            Error::invalid(format!("the body field `{key}` cannot be sent: {e}"))
        })?;
        let raw = RawValue::from_string(text)
            .map_err(|_| Error::invalid(format!("the body field `{key}` is not valid JSON")))?;
        self.body.insert(key, raw)?;
        self.has_body = true;
        Ok(())
    }

    /// Sets a header. Values that cannot travel in a header are refused.
    pub fn header(&mut self, name: &'static str, value: &str) -> Result<(), Error> {
        let header_name = HeaderName::from_bytes(name.as_bytes())
            .map_err(|_| Error::invalid(format!("`{name}` is not a valid header name")))?;
        if header_name == reqwest::header::AUTHORIZATION {
            return Err(Error::invalid("the Authorization header is set by the client, not by an operation"));
        }
        let header_value = HeaderValue::from_str(value).map_err(|_| {
            Error::invalid(format!("the header `{name}` has a value with characters a header cannot carry"))
        })?;
        self.headers.push((header_name, header_value));
        Ok(())
    }

    /// Adds the fields the spec does not know, by dotted wire key, into the body; a GET has
    /// no body, so there they go to the query string (text as is, other values as JSON). A
    /// key that is already set in the body is refused rather than silently replaced.
    pub fn extra(&mut self, extra: &ExtraFields) -> Result<(), Error> {
        if self.route.method == Method::Get {
            for (key, value) in &extra.entries {
                let text = match value {
                    serde_json::Value::String(text) => text.clone(),
                    other => other.to_string(),
                };
                self.query.push((key.clone(), text));
            }
            return Ok(());
        }
        for (key, value) in &extra.entries {
            self.body_dynamic(key, value)?;
        }
        Ok(())
    }

    /// The value of a query key written so far (the last one, if written twice).
    pub(crate) fn query_value(&self, key: &str) -> Option<&str> {
        self.query.iter().rev().find(|(k, _)| k == key).map(|(_, v)| v.as_str())
    }

    /// Fills the path template and finishes the request.
    pub(crate) fn finish(self) -> Result<PreparedRequest, Error> {
        let template = self.route.path;
        let mut path = String::with_capacity(template.len() + 16);
        let mut used = 0;
        let mut rest = template;
        while let Some(open) = rest.find('{') {
            let Some(close) = rest[open..].find('}').map(|c| open + c) else {
                return Err(Error::invalid(format!(
                    "the path template of {} has an unclosed variable",
                    self.route.operation
                )));
            };
            path.push_str(&rest[..open]);
            let variable = &rest[open + 1..close];
            match self.path_values.iter().find(|(v, _)| *v == variable) {
                Some((_, encoded)) => {
                    path.push_str(encoded);
                    used += 1;
                }
                None => {
                    return Err(Error::invalid(format!(
                        "the path value `{variable}` of {} is not set",
                        self.route.operation
                    )));
                }
            }
            rest = &rest[close + 1..];
        }
        path.push_str(rest);
        if used != self.path_values.len() {
            return Err(Error::invalid(format!(
                "a path value was set that the route of {} does not have",
                self.route.operation
            )));
        }
        if !self.query.is_empty() {
            for (i, (k, v)) in self.query.iter().enumerate() {
                path.push(if i == 0 { '?' } else { '&' });
                path.extend(utf8_percent_encode(k, COMPONENT));
                path.push('=');
                path.extend(utf8_percent_encode(v, COMPONENT));
            }
        }
        let body = if self.has_body {
            let text = serde_json::to_string(&self.body).map_err(|e| {
                Error::invalid(format!("the body cannot be written as JSON ({:?})", e.classify()))
            })?;
            Some(text)
        } else if self.route.method.sends_empty_body() {
            Some("{}".to_owned())
        } else {
            None
        };
        Ok(PreparedRequest {
            route: self.route,
            path_and_query: path,
            headers: self.headers,
            body,
            secrets: self.secrets,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::runtime::amount::Amount;
    use crate::runtime::route::{Answers, Auth, Effect, Method, ReservedSegment};

    static ROUTE: Route = Route {
        operation: "fetch_mandate",
        group: "direct_debits",
        method: Method::Post,
        path: "/v1/direct-debits/{mandateId}/x/{other}",
        aliases: &[],
        auth: Auth::BearerAndAccount,
        effect: Effect::Write,
        reserved: &[ReservedSegment {
            variable: "mandateId",
            literal: "status",
            shadowed_by: "GET /v1/direct-debits/status",
        }],
        idempotency_header: None,
        answers: &Answers::STANDARD,
    };

    fn prepared(w: RequestWriter) -> PreparedRequest {
        match w.finish() {
            Ok(p) => p,
            Err(e) => panic!("finish failed: {e}"),
        }
    }

    #[test]
    fn nests_dotted_keys_and_keeps_amount_text() -> Result<(), Error> {
        let mut w = RequestWriter::new(&ROUTE);
        w.path("mandateId", "m 1/2")?;
        w.path("other", "ü")?;
        let amount: Amount = "10000.00".parse()?;
        w.body("order.amount", &amount)?;
        w.body("order.orderReference", "ref-1")?;
        w.body("tokenizeCard", &true)?;
        w.query("limit", &10);
        w.query("q", "a&b=c");
        let mut extra = ExtraFields::new();
        extra.insert("order.metadata.channel", serde_json::json!("web"));
        w.extra(&extra)?;
        let p = prepared(w);
        assert_eq!(p.path_and_query, "/v1/direct-debits/m%201%2F2/x/%C3%BC?limit=10&q=a%26b%3Dc");
        assert_eq!(
            p.body.as_deref(),
            Some(
                r#"{"order":{"amount":10000.00,"orderReference":"ref-1","metadata":{"channel":"web"}},"tokenizeCard":true}"#
            )
        );
        Ok(())
    }

    #[test]
    fn refuses_conflicting_keys() -> Result<(), Error> {
        let mut w = RequestWriter::new(&ROUTE);
        w.body("order", "x")?;
        assert!(matches!(w.body("order.amount", &1), Err(Error::InvalidRequest { .. })));
        let mut extra = ExtraFields::new();
        extra.insert("order", serde_json::json!(1));
        assert!(matches!(w.extra(&extra), Err(Error::InvalidRequest { .. })));
        Ok(())
    }

    #[test]
    fn refuses_reserved_dot_and_missing_path_values() {
        let mut w = RequestWriter::new(&ROUTE);
        assert!(matches!(w.path("mandateId", "status"), Err(Error::InvalidRequest { .. })));
        assert!(matches!(w.path("mandateId", "STATUS"), Err(Error::InvalidRequest { .. })));
        assert!(matches!(w.path("mandateId", ".."), Err(Error::InvalidRequest { .. })));
        assert!(matches!(w.path("mandateId", "."), Err(Error::InvalidRequest { .. })));
        assert!(matches!(w.path("mandateId", ""), Err(Error::InvalidRequest { .. })));
        assert!(w.path("mandateId", "status2").is_ok());
        assert!(matches!(w.finish(), Err(Error::InvalidRequest { .. })));
    }

    #[test]
    fn refuses_bad_headers_without_echoing_values() {
        let mut w = RequestWriter::new(&ROUTE);
        match w.header("X-Thing", "secret\r\nInjected: 1") {
            Err(e) => assert!(!e.to_string().contains("secret"), "{e}"),
            Ok(()) => panic!("header with CRLF accepted"),
        }
        assert!(w.header("Authorization", "Bearer x").is_err());
        assert!(w.header("X-Thing", "fine").is_ok());
    }

    #[test]
    fn empty_post_sends_empty_object() {
        let mut w = RequestWriter::new(&ROUTE);
        assert!(w.path("mandateId", "m").is_ok());
        assert!(w.path("other", "o").is_ok());
        assert_eq!(prepared(w).body.as_deref(), Some("{}"));
    }

    #[test]
    fn extra_fields_debug_shows_keys_only() {
        let mut extra = ExtraFields::new();
        extra.insert("customer.bvn", serde_json::json!("22233344455"));
        let text = format!("{extra:?}");
        assert!(text.contains("customer.bvn"));
        assert!(!text.contains("22233344455"));
    }

    #[test]
    fn extra_fields_of_a_get_go_to_the_query() -> Result<(), Error> {
        static GET: Route = Route {
            operation: "list_banks",
            group: "transfers",
            method: Method::Get,
            path: "/v1/transfers/banks",
            aliases: &[],
            auth: Auth::BearerAndAccount,
            effect: Effect::Read,
            reserved: &[],
            idempotency_header: None,
            answers: &Answers::STANDARD,
        };
        let mut w = RequestWriter::new(&GET);
        let mut extra = ExtraFields::new();
        extra.insert("country", serde_json::json!("NG"));
        extra.insert("limit", serde_json::json!(5));
        w.extra(&extra)?;
        let p = prepared(w);
        assert_eq!(p.path_and_query, "/v1/transfers/banks?country=NG&limit=5");
        assert!(p.body.is_none());
        Ok(())
    }
}
