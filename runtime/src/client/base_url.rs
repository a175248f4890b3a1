//! Where a client sends: [`BaseUrl`], checked when the client is built (a scheme, no
//! query, not ending in the routes' version segment), and shown in an error without its
//! user name or password.

use crate::error::Error;
use crate::service::Service;

/// Where a client sends its requests: what a generated `Environment` (one per environment
/// the spec names, and `Custom` for any other) converts into, or any URL text.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct BaseUrl(pub(super) String);

impl BaseUrl {
    /// The URL, without a trailing slash.
    pub fn as_str(&self) -> &str {
        &self.0
    }
}

impl From<String> for BaseUrl {
    fn from(url: String) -> Self {
        match url.strip_suffix('/') {
            Some(_) => BaseUrl(url.trim_end_matches('/').to_owned()),
            None => BaseUrl(url),
        }
    }
}

impl From<&str> for BaseUrl {
    fn from(url: &str) -> Self {
        BaseUrl(url.trim_end_matches('/').to_owned())
    }
}

/// The base URL as it may be shown in an error: without a user name or password.
pub(super) fn shown_url(value: &str) -> String {
    match value.split_once("://") {
        Some((scheme, rest)) => match rest.split_once('@').filter(|(who, _)| !who.contains('/')) {
            Some((_, after)) => format!("{scheme}://***@{after}"),
            None => value.to_owned(),
        },
        None => value.rsplit_once('@').map_or_else(|| value.to_owned(), |(_, after)| format!("***@{after}")),
    }
}

/// The base URL as every request's URL begins: as it reads as a URL (its host written in
/// ASCII and lowercased, a default port dropped), without the slash a URL with no path is
/// written with. A request's URL is then this and the writer's encoded path and query,
/// which is a URI as it stands: no request reads it as a URL again.
pub(super) fn request_base(parsed: &reqwest::Url) -> String {
    let text = parsed.as_str();
    text.strip_suffix('/').unwrap_or(text).to_owned()
}

/// The base URL parsed, or an error that shows it (credentials removed) and says what to
/// write instead.
pub(super) fn check_base_url(value: &str) -> Result<reqwest::Url, Error> {
    let shown = shown_url(value);
    let config = Error::config;
    if !value.contains("://") {
        return Err(config(format!(
            "the base URL `{shown}` has no scheme: write `http://{shown}` for a plain HTTP server (the \
             sandbox, a local test server) or `https://{shown}`"
        )));
    }
    let parsed = reqwest::Url::parse(value)
        .map_err(|e| config(format!("the base URL `{shown}` is not a valid URL: {e}")))?;
    if !matches!(parsed.scheme(), "http" | "https") {
        return Err(config(format!("the base URL `{shown}` must start with `http://` or `https://`")));
    }
    if parsed.query().is_some() || parsed.fragment().is_some() {
        return Err(config(format!(
            "the base URL `{shown}` has a query or fragment: give the scheme, host, port and path prefix only"
        )));
    }
    Ok(parsed)
}

/// Refuses a base URL that ends in the version segment the operations' own paths begin
/// with (`https://api.example.com/v1` when the token path is `/v1/auth/token/issue`):
/// every call would go to `/v1/v1/...` and be answered `404`.
pub(super) fn check_version_prefix(parsed: &reqwest::Url, service: &Service) -> Result<(), Error> {
    let Some(last) = parsed.path().trim_end_matches('/').rsplit('/').next() else { return Ok(()) };
    let versioned = last.len() > 1 && last.starts_with('v') && last[1..].bytes().all(|b| b.is_ascii_digit());
    let Some(tokens) = service.tokens.filter(|_| versioned) else { return Ok(()) };
    let path = tokens.issue.path;
    if !path.starts_with(&format!("/{last}/")) {
        return Ok(());
    }
    let shown = shown_url(parsed.as_str());
    let without = shown.trim_end_matches('/').trim_end_matches(last).trim_end_matches('/');
    Err(Error::config(format!(
        "the base URL `{shown}` ends in `/{last}`, and the operations' paths begin with their version \
         (`{path}`): calls would go to `/{last}/{last}/...` and find nothing. Give the base URL without \
         it: `{without}`"
    )))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_request_url_begins_with_the_base_as_it_reads_as_a_url() {
        let base = |text: &str| {
            let BaseUrl(text) = BaseUrl::from(text);
            request_base(&check_base_url(&text).unwrap_or_else(|e| panic!("{e}")))
        };
        assert_eq!(base("http://127.0.0.1:8080"), "http://127.0.0.1:8080");
        assert_eq!(base("HTTPS://Api.Example.COM:443/"), "https://api.example.com");
        assert_eq!(base("https://api.example.com/prefix/"), "https://api.example.com/prefix");
        assert_eq!(base("https://bücher.example/p ath"), "https://xn--bcher-kva.example/p%20ath");
        // What follows it, the writer's encoded path and query, makes a URI as it stands.
        let uri = format!("{}/v1/transfers/a%2Fb?limit=5", base("https://bücher.example/p ath"));
        assert!(http::Uri::try_from(uri.as_str()).is_ok(), "{uri}");
    }
}
