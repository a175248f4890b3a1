//! The errors a newcomer meets first say what happened and what to do, through the
//! generated client over loopback: the host in a connection error, TLS spoken to a plain
//! HTTP server, a base URL without a scheme, a call that ran out of time waiting for its
//! token, the blocking client inside an async runtime; and the `User-Agent` sent.

use std::time::Duration;

use payspec_client::ErrorDetail;
use payspec_client::requests::ListBanks;
use payspec_client::{Client, ClientBuilder, Credentials, DEFAULT_USER_AGENT, Environment, Error, blocking};
use payspec_tests::mock::{MockServer, Recorded, Reply};
use serde_json::json;

const SECRET: &str = "first-errors-secret-77";

fn builder(url: String) -> ClientBuilder<Client> {
    Client::builder()
        .environment(Environment::Custom(url))
        .credentials(Credentials::new("client-1", SECRET, "acct-1"))
        .timeout(Duration::from_secs(5))
}

async fn server(handler: impl Fn(&Recorded, usize) -> Reply + Send + Sync + 'static) -> MockServer {
    MockServer::start(handler).await.unwrap_or_else(|e| panic!("mock server: {e}"))
}

fn grant() -> Reply {
    Reply::ok(json!({"access_token": "tok-1", "expiresAt": "2999-01-01T00:00:00Z"}))
}

#[tokio::test]
async fn a_connection_error_names_the_host_and_no_secret() {
    // A port nothing listens on: bind one, then close it.
    let port = std::net::TcpListener::bind("127.0.0.1:0").and_then(|l| l.local_addr()).map(|a| a.port());
    let port = port.unwrap_or_else(|e| panic!("{e}"));
    let client = builder(format!("http://127.0.0.1:{port}/base")).build().unwrap_or_else(|e| panic!("{e}"));
    let error = client.transfers().list_banks(ListBanks::new()).await.err();
    let text = error.as_ref().map(ToString::to_string).unwrap_or_default();
    assert!(text.contains(&format!("with http://127.0.0.1:{port} (the request was not sent)")), "{text}");
    assert!(!text.contains(SECRET) && !text.contains("/base"), "{text}");
    assert!(
        matches!(error.as_ref().map(Error::detail), Some(ErrorDetail::Auth { cause, .. }) if matches!(cause.detail(), ErrorDetail::Transport { .. })),
        "{error:?}"
    );
}

#[tokio::test]
async fn tls_spoken_to_a_plain_http_server_says_to_write_http() -> Result<(), Box<dyn std::error::Error>> {
    // The sandbox speaks plain HTTP, and answers a TLS hello with an HTTP error, as any
    // HTTP server does.
    let sandbox = payspec_sandbox::Sandbox::start().await?;
    let plain = sandbox.base_url().trim_end_matches('/').to_owned();
    let https = plain.replacen("http://", "https://", 1);
    let client = builder(https).build()?;
    let error = client.transfers().list_banks(ListBanks::new()).await.err();
    let text = error.as_ref().map(ToString::to_string).unwrap_or_default();
    assert!(text.contains(&format!("write its URL as `{plain}`")), "{text}");
    assert!(text.contains("did not answer in TLS"), "{text}");
    assert_eq!(sandbox.received("issue_token"), 0, "no request reached the service");
    Ok(())
}

#[test]
fn a_base_url_without_a_scheme_is_shown_with_the_fix() {
    for (url, expected) in [
        ("127.0.0.1:8080", "`127.0.0.1:8080` has no scheme: write `http://127.0.0.1:8080`"),
        ("localhost:3000/api", "`localhost:3000/api` has no scheme: write `http://localhost:3000/api`"),
        ("ftp://files.example", "`ftp://files.example` must start with `http://` or `https://`"),
        ("https://user:pw-secret@api.example/x?y=1", "`https://***@api.example/x?y=1` has a query"),
        ("http://exa mple", "`http://exa mple` is not a valid URL"),
    ] {
        let error = builder(url.to_owned()).build().err().map(|e| e.to_string()).unwrap_or_default();
        assert!(error.contains(expected), "{url}: {error}");
        assert!(!error.contains("pw-secret"), "{error}");
    }
}

#[tokio::test]
async fn a_call_that_ran_out_of_time_waiting_for_its_token_says_so() {
    let server = server(|request, _| {
        if request.path().contains("/auth/") {
            grant().delay(Duration::from_secs(3))
        } else {
            Reply::ok(json!([]))
        }
    })
    .await;
    let client = builder(server.url()).call_timeout(Duration::from_millis(300)).build();
    let client = client.unwrap_or_else(|e| panic!("{e}"));
    let error = client.transfers().list_banks(ListBanks::new()).await.err();
    assert!(
        matches!(
            error.as_ref().map(Error::detail),
            Some(ErrorDetail::Timeout { waiting_for_token: true, may_have_reached_server: false, .. })
        ),
        "{error:?}"
    );
    let text = error.map(|e| e.to_string()).unwrap_or_default();
    assert!(text.contains("waiting for its access token (the request was not sent)"), "{text}");
    assert_eq!(server.count("GET", "/v1/transfers/banks"), 0);
}

#[tokio::test]
async fn the_user_agent_names_the_crate_unless_set() {
    let server =
        server(|request, _| if request.path().contains("/auth/") { grant() } else { Reply::ok(json!([])) })
            .await;
    let default = builder(server.url()).build().unwrap_or_else(|e| panic!("{e}"));
    let own = builder(server.url()).user_agent("shop-backend/2.1").build().unwrap_or_else(|e| panic!("{e}"));
    assert!(default.transfers().list_banks(ListBanks::new()).await.is_ok());
    assert!(own.transfers().list_banks(ListBanks::new()).await.is_ok());
    let agents: Vec<Option<String>> = server
        .requests_to("GET", "/v1/transfers/banks")
        .iter()
        .map(|r| r.header("user-agent").map(str::to_owned))
        .collect();
    assert_eq!(agents, [Some(DEFAULT_USER_AGENT.to_owned()), Some("shop-backend/2.1".to_owned())]);
    assert!(DEFAULT_USER_AGENT.starts_with("payspec-client/"), "{DEFAULT_USER_AGENT}");
}

#[tokio::test]
async fn the_blocking_client_refuses_inside_an_async_runtime_instead_of_panicking() {
    let server = server(|_, _| grant()).await;
    let client = builder(server.url()).build().unwrap_or_else(|e| panic!("{e}"));
    let made = blocking::Client::new(client);
    let text = made.err().map(|e| e.to_string()).unwrap_or_default();
    assert!(text.contains("cannot run inside an async runtime"), "{text}");
    // Made outside, then called inside: refused too, and nothing is sent.
    let url = server.url();
    let outside = std::thread::spawn(move || blocking::Client::new(builder(url).build()?)).join();
    let outside = match outside {
        Ok(Ok(client)) => client,
        other => {
            panic!("the blocking client could not be made on a plain thread: {:?}", other.map(|r| r.err()))
        }
    };
    let called = outside.transfers().list_banks(ListBanks::new());
    assert!(
        matches!(&called.as_ref().map_err(|e| e.detail()), Err(ErrorDetail::Config { reason, .. }) if reason.contains("async runtime")),
        "{called:?}"
    );
    assert!(server.requests().is_empty());
}

#[test]
fn the_spec_s_environments_are_the_client_s_and_its_default_is_the_sandbox() {
    // The payments spec names live and the hosted sandbox, and the hosted sandbox as the default.
    assert_eq!(Environment::Live.base_url(), payspec_client::environments::LIVE);
    assert_eq!(Environment::DEFAULT, Environment::HostedSandbox);
    let client = Client::builder().credentials(Credentials::new("c", SECRET, "a")).build();
    let shown = format!("{:?}", client.unwrap_or_else(|e| panic!("{e}")));
    assert!(
        shown.contains(&format!("base_url: \"{}\"", payspec_client::environments::HOSTED_SANDBOX)),
        "{shown}"
    );
    // Any base URL converts too, its trailing slash dropped.
    let custom: payspec_client::runtime::BaseUrl =
        Environment::Custom("http://127.0.0.1:8080/".into()).into();
    assert_eq!(custom.as_str(), "http://127.0.0.1:8080");
}

#[test]
fn service_codes_come_from_the_spec_and_say_whether_to_retry() {
    use payspec_client::ServiceCode;
    let refused = payspec_client::Error::service("01", "try again");
    assert_eq!(ServiceCode::of(&refused), Some(ServiceCode::Generic));
    assert!(ServiceCode::of(&refused).is_some_and(|c| c.is_retryable()));
    for code in ["02", "05", "06", "99"] {
        let error = payspec_client::Error::service(code, "");
        assert!(!ServiceCode::of(&error).is_some_and(|c| c.is_retryable()), "{code}");
        assert_eq!(ServiceCode::of(&error).map(|c| c.to_string()).as_deref(), Some(code));
    }
    assert_eq!(ServiceCode::from("99"), ServiceCode::Other("99".into()));
    assert_eq!(ServiceCode::from(payspec_client::SUCCESS_CODE), ServiceCode::Success);
}
