//! One connection for every store: a single Redis (reconnecting by itself), or a Redis
//! Cluster (each command sent to the node that holds its key, connected on first use).

use redis::aio::{ConnectionLike, ConnectionManager};
use redis::{Cmd, Pipeline, RedisFuture, Value};

/// What the stores send their commands through.
#[derive(Clone)]
pub(crate) enum Connection {
    Single(ConnectionManager),
    #[cfg(feature = "cluster")]
    Cluster(std::sync::Arc<cluster::Lazy>),
}

impl ConnectionLike for Connection {
    fn req_packed_command<'a>(&'a mut self, cmd: &'a Cmd) -> RedisFuture<'a, Value> {
        match self {
            Connection::Single(connection) => connection.req_packed_command(cmd),
            #[cfg(feature = "cluster")]
            Connection::Cluster(lazy) => {
                Box::pin(async move { lazy.get().await?.req_packed_command(cmd).await })
            }
        }
    }

    fn req_packed_commands<'a>(
        &'a mut self,
        pipeline: &'a Pipeline,
        offset: usize,
        count: usize,
    ) -> RedisFuture<'a, Vec<Value>> {
        match self {
            Connection::Single(connection) => connection.req_packed_commands(pipeline, offset, count),
            #[cfg(feature = "cluster")]
            Connection::Cluster(lazy) => {
                Box::pin(async move { lazy.get().await?.req_packed_commands(pipeline, offset, count).await })
            }
        }
    }

    fn get_db(&self) -> i64 {
        match self {
            Connection::Single(connection) => connection.get_db(),
            #[cfg(feature = "cluster")]
            Connection::Cluster(_) => 0,
        }
    }
}

#[cfg(feature = "cluster")]
pub(crate) mod cluster {
    use redis::RedisResult;
    use redis::cluster::ClusterClient;
    use redis::cluster_async::ClusterConnection;

    /// A cluster connection made on first use (tried again on the next use when it could not
    /// be made); once made, it reads the cluster's slots again by itself when a node is lost
    /// and its replica takes over.
    pub(crate) struct Lazy {
        client: ClusterClient,
        connection: std::sync::Mutex<Option<ClusterConnection>>,
    }

    impl Lazy {
        pub(crate) fn new(client: ClusterClient) -> Self {
            Lazy { client, connection: std::sync::Mutex::new(None) }
        }

        fn held(&self) -> std::sync::MutexGuard<'_, Option<ClusterConnection>> {
            self.connection.lock().unwrap_or_else(|p| p.into_inner())
        }

        pub(crate) async fn get(&self) -> RedisResult<ClusterConnection> {
            if let Some(connection) = self.held().clone() {
                return Ok(connection);
            }
            let connection = self.client.get_async_connection().await?;
            *self.held() = Some(connection.clone());
            Ok(connection)
        }
    }
}
