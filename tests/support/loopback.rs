//! A loopback server that answers a token issue and transfers as the service does, over
//! plain TCP or TLS with a certificate made here (a private CA, a wrong name, an expired or
//! a self-signed one), and counts what it saw: connections, TLS handshakes, the protocol
//! each handshake offered, and each request with the connection it came on.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

use rcgen::{BasicConstraints, CertificateParams, IsCa, Issuer, KeyPair};
use rustls::pki_types::{CertificateDer, PrivateKeyDer, PrivatePkcs8KeyDer};
use tokio::io::{AsyncRead, AsyncReadExt, AsyncWrite, AsyncWriteExt};
use tokio::net::TcpListener;

/// A bank transfer of 10.00 under `reference`, as the tests against these servers send it.
pub fn bank_transfer(reference: &str) -> payspec_client::requests::BankTransfer {
    payspec_client::requests::BankTransfer::builder()
        .amount(payspec_client::Amount::from(10u32))
        .destination_account_number("0123456789")
        .destination_bank_code("058")
        .customer_name("Ada Obi")
        .merchant_tx_ref(reference)
        .build()
        .unwrap_or_else(|e| panic!("{e}"))
}

/// A private CA: its certificate (PEM) and what signs with it.
pub struct Authority {
    /// The CA's certificate, to trust with `add_root_certificates_pem`.
    pub pem: String,
    issuer: Issuer<'static, KeyPair>,
}

/// A new private CA.
pub fn authority() -> Authority {
    let mut params = CertificateParams::new(Vec::<String>::new()).unwrap_or_else(|e| panic!("{e}"));
    params.is_ca = IsCa::Ca(BasicConstraints::Unconstrained);
    params.distinguished_name.push(rcgen::DnType::CommonName, "payspec test CA");
    let key = KeyPair::generate().unwrap_or_else(|e| panic!("{e}"));
    let certificate = params.self_signed(&key).unwrap_or_else(|e| panic!("{e}"));
    Authority { pem: certificate.pem(), issuer: Issuer::new(params, key) }
}

/// A server's certificate and key.
pub type Certificate = (CertificateDer<'static>, PrivateKeyDer<'static>);

/// A server certificate for `names`, signed by `by` (or by itself), valid now unless
/// `expired` (it ended in 2002).
pub fn leaf(names: &[&str], by: Option<&Authority>, expired: bool) -> Certificate {
    let mut params = CertificateParams::new(names.iter().map(|n| (*n).to_owned()).collect::<Vec<_>>())
        .unwrap_or_else(|e| panic!("{e}"));
    params
        .distinguished_name
        .push(rcgen::DnType::CommonName, format!("payspec test server {}", names.join(" ")));
    if expired {
        params.not_before = rcgen::date_time_ymd(2001, 1, 1);
        params.not_after = rcgen::date_time_ymd(2002, 1, 1);
    }
    let key = KeyPair::generate().unwrap_or_else(|e| panic!("{e}"));
    let certificate = match by {
        Some(authority) => params.signed_by(&key, &authority.issuer),
        None => params.self_signed(&key),
    }
    .unwrap_or_else(|e| panic!("{e}"));
    let key = PrivateKeyDer::Pkcs8(PrivatePkcs8KeyDer::from(key.serialize_der()));
    (certificate.der().clone(), key)
}

/// A certificate for `names` signed by `by`, and its key, both as PEM: for a server that
/// reads them from files (`redis-server --tls-cert-file`).
pub fn leaf_pem(names: &[&str], by: &Authority) -> (String, String) {
    let params = CertificateParams::new(names.iter().map(|n| (*n).to_owned()).collect::<Vec<_>>())
        .unwrap_or_else(|e| panic!("{e}"));
    let key = KeyPair::generate().unwrap_or_else(|e| panic!("{e}"));
    let certificate = params.signed_by(&key, &by.issuer).unwrap_or_else(|e| panic!("{e}"));
    (certificate.pem(), key.serialize_pem())
}

/// How the server treats its connections.
#[derive(Clone, Copy, Debug, Default)]
pub struct Behaviour {
    /// Closes each connection right after its first answer, without `Connection: close`
    /// (and, over TLS, without `close_notify`): a client that keeps it for another
    /// request finds it closed.
    pub close_after_answer: bool,
    /// A `Keep-Alive` header each answer carries (`timeout=2`).
    pub keep_alive: Option<&'static str>,
    /// Only the first this many connections are answered; any later one is held open and
    /// never read from (a TLS handshake that stalls, a request never answered).
    pub answered_connections: Option<usize>,
}

/// One request as the server read it.
#[derive(Clone, Debug)]
pub struct Seen {
    /// The request line (`POST /v2/transfers/bank HTTP/1.1`).
    pub line: String,
    /// The body.
    pub body: String,
    /// The number of the connection it came on (from 0).
    pub connection: usize,
}

/// What the server counted.
#[derive(Default)]
pub struct Counted {
    /// Connections accepted.
    pub connections: AtomicUsize,
    /// TLS handshakes completed.
    pub handshakes: AtomicUsize,
    /// The protocol each handshake agreed by ALPN.
    pub alpn: Mutex<Vec<Option<Vec<u8>>>>,
    requests: Mutex<Vec<Seen>>,
}

impl Counted {
    /// Every request read so far.
    pub fn requests(&self) -> Vec<Seen> {
        self.requests.lock().unwrap_or_else(|p| p.into_inner()).clone()
    }
}

/// A server on loopback, TLS with `certificate` when given; its port and what it counts.
pub async fn server(certificate: Option<Certificate>, behaviour: Behaviour) -> (u16, Arc<Counted>) {
    let acceptor = certificate.map(|(certificate, key)| {
        // ring's provider (deprecated by rustls 0.23.48 for lacking post-quantum key exchange),
        // which a loopback test's TLS needs no more than.
        #[allow(deprecated, reason = "a test server's provider; see above")]
        let provider = Arc::new(rustls::crypto::ring::default_provider());
        let mut config = rustls::ServerConfig::builder_with_provider(provider)
            .with_safe_default_protocol_versions()
            .unwrap_or_else(|e| panic!("{e}"))
            .with_no_client_auth()
            .with_single_cert(vec![certificate], key)
            .unwrap_or_else(|e| panic!("{e}"));
        config.alpn_protocols = vec![b"http/1.1".to_vec()];
        tokio_rustls::TlsAcceptor::from(Arc::new(config))
    });
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap_or_else(|e| panic!("{e}"));
    let port = listener.local_addr().unwrap_or_else(|e| panic!("{e}")).port();
    let counted = Arc::new(Counted::default());
    let shared = Arc::clone(&counted);
    tokio::spawn(async move {
        while let Ok((socket, _)) = listener.accept().await {
            let (acceptor, counted) = (acceptor.clone(), Arc::clone(&shared));
            let connection = counted.connections.fetch_add(1, Ordering::SeqCst);
            if behaviour.answered_connections.is_some_and(|answered| connection >= answered) {
                tokio::spawn(async move {
                    let _held = socket;
                    tokio::time::sleep(std::time::Duration::from_secs(600)).await;
                });
                continue;
            }
            tokio::spawn(async move {
                match acceptor {
                    None => answer(socket, connection, &counted, behaviour).await,
                    Some(acceptor) => {
                        let Ok(stream) = acceptor.accept(socket).await else { return };
                        counted.handshakes.fetch_add(1, Ordering::SeqCst);
                        counted
                            .alpn
                            .lock()
                            .unwrap_or_else(|p| p.into_inner())
                            .push(stream.get_ref().1.alpn_protocol().map(<[u8]>::to_vec));
                        answer(stream, connection, &counted, behaviour).await;
                    }
                }
            });
        }
    });
    (port, counted)
}

/// Reads requests from `stream` and answers each, as `behaviour` says.
async fn answer<S: AsyncRead + AsyncWrite + Unpin>(
    mut stream: S,
    connection: usize,
    counted: &Counted,
    behaviour: Behaviour,
) {
    let mut buffer = Vec::new();
    let mut chunk = [0u8; 4096];
    loop {
        let Ok(n) = stream.read(&mut chunk).await else { return };
        if n == 0 {
            return;
        }
        buffer.extend_from_slice(&chunk[..n]);
        let Some(head_end) = buffer.windows(4).position(|w| w == b"\r\n\r\n") else { continue };
        let head = String::from_utf8_lossy(&buffer[..head_end]).into_owned();
        let length = head
            .lines()
            .find_map(|l| {
                l.to_ascii_lowercase()
                    .strip_prefix("content-length:")
                    .map(|v| v.trim().parse::<usize>().unwrap_or(0))
            })
            .unwrap_or(0);
        if buffer.len() < head_end + 4 + length {
            continue;
        }
        let line = head.lines().next().unwrap_or_default().to_owned();
        let body = String::from_utf8_lossy(&buffer[head_end + 4..head_end + 4 + length]).into_owned();
        counted.requests.lock().unwrap_or_else(|p| p.into_inner()).push(Seen {
            line: line.clone(),
            body,
            connection,
        });
        buffer.drain(..head_end + 4 + length);
        let body = if line.contains("/auth/token/issue") {
            r#"{"code":"00","description":"Success","data":{"businessId":"b","access_token":"tok-loopback","refresh_token":"ref-loopback","expiresAt":4102444800000}}"#
        } else {
            r#"{"code":"00","description":"SUCCESS","status":true,"data":{"id":"API-TRANSFER-loopback","status":"SUCCESS"}}"#
        };
        let keep_alive = behaviour.keep_alive.map(|k| format!("keep-alive: {k}\r\n")).unwrap_or_default();
        let answer = format!(
            "HTTP/1.1 200 OK\r\ncontent-type: application/json\r\n{keep_alive}content-length: {}\r\n\r\n{body}",
            body.len()
        );
        if stream.write_all(answer.as_bytes()).await.is_err() || stream.flush().await.is_err() {
            return;
        }
        if behaviour.close_after_answer {
            // Dropped: a FIN, and over TLS no close_notify.
            return;
        }
    }
}
