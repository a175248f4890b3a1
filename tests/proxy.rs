//! The client's own sender through the proxies the environment names: a `CONNECT` tunnel
//! for `https` and `http` alike, with the proxy's `user:password` from the variable, and
//! nothing the proxy can read: counted at a loopback proxy that records every request it is
//! sent and every byte it tunnels. `NO_PROXY`, `no_proxy()` and loopback hosts go straight
//! to the server; a proxy that refuses the tunnel fails the call as not sent, with an error
//! that names the proxy and never its password.
//!
//! One test in its own binary: the variables are read when a client is built, so they are
//! set, and every client built, before anything else runs.

use std::sync::{Arc, Mutex};
use std::time::Duration;

use payspec_client::{Client, Credentials, Environment, Error, RetryPolicy};
use payspec_tests::loopback::{Behaviour, authority, bank_transfer as transfer, leaf, server};
use tokio::io::{AsyncReadExt, AsyncWriteExt};

/// What the proxy was asked, and what it carried.
#[derive(Clone, Debug)]
struct Asked {
    line: String,
    authorization: Option<String>,
    tunnelled: Vec<u8>,
}

/// The `Proxy-Authorization` the proxy takes: `payspec:pr0xy-pass`.
const PROXY_AUTH: &str = "Basic cGF5c3BlYzpwcjB4eS1wYXNz";

/// A proxy on `listener` that opens a tunnel for a `CONNECT` with [`PROXY_AUTH`] (to the
/// loopback server on `tls_port` for port 443, `plain_port` for port 80), refuses one
/// without it (`407`), and refuses to forward anything else (`502`).
async fn proxy(listener: std::net::TcpListener, tls_port: u16, plain_port: u16) -> Arc<Mutex<Vec<Asked>>> {
    listener.set_nonblocking(true).unwrap_or_else(|e| panic!("{e}"));
    let listener = tokio::net::TcpListener::from_std(listener).unwrap_or_else(|e| panic!("{e}"));
    let asked = Arc::new(Mutex::new(Vec::new()));
    let record = Arc::clone(&asked);
    tokio::spawn(async move {
        while let Ok((mut client, _)) = listener.accept().await {
            let record = Arc::clone(&record);
            tokio::spawn(async move {
                let mut head = Vec::new();
                let mut byte = [0u8; 1];
                while !head.ends_with(b"\r\n\r\n") {
                    match client.read(&mut byte).await {
                        Ok(1) => head.push(byte[0]),
                        _ => return,
                    }
                }
                let head = String::from_utf8_lossy(&head).into_owned();
                let line = head.lines().next().unwrap_or_default().to_owned();
                let authorization = head.lines().find_map(|l| {
                    let (name, value) = l.split_once(':')?;
                    name.eq_ignore_ascii_case("proxy-authorization").then(|| value.trim().to_owned())
                });
                let index = {
                    let mut asked = record.lock().unwrap_or_else(|p| p.into_inner());
                    asked.push(Asked {
                        line: line.clone(),
                        authorization: authorization.clone(),
                        tunnelled: Vec::new(),
                    });
                    asked.len() - 1
                };
                if !line.starts_with("CONNECT ") {
                    let _ = client.write_all(b"HTTP/1.1 502 Bad Gateway\r\ncontent-length: 0\r\n\r\n").await;
                    return;
                }
                if authorization.as_deref() != Some(PROXY_AUTH) {
                    let _ = client
                        .write_all(b"HTTP/1.1 407 Proxy Authentication Required\r\ncontent-length: 0\r\n\r\n")
                        .await;
                    return;
                }
                let port = if line.contains(":80 ") { plain_port } else { tls_port };
                let Ok(mut target) = tokio::net::TcpStream::connect(("127.0.0.1", port)).await else {
                    return;
                };
                if client.write_all(b"HTTP/1.1 200 Connection established\r\n\r\n").await.is_err() {
                    return;
                }
                let (mut from_client, mut to_client) = client.split();
                let (mut from_target, mut to_target) = target.split();
                let upstream = async {
                    let mut chunk = [0u8; 4096];
                    loop {
                        let n = match from_client.read(&mut chunk).await {
                            Ok(0) | Err(_) => break,
                            Ok(n) => n,
                        };
                        record.lock().unwrap_or_else(|p| p.into_inner())[index]
                            .tunnelled
                            .extend_from_slice(&chunk[..n]);
                        if to_target.write_all(&chunk[..n]).await.is_err() {
                            break;
                        }
                    }
                    let _ = to_target.shutdown().await;
                };
                let downstream = async {
                    let _ = tokio::io::copy(&mut from_target, &mut to_client).await;
                    let _ = to_client.shutdown().await;
                };
                tokio::join!(upstream, downstream);
            });
        }
    });
    asked
}

fn builder(base: &str, root: &str) -> payspec_client::ClientBuilder<Client> {
    Client::builder()
        .environment(Environment::Custom(base.to_owned()))
        .credentials(Credentials::new("client-id", "client-s3cret-value", "parent-account"))
        .retry_policy(RetryPolicy::never())
        .connect_timeout(Duration::from_secs(3))
        .timeout(Duration::from_secs(10))
        .add_root_certificates_pem(root)
}

fn build(builder: payspec_client::ClientBuilder<Client>) -> Client {
    builder.build().unwrap_or_else(|e| panic!("{e}"))
}

/// Sets an environment variable before any thread that reads the environment runs.
fn set(name: &str, value: &str) {
    // SAFETY: called only at the start of this binary's one test, before its runtime or any
    // other thread of it starts.
    unsafe { std::env::set_var(name, value) };
}

fn remove(name: &str) {
    // SAFETY: as for `set`.
    unsafe { std::env::remove_var(name) };
}

#[test]
fn the_own_sender_tunnels_through_the_proxy_the_environment_names() {
    let ca = authority();
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap_or_else(|e| panic!("{e}"));
    let proxy_port = listener.local_addr().unwrap_or_else(|e| panic!("{e}")).port();
    for name in
        ["HTTPS_PROXY", "https_proxy", "HTTP_PROXY", "http_proxy", "ALL_PROXY", "all_proxy", "no_proxy"]
    {
        remove(name);
    }
    // The right credentials, upper case, with hosts that are not proxied.
    set("HTTPS_PROXY", &format!("http://payspec:pr0xy-pass@127.0.0.1:{proxy_port}"));
    set("NO_PROXY", "skipped.test,.internal.test");
    let through = build(builder("https://payments.test", &ca.pem));
    let skipped = build(builder("https://skipped.test", &ca.pem));
    let not_asked = build(builder("https://payments.test", &ca.pem).no_proxy());
    // A loopback host is never proxied: built below, once the server's port is known.
    // Plain HTTP (allowed by name): tunnelled too, never forwarded.
    set("HTTP_PROXY", &format!("http://payspec:pr0xy-pass@127.0.0.1:{proxy_port}"));
    let cleartext = build(builder("http://payments.test", &ca.pem).allow_cleartext());
    // A wrong password, lower case.
    remove("HTTPS_PROXY");
    set("https_proxy", &format!("http://payspec:wr0ng-pass@127.0.0.1:{proxy_port}"));
    let refused = build(builder("https://payments.test", &ca.pem));

    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap_or_else(|e| panic!("{e}"));
    runtime.block_on(async move {
        let (tls_port, at_server) =
            server(Some(leaf(&["payments.test", "localhost"], Some(&ca), false)), Behaviour::default()).await;
        let (plain_port, at_plain) = server(None, Behaviour::default()).await;
        let asked = proxy(listener, tls_port, plain_port).await;
        let asked_now = || asked.lock().unwrap_or_else(|p| p.into_inner()).clone();

        through.transfers().bank_transfer(transfer("through-1")).await.unwrap_or_else(|e| panic!("{e}"));
        through.transfers().bank_transfer(transfer("through-2")).await.unwrap_or_else(|e| panic!("{e}"));
        let seen = asked_now();
        assert!(!seen.is_empty(), "no tunnel was asked for");
        for tunnel in &seen {
            assert_eq!(tunnel.line, "CONNECT payments.test:443 HTTP/1.1", "{seen:?}");
            assert_eq!(tunnel.authorization.as_deref(), Some(PROXY_AUTH));
            // TLS inside: the proxy read neither the secret, the token nor the body.
            for clear in [&b"client-s3cret-value"[..], b"tok-loopback", b"through-1", b"POST /"] {
                assert!(!tunnel.tunnelled.windows(clear.len()).any(|w| w == clear), "read in the tunnel");
            }
        }
        let requests = at_server.requests();
        assert_eq!(requests.len(), 3, "a token and two transfers, at the server: {requests:?}");
        let tunnels = seen.len();

        // NO_PROXY and no_proxy() go straight to a host this machine cannot resolve; the
        // proxy hears nothing, and nothing was sent.
        for client in [&skipped, &not_asked] {
            let error = client.transfers().bank_transfer(transfer("direct")).await.expect_err("no such host");
            assert!(!error.may_have_been_applied(), "{error}");
        }
        assert_eq!(asked_now().len(), tunnels, "a host the proxy was not asked for went through it");

        // A loopback host is never proxied.
        let loopback = build(builder(&format!("https://localhost:{tls_port}"), &ca.pem));
        loopback.transfers().bank_transfer(transfer("loopback")).await.unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(asked_now().len(), tunnels, "a loopback host went through the proxy");
        assert_eq!(at_server.requests().len(), 5, "its token and transfer, straight to the server");

        // Plain HTTP through the proxy: a tunnel to port 80, never a request it forwards.
        cleartext.transfers().bank_transfer(transfer("cleartext")).await.unwrap_or_else(|e| panic!("{e}"));
        let seen = asked_now();
        assert!(seen[tunnels..].iter().all(|t| t.line == "CONNECT payments.test:80 HTTP/1.1"), "{seen:?}");
        assert_eq!(at_plain.requests().len(), 2, "a token and a transfer, through the tunnel");
        let tunnels = seen.len();

        // The proxy refuses the tunnel: not sent, and the error names the proxy, not its
        // password.
        let error: Error = refused.transfers().bank_transfer(transfer("refused")).await.expect_err("refused");
        let text = error.to_string();
        assert!(!error.may_have_been_applied(), "{text}");
        assert!(text.contains("proxy") && text.contains(&format!("127.0.0.1:{proxy_port}")), "{text}");
        assert!(text.contains("`user:password`"), "{text}");
        assert!(!text.contains("wr0ng-pass") && !format!("{error:?}").contains("wr0ng-pass"), "{text}");
        let seen = asked_now();
        assert!(seen.len() > tunnels && seen[tunnels..].iter().all(|t| t.tunnelled.is_empty()), "{seen:?}");
        assert_eq!(at_server.requests().len(), 5, "nothing more reached the server");
    });
}
