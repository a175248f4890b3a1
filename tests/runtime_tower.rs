//! The runtime's fault, trust and limit cases again, sent through a transport of the
//! caller's own (`TowerTransport` over hyper-util's client under tower layers,
//! `payspec_tests::transport`): deadlines, answer-size limits, redirects, redaction and
//! keyed resends only hold whatever carries the request.

#[path = "runtime_faults.rs"]
mod faults;
#[path = "runtime_limits.rs"]
mod limits;
#[path = "runtime_trust.rs"]
mod trust;
