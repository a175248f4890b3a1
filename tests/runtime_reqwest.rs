//! The runtime's fault, trust and limit cases again, sent through reqwest's client, as a
//! client sends when it is given HTTP client settings (`http_client_builder`) or the
//! environment names a proxy: deadlines, answer-size limits, redirects, redaction and keyed
//! resends hold whichever of the client's senders carries the request.

#[path = "runtime_faults.rs"]
mod faults;
#[path = "runtime_limits.rs"]
mod limits;
#[path = "runtime_trust.rs"]
mod trust;
