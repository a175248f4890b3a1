//! A Redis of the test's own: `redis-server` started on a free loopback port and stopped
//! when dropped (or killed by its process id, to test a Redis that goes away), or the one
//! `PAYSPEC_REDIS_URL` names.

use std::io::{Read, Write};
use std::net::{TcpListener, TcpStream};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

/// A Redis for one test.
pub struct RedisServer {
    child: Option<Child>,
    /// Its URL, `redis://127.0.0.1:PORT/`.
    pub url: String,
}

/// What to do when no Redis can be had.
const HOW: &str = "the Redis tests need `redis-server` on the PATH (Debian: `apt-get install redis-server`) \
                   or PAYSPEC_REDIS_URL naming a Redis they may use";

impl RedisServer {
    /// Starts one (or takes PAYSPEC_REDIS_URL's); panics with what to install when neither
    /// can be had.
    pub fn start() -> RedisServer {
        if let Ok(url) = std::env::var("PAYSPEC_REDIS_URL")
            && !url.is_empty()
        {
            return RedisServer { child: None, url };
        }
        Self::start_own()
    }

    /// Starts one of the test's own, whatever PAYSPEC_REDIS_URL says (a test that kills
    /// its Redis must not kill a shared one).
    pub fn start_own() -> RedisServer {
        let port = TcpListener::bind("127.0.0.1:0")
            .and_then(|listener| listener.local_addr())
            .map(|addr| addr.port())
            .unwrap_or_else(|e| panic!("no free port: {e}"));
        let child = Command::new("redis-server")
            .args(["--port", &port.to_string(), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no"])
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .unwrap_or_else(|e| panic!("cannot start redis-server ({e}): {HOW}"));
        let server = RedisServer { child: Some(child), url: format!("redis://127.0.0.1:{port}/") };
        let deadline = Instant::now() + Duration::from_secs(10);
        while !ping(port) {
            assert!(
                Instant::now() < deadline,
                "redis-server did not answer PING on port {port} within 10 s: {HOW}"
            );
            std::thread::sleep(Duration::from_millis(20));
        }
        server
    }

    /// Stops it at once (SIGKILL), as a Redis that dies.
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
