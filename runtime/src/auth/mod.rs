//! Who the client is to the service ([`Identity`]): its credentials, the account header
//! they give, and the access token they obtain, through the token operations the spec
//! names. This room says which token requests to send and reads their answers; the call
//! path sends them, as it sends every request, with a policy of their own.
//!
//! - `cell`: the token held and the state of its renewal;
//! - `renewal`: the bearer an attempt sends, the renewal started and run, the revocation,
//!   each token request sent through the call path ([`SendsTokenRequests`]);
//! - `identity`: the credentials, the account header and the keys, and the token requests
//!   they make;
//! - `grant`: a token answer read, and the token it gives.

mod cell;
mod grant;
mod identity;
mod renewal;

pub(crate) use self::cell::{Bearer, TokenFailure};
pub(crate) use self::identity::{HeldKey, Identity, keys};
pub(crate) use self::renewal::{SendsTokenRequests, ready_bearer, revoke, wait_for_bearer};
