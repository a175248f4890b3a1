//! The proxies the environment names (`HTTPS_PROXY`, `HTTP_PROXY`, `ALL_PROXY` and
//! `NO_PROXY`, upper or lower case, as curl reads them), read with hyper-util's matcher when
//! the client is built: a request to a proxied host goes through a `CONNECT` tunnel,
//! whatever its scheme, so the proxy never reads a request, its credentials or its body. A
//! loopback host is never proxied.

use std::sync::Arc;

use hyper_util::client::legacy::connect::HttpConnector;
use hyper_util::client::proxy::matcher::Matcher;

use super::super::contract::is_loopback;

type BoxError = Box<dyn std::error::Error + Send + Sync>;

/// The variables naming a proxy, as curl and hyper-util's matcher read them.
const PROXY_VARIABLES: [&str; 6] =
    ["HTTPS_PROXY", "https_proxy", "HTTP_PROXY", "http_proxy", "ALL_PROXY", "all_proxy"];

/// Whether a variable that `lookup` finds names a proxy (is set and not empty).
fn names_a_proxy(lookup: impl Fn(&str) -> Option<std::ffi::OsString>) -> bool {
    PROXY_VARIABLES.iter().any(|name| lookup(name).is_some_and(|value| !value.is_empty()))
}

/// A TCP connector that goes through the proxy the environment names for a host, by a
/// `CONNECT` tunnel, and straight to any other host (and always to a loopback one).
#[derive(Clone)]
pub(crate) struct ProxyConnector {
    http: HttpConnector,
    matcher: Option<Arc<Matcher>>,
}

type TcpStream = hyper_util::rt::TokioIo<tokio::net::TcpStream>;

impl ProxyConnector {
    /// A connector over `http` that honours the environment's proxies when `proxies` is
    /// set and a variable names one.
    pub(crate) fn new(http: HttpConnector, proxies: bool) -> Self {
        let matcher =
            (proxies && names_a_proxy(|name| std::env::var_os(name))).then(|| Arc::new(Matcher::from_env()));
        ProxyConnector { http, matcher }
    }
}

impl tower_service::Service<http::Uri> for ProxyConnector {
    type Response = TcpStream;
    type Error = BoxError;
    type Future = std::pin::Pin<Box<dyn std::future::Future<Output = Result<TcpStream, BoxError>> + Send>>;

    fn poll_ready(&mut self, cx: &mut std::task::Context<'_>) -> std::task::Poll<Result<(), BoxError>> {
        self.http.poll_ready(cx).map_err(Into::into)
    }

    fn call(&mut self, destination: http::Uri) -> Self::Future {
        let intercept = self
            .matcher
            .as_ref()
            .filter(|_| !destination.host().is_some_and(is_loopback))
            .and_then(|matcher| matcher.intercept(&destination));
        let Some(intercept) = intercept else {
            let connecting = self.http.call(destination);
            return Box::pin(async move { connecting.await.map_err(Into::into) });
        };
        let proxy = intercept.uri().clone();
        let named = format!("{}:{}", proxy.host().unwrap_or_default(), proxy.port_u16().unwrap_or(80));
        let mut tunnel =
            hyper_util::client::legacy::connect::proxy::Tunnel::new(proxy.clone(), self.http.clone());
        if let Some(auth) = intercept.basic_auth() {
            tunnel = tunnel.with_auth(auth.clone());
        }
        Box::pin(async move {
            if proxy.scheme_str() != Some("http") {
                return Err(format!(
                    "the proxy the environment names ({}://{named}) is not an `http://` proxy, the only kind \
                     the client's own sender tunnels through; name an `http://` proxy, or send through \
                     reqwest's client (`http_client_builder`) built with the proxy",
                    proxy.scheme_str().unwrap_or_default()
                )
                .into());
            }
            // A tunnel to the destination's port: the URL's, or its scheme's.
            let destination = with_port(destination)?;
            std::future::poll_fn(|cx| tower_service::Service::poll_ready(&mut tunnel, cx))
                .await
                .map_err(|e| format!("the proxy {named} could not be reached: {e}"))?;
            tower_service::Service::call(&mut tunnel, destination).await.map_err(|e| {
                let hint = if e.to_string().contains("authorization") {
                    " (the `user:password` of the variable that names the proxy is missing or refused)"
                } else {
                    ""
                };
                format!("the proxy {named} did not open a tunnel: {e}{hint}").into()
            })
        })
    }
}

/// `uri` with its port written out (80 for `http`, 443 for `https`).
fn with_port(uri: http::Uri) -> Result<http::Uri, BoxError> {
    if uri.port().is_some() {
        return Ok(uri);
    }
    let port = if uri.scheme_str() == Some("http") { 80 } else { 443 };
    let host = uri.host().unwrap_or_default();
    let mut parts = uri.clone().into_parts();
    parts.authority = Some(format!("{host}:{port}").parse()?);
    Ok(http::Uri::from_parts(parts)?)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn any_proxy_variable_set_and_not_empty_names_a_proxy() {
        assert!(!names_a_proxy(|_| None));
        assert!(!names_a_proxy(|_| Some("".into())));
        for variable in PROXY_VARIABLES {
            let only = |name: &str| (name == variable).then(|| "http://proxy.internal:3128".into());
            assert!(names_a_proxy(only), "{variable}");
        }
        assert!(!names_a_proxy(|name| (name == "NO_PROXY").then(|| "localhost".into())));
    }

    #[test]
    fn a_tunnel_names_the_port_of_the_scheme() {
        let port = |uri: &'static str| with_port(http::Uri::from_static(uri)).map(|u| u.port_u16());
        assert_eq!(port("http://payments.test").ok(), Some(Some(80)));
        assert_eq!(port("https://payments.test").ok(), Some(Some(443)));
        assert_eq!(port("https://payments.test:8443").ok(), Some(Some(8443)));
    }
}
