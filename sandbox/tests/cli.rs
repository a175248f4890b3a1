//! The `payspec-sandbox` program's event commands against a running sandbox, as a
//! developer uses them from a shell: `trigger` makes an event happen and it is delivered,
//! `payment` prints the payment with its delivery's attempts, `resend` sends the delivery
//! again. Counted at a receiver that records every POST.

use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpListener;
use std::process::{Child, Command, Stdio};
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

const PROGRAM: &str = env!("CARGO_BIN_EXE_payspec-sandbox");

/// A receiver on loopback that answers every request `200` and counts them.
fn receiver() -> (String, Arc<AtomicUsize>) {
    refusing_first(0)
}

/// A receiver that answers its first `refused` requests `503`, then `200`; counts them all.
fn refusing_first(refused: usize) -> (String, Arc<AtomicUsize>) {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap_or_else(|e| panic!("{e}"));
    let url = format!("http://{}/hooks", listener.local_addr().unwrap_or_else(|e| panic!("{e}")));
    let count = Arc::new(AtomicUsize::new(0));
    let counted = Arc::clone(&count);
    std::thread::spawn(move || {
        for stream in listener.incoming() {
            let Ok(mut stream) = stream else { continue };
            let _ = stream.set_read_timeout(Some(Duration::from_secs(5)));
            let mut read = Vec::new();
            let mut chunk = [0u8; 4096];
            // The head, then the body its length names.
            while let Ok(n) = stream.read(&mut chunk) {
                if n == 0 {
                    break;
                }
                read.extend_from_slice(&chunk[..n]);
                let text = String::from_utf8_lossy(&read).to_lowercase();
                if let Some(end) = text.find("\r\n\r\n") {
                    let length = text[..end]
                        .lines()
                        .find_map(|l| {
                            l.strip_prefix("content-length:").map(|v| v.trim().parse().unwrap_or(0))
                        })
                        .unwrap_or(0usize);
                    if read.len() >= end + 4 + length {
                        break;
                    }
                }
            }
            let seen = counted.fetch_add(1, Ordering::SeqCst);
            let answer: &[u8] = if seen < refused {
                b"HTTP/1.1 503 Service Unavailable\r\ncontent-length: 4\r\nconnection: close\r\n\r\nbusy"
            } else {
                b"HTTP/1.1 200 OK\r\ncontent-length: 2\r\nconnection: close\r\n\r\nok"
            };
            let _ = stream.write_all(answer);
        }
    });
    (url, count)
}

/// The sandbox program, and the URL it listens on.
struct Running(Child, String);

impl Drop for Running {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

fn start(webhook: &str) -> Running {
    start_with(&["--webhook", webhook, "--signing-key", "cli-key", "--webhook-time-scale", "600"])
}

fn start_with(args: &[&str]) -> Running {
    let mut child = Command::new(PROGRAM)
        .args(["--port", "0"])
        .args(args)
        .stdout(Stdio::piped())
        .spawn()
        .unwrap_or_else(|e| panic!("{e}"));
    let stdout = child.stdout.take().unwrap_or_else(|| panic!("no stdout"));
    let mut reader = BufReader::new(stdout);
    let mut line = String::new();
    let _ = reader.read_line(&mut line);
    // The rest of what it prints, read until it ends.
    std::thread::spawn(move || std::io::copy(&mut reader, &mut std::io::sink()));
    let url = line
        .trim()
        .strip_prefix("payspec-sandbox listening on ")
        .unwrap_or_else(|| panic!("{line}"))
        .to_owned();
    Running(child, url)
}

/// Runs one event command; its output, which must be JSON.
fn command(args: &[&str], url: &str) -> serde_json::Value {
    let output =
        Command::new(PROGRAM).args(args).args(["--url", url]).output().unwrap_or_else(|e| panic!("{e}"));
    let text = String::from_utf8_lossy(&output.stdout).into_owned();
    assert!(output.status.success(), "{args:?}: {text}{}", String::from_utf8_lossy(&output.stderr));
    serde_json::from_str(&text).unwrap_or_else(|e| panic!("{args:?}: {e}: {text}"))
}

fn wait_for(count: &AtomicUsize, at_least: usize) {
    let deadline = Instant::now() + Duration::from_secs(5);
    while count.load(Ordering::SeqCst) < at_least && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(20));
    }
}

#[test]
fn trigger_payment_and_resend_from_the_shell() {
    let (webhook, received) = receiver();
    let sandbox = start(&webhook);
    let triggered = command(&["trigger", "payout_success"], &sandbox.1);
    let id = triggered["transactionId"].as_str().unwrap_or_else(|| panic!("{triggered}")).to_owned();
    wait_for(&received, 1);
    assert_eq!(received.load(Ordering::SeqCst), 1, "the event was delivered once");

    let payment = command(&["payment", &id], &sandbox.1);
    assert_eq!(payment["state"], "SUCCESS", "{payment}");
    assert_eq!(payment["amount"], "1500.00", "{payment}");
    let delivery = &payment["deliveries"][0];
    assert_eq!(delivery["eventType"], "payout_success", "{payment}");
    assert_eq!(delivery["attempts"][0]["status"], 200, "{payment}");
    let delivery_id = delivery["id"].as_str().unwrap_or_else(|| panic!("{payment}")).to_owned();

    command(&["resend", &delivery_id], &sandbox.1);
    wait_for(&received, 2);
    assert_eq!(received.load(Ordering::SeqCst), 2, "sent again on demand");

    // An unknown event is refused, and says which there are.
    let refused = Command::new(PROGRAM)
        .args(["trigger", "order_success", "--url", &sandbox.1])
        .output()
        .unwrap_or_else(|e| panic!("{e}"));
    assert!(!refused.status.success());
    assert!(String::from_utf8_lossy(&refused.stdout).contains("payout_refund"));
}

/// Runs the program with `args`; its exit code, standard output and standard error.
fn run(args: &[&str]) -> (Option<i32>, String, String) {
    let output = Command::new(PROGRAM).args(args).output().unwrap_or_else(|e| panic!("{e}"));
    (
        output.status.code(),
        String::from_utf8_lossy(&output.stdout).into_owned(),
        String::from_utf8_lossy(&output.stderr).into_owned(),
    )
}

#[test]
fn deliveries_state_and_settle_from_the_shell_and_a_resend_goes_to_the_url_in_force_retried_as_a_first_delivery()
 {
    let (old, to_old) = receiver();
    let sandbox = start(&old);
    command(&["trigger", "payout_success"], &sandbox.1);
    wait_for(&to_old, 1);
    let listed = command(&["deliveries"], &sandbox.1);
    let delivery_id = listed["deliveries"][0]["id"].as_str().unwrap_or_else(|| panic!("{listed}")).to_owned();
    let state = command(&["state"], &sandbox.1);
    assert!(state.is_object(), "{state}");
    let settled = command(&["settle"], &sandbox.1);
    assert!(settled.is_object(), "{settled}");

    // The merchant moved its receiver: a resend goes to the new one, and one it refuses
    // (503) is sent again on the service's schedule (scaled down here), as a re-push is.
    let (new, to_new) = refusing_first(1);
    let body = format!(r#"{{"url":"{new}","signing_key":"cli-key"}}"#);
    let put = put(&format!("{}/__sandbox/webhook", sandbox.1), &body);
    assert_eq!(put, 200);
    command(&["resend", &delivery_id], &sandbox.1);
    wait_for(&to_new, 2);
    assert_eq!(to_new.load(Ordering::SeqCst), 2, "the 503 was not followed by a retry at the new URL");
    assert_eq!(to_old.load(Ordering::SeqCst), 1, "a resend went to the old URL");
}

/// A PUT with a JSON body over a plain socket; the answer's status.
fn put(url: &str, body: &str) -> u16 {
    let rest = url.strip_prefix("http://").unwrap_or_else(|| panic!("{url}"));
    let (authority, path) = rest.split_once('/').unwrap_or((rest, ""));
    let mut stream = std::net::TcpStream::connect(authority).unwrap_or_else(|e| panic!("{e}"));
    write!(
        stream,
        "PUT /{path} HTTP/1.1\r\nhost: {authority}\r\ncontent-type: application/json\r\ncontent-length: {}\r\nconnection: close\r\n\r\n{body}",
        body.len()
    )
    .unwrap_or_else(|e| panic!("{e}"));
    let mut answer = String::new();
    let _ = stream.read_to_string(&mut answer);
    answer.split(' ').nth(1).and_then(|s| s.parse().ok()).unwrap_or_else(|| panic!("{answer}"))
}

#[test]
fn usage_reads_as_sentences_the_port_in_use_is_named_and_the_version_is_printed() {
    let (code, out, _) = run(&["--version"]);
    assert_eq!(code, Some(0));
    assert_eq!(out.trim(), format!("payspec-sandbox {}", env!("CARGO_PKG_VERSION")));

    let (code, _, err) = run(&["payment", "--url", "http://127.0.0.1:9"]);
    assert_eq!(code, Some(2));
    assert!(
        err.starts_with("payspec-sandbox payment: name the payment to show (its id or its reference)"),
        "{err}"
    );
    let (code, _, err) = run(&["resend", "sbx-hook-1"]);
    assert_eq!(code, Some(2));
    assert!(
        err.starts_with("payspec-sandbox resend: give the URL of the running sandbox with --url"),
        "{err}"
    );

    let taken = TcpListener::bind("127.0.0.1:0").unwrap_or_else(|e| panic!("{e}"));
    let port = taken.local_addr().unwrap_or_else(|e| panic!("{e}")).port().to_string();
    let (code, _, err) = run(&["--port", &port]);
    assert_eq!(code, Some(1));
    assert!(err.contains(&format!("cannot listen on 127.0.0.1:{port}")), "{err}");
    assert!(err.contains("choose another port"), "{err}");
}

#[test]
fn faults_given_on_the_command_line_are_queued_before_the_first_request() {
    let running = start_with(&[
        "--fault",
        "fetch_parent_account_balance=server_error*2",
        "--fault",
        "bank_transfer=pending",
    ]);
    let state = command(&["state"], &running.1);
    assert_eq!(
        state["faults"],
        serde_json::json!({
            "bank_transfer": ["pending"],
            "fetch_parent_account_balance": ["server_error", "server_error"],
        }),
        "{state}"
    );
    drop(running);

    for (fault, said) in [
        ("bank_transfer", "is not OPERATION=FAULT, such as bank_transfer=pending"),
        ("bank_transfer=gremlins", "unknown fault `gremlins`: too_many_requests, server_error, delay"),
        ("bank_transfer=pending*0", "`0` is not a number of times from 1 to 10000"),
    ] {
        let (code, _, err) = run(&["--port", "0", "--fault", fault]);
        assert_eq!(code, Some(2), "{fault}");
        assert!(err.contains(said), "{fault}: {err}");
    }
    // An operation the spec does not have is refused once the spec is loaded.
    let (code, _, err) = run(&["--port", "0", "--fault", "no_such_operation=drop"]);
    assert_eq!(code, Some(2));
    assert!(err.contains("--fault no_such_operation"), "{err}");
}
