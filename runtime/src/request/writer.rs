//! Turns an operation's fields into a request: path values (encoded and checked), query
//! pairs, a JSON body with dotted keys nested, and headers.

use std::fmt;

use percent_encoding::{AsciiSet, NON_ALPHANUMERIC, utf8_percent_encode};
use reqwest::header::{HeaderName, HeaderValue};

use super::body::Body;
use super::rules::{TextRule, at_most};
use crate::error::Error;
use crate::service::{BodyEncoding, Method, Route};

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

/// Collects what an operation's generated `write` says about its request. Every value is
/// checked here, before anything is sent.
pub struct RequestWriter {
    route: &'static Route,
    path_values: Vec<(&'static str, String)>,
    query: Vec<(String, String)>,
    body: Body,
    headers: Vec<(HeaderName, HeaderValue)>,
    idempotency: Option<(HeaderName, HeaderValue)>,
    secrets: Vec<String>,
}

/// A header name: a lowercase one is used as the static text it is; any other is checked
/// and lowercased (header names are case-insensitive).
fn header_name(name: &'static str) -> Result<HeaderName, Error> {
    if !name.is_empty()
        && name.len() < 1 << 12
        && name.bytes().all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'-')
    {
        Ok(HeaderName::from_static(name))
    } else {
        HeaderName::from_bytes(name.as_bytes())
            .map_err(|_| Error::invalid(format!("`{name}` is not a valid header name")))
    }
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
    /// The base URL, then the encoded path and query (`/v1/accounts/a%2Fb?limit=10`),
    /// written once for every attempt; `None` when that is the base URL and the route's
    /// path as it is (no variables, no query), which the client keeps parsed.
    pub(crate) url: Option<String>,
    pub(crate) headers: Vec<(HeaderName, HeaderValue)>,
    /// The value of the route's idempotency header, when the request has a key.
    pub(crate) idempotency: Option<(HeaderName, HeaderValue)>,
    /// Written once; each attempt sends the same bytes (a clone is a reference count).
    pub(crate) body: Option<bytes::Bytes>,
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
            body: Body::Empty,
            headers: Vec::new(),
            idempotency: None,
            secrets: Vec::new(),
        }
    }

    /// Refuses a value above the largest the service accepts (`limit` at most 50).
    pub fn at_most(&mut self, key: &str, value: Option<&i64>, max: i64) -> Result<(), Error> {
        match value {
            Some(value) => at_most(*value, max).map_err(|broken| broken.refusal(key)),
            None => Ok(()),
        }
    }

    /// Refuses a text value the service would refuse, before anything is sent: blank where
    /// the value is required (or is the request's idempotency reference), or not of the
    /// format the vendor states. The message names the key and the rule, never the value.
    pub fn text(&mut self, key: &str, value: Option<&str>, rule: TextRule) -> Result<(), Error> {
        match value {
            Some(value) => rule.check(value).map_err(|broken| broken.refusal(key)),
            None => Ok(()),
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
            return Err(Error::invalid_field(variable, format!("the path value `{variable}` is empty")));
        }
        if value == "." || value == ".." {
            return Err(Error::invalid_field(
                variable,
                format!("the path value `{variable}` is a dot segment, which would change the route"),
            ));
        }
        if let Some(reserved) = self
            .route
            .reserved
            .iter()
            .find(|r| r.variable == variable && r.literal.eq_ignore_ascii_case(value))
        {
            return Err(Error::invalid_field(
                variable,
                format!(
                    "the path value `{variable}` is the reserved word `{}`, which {} would receive instead of {}",
                    reserved.literal, reserved.shadowed_by, self.route.operation
                ),
            ));
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

    /// Sets a body field by dotted wire key (`order.amount` nests under `order`). Keys may
    /// come in any order; those that keep each object's keys together (as the generated
    /// code does) are written straight into the body's text.
    pub fn body<T: serde::Serialize + ?Sized>(&mut self, key: &'static str, value: &T) -> Result<(), Error> {
        self.body.field(key, &mut |out| serde_json::to_writer(out, value))
    }

    /// [`body`](Self::body) for an amount: the same JSON number, written from its digits
    /// straight into the body (not read back through serde's raw-value check, as its
    /// serialization must), refused as [`body`](Self::body) refuses it. A money operation's
    /// amount of zero is refused before sending: it would move nothing, and is never what a
    /// caller meant (an amount not yet filled in, a sum of nothing).
    pub fn amount(&mut self, key: &'static str, value: &crate::values::Amount) -> Result<(), Error> {
        self.refuse_zero(key, value)?;
        self.body.field(key, &mut |out| value.write_request_json(out))
    }

    /// [`amount`](Self::amount) for an amount the service reads as a JSON string
    /// (`"1500.00"`), refused alike.
    pub fn amount_text(&mut self, key: &'static str, value: &crate::values::Amount) -> Result<(), Error> {
        self.refuse_zero(key, value)?;
        self.body(key, &value.as_wire_string())
    }

    /// Sets an amount written as a JSON string when it is set.
    pub fn amount_text_opt(
        &mut self,
        key: &'static str,
        value: Option<&crate::values::Amount>,
    ) -> Result<(), Error> {
        match value {
            Some(v) => self.amount_text(key, v),
            None => Ok(()),
        }
    }

    /// A money operation's amount of zero, refused.
    fn refuse_zero(&self, key: &'static str, value: &crate::values::Amount) -> Result<(), Error> {
        if self.route.effect == crate::service::Effect::Money && value.as_decimal().is_zero() {
            return Err(Error::invalid_field(
                key,
                format!(
                    "`{}` moves money and its amount is 0: give the amount to move (greater than 0)",
                    self.route.operation
                ),
            ));
        }
        Ok(())
    }

    /// Sets an amount when it is set.
    pub fn amount_opt(
        &mut self,
        key: &'static str,
        value: Option<&crate::values::Amount>,
    ) -> Result<(), Error> {
        match value {
            Some(v) => self.amount(key, v),
            None => Ok(()),
        }
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

    /// Sets the route's idempotency header to the request's key.
    pub(crate) fn idempotency(&mut self, key: &str) -> Result<(), Error> {
        if let Some(name) = self.route.idempotency_header {
            let name = header_name(name)?;
            let value = HeaderValue::from_str(key)
                .map_err(|_| Error::invalid("the idempotency key has characters a header cannot carry"))?;
            self.idempotency = Some((name, value));
        }
        Ok(())
    }

    /// Sets a header. Values that cannot travel in a header are refused.
    pub fn header(&mut self, name: &'static str, value: &str) -> Result<(), Error> {
        let header_name = header_name(name)?;
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
            self.body.field_dynamic(key, value)?;
        }
        Ok(())
    }

    /// Fills the path template and finishes the request, its URL only the path and query.
    #[cfg(test)]
    pub(crate) fn finish(self) -> Result<PreparedRequest, Error> {
        self.finish_at("")
    }

    /// Fills the path template and finishes the request, its URL under `base_url`.
    pub(crate) fn finish_at(mut self, base_url: &str) -> Result<PreparedRequest, Error> {
        let template = self.route.path;
        let url = if self.path_values.is_empty() && self.query.is_empty() && !template.contains('{') {
            None
        } else {
            Some(self.url(base_url)?)
        };
        let body = match self.body.finish()? {
            Some(json) => Some(bytes::Bytes::from(json)),
            _ if self.route.method.sends_empty_body() => Some(bytes::Bytes::from_static(b"{}")),
            _ => None,
        };
        // A form is made from the JSON written: one writer, one check of every value.
        let body = match (body, self.route.body) {
            (Some(json), BodyEncoding::Form) => Some(bytes::Bytes::from(super::form::form_from_json(&json)?)),
            (body, _) => body,
        };
        Ok(PreparedRequest {
            route: self.route,
            url,
            headers: self.headers,
            idempotency: self.idempotency,
            body,
            secrets: self.secrets,
        })
    }

    /// The URL: `base_url`, the path template filled, the query.
    fn url(&self, base_url: &str) -> Result<String, Error> {
        let template = self.route.path;
        let mut path = String::with_capacity(base_url.len() + template.len() + 48);
        path.push_str(base_url);
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
        Ok(path)
    }
}

#[cfg(test)]
mod tests {
    use super::super::body::STREAM_KEYS;
    use super::*;
    use crate::error::ErrorDetail;
    use crate::values::amount::Amount;

    use crate::json::{FromJson, Json, JsonNumber, Path};
    use crate::service::{Auth, Effect, Method, ReservedSegment};

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
        answers: &crate::service::fixture::ANSWERS,
        settle_by_reference: None,
        body: BodyEncoding::Json,
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
        assert_eq!(p.url.as_deref(), Some("/v1/direct-debits/m%201%2F2/x/%C3%BC?limit=10&q=a%26b%3Dc"));
        assert_eq!(
            p.body.as_deref(),
            Some(
                &br#"{"order":{"amount":10000.00,"orderReference":"ref-1","metadata":{"channel":"web"}},"tokenizeCard":true}"#[..]
            )
        );
        Ok(())
    }

    #[test]
    fn an_amount_is_written_as_its_serialization_writes_it() -> Result<(), Error> {
        use crate::json::{FromJson, Json, Path};
        // As a request would give them, and as an answer may (negative, three decimals).
        let mut amounts: Vec<Amount> = ["10000.00", "0", "0.5", "7", "79228162514264337593543950335"]
            .iter()
            .map(|t| t.parse())
            .collect::<Result<_, _>>()?;
        for text in ["-0.00", "-5", "1.005", "12.50", "\"3.1\"", "1e3"] {
            let value = Json::parse(text).map_err(|e| Error::invalid(e.to_string()))?;
            amounts.push(
                Amount::from_json(value, &Path::root("data")).map_err(|e| Error::invalid(e.to_string()))?,
            );
        }
        let body = |amount: Option<&Amount>, direct: bool, tree: bool| -> Result<String, String> {
            let mut w = RequestWriter::new(&ROUTE);
            let shown = |e: Error| e.to_string();
            w.path("mandateId", "m").map_err(shown)?;
            w.path("other", "o").map_err(shown)?;
            if tree {
                w.body.make_tree().map_err(shown)?;
            }
            w.body("order.reference", "r").map_err(shown)?;
            if direct {
                w.amount_opt("order.amount", amount).map_err(shown)?;
            } else {
                w.body_opt("order.amount", amount).map_err(shown)?;
            }
            w.body("after", &1).map_err(shown)?;
            let body = w.finish().map_err(shown)?.body.unwrap_or_default();
            Ok(String::from_utf8_lossy(&body).into_owned())
        };
        let mut refused = 0;
        for amount in amounts.iter().map(Some).chain([None]) {
            for tree in [false, true] {
                let (direct, serialized) = (body(amount, true, tree), body(amount, false, tree));
                assert_eq!(direct, serialized, "{:?} (tree: {tree})", amount.map(ToString::to_string));
                refused += usize::from(direct.is_err());
            }
        }
        // Both ways of writing the body refuse the negative and the three decimals.
        assert_eq!(refused, 4);
        assert!(body(Some(&amounts[0]), true, false).is_ok_and(|b| b.contains(r#""amount":10000.00"#)));
        Ok(())
    }

    /// The body `keys` give, each set to its position, streamed or (`tree`) placed.
    fn body_of(keys: &[&'static str], tree: bool) -> Result<String, Error> {
        let mut w = RequestWriter::new(&ROUTE);
        w.path("mandateId", "m")?;
        w.path("other", "o")?;
        if tree {
            w.body.make_tree()?;
        }
        for (i, key) in keys.iter().enumerate() {
            w.body(key, &i)?;
        }
        let body = prepared(w).body.unwrap_or_default();
        Ok(String::from_utf8_lossy(&body).into_owned())
    }

    #[test]
    fn a_streamed_body_is_the_text_a_tree_writes_in_any_key_order() -> Result<(), Error> {
        let keys =
            ["order.amount", "tokenizeCard", "order.customer.email", "order.currency", "order.customer.name"];
        // Every order of the keys: grouped ones stream, the others reopen an object and
        // become a tree; both must write what a tree writes.
        let mut orders = vec![keys.to_vec()];
        for _ in 0..119 {
            let mut next = orders[orders.len() - 1].clone();
            // The next permutation in lexicographic order of positions.
            let positions: Vec<usize> =
                next.iter().map(|k| keys.iter().position(|x| x == k).unwrap_or(0)).collect();
            let mut p = positions.clone();
            let Some(i) = (0..p.len() - 1).rev().find(|&i| p[i] < p[i + 1]) else { break };
            let j = (i + 1..p.len()).rev().find(|&j| p[j] > p[i]).unwrap_or(i);
            p.swap(i, j);
            p[i + 1..].reverse();
            next = p.iter().map(|&k| keys[k]).collect();
            orders.push(next);
        }
        assert_eq!(orders.len(), 120);
        for order in &orders {
            assert_eq!(body_of(order, false)?, body_of(order, true)?, "{order:?}");
        }
        assert_eq!(
            body_of(&keys, false)?,
            r#"{"order":{"amount":0,"customer":{"email":2,"name":4},"currency":3},"tokenizeCard":1}"#
        );
        Ok(())
    }

    #[test]
    fn a_streamed_body_refuses_what_a_tree_refuses() -> Result<(), Error> {
        for keys in [
            &["amount", "amount"][..],
            &["order.amount", "order"],
            &["order", "order.amount"],
            &["order.customer.email", "order.customer"],
            &["a..b"],
            &[".a"],
            &["a."],
            &[""],
            &["amount", ""],
            &["amount", "fee", "amount"],
        ] {
            assert!(body_of(keys, false).is_err(), "{keys:?}");
            assert!(body_of(keys, true).is_err(), "{keys:?}");
        }
        // A value that cannot be sent leaves nothing behind.
        let mut w = RequestWriter::new(&ROUTE);
        w.path("mandateId", "m")?;
        w.path("other", "o")?;
        let one: Amount = "1.00".parse()?;
        w.body("order.amount", &one)?;
        // An answer's amount may have three places; a request's may not.
        let fine = Amount::from_json(Json::Number(JsonNumber::from_text("1.005")), &Path::root("fee"))
            .map_err(|e| Error::invalid(e.problem))?;
        assert!(w.body("order.customer.fee", &fine).is_err());
        w.body("order.currency", "NGN")?;
        assert_eq!(prepared(w).body.as_deref(), Some(&br#"{"order":{"amount":1.00,"currency":"NGN"}}"#[..]));
        Ok(())
    }

    #[test]
    fn a_body_past_the_stream_record_becomes_a_tree() -> Result<(), Error> {
        let keys: Vec<&'static str> =
            (0..STREAM_KEYS + 8).map(|i| &*Box::leak(format!("k{i}").into_boxed_str())).collect();
        let text = body_of(&keys, false)?;
        assert_eq!(text, body_of(&keys, true)?);
        assert!(text.ends_with(&format!(r#""k{}":{}}}"#, STREAM_KEYS + 7, STREAM_KEYS + 7)), "{text}");
        Ok(())
    }

    #[test]
    fn refuses_conflicting_keys() -> Result<(), Error> {
        let mut w = RequestWriter::new(&ROUTE);
        w.body("order", "x")?;
        assert!(
            matches!(w.body("order.amount", &1), Err(ref e) if matches!(e.detail(), ErrorDetail::InvalidRequest { .. }))
        );
        let mut extra = ExtraFields::new();
        extra.insert("order", serde_json::json!(1));
        assert!(
            matches!(w.extra(&extra), Err(ref e) if matches!(e.detail(), ErrorDetail::InvalidRequest { .. }))
        );
        Ok(())
    }

    #[test]
    fn refuses_reserved_dot_and_missing_path_values() {
        let mut w = RequestWriter::new(&ROUTE);
        assert!(
            matches!(w.path("mandateId", "status"), Err(ref e) if matches!(e.detail(), ErrorDetail::InvalidRequest { .. }))
        );
        assert!(
            matches!(w.path("mandateId", "STATUS"), Err(ref e) if matches!(e.detail(), ErrorDetail::InvalidRequest { .. }))
        );
        assert!(
            matches!(w.path("mandateId", ".."), Err(ref e) if matches!(e.detail(), ErrorDetail::InvalidRequest { .. }))
        );
        assert!(
            matches!(w.path("mandateId", "."), Err(ref e) if matches!(e.detail(), ErrorDetail::InvalidRequest { .. }))
        );
        assert!(
            matches!(w.path("mandateId", ""), Err(ref e) if matches!(e.detail(), ErrorDetail::InvalidRequest { .. }))
        );
        assert!(w.path("mandateId", "status2").is_ok());
        assert!(matches!(w.finish(), Err(ref e) if matches!(e.detail(), ErrorDetail::InvalidRequest { .. })));
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
        assert_eq!(prepared(w).body.as_deref(), Some(&b"{}"[..]));
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
            answers: &crate::service::fixture::ANSWERS,
            settle_by_reference: None,
            body: BodyEncoding::Json,
        };
        let mut w = RequestWriter::new(&GET);
        let mut extra = ExtraFields::new();
        extra.insert("country", serde_json::json!("NG"));
        extra.insert("limit", serde_json::json!(5));
        w.extra(&extra)?;
        let p = prepared(w);
        assert_eq!(p.url.as_deref(), Some("/v1/transfers/banks?country=NG&limit=5"));
        assert!(p.body.is_none());
        Ok(())
    }

    #[test]
    fn a_form_route_sends_the_same_fields_as_a_form() -> Result<(), Error> {
        static FORM: Route = Route { body: BodyEncoding::Form, ..ROUTE };
        let mut w = RequestWriter::new(&FORM);
        w.path("mandateId", "m1")?;
        w.path("other", "o")?;
        let amount: Amount = "2000".parse()?;
        w.body("amount", &amount)?;
        w.body("metadata.order_id", "6735")?;
        w.body("description", "Rent & bills")?;
        let p = prepared(w);
        assert_eq!(
            p.body.as_deref(),
            Some(&b"amount=2000&metadata%5Border_id%5D=6735&description=Rent+%26+bills"[..])
        );
        // A POST without fields sends an empty form, not `{}`.
        let mut empty = RequestWriter::new(&FORM);
        empty.path("mandateId", "m1")?;
        empty.path("other", "o")?;
        assert_eq!(prepared(empty).body.as_deref(), Some(&b""[..]));
        Ok(())
    }
}
