//! A user's crate with a spec of its own (`service.yaml`, a notes service): it depends on
//! `payspec-runtime` and `payspec-macros` only, generates its client with `generate!`, and
//! calls each of its three operations against a loopback server that counts what it
//! receives. `tests/external_crate.rs` builds and runs it from outside the workspace; CI
//! also builds it against the packaged crates.

use std::io::{BufRead, BufReader, Read, Write};
use std::net::{TcpListener, TcpStream};
use std::process::ExitCode;
use std::sync::{Arc, Mutex};

/// The client of `service.yaml`, generated at compile time (the path is taken from this file).
mod notes {
    payspec_macros::generate!("../service.yaml");
}

use notes::requests::{CreateNote, GetNote, ListNotes};
use notes::types::NoteId;
use notes::{Client, Environment};

/// What the server received: one line per request, `[user agent +other headers] METHOD
/// target body`.
type Received = Arc<Mutex<Vec<String>>>;

fn main() -> ExitCode {
    match run() {
        Ok(()) => ExitCode::SUCCESS,
        Err(problem) => {
            eprintln!("{problem}");
            ExitCode::FAILURE
        }
    }
}

fn run() -> Result<(), String> {
    // The spec's environments are the client's; its default is the spec's.
    println!("default environment: {}", Environment::DEFAULT.base_url());
    println!("production: {}", Environment::Production.base_url());

    let received = Received::default();
    let base_url = serve(Arc::clone(&received)).map_err(|e| format!("cannot serve: {e}"))?;
    let client: Client = Client::builder()
        .environment(Environment::Custom(base_url))
        .build()
        .map_err(|e| format!("cannot build the client: {e}"))?;

    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .map_err(|e| format!("cannot start a runtime: {e}"))?;
    runtime.block_on(async {
        let created = client
            .notes()
            .create_note(CreateNote::new("buy milk").pinned(true))
            .await
            .map_err(|e| format!("create_note: {e}"))?;
        let note = created.into_data().ok_or("create_note answered no note")?;
        println!(
            "created: {} {:?} pinned={:?}",
            note.id.as_ref().map_or("-", NoteId::as_str),
            note.text,
            note.pinned
        );

        let id = note.id.ok_or("the created note has no id")?;
        let fetched =
            client.notes().get_note(GetNote::new(id)).await.map_err(|e| format!("get_note: {e}"))?;
        let fetched = fetched.into_data().ok_or("get_note answered no note")?;
        println!("fetched: {:?}", fetched.text);

        let listed = client
            .notes()
            .list_notes(ListNotes::default().pinned(true))
            .await
            .map_err(|e| format!("list_notes: {e}"))?;
        println!("listed: {} notes", listed.into_data().map_or(0, |notes| notes.len()));
        Ok::<(), String>(())
    })?;

    let received = received.lock().map_err(|_| "the server failed")?;
    println!("server received {} requests", received.len());
    for line in received.iter() {
        println!("received: {line}");
    }
    Ok(())
}

/// A loopback HTTP/1.1 server that answers the notes service's three routes unwrapped, as
/// the spec says, and records every request. Returns its base URL.
fn serve(received: Received) -> std::io::Result<String> {
    let listener = TcpListener::bind("127.0.0.1:0")?;
    let address = listener.local_addr()?;
    std::thread::spawn(move || {
        for stream in listener.incoming().flatten() {
            let received = Arc::clone(&received);
            std::thread::spawn(move || connection(stream, &received));
        }
    });
    Ok(format!("http://{address}"))
}

/// Answers the requests of one connection, in order, until the client closes it.
fn connection(stream: TcpStream, received: &Mutex<Vec<String>>) {
    let Ok(mut writer) = stream.try_clone() else { return };
    let mut reader = BufReader::new(stream);
    loop {
        let mut request_line = String::new();
        if reader.read_line(&mut request_line).unwrap_or(0) == 0 {
            return;
        }
        let (mut length, mut agent, mut others) = (0, String::new(), Vec::new());
        loop {
            let mut header = String::new();
            if reader.read_line(&mut header).unwrap_or(0) == 0 {
                return;
            }
            let header = header.trim_end();
            if header.is_empty() {
                break;
            }
            if let Some((name, value)) = header.split_once(':') {
                if name.eq_ignore_ascii_case("content-length") {
                    length = value.trim().parse().unwrap_or(0);
                } else if name.eq_ignore_ascii_case("user-agent") {
                    agent = value.trim().to_owned();
                } else if !["host", "accept", "content-type"].iter().any(|h| name.eq_ignore_ascii_case(h)) {
                    // Anything a spec of its own does not ask for (a token, an account id).
                    others.push(name.to_ascii_lowercase());
                }
            }
        }
        let mut body = vec![0; length];
        if reader.read_exact(&mut body).is_err() {
            return;
        }
        let mut parts = request_line.split_whitespace();
        let (method, target) = (parts.next().unwrap_or(""), parts.next().unwrap_or(""));
        let body = String::from_utf8_lossy(&body).into_owned();
        let note = r#"{"id":"n-1","text":"buy milk","pinned":true}"#;
        let (status, answer) = match (method, target.split('?').next().unwrap_or("")) {
            ("POST", "/notes") => ("201 Created", note.to_owned()),
            ("GET", "/notes/n-1") => ("200 OK", note.to_owned()),
            ("GET", "/notes") => ("200 OK", format!("[{note}]")),
            _ => ("404 Not Found", r#"{"error":"no such route"}"#.to_owned()),
        };
        if let Ok(mut lines) = received.lock() {
            let others = if others.is_empty() { String::new() } else { format!(" +{}", others.join(" +")) };
            lines.push(format!("[{agent}{others}] {method} {target} {body}").trim_end().to_owned());
        }
        let response = format!(
            "HTTP/1.1 {status}\r\ncontent-type: application/json\r\ncontent-length: {}\r\n\r\n{answer}",
            answer.len()
        );
        if writer.write_all(response.as_bytes()).is_err() {
            return;
        }
    }
}
