//! One Redis command as the stores send it: bounded in time, its failure a store's error
//! that names Redis and never the URL.

use std::future::Future;
use std::time::Duration;

use payspec_store::StoreError;

use crate::options::RedisOptions;

/// A Redis failure as a store's error, its text without the URL (which may hold a
/// password: the redis crate's errors do not carry it).
pub(crate) fn failed(what: &str, error: &redis::RedisError) -> StoreError {
    StoreError::new("Redis", format!("{what}: {error}"))
}

/// How the stores' commands are bounded, and what the failures of their connection can
/// be read as.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Bound {
    /// The longest a command waits for Redis.
    pub(crate) timeout: Duration,
    /// The URL is `redis://`: a connection closed as it opens may be a port that speaks
    /// TLS only.
    pub(crate) plain: bool,
}

impl Bound {
    pub(crate) fn of(options: &RedisOptions) -> Bound {
        Bound { timeout: options.command_timeout, plain: !options.tls }
    }

    /// A failure of a command: what it was, the cause, and for a plain URL whose
    /// connection was closed as it opened, what that may mean.
    fn failed(self, what: &str, error: &redis::RedisError) -> StoreError {
        // Dropped, not refused: something listened and closed the connection.
        let closed = error.is_connection_dropped() && !error.is_connection_refusal();
        if self.plain && closed {
            return StoreError::new(
                "Redis",
                format!(
                    "{what}: {error}: Redis closed the connection as it opened, as a port that speaks only TLS does to a plain one; if it does, write the URL with `rediss://`"
                ),
            );
        }
        failed(what, error)
    }
}

/// Runs one Redis command within its bound: a Redis that does not answer is an error.
/// The connection's own timeouts are shorter (see `RedisStores::open`), so that a cause the
/// connection learns (refused, reset, a certificate refused) is said, not the deadline.
pub(crate) async fn bounded<T>(
    bound: Bound,
    what: &str,
    command: impl Future<Output = redis::RedisResult<T>>,
) -> Result<T, StoreError> {
    match tokio::time::timeout(bound.timeout, command).await {
        Ok(Ok(value)) => Ok(value),
        Ok(Err(error)) => Err(bound.failed(what, &error)),
        Err(_) => Err(StoreError::new(
            "Redis",
            format!("{what}: no answer within {} ms", bound.timeout.as_millis()),
        )),
    }
}

/// Whole milliseconds, for Redis's arguments, at least one.
pub(crate) fn millis(duration: Duration) -> u64 {
    u64::try_from(duration.as_millis()).unwrap_or(u64::MAX).max(1)
}
