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

    fn had(started: std::io::Result<testing::RedisServer>) -> RedisServer {
        let inner = started.unwrap_or_else(|e| panic!("the Redis tests need a Redis: {e}"));
        let url = inner.url().to_owned();
        RedisServer { inner, url }
    }

    /// Stops it at once (SIGKILL), as a Redis that dies.
    pub fn kill(&mut self) {
        self.inner.kill();
    }
}
