//! What carries the runtime's fault, trust and limit cases. The `runtime_faults`,
//! `runtime_limits` and `runtime_trust` binaries send with the client's own sender
//! (hyper-util's client); `runtime_tower` runs the same cases through a transport of the
//! caller's own (hyper-util's client under tower layers, through `TowerTransport`), and
//! `runtime_reqwest` through reqwest's client, as a client with HTTP client settings of its
//! caller's sends.

use std::sync::atomic::{AtomicUsize, Ordering};

use bytes::Bytes;
use http_body_util::Full;
use payspec_client::runtime::transport::TowerTransport;
use payspec_client::runtime::{ClientBuilder, Session};

/// Requests that went through the tower stack, counted by a layer of it.
pub static SENT_THROUGH_TOWER: AtomicUsize = AtomicUsize::new(0);

/// What a test binary's client sends through.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Carrier {
    /// The client's own sender.
    Own,
    /// The tower stack, through `TowerTransport`.
    Tower,
    /// reqwest's client, built from HTTP client settings given to the builder.
    Reqwest,
}

/// What a test binary of this name sends through.
pub const fn carrier(crate_name: &str) -> Carrier {
    match crate_name.as_bytes() {
        b"runtime_tower" => Carrier::Tower,
        b"runtime_reqwest" => Carrier::Reqwest,
        _ => Carrier::Own,
    }
}

/// hyper-util's HTTP/1 client, as the stack's innermost service.
type Http =
    hyper_util::client::legacy::Client<hyper_util::client::legacy::connect::HttpConnector, Full<Bytes>>;

/// The stack: a concurrency limit over a counting layer over hyper-util's client.
type Stack = tower::limit::ConcurrencyLimit<
    tower::util::MapRequest<Http, fn(http::Request<Full<Bytes>>) -> http::Request<Full<Bytes>>>,
>;

/// hyper-util's client under a concurrency limit and a counting layer.
pub fn tower_stack() -> TowerTransport<Stack> {
    fn counted(request: http::Request<Full<Bytes>>) -> http::Request<Full<Bytes>> {
        SENT_THROUGH_TOWER.fetch_add(1, Ordering::Relaxed);
        request
    }
    let http = hyper_util::client::legacy::Client::builder(hyper_util::rt::TokioExecutor::new())
        .build_http::<Full<Bytes>>();
    let counted: fn(_) -> _ = counted;
    let stack = tower::ServiceBuilder::new().concurrency_limit(16).map_request(counted).service(http);
    TowerTransport::new(stack)
}

/// `builder` sending through `carrier`.
pub fn choose<C: From<Session>>(builder: ClientBuilder<C>, carrier: Carrier) -> ClientBuilder<C> {
    match carrier {
        Carrier::Own => builder,
        Carrier::Tower => builder.transport(tower_stack()),
        Carrier::Reqwest => builder.http_client_builder(reqwest::Client::builder()),
    }
}
