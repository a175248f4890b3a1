//! A second transport for the runtime's fault, trust and limit cases: hyper-util's HTTP/1
//! client under tower layers, through `TowerTransport`. The `runtime_tower` test binary
//! runs those cases again through it; the others send with the client's own reqwest client.

use std::sync::atomic::{AtomicUsize, Ordering};

use bytes::Bytes;
use http_body_util::Full;
use payspec_client::runtime::transport::TowerTransport;
use payspec_client::runtime::{ClientBuilder, Session};

/// Requests that went through the tower stack, counted by a layer of it.
pub static SENT_THROUGH_TOWER: AtomicUsize = AtomicUsize::new(0);

/// Whether a test binary of this name sends through the tower stack.
pub const fn through_tower(crate_name: &str) -> bool {
    matches!(crate_name.as_bytes(), b"runtime_tower")
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

/// `builder` sending through the tower stack when `through` says so.
pub fn choose<C: From<Session>>(builder: ClientBuilder<C>, through: bool) -> ClientBuilder<C> {
    if through { builder.transport(tower_stack()) } else { builder }
}
