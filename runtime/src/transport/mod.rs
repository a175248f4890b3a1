//! What carries a request to the service and its answer back: the [`Transport`] trait,
//! and the three that the client builds or takes. Every one of them sits behind the trait,
//! so an attempt reads every answer, and every failure, the same way.
//!
//! - `own_sender`: the client's own sender (the default), hyper-util's HTTP/1 client with
//!   the TLS of the build's feature, set up as reqwest sets up its own: by concern,
//!   `connect` (the connect timeout over TCP, a proxy's tunnel and TLS), `proxy` (the
//!   environment's proxies, by `CONNECT` tunnels), `pool` (idle connections, `Keep-Alive`);
//!   a call runs about two thirds of the instructions it runs through reqwest. It gives a
//!   write the service would apply twice a connection of its own
//!   ([`Outgoing::fresh_connection`]);
//! - `reqwest`: a `reqwest::Client`, one the client builds from HTTP client settings
//!   ([`ClientBuilder::http_client_builder`]) or one the application shares
//!   ([`ClientBuilder::reqwest_client`]);
//! - any [`Transport`] of the caller's own ([`ClientBuilder::transport`]), such as
#![cfg_attr(feature = "tower", doc = "  [`TowerTransport`]")]
#![cfg_attr(not(feature = "tower"), doc = "  `TowerTransport`")]
//!   over a `tower::Service` of `http` types (the `tower` feature), or the scripted one of
//!   the `testing` module (the `testing` feature).
//!
//! `tls` holds the TLS set-up of both the own sender and reqwest's client built here, and
//! what the client says when a handshake fails.
//!
//! Each says, by what it knows, whether a request left: a failure to connect (the TCP
//! connection, a proxy's tunnel, the TLS handshake, a connect timeout) is
//! [`TransportError::not_sent`] on every one of them, so a payment whose handshake timed
//! out is never reported as one that may have moved money.
//!
//! Whatever carries the request, the client keeps its guarantees around it: the attempt's
//! and the call's deadlines bound the whole exchange (the answer's body included), the
//! answer is read up to its size limit and no further, a `3xx` answer ends the call with
//! [`ErrorDetail::Redirect`](crate::ErrorDetail::Redirect), every error's text has the
//! client's secrets removed, and a request is sent again only when it is safe to (a read,
//! a keyed write, or one the transport says never left: [`TransportError::not_sent`]).
//!
//! A redirect that a transport follows by itself is out of the client's sight, and the
//! request it resent went where the redirect pointed. The client's own sender follows
//! none, nor does the reqwest client it builds; a shared `reqwest::Client` says where its
//! answer came from, so a redirect it followed is refused once seen
//! ([`Incoming::redirected`]); build it with `redirect(reqwest::redirect::Policy::none())`
//! so that none is followed. A `tower` stack follows none unless a layer of it does
//! (tower-http's `FollowRedirect`): leave such layers out.
//!
//! [`ClientBuilder::http_client_builder`]: crate::ClientBuilder::http_client_builder
//! [`ClientBuilder::reqwest_client`]: crate::ClientBuilder::reqwest_client
//! [`ClientBuilder::transport`]: crate::ClientBuilder::transport

pub(crate) mod connect;
mod contract;
pub(crate) mod own_sender;
pub(crate) mod reqwest;
pub(crate) mod tls;
#[cfg(feature = "tower")]
mod tower;
#[cfg(feature = "tower")]
#[cfg_attr(docsrs, doc(cfg(feature = "tower")))]
pub use self::tower::TowerTransport;
pub use connect::{ConnectTimeout, ConnectTimeoutLayer};
pub use contract::{BoxError, Incoming, Outgoing, SendFuture, Transport, TransportError};
pub(crate) use contract::{Reach, is_loopback};
