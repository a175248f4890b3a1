//! A final state heard by one replica, heard by all.

use std::fmt;
use std::sync::{Arc, Mutex, Weak};
use std::time::Duration;

use crate::connection::Connection;
use futures_util::StreamExt as _;
use payspec_store::{FinalState, StoreError, StoreFuture, WatchStore};

use crate::command::{Bound, bounded, millis};
use crate::options::RedisOptions;

type Wake = Arc<dyn Fn() + Send + Sync>;

/// A [`WatchStore`] shared through Redis: a final state is kept under the payment's key
/// with a time to live ([`RedisOptions::watch_ttl`]) and published on the merchant's
/// channel; each store listens on that channel (a connection of its own, made again after
/// a failure) and wakes its watches, so that a settle waiting on any replica asks the
/// service at once. A settle that starts later finds the kept state at its first look.
///
/// When Redis fails, recording says so (the webhook's own replica still hears it) and
/// looking finds nothing: settles fall back to polling the service.
#[derive(Clone)]
pub struct RedisWatchStore {
    connection: Connection,
    shared: Arc<Shared>,
    prefix: String,
    channel: String,
    bound: Bound,
    ttl: Duration,
}

/// What the listener shares with the store: the watches to wake.
struct Shared {
    wakes: Mutex<Vec<Wake>>,
}

impl fmt::Debug for RedisWatchStore {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("RedisWatchStore").field("channel", &self.channel).finish_non_exhaustive()
    }
}

impl RedisWatchStore {
    pub(crate) fn new(listen: Vec<redis::Client>, connection: Connection, options: &RedisOptions) -> Self {
        let shared = Arc::new(Shared { wakes: Mutex::new(Vec::new()) });
        let channel = options.key("watch");
        if let Ok(runtime) = tokio::runtime::Handle::try_current() {
            runtime.spawn(listen_on(listen, channel.clone(), Arc::downgrade(&shared)));
        } else {
            tracing::warn!(
                "the Redis watch store was made outside a tokio runtime: it will not hear other replicas at once"
            );
        }
        RedisWatchStore {
            connection,
            shared,
            prefix: options.key("watch:"),
            channel,
            bound: Bound::of(options),
            ttl: options.watch_ttl,
        }
    }
}

/// Listens for notices until the store is gone, subscribing again after a failure, to
/// the next node of `clients` (a cluster publishes to every node: any one will do).
async fn listen_on(clients: Vec<redis::Client>, channel: String, shared: Weak<Shared>) {
    for client in clients.iter().cycle() {
        if shared.strong_count() == 0 {
            return;
        }
        match client.get_async_pubsub().await {
            Ok(mut pubsub) => {
                if pubsub.subscribe(&channel).await.is_ok() {
                    // Notices may have been missed while not subscribed: look again now.
                    wake(&shared);
                    let mut messages = pubsub.on_message();
                    loop {
                        let next = tokio::time::timeout(Duration::from_secs(1), messages.next()).await;
                        match next {
                            Ok(Some(_)) => wake(&shared),
                            Ok(None) => break,
                            Err(_) if shared.strong_count() == 0 => return,
                            Err(_) => {}
                        }
                    }
                }
            }
            Err(error) => tracing::debug!(%error, "the Redis watch store could not subscribe; trying again"),
        }
        tokio::time::sleep(Duration::from_millis(500)).await;
    }
}

fn wake(shared: &Weak<Shared>) {
    if let Some(shared) = shared.upgrade() {
        let wakes: Vec<Wake> = shared.wakes.lock().unwrap_or_else(|p| p.into_inner()).clone();
        for wake in wakes {
            wake();
        }
    }
}

fn state_name(state: FinalState) -> &'static str {
    match state {
        FinalState::Succeeded => "succeeded",
        FinalState::Failed => "failed",
        FinalState::Refunded => "refunded",
        FinalState::Reversed => "reversed",
        // A state a later runtime adds is not kept: the settle polls for it.
        _ => "",
    }
}

fn state_of(name: &str) -> Option<FinalState> {
    match name {
        "succeeded" => Some(FinalState::Succeeded),
        "failed" => Some(FinalState::Failed),
        "refunded" => Some(FinalState::Refunded),
        "reversed" => Some(FinalState::Reversed),
        _ => None,
    }
}

impl WatchStore for RedisWatchStore {
    fn record<'a>(&'a self, key: &'a str, state: FinalState) -> StoreFuture<'a, Result<(), StoreError>> {
        StoreFuture::new(async move {
            let name = state_name(state);
            if name.is_empty() {
                return Ok(());
            }
            let mut connection = self.connection.clone();
            let mut pipeline = redis::pipe();
            pipeline
                .cmd("SET")
                .arg(format!("{}{key}", self.prefix))
                .arg(name)
                .arg("PX")
                .arg(millis(self.ttl))
                .ignore()
                .cmd("PUBLISH")
                .arg(&self.channel)
                .arg(key)
                .ignore();
            bounded(self.bound, "recording a final state", pipeline.query_async::<()>(&mut connection)).await
        })
    }

    fn heard<'a>(&'a self, keys: &'a [String]) -> StoreFuture<'a, Result<Option<FinalState>, StoreError>> {
        StoreFuture::new(async move {
            if keys.is_empty() {
                return Ok(None);
            }
            let mut connection = self.connection.clone();
            let mut command = redis::cmd("MGET");
            for key in keys {
                command.arg(format!("{}{key}", self.prefix));
            }
            let found: Vec<Option<String>> =
                bounded(self.bound, "looking up final states", command.query_async(&mut connection)).await?;
            Ok(found.iter().flatten().find_map(|name| state_of(name)))
        })
    }

    fn subscribe(&self, wake: Arc<dyn Fn() + Send + Sync>) {
        self.shared.wakes.lock().unwrap_or_else(|p| p.into_inner()).push(wake);
    }
}
