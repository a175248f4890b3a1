//! One Redis command as the stores send it: bounded in time, its failure a store's error
//! that names Redis and never the URL.

use std::future::Future;
use std::time::Duration;

use payspec_runtime::store::StoreError;

/// A Redis failure as a store's error, its text without the URL (which may hold a
/// password: the redis crate's errors do not carry it).
pub(crate) fn failed(what: &str, error: &redis::RedisError) -> StoreError {
    StoreError::new("Redis", format!("{what}: {error}"))
}

/// Runs one Redis command within `timeout`: a Redis that does not answer is an error.
pub(crate) async fn bounded<T>(
    timeout: Duration,
    what: &str,
    command: impl Future<Output = redis::RedisResult<T>>,
) -> Result<T, StoreError> {
    match tokio::time::timeout(timeout, command).await {
        Ok(Ok(value)) => Ok(value),
        Ok(Err(error)) => Err(failed(what, &error)),
        Err(_) => {
            Err(StoreError::new("Redis", format!("{what}: no answer within {} ms", timeout.as_millis())))
        }
    }
}

/// Whole milliseconds, for Redis's arguments, at least one.
pub(crate) fn millis(duration: Duration) -> u64 {
    u64::try_from(duration.as_millis()).unwrap_or(u64::MAX).max(1)
}
