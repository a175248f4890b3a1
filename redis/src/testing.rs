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
}

impl RedisServer {
    /// The Redis `PAYSPEC_REDIS_URL` names, when set, else one of this test's own
    /// ([`start_own`](Self::start_own)).
    pub fn start() -> io::Result<RedisServer> {
        match std::env::var("PAYSPEC_REDIS_URL") {
            Ok(url) if !url.is_empty() => Ok(RedisServer { child: None, url }),
            _ => Self::start_own(),
        }
    }

    /// Starts a `redis-server` of this test's own on a free loopback port, whatever
    /// `PAYSPEC_REDIS_URL` says (a test that kills its Redis must not kill a shared one),
    /// and waits until it answers. The error says what to install when it cannot start.
    pub fn start_own() -> io::Result<RedisServer> {
        let port = TcpListener::bind("127.0.0.1:0")?.local_addr()?.port();
        let child = Command::new("redis-server")
            .args(["--port", &port.to_string(), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no"])
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .map_err(|e| io::Error::new(e.kind(), format!("cannot start redis-server ({e}): {HOW}")))?;
        let mut server = RedisServer { child: Some(child), url: format!("redis://127.0.0.1:{port}/") };
        let deadline = Instant::now() + READY_WITHIN;
        while !ping(port) {
            let exited = server.child.as_mut().and_then(|child| child.try_wait().ok().flatten());
            if exited.is_some() || Instant::now() >= deadline {
                server.kill();
                return Err(io::Error::new(
                    io::ErrorKind::TimedOut,
                    format!("redis-server did not answer PING on port {port} within {READY_WITHIN:?}: {HOW}"),
                ));
            }
            std::thread::sleep(Duration::from_millis(20));
        }
        Ok(server)
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
    let mut answer = [0u8; 7];
    stream.read_exact(&mut answer).is_ok() && &answer == b"+PONG\r\n"
}
