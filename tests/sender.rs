//! The client's own sender against loopback servers that count what they receive: one
//! test binary for its three concerns, each in a file of its own.

#[path = "connect.rs"]
mod connect;
#[path = "pool.rs"]
mod pool;
#[path = "tls.rs"]
mod tls;
