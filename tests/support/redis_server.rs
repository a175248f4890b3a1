//! A Redis of the test's own (`payspec_redis::testing`: `redis-server` on a free loopback
//! port, stopped when dropped), or the one `PAYSPEC_REDIS_URL` names; a test that can have
//! neither fails with what to install.

use payspec_redis::testing;

/// A Redis for one test.
pub struct RedisServer {
    inner: testing::RedisServer,
    /// Its URL, `redis://127.0.0.1:PORT/`.
    pub url: String,
}

impl RedisServer {
    /// Starts one (or takes PAYSPEC_REDIS_URL's).
    pub fn start() -> RedisServer {
        Self::had(testing::RedisServer::start())
    }

    /// Starts one of the test's own, whatever PAYSPEC_REDIS_URL says (a test that kills
    /// its Redis must not kill a shared one).
    pub fn start_own() -> RedisServer {
        Self::had(testing::RedisServer::start_own())
    }

    /// Starts one of the test's own that keeps every command on disk in `dir` before it
    /// answers, so that a [`restart`](Self::restart) loses nothing.
    pub fn start_persistent(dir: &std::path::Path) -> RedisServer {
        Self::had(testing::RedisServer::start_persistent(dir))
    }

    fn had(started: std::io::Result<testing::RedisServer>) -> RedisServer {
        let inner = started.unwrap_or_else(|e| panic!("the Redis tests need a Redis: {e}"));
        let url = inner.url().to_owned();
        RedisServer { inner, url }
    }

    /// Stops it at once (SIGKILL), as a Redis that dies.
    pub fn kill(&mut self) {
        self.inner.kill();
    }

    /// Kills it and starts it again on its port, as a Redis that restarts.
    pub fn restart(&mut self) {
        self.inner.restart().unwrap_or_else(|e| panic!("Redis did not start again: {e}"));
    }
}
