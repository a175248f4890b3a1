//! A Redis of a test's own: `redis-server` started on a free loopback port, with nothing
//! saved to disk, and stopped when dropped; or the Redis `PAYSPEC_REDIS_URL` names. For
//! tests of several replicas (and the guides' examples) that must not share a Redis with
//! anything else.
//!
//! ```no_run
//! # fn main() -> std::io::Result<()> {
//! let redis = payspec_redis::testing::RedisServer::start()?;
//! let stores = payspec_redis::RedisStores::open(redis.url(), payspec_redis::RedisOptions::new("test-shop"));
//! # drop(stores);
//! # Ok(())
//! # }
//! ```

use std::io::{self, Read, Write};
use std::net::{TcpListener, TcpStream};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

/// What to do when no Redis can be had.
const HOW: &str = "install `redis-server` on the PATH (Debian: `apt-get install redis-server`) \
                   or set PAYSPEC_REDIS_URL to a Redis the tests may use";

/// How long a started `redis-server` may take to answer its first `PING`.
const READY_WITHIN: Duration = Duration::from_secs(10);

/// A Redis for one test; a server it started is killed when it is dropped.
#[derive(Debug)]
pub struct RedisServer {
    child: Option<Child>,
    url: String,
    port: u16,
    options: Vec<String>,
    tls: bool,
}

impl RedisServer {
    /// The Redis `PAYSPEC_REDIS_URL` names, when set, else one of this test's own
    /// ([`start_own`](Self::start_own)).
    pub fn start() -> io::Result<RedisServer> {
        match std::env::var("PAYSPEC_REDIS_URL") {
            Ok(url) if !url.is_empty() => {
                Ok(RedisServer { child: None, url, port: 0, options: Vec::new(), tls: false })
            }
            _ => Self::start_own(),
        }
    }

    /// Starts a `redis-server` of this test's own on a free loopback port, whatever
    /// `PAYSPEC_REDIS_URL` says (a test that kills its Redis must not kill a shared one),
    /// and waits until it answers. The error says what to install when it cannot start.
    pub fn start_own() -> io::Result<RedisServer> {
        Self::spawn(vec!["--save".into(), String::new(), "--appendonly".into(), "no".into()])
    }

    /// Starts one of this test's own that writes every command to an append-only file in
    /// `dir` before it answers (`appendonly yes`, `appendfsync always`), as a Redis that
    /// must not lose a record is run: [`restart`](Self::restart)ed, it has what it had.
    pub fn start_persistent(dir: &std::path::Path) -> io::Result<RedisServer> {
        let dir = dir.to_str().ok_or_else(|| io::Error::other("the Redis directory is not UTF-8"))?;
        Self::spawn(
            ["--save", "", "--appendonly", "yes", "--appendfsync", "always", "--dir", dir]
                .map(String::from)
                .to_vec(),
        )
    }

    /// Starts one of this test's own with more `options` (`redis-server`'s own, such as
    /// `--user shop on >secret ~* &* +@all --user default off` for an ACL user): its URL
    /// names no user, the test adds its own.
    pub fn start_with(options: &[&str]) -> io::Result<RedisServer> {
        let mut all = vec!["--save".to_owned(), String::new(), "--appendonly".to_owned(), "no".to_owned()];
        all.extend(options.iter().map(|o| (*o).to_owned()));
        Self::spawn(all)
    }

    /// Starts one of this test's own that speaks TLS only, with the certificate and key in
    /// the PEM files `certificate` and `key` (for `localhost`): its URL is
    /// `rediss://localhost:PORT/`.
    pub fn start_tls(certificate: &std::path::Path, key: &std::path::Path) -> io::Result<RedisServer> {
        let text = |path: &std::path::Path| {
            path.to_str().map(str::to_owned).ok_or_else(|| io::Error::other("a TLS file's path is not UTF-8"))
        };
        let port = TcpListener::bind("127.0.0.1:0")?.local_addr()?.port();
        let options = vec![
            "--save".into(),
            String::new(),
            "--appendonly".into(),
            "no".into(),
            "--tls-port".into(),
            port.to_string(),
            "--tls-cert-file".into(),
            text(certificate)?,
            "--tls-key-file".into(),
            text(key)?,
            "--tls-auth-clients".into(),
            "no".into(),
        ];
        let url = format!("rediss://localhost:{port}/");
        let mut server = RedisServer { child: None, url, port, options, tls: true };
        server.run()?;
        Ok(server)
    }

    fn spawn(options: Vec<String>) -> io::Result<RedisServer> {
        let port = TcpListener::bind("127.0.0.1:0")?.local_addr()?.port();
        let url = format!("redis://127.0.0.1:{port}/");
        let mut server = RedisServer { child: None, url, port, options, tls: false };
        server.run()?;
        Ok(server)
    }

    /// Starts the server on its port and waits until it answers.
    fn run(&mut self) -> io::Result<()> {
        let port = self.port;
        // A TLS server listens on its TLS port alone.
        let plain = if self.tls { "0".to_owned() } else { port.to_string() };
        let child = Command::new("redis-server")
            .args(["--port", &plain, "--bind", "127.0.0.1"])
            .args(&self.options)
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .map_err(|e| io::Error::new(e.kind(), format!("cannot start redis-server ({e}): {HOW}")))?;
        self.child = Some(child);
        let deadline = Instant::now() + READY_WITHIN;
        while !(if self.tls { TcpStream::connect(("127.0.0.1", port)).is_ok() } else { ping(port) }) {
            let exited = self.child.as_mut().and_then(|child| child.try_wait().ok().flatten());
            if exited.is_some() || Instant::now() >= deadline {
                self.kill();
                return Err(io::Error::new(
                    io::ErrorKind::TimedOut,
                    format!("redis-server did not answer PING on port {port} within {READY_WITHIN:?}: {HOW}"),
                ));
            }
            std::thread::sleep(Duration::from_millis(20));
        }
        Ok(())
    }

    /// Kills a server this test started (SIGKILL) and starts it again on the same port
    /// with the same options; a shared one is left alone.
    pub fn restart(&mut self) -> io::Result<()> {
        if self.child.is_none() {
            return Ok(());
        }
        self.kill();
        self.run()
    }

    /// Its URL, `redis://127.0.0.1:PORT/`.
    pub fn url(&self) -> &str {
        &self.url
    }

    /// Stops a server this test started, at once (SIGKILL), as a Redis that dies; a shared
    /// one (`PAYSPEC_REDIS_URL`) is left alone.
    pub fn kill(&mut self) {
        if let Some(child) = self.child.as_mut() {
            let _ = child.kill();
            let _ = child.wait();
        }
    }
}

impl RedisServer {
    /// Whether a server this test started still runs.
    fn is_running(&mut self) -> bool {
        self.child.as_mut().is_some_and(|child| child.try_wait().ok().flatten().is_none())
    }
}

impl Drop for RedisServer {
    fn drop(&mut self) {
        self.kill();
    }
}

fn ping(port: u16) -> bool {
    let Ok(mut stream) = TcpStream::connect(("127.0.0.1", port)) else { return false };
    let _ = stream.set_read_timeout(Some(Duration::from_millis(500)));
    if stream.write_all(b"PING\r\n").is_err() {
        return false;
    }
    // A server whose default user is off answers `-NOAUTH ...`: it is up.
    let mut answer = [0u8; 7];
    stream.read_exact(&mut answer).is_ok() && (&answer == b"+PONG\r\n" || answer.starts_with(b"-NOAUTH"))
}

/// A Redis Cluster of a test's own on loopback: `masters` primaries, each with one replica
/// (`redis-server --cluster-enabled`, joined with `redis-cli --cluster create`), a node
/// timeout of one second (a stopped primary's replica takes over in about two), nothing
/// saved to disk but the nodes' own files in a directory of its own. Stopped when dropped.
#[derive(Debug)]
pub struct RedisCluster {
    nodes: Vec<RedisServer>,
    dir: std::path::PathBuf,
}

impl RedisCluster {
    /// Starts the nodes, joins them, and waits until the cluster serves every slot.
    pub fn start(masters: usize) -> io::Result<RedisCluster> {
        let dir = std::env::temp_dir().join(format!(
            "payspec-redis-cluster-{}-{}",
            std::process::id(),
            std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map_or(0, |d| d.as_nanos())
        ));
        std::fs::create_dir_all(&dir)?;
        let mut nodes = Vec::new();
        for n in 0..masters * 2 {
            let node_dir = dir.join(n.to_string());
            std::fs::create_dir_all(&node_dir)?;
            let node_dir =
                node_dir.to_str().ok_or_else(|| io::Error::other("a cluster path is not UTF-8"))?.to_owned();
            nodes.push(RedisServer::spawn(
                [
                    "--save",
                    "",
                    "--appendonly",
                    "no",
                    "--cluster-enabled",
                    "yes",
                    "--cluster-node-timeout",
                    "1000",
                    "--dir",
                    &node_dir,
                ]
                .map(String::from)
                .to_vec(),
            )?);
        }
        let mut cluster = RedisCluster { nodes, dir };
        let addresses: Vec<String> = cluster.nodes.iter().map(|n| format!("127.0.0.1:{}", n.port)).collect();
        let created = Command::new("redis-cli")
            .arg("--cluster")
            .arg("create")
            .args(&addresses)
            .args(["--cluster-replicas", "1", "--cluster-yes"])
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .status()
            .map_err(|e| io::Error::new(e.kind(), format!("cannot run redis-cli ({e}): {HOW}")))?;
        if !created.success() {
            return Err(io::Error::other("redis-cli --cluster create failed"));
        }
        cluster.wait_until_ok(READY_WITHIN)?;
        // A replica that never copied its primary cannot take over from it.
        let deadline = Instant::now() + READY_WITHIN;
        while !cluster.nodes.iter().all(|n| replica_linked(n.port)) {
            if Instant::now() >= deadline {
                return Err(io::Error::new(
                    io::ErrorKind::TimedOut,
                    "the cluster's replicas did not copy their primaries",
                ));
            }
            std::thread::sleep(Duration::from_millis(100));
        }
        Ok(cluster)
    }

    /// The URL of every node, primaries and replicas.
    pub fn urls(&self) -> Vec<String> {
        self.nodes.iter().map(|n| n.url.clone()).collect()
    }

    /// Waits until every running node says the cluster is `ok` (all slots served).
    pub fn wait_until_ok(&mut self, within: Duration) -> io::Result<()> {
        let deadline = Instant::now() + within;
        loop {
            let running: Vec<u16> =
                self.nodes.iter_mut().filter_map(|n| n.is_running().then_some(n.port)).collect();
            let ok = running.into_iter().all(cluster_ok);
            if ok {
                return Ok(());
            }
            if Instant::now() >= deadline {
                return Err(io::Error::new(
                    io::ErrorKind::TimedOut,
                    format!("the cluster was not ok within {within:?}"),
                ));
            }
            std::thread::sleep(Duration::from_millis(100));
        }
    }

    /// Stops (SIGKILL) the primary that serves the slot of `key`; its URL.
    pub fn kill_primary_of(&mut self, key: &str) -> io::Result<String> {
        let first_port = self
            .nodes
            .iter_mut()
            .find_map(|n| n.is_running().then_some(n.port))
            .ok_or_else(|| io::Error::other("no node runs"))?;
        let output = Command::new("redis-cli")
            .args(["-p", &first_port.to_string(), "cluster", "keyslot", key])
            .output()?;
        let slot: u16 = String::from_utf8_lossy(&output.stdout).trim().parse().map_err(io::Error::other)?;
        let output =
            Command::new("redis-cli").args(["-p", &first_port.to_string(), "cluster", "slots"]).output()?;
        // `cluster slots`, one value a line: start, end, then the primary's host and port.
        let lines: Vec<String> = String::from_utf8_lossy(&output.stdout).lines().map(str::to_owned).collect();
        let mut port = None;
        for (i, line) in lines.iter().enumerate() {
            if let (Ok(start), Some(Ok(end))) =
                (line.trim().parse::<u16>(), lines.get(i + 1).map(|l| l.trim().parse::<u16>()))
                && (start..=end).contains(&slot)
            {
                port = lines.get(i + 3).and_then(|p| p.trim().parse::<u16>().ok());
                break;
            }
        }
        let port = port.ok_or_else(|| io::Error::other(format!("no primary serves slot {slot}")))?;
        let node = self
            .nodes
            .iter_mut()
            .find(|n| n.port == port)
            .ok_or_else(|| io::Error::other("an unknown primary"))?;
        node.kill();
        Ok(node.url.clone())
    }
}

impl Drop for RedisCluster {
    fn drop(&mut self) {
        for node in &mut self.nodes {
            node.kill();
        }
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

/// A primary, or a replica whose link to its primary is up.
fn replica_linked(port: u16) -> bool {
    Command::new("redis-cli").args(["-p", &port.to_string(), "info", "replication"]).output().is_ok_and(|o| {
        let text = String::from_utf8_lossy(&o.stdout);
        text.contains("role:master") || text.contains("master_link_status:up")
    })
}

fn cluster_ok(port: u16) -> bool {
    Command::new("redis-cli")
        .args(["-p", &port.to_string(), "cluster", "info"])
        .output()
        .is_ok_and(|o| String::from_utf8_lossy(&o.stdout).contains("cluster_state:ok"))
}
