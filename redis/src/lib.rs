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
mod command;
mod connection;
mod guard;
mod options;
mod pace;
pub mod testing;
mod watch;

use std::fmt;
use std::time::Duration;

use connection::Connection;
use payspec_store::StoreError;
use redis::aio::ConnectionManager;

pub use batch::RedisBatchStore;
use command::failed;
pub use guard::RedisReplayGuard;
pub use options::RedisOptions;
pub use pace::RedisPaceStore;
pub use watch::RedisWatchStore;

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
    pub fn open(url: &str, mut options: RedisOptions) -> Result<Self, StoreError> {
        // The connection manager starts a task of its own: outside a runtime it would panic.
        if tokio::runtime::Handle::try_current().is_err() {
            return Err(StoreError::new(
                "Redis",
                "the stores must be opened inside a tokio runtime (in an async function, or within \
                 `Runtime::enter`)",
            ));
        }
        options.tls = url.starts_with("rediss://");
        let client = client(url, &options)?;
        let config = redis::aio::ConnectionManagerConfig::new()
            .set_connection_timeout(Some(connection_timeout(&options)))
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
    pub fn open_cluster(urls: &[&str], mut options: RedisOptions) -> Result<Self, StoreError> {
        if tokio::runtime::Handle::try_current().is_err() {
            return Err(StoreError::new("Redis", "the stores must be opened inside a tokio runtime"));
        }
        if urls.is_empty() {
            return Err(StoreError::new("Redis", "a cluster needs the URL of at least one of its nodes"));
        }
        options.tls = urls.iter().all(|url| url.starts_with("rediss://"));
        let listen = urls.iter().map(|url| client(url, &options)).collect::<Result<Vec<_>, _>>()?;
        let builder = redis::cluster::ClusterClient::builder(urls.iter().copied())
            .connection_timeout(connection_timeout(&options))
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

/// How long a connection may take to open: less than a command's bound, so that a
/// cause the connection learns (refused, reset, a certificate refused) ends the command
/// with its own words before the bound does.
fn connection_timeout(options: &RedisOptions) -> std::time::Duration {
    options.command_timeout.mul_f32(0.8)
}

/// The Redis client of `url`, with TLS as `options` say.
fn client(url: &str, options: &RedisOptions) -> Result<redis::Client, StoreError> {
    let tls = url.starts_with("rediss://");
    #[cfg(feature = "tls")]
    if tls {
        install_tls_provider();
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

/// The TLS of the redis crate asks for the process's rustls provider: the one installed
/// already (the client's, when its build has one), else ring, which this feature brings, so
/// that a client built for plain HTTP does not panic on a `rediss://` store's first command.
///
/// rustls 0.23.48 deprecates ring's provider (no post-quantum key exchange): a client built
/// with `rustls-aws-lc-rs` installs that one first, and this is the fallback of a build
/// without one.
#[cfg(feature = "tls")]
#[allow(deprecated, reason = "ring's provider is the fallback this feature brings; see the doc above")]
fn install_tls_provider() {
    if rustls::crypto::CryptoProvider::get_default().is_none() {
        // Another thread may install one between the check and here; either is fine.
        let _ = rustls::crypto::ring::default_provider().install_default();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A store implements `payspec-store`'s traits and pulls no HTTP client: with every
    /// feature on, nothing of reqwest, hyper or the runtime is in its graph.
    #[test]
    fn the_stores_depend_on_the_traits_alone_no_http_client() {
        let output = std::process::Command::new(env!("CARGO"))
            .args([
                "tree",
                "-p",
                "payspec-redis",
                "-e",
                "normal",
                "--all-features",
                "--prefix",
                "none",
                "--locked",
            ])
            .current_dir(env!("CARGO_MANIFEST_DIR"))
            .output()
            .unwrap_or_else(|e| panic!("cannot run cargo tree: {e}"));
        assert!(output.status.success(), "{}", String::from_utf8_lossy(&output.stderr));
        let tree = String::from_utf8_lossy(&output.stdout);
        let names: Vec<&str> = tree.lines().filter_map(|line| line.split_whitespace().next()).collect();
        assert!(names.contains(&"payspec-store") && names.contains(&"redis"), "{tree}");
        for heavy in ["payspec-runtime", "reqwest", "hyper", "hyper-util", "hyper-rustls", "h2"] {
            assert!(!names.contains(&heavy), "payspec-redis pulls {heavy}:\n{tree}");
        }
    }

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
