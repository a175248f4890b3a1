//! How the stores reach Redis and name their keys ([`RedisOptions`]).

use std::fmt;
use std::time::Duration;

/// How the stores reach Redis and name their keys.
#[derive(Clone)]
pub struct RedisOptions {
    pub(crate) prefix: String,
    pub(crate) command_timeout: Duration,
    pub(crate) limit: Option<(u32, Duration)>,
    pub(crate) replicas: u32,
    pub(crate) watch_ttl: Duration,
    pub(crate) alive: Duration,
    pub(crate) batch_ttl: Duration,
    pub(crate) roots: Option<Vec<u8>>,
    /// The stores' URL is `rediss://` (set when they are opened).
    pub(crate) tls: bool,
    /// The name this replica keeps across its restarts, when it has one.
    pub(crate) replica_name: Option<String>,
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
            .field("replica_name", &self.replica_name)
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
            tls: false,
            replica_name: None,
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

    /// The name this replica keeps when it restarts (its host or pod name, `web-1`), unique
    /// among the replicas running at once. A replica that starts under a name frees the
    /// places its earlier life held in the limit at its first reservation (each counting a
    /// window from then, as its requests may have just left), instead of waiting
    /// [`replica_timeout`](Self::replica_timeout) for them. Without a name, each start is a
    /// replica of its own. Two replicas running at once under one name would free each
    /// other's places: give each its own.
    pub fn replica_name(mut self, name: impl Into<String>) -> Self {
        let name: String = name.into();
        // `~` parts the name from the life in the pacer's records.
        self.replica_name = Some(name.replace('~', "-")).filter(|n| !n.is_empty());
        self
    }

    /// Root certificates (PEM) a `rediss://` Redis's certificate is checked against instead
    /// of the platform's: a managed Redis's own CA, or a private one (the `tls` feature).
    pub fn root_certificates_pem(mut self, pem: impl Into<Vec<u8>>) -> Self {
        self.roots = Some(pem.into());
        self
    }

    pub(crate) fn key(&self, name: &str) -> String {
        format!("{}{name}", self.prefix)
    }
}
