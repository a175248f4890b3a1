//! What several replicas of a merchant's payspec client share, over Redis.
//!
//! - [`RedisPaceStore`]: one rate limit for every replica, decided inside Redis on Redis's
//!   own clock (one Lua script per reservation, which also carries the releases queued
//!   since the last one: one round trip per call). The limit learned from any replica's
//!   answers, and a `429`'s `Retry-After`, hold for all of them.
//! - [`RedisReplayGuard`]: claim, then confirm. A delivery is claimed with a lease
//!   (`SET NX PX`) before its handler runs, marked handled when it succeeded, and released
//!   (compare-and-delete, only by its holder) when it failed.
//! - [`RedisBatchStore`]: a payout batch's items, each claimed (for good) before it is
//!   sent, held by one runner at a time with a lease, and its end recorded: any replica's
//!   run of the batch resumes what another left.
//! - [`RedisWatchStore`]: a final state a verified webhook names is recorded under the
//!   payment's key with a time to live and published; every replica's waiting settle hears
//!   it at once, and one that starts later finds it.
//!
//! When Redis is down: the pacer falls back to a local share of the limit (the service's
//! `429` and `Retry-After` stay the authority), the guard fails closed (the delivery is
//! answered `503` and the service delivers it again; nothing is handled without a record),
//! and the watch falls back to polling. No call waits on Redis longer than
//! [`RedisOptions::command_timeout`]; errors name Redis. Keys carry a prefix and a time to
//! live; no secret, card data or amount is written.
//!
//! ```no_run
//! use payspec_redis::{RedisOptions, RedisStores};
//! use payspec_runtime::SettlementWatch;
//! use payspec_runtime::store::MemoryPaceStore;
//! use std::time::Duration;
//!
//! # async fn run() -> Result<(), payspec_runtime::store::StoreError> {
//! let stores = RedisStores::open(
//!     "redis://127.0.0.1:6379/",
//!     RedisOptions::new("shop-1").limit(40, Duration::from_secs(1)).replicas(4),
//! )?;
//! // `ClientBuilder::pace(stores.pace())`, `Verifier::replay_guard(stores.guard())`:
//! let _pace = stores.pace();
//! let _guard = stores.guard();
//! let watch = SettlementWatch::with_store(stores.watch());
//! # let _ = (watch, MemoryPaceStore::new());
//! # Ok(()) }
//! ```

#![warn(missing_docs)]

mod batch;
mod connection;
mod guard;
mod pace;
pub mod testing;
mod watch;

use std::fmt;
use std::future::Future;
use std::time::Duration;

use connection::Connection;
use payspec_runtime::store::StoreError;
use redis::aio::ConnectionManager;

pub use batch::RedisBatchStore;
pub use guard::RedisReplayGuard;
pub use pace::RedisPaceStore;
pub use watch::RedisWatchStore;

/// How the stores reach Redis and name their keys.
#[derive(Clone)]
pub struct RedisOptions {
    prefix: String,
    command_timeout: Duration,
    limit: Option<(u32, Duration)>,
    replicas: u32,
    watch_ttl: Duration,
    alive: Duration,
    batch_ttl: Duration,
    roots: Option<Vec<u8>>,
}

impl fmt::Debug for RedisOptions {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("RedisOptions")
            .field("prefix", &self.prefix)
            .field("command_timeout", &self.command_timeout)
            .field("limit", &self.limit)
            .field("replicas", &self.replicas)
            .field("watch_ttl", &self.watch_ttl)
            .field("replica_timeout", &self.alive)
            .field("batch_ttl", &self.batch_ttl)
            .field("root_certificates", &self.roots.as_ref().map(|pem| format!("{} bytes of PEM", pem.len())))
            .finish()
    }
}

impl RedisOptions {
    /// Options for the stores of one merchant: every key starts with `payspec:{merchant}:`
    /// (the braces are part of the key: in a Redis Cluster, all of a merchant's keys are in
    /// one slot), so that merchants (or environments) sharing a Redis never meet.
    pub fn new(merchant: &str) -> Self {
        RedisOptions {
            // The merchant's name in braces: a hash tag, so that all its keys are in one
            // slot of a Redis Cluster (the stores' scripts read several at once).
            prefix: format!("payspec:{{{merchant}}}:"),
            command_timeout: Duration::from_millis(250),
            limit: None,
            replicas: 1,
            watch_ttl: Duration::from_secs(24 * 3_600),
            alive: Duration::from_secs(5),
            batch_ttl: Duration::from_secs(30 * 24 * 3_600),
            roots: None,
        }
    }

    /// The longest any command waits for Redis (250 ms unless set): past it, the store
    /// does what it does when Redis is down.
    pub fn command_timeout(mut self, timeout: Duration) -> Self {
        self.command_timeout = timeout.max(Duration::from_millis(1));
        self
    }

    /// The service's limit, as documented (`limit` requests per `window`), so that the
    /// first requests keep within it before an answer announces it. An announced limit
    /// replaces it, for every replica.
    pub fn limit(mut self, limit: u32, window: Duration) -> Self {
        self.limit = (limit > 0 && !window.is_zero()).then_some((limit, window));
        self
    }

    /// How many replicas share the limit: while Redis is down, each paces by its share
    /// (the limit divided by this, rounded down, at least one).
    pub fn replicas(mut self, replicas: u32) -> Self {
        self.replicas = replicas.max(1);
        self
    }

    /// How long a final state a webhook named is kept for settles to find (a day unless
    /// set).
    pub fn watch_ttl(mut self, ttl: Duration) -> Self {
        self.watch_ttl = ttl.max(Duration::from_secs(1));
        self
    }

    /// How long a payout batch's records are kept after their last change (30 days unless
    /// set): a run of the batch within it resumes it; after it, the batch reads as new.
    pub fn batch_ttl(mut self, ttl: Duration) -> Self {
        self.batch_ttl = ttl.max(Duration::from_secs(60));
        self
    }

    /// How long a replica that has said nothing to Redis is taken as alive (five seconds
    /// unless set). A replica holding places in the limit says so at least four times in
    /// that span; one that stopped (killed, or cut off from Redis) has its places freed by
    /// the next reservation of another replica after it, each counting a window from then.
    /// A place is never held past its call's own deadline in any case. Shorter frees a dead
    /// replica's places sooner; a replica whose runtime stalls longer than this (every
    /// thread blocked) may see its places counted early, which the service's `429` and
    /// `Retry-After` then correct.
    pub fn replica_timeout(mut self, timeout: Duration) -> Self {
        self.alive = timeout.max(Duration::from_millis(200));
        self
    }

    /// Root certificates (PEM) a `rediss://` Redis's certificate is checked against instead
    /// of the platform's: a managed Redis's own CA, or a private one (the `tls` feature).
    pub fn root_certificates_pem(mut self, pem: impl Into<Vec<u8>>) -> Self {
        self.roots = Some(pem.into());
        self
    }

    fn key(&self, name: &str) -> String {
        format!("{}{name}", self.prefix)
    }
}

/// The stores over one Redis connection (cheap to clone: clones share it).
#[derive(Clone)]
pub struct RedisStores {
    /// Where the settlement watch listens: one node (the first that answers, for a
    /// cluster, which publishes to every node).
    listen: Vec<redis::Client>,
    connection: Connection,
    options: RedisOptions,
}

impl fmt::Debug for RedisStores {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        // The URL may hold a password: only the prefix is shown.
        f.debug_struct("RedisStores").field("prefix", &self.options.prefix).finish_non_exhaustive()
    }
}

impl RedisStores {
    /// The stores over the Redis at `url`: `redis://host:port/db`, with an ACL user and
    /// its password if it needs them (`redis://user:password@host:port/`), or `rediss://`
    /// for TLS (the `tls` feature, on by default: the platform's roots, or
    /// [`RedisOptions::root_certificates_pem`]'s). Nothing is sent yet: the connection is made on first use and remade
    /// after a failure, so a Redis that is down now does not stop the application from
    /// starting. Must be called inside a tokio runtime.
    pub fn open(url: &str, options: RedisOptions) -> Result<Self, StoreError> {
        // The connection manager starts a task of its own: outside a runtime it would panic.
        if tokio::runtime::Handle::try_current().is_err() {
            return Err(StoreError::new(
                "Redis",
                "the stores must be opened inside a tokio runtime (in an async function, or within \
                 `Runtime::enter`)",
            ));
        }
        let client = client(url, &options)?;
        let config = redis::aio::ConnectionManagerConfig::new()
            .set_connection_timeout(Some(options.command_timeout))
            .set_response_timeout(Some(options.command_timeout))
            .set_number_of_retries(1)
            .set_max_delay(Duration::from_millis(500));
        let connection = ConnectionManager::new_lazy_with_config(client.clone(), config)
            .map_err(|e| failed("cannot set up the Redis connection", &e))?;
        Ok(RedisStores { listen: vec![client], connection: Connection::Single(connection), options })
    }

    /// The stores over the Redis Cluster whose nodes include `urls` (any of its nodes: the
    /// rest are found; `redis://` or `rediss://`, with an ACL user as in [`open`](Self::open)).
    /// Each command goes to the node that holds its key (all of a merchant's keys are in one
    /// slot), and the connection follows the cluster through a failover. Nothing is sent
    /// yet: the connection is made on first use. Must be called inside a tokio runtime (the
    /// `cluster` feature, on by default).
    #[cfg(feature = "cluster")]
    pub fn open_cluster(urls: &[&str], options: RedisOptions) -> Result<Self, StoreError> {
        if tokio::runtime::Handle::try_current().is_err() {
            return Err(StoreError::new("Redis", "the stores must be opened inside a tokio runtime"));
        }
        if urls.is_empty() {
            return Err(StoreError::new("Redis", "a cluster needs the URL of at least one of its nodes"));
        }
        let listen = urls.iter().map(|url| client(url, &options)).collect::<Result<Vec<_>, _>>()?;
        let builder = redis::cluster::ClusterClient::builder(urls.iter().copied())
            .connection_timeout(options.command_timeout)
            .response_timeout(options.command_timeout)
            .retries(2);
        #[cfg(feature = "tls")]
        let builder = match &options.roots {
            Some(roots) => {
                builder.certs(redis::TlsCertificates { client_tls: None, root_cert: Some(roots.clone()) })
            }
            None => builder,
        };
        let cluster = builder.build().map_err(|e| failed("the Redis Cluster URLs are not valid", &e))?;
        let connection = Connection::Cluster(std::sync::Arc::new(connection::cluster::Lazy::new(cluster)));
        Ok(RedisStores { listen, connection, options })
    }

    /// The rate-limit pacer: `ClientBuilder::pace(stores.pace())`.
    pub fn pace(&self) -> RedisPaceStore {
        RedisPaceStore::new(self.connection.clone(), &self.options)
    }

    /// The webhook guard: `Verifier::replay_guard(stores.guard())`.
    pub fn guard(&self) -> RedisReplayGuard {
        RedisReplayGuard::new(self.connection.clone(), &self.options)
    }

    /// The payout batches' store: `PayoutBatch::new(id, stores.batches())`.
    pub fn batches(&self) -> RedisBatchStore {
        RedisBatchStore::new(self.connection.clone(), &self.options)
    }

    /// The settlement watch's store: `SettlementWatch::with_store(stores.watch())`. It
    /// listens for other replicas' notices on a connection of its own (made again after a
    /// failure), for as long as the store lives.
    pub fn watch(&self) -> RedisWatchStore {
        RedisWatchStore::new(self.listen.clone(), self.connection.clone(), &self.options)
    }
}

/// The Redis client of `url`, with TLS as `options` say.
fn client(url: &str, options: &RedisOptions) -> Result<redis::Client, StoreError> {
    let tls = url.starts_with("rediss://");
    if tls {
        // The TLS of the redis crate asks for the process's rustls provider.
        payspec_runtime::install_tls_provider();
    }
    #[cfg(feature = "tls")]
    if let (true, Some(roots)) = (tls, &options.roots) {
        let certificates = redis::TlsCertificates { client_tls: None, root_cert: Some(roots.clone()) };
        return redis::Client::build_with_tls(url, certificates)
            .map_err(|e| failed("the Redis URL or its root certificates are not valid", &e));
    }
    if tls && !cfg!(feature = "tls") {
        return Err(StoreError::new(
            "Redis",
            "a `rediss://` URL needs TLS: build payspec-redis with its `tls` feature",
        ));
    }
    let _ = &options.roots;
    redis::Client::open(url).map_err(|e| failed("the Redis URL is not valid", &e))
}

/// A Redis failure as a store's error, its text without the URL (which may hold a
/// password: the redis crate's errors do not carry it).
fn failed(what: &str, error: &redis::RedisError) -> StoreError {
    StoreError::new("Redis", format!("{what}: {error}"))
}

/// Runs one Redis command within `timeout`: a Redis that does not answer is an error.
async fn bounded<T>(
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
fn millis(duration: Duration) -> u64 {
    u64::try_from(duration.as_millis()).unwrap_or(u64::MAX).max(1)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn opening_outside_a_runtime_is_an_error_that_says_so_not_a_panic() {
        let error =
            RedisStores::open("redis://127.0.0.1:1/", RedisOptions::new("m")).expect_err("no runtime");
        assert!(error.to_string().contains("tokio runtime"), "{error}");
    }

    #[tokio::test]
    async fn opening_sends_nothing_and_a_bad_url_names_redis() {
        // Nothing listens on port 1: opening still succeeds, the connection is made on use.
        assert!(RedisStores::open("redis://127.0.0.1:1/", RedisOptions::new("m")).is_ok());
        let error = RedisStores::open("not a url", RedisOptions::new("m")).expect_err("a bad URL");
        assert!(error.to_string().contains("Redis"), "{error}");
    }
}
