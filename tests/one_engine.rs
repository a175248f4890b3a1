//! One engine: `generate!` and the build step of `payspec-client` produce the same code for
//! the same spec. Checked twice: as tokens (the macro's expansion against
//! `generate`, the text the build step writes, read as tokens), and as behaviour (the built-in spec
//! expanded by the macro in this crate, against the `payspec-client` crate built by
//! build.rs: the same routes, the same requests, the same bytes on the wire).

use payspec_client::{Credentials, Environment, Route};
use payspec_codegen::macros::expand_generate;
use payspec_codegen::{Options, generate, load_str};
use payspec_tests::mock::{MockServer, Recorded, Reply};
use proc_macro2::{Span, TokenStream, TokenTree};
use serde_json::json;
use std::path::Path;

/// The built-in spec, expanded by the proc macro (the path is taken from this file).
#[allow(dead_code, unreachable_pub)]
mod from_macro {
    payspec_macros::generate!("../spec/payments.yaml");
}

/// The spec as the macro test names it, relative to this file's directory.
const WRITTEN: &str = "../spec/payments.yaml";

#[test]
fn the_expansion_is_the_build_steps_code_plus_a_dependency_on_the_spec() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR"));
    let expanded: Vec<TokenTree> =
        expand_generate(WRITTEN, dir, Path::new(""), Span::call_site()).into_iter().collect();

    // First item: `const _: &[u8] = include_bytes!("<absolute path>");`, so that editing
    // the spec rebuilds the caller.
    let end = expanded
        .iter()
        .position(|t| matches!(t, TokenTree::Punct(p) if p.as_char() == ';'))
        .expect("the expansion starts with an item ending in `;`");
    let include: TokenStream = expanded[..=end].iter().cloned().collect();
    let include = include.to_string();
    assert!(include.starts_with("const _ : & [u8] = include_bytes ! ("), "{include}");
    let spec_path = std::fs::canonicalize(dir.join(WRITTEN)).expect("the spec exists");
    assert!(include.contains(&format!("{:?}", spec_path.to_string_lossy())), "{include}");

    // The rest: exactly the tokens the build step formats, for the spec named the same way.
    let text = std::fs::read_to_string(dir.join(WRITTEN)).expect("the spec is readable");
    let spec = load_str(WRITTEN, &text).unwrap_or_else(|e| panic!("{e}"));
    let built: proc_macro2::TokenStream = generate(&spec, &Options::new())
        .unwrap_or_else(|e| panic!("{e}"))
        .parse()
        .unwrap_or_else(|e| panic!("{e}"));
    let built: Vec<String> = built.into_iter().map(|t| t.to_string()).collect();
    let from_macro: Vec<String> = expanded[end + 1..].iter().map(ToString::to_string).collect();
    if let Some(i) = (0..built.len().min(from_macro.len())).find(|&i| built[i] != from_macro[i]) {
        panic!("top-level token {i} differs:\n macro: {:.300}\n build: {:.300}", from_macro[i], built[i]);
    }
    assert_eq!(from_macro.len(), built.len(), "the expansion has a different number of tokens");
    assert!(built.len() > 10, "the generated code is not empty");
}

/// Generated code names the runtime through its hidden module alone, and the runtime's root
/// shows what a user or an extender writes: none of the names only generated code needs.
#[test]
fn generated_code_names_the_runtime_through_its_hidden_module_alone() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR"));
    let text = std::fs::read_to_string(dir.join(WRITTEN)).expect("the spec is readable");
    let spec = load_str(WRITTEN, &text).unwrap_or_else(|e| panic!("{e}"));
    let code = generate(&spec, &Options::new()).unwrap_or_else(|e| panic!("{e}"));
    let paths: Vec<&str> =
        code.match_indices("payspec_runtime").map(|(i, _)| &code[i..(i + 40).min(code.len())]).collect();
    assert!(paths.len() > 5, "{paths:?}");
    let outside: Vec<&&str> = paths.iter().filter(|p| !p.starts_with("payspec_runtime::__private")).collect();
    assert!(outside.is_empty(), "generated code names the runtime outside `__private`: {outside:?}");

    // The runtime's root: every name its top-level `pub use` lines give (not the crates it
    // re-exports whole, nor its modules).
    let lib = std::fs::read_to_string(dir.join("../runtime/src/lib.rs")).expect("the runtime's lib.rs");
    let mut root = Vec::new();
    let mut statement = String::new();
    for line in lib.lines() {
        if statement.is_empty() && !line.starts_with("pub use ") {
            continue;
        }
        statement.push_str(line);
        if line.ends_with(';') {
            let list = statement.trim_start_matches("pub use ").trim_end_matches(';');
            if let Some((_, names)) = list.split_once("::{") {
                root.extend(names.trim_end_matches('}').split(',').map(|n| n.trim().to_owned()));
            } else if !list.contains(" as ") && list.contains("::") {
                root.extend(list.rsplit("::").next().map(str::to_owned));
            }
            statement.clear();
        }
    }
    root.retain(|name| !name.is_empty());
    assert!((40..=50).contains(&root.len()), "the root shows {} names: {root:?}", root.len());
    let only_generated = [
        "RequestWriter",
        "TextRule",
        "Reader",
        "Seen",
        "Slot",
        "ObjectWriter",
        "Path",
        "is_email",
        "is_name",
        "fits_layout",
        "at_most",
        "amount_from_wire",
        "find_route",
        "AuthRoutes",
        "TokenField",
        "Answers",
        "EnvelopeKind",
        "PageStyle",
        "deserialize_via_json",
        "serialize_via_json",
        "BlockingRuntime",
    ];
    let shown: Vec<&&str> = only_generated.iter().filter(|name| root.iter().any(|r| r == *name)).collect();
    assert!(shown.is_empty(), "the root shows names only generated code needs: {shown:?}");
}

#[test]
fn a_spec_error_expands_to_compile_errors_only() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR"));
    // The spec is named from the calling file's directory as the compiler names it.
    let expanded =
        expand_generate("ui/fail/broken.yaml", dir, Path::new("tests"), Span::call_site()).to_string();
    assert_eq!(expanded.matches("compile_error").count(), 2, "{expanded}");
    assert!(expanded.contains("tests/ui/fail/broken.yaml:95:12: operations."), "{expanded}");
    assert!(!expanded.contains("error:"), "the compiler says `error:` itself: {expanded}");
    assert!(!expanded.contains("pub mod"), "{expanded}");
}

fn assert_same_route(from_macro: &Route, built: &Route) {
    let name = built.operation;
    assert_eq!(from_macro.operation, built.operation);
    assert_eq!(from_macro.group, built.group, "{name}");
    assert_eq!(from_macro.method, built.method, "{name}");
    assert_eq!(from_macro.path, built.path, "{name}");
    assert_eq!(from_macro.auth, built.auth, "{name}");
    assert_eq!(from_macro.effect, built.effect, "{name}");
    assert_eq!(from_macro.aliases.len(), built.aliases.len(), "{name}");
    for (m, b) in from_macro.aliases.iter().zip(built.aliases) {
        assert_eq!((m.method, m.path, m.note), (b.method, b.path, b.note), "{name}");
    }
    assert_eq!(from_macro.reserved.len(), built.reserved.len(), "{name}");
    for (m, b) in from_macro.reserved.iter().zip(built.reserved) {
        assert_eq!((m.variable, m.literal, m.shadowed_by), (b.variable, b.literal, b.shadowed_by), "{name}");
    }
}

#[test]
fn the_expanded_routes_are_the_clients_routes_field_by_field() {
    let (from_macro, built) = (from_macro::routes::ALL, payspec_client::routes::ALL);
    let spec = payspec_tests::load_builtin().unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(built.len(), spec.operations.len(), "every operation of the built-in spec");
    assert_eq!(from_macro.len(), built.len());
    for (m, b) in from_macro.iter().zip(built) {
        assert_same_route(m, b);
    }
    // The spec reserves some path values (a mandate id of `status`): both carry them.
    assert!(built.iter().any(|r| !r.reserved.is_empty()), "the built-in spec has reserved segments");
    let (Some(m), Some(b)) = (from_macro::routes::TOKEN, payspec_client::routes::TOKEN) else {
        panic!("the built-in spec names its token operations")
    };
    assert_same_route(m.issue, b.issue);
    for (m, b) in [(m.refresh, b.refresh), (m.revoke, b.revoke)] {
        let (Some(m), Some(b)) = (m, b) else { panic!("the built-in spec names its refresh and revoke") };
        assert_same_route(m, b);
    }
}

/// The same transfer, built through the request type at `$requests` (two distinct types).
macro_rules! bank_transfer {
    ($requests:path) => {{
        use $requests as requests;
        requests::BankTransfer::builder()
            .amount("2500.75".parse().expect("an amount"))
            .destination_account_number("0123456789")
            .destination_bank_code("058")
            .merchant_tx_ref("tx-42")
            .customer_name("Ada Obi")
            .narration("school fees")
            .extra_field("meta.channel", json!("app"))
            .build()
            .expect("every required field is set")
    }};
}

fn bank_transfer_from_macro() -> from_macro::requests::BankTransfer {
    bank_transfer!(from_macro::requests)
}

fn bank_transfer_built() -> payspec_client::requests::BankTransfer {
    bank_transfer!(payspec_client::requests)
}

#[test]
fn a_request_built_the_same_way_through_both_is_the_same() {
    let (m, b) = (bank_transfer_from_macro(), bank_transfer_built());
    assert_eq!(format!("{m:?}"), format!("{b:?}"));
    assert!(format!("{b:?}").contains("school fees"), "{b:?}");

    // Secrets are hidden the same way by both.
    let m = from_macro::requests::RevokeToken::builder()
        .access_token("tok-secret")
        .client_id("client-abc")
        .build()
        .expect("both set");
    let b = payspec_client::requests::RevokeToken::builder()
        .access_token("tok-secret")
        .client_id("client-abc")
        .build()
        .expect("both set");
    assert_eq!(format!("{m:?}"), format!("{b:?}"));
    assert!(!format!("{b:?}").contains("tok-secret"), "{b:?}");
}

/// One request as it reached the server: method, target, headers and body.
#[derive(Debug, PartialEq)]
struct Call {
    method: String,
    target: String,
    headers: Vec<(String, String)>,
    body: String,
}

/// The requests that reached the server, without the token issue and without the `Host`
/// header (the two servers listen on different ports).
fn calls(server: &MockServer) -> Vec<Call> {
    server
        .requests()
        .iter()
        .filter(|r: &&Recorded| !r.is("POST", "/v1/auth/token/issue"))
        .map(|r| Call {
            method: r.method.clone(),
            target: r.target.clone(),
            headers: r.headers.iter().filter(|(n, _)| !n.eq_ignore_ascii_case("host")).cloned().collect(),
            body: r.body_text(),
        })
        .collect()
}

async fn server() -> MockServer {
    MockServer::start(|req, _| {
        if req.is("POST", "/v1/auth/token/issue") {
            Reply::ok(json!({
                "access_token": "tok-1",
                "refresh_token": "ref-1",
                "expiresAt": "2099-01-01T00:00:00Z",
            }))
        } else if req.path().starts_with("/v2/transfers/bank") {
            Reply::ok(json!({"amount": 2500.00, "fee": 10, "status": "SUCCESS", "id": "t1", "type": "transfer",
                             "timeCreated": "2025-03-01T12:30:40Z", "meta": {}}))
        } else {
            Reply::ok(json!({"status": "ACTIVE", "customerAccountNumber": "0123456789", "customerAccountName": "Ada",
                             "bankCode": "058", "amount": "100.00", "customerName": "Ada", "merchantReference": "r",
                             "frequency": "MONTHLY", "startDate": [2025, 1, 1], "endDate": [2026, 1, 1],
                             "mandateId": "m/1"}))
        }
    })
    .await
    .unwrap_or_else(|e| panic!("mock server did not start: {e}"))
}

fn credentials() -> Credentials {
    Credentials::new("client-abc", "sk_test_secret", "acct-parent-1")
}

#[tokio::test]
async fn both_clients_put_the_same_bytes_on_the_wire() {
    let (macro_server, built_server) = (server().await, server().await);

    let client: from_macro::Client = from_macro::Client::builder()
        .environment(Environment::Custom(macro_server.url()))
        .credentials(credentials())
        .build()
        .unwrap_or_else(|e| panic!("{e}"));
    let transfers = client.transfers();
    transfers.bank_transfer(bank_transfer_from_macro()).await.unwrap_or_else(|e| panic!("{e}"));
    let mandates = client.direct_debits();
    mandates
        .fetch_mandate(from_macro::requests::FetchMandate::new("m/1"))
        .await
        .unwrap_or_else(|e| panic!("{e}"));

    let client: payspec_client::Client = payspec_client::Client::builder()
        .environment(Environment::Custom(built_server.url()))
        .credentials(credentials())
        .build()
        .unwrap_or_else(|e| panic!("{e}"));
    let transfers = client.transfers();
    transfers.bank_transfer(bank_transfer_built()).await.unwrap_or_else(|e| panic!("{e}"));
    let mandates = client.direct_debits();
    mandates
        .fetch_mandate(payspec_client::requests::FetchMandate::new("m/1"))
        .await
        .unwrap_or_else(|e| panic!("{e}"));

    let (m, b) = (calls(&macro_server), calls(&built_server));
    assert_eq!(b.len(), 2, "{b:?}");
    assert_eq!((b[0].method.as_str(), b[0].target.as_str()), ("POST", "/v2/transfers/bank"));
    assert!(b[0].body.contains("\"merchantTxRef\":\"tx-42\""), "{}", b[0].body);
    assert!(b[0].headers.iter().any(|(n, v)| n.eq_ignore_ascii_case("authorization") && v == "Bearer tok-1"));
    assert_eq!(b[1].target, "/v1/direct-debits/m%2F1");
    // Each names the crate it is generated in, and nothing else differs.
    let agent = |calls: &[Call]| -> Vec<String> {
        calls
            .iter()
            .flat_map(|c| c.headers.iter().filter(|(n, _)| n == "user-agent").map(|(_, v)| v.clone()))
            .collect()
    };
    // Both crates carry the workspace's version.
    let version = env!("CARGO_PKG_VERSION");
    assert_eq!(agent(&m), [format!("payspec-tests/{version}"), format!("payspec-tests/{version}")]);
    assert_eq!(agent(&b), [format!("payspec-client/{version}"), format!("payspec-client/{version}")]);
    // Each call carries a request id of its own (the spec's `request_id_header`).
    let ids: Vec<String> = m
        .iter()
        .chain(&b)
        .flat_map(|c| c.headers.iter().filter(|(n, _)| n == "x-request-id").map(|(_, v)| v.clone()))
        .collect();
    assert_eq!(ids.len(), 4, "{ids:?}");
    assert!(ids.iter().all(|id| id.len() == 32 && id.bytes().all(|b| b.is_ascii_hexdigit())), "{ids:?}");
    assert_eq!(ids.iter().collect::<std::collections::HashSet<_>>().len(), 4, "{ids:?}");
    let without_agent = |calls: Vec<Call>| -> Vec<Call> {
        calls
            .into_iter()
            .map(|mut c| {
                c.headers.retain(|(n, _)| n != "user-agent" && n != "x-request-id");
                c
            })
            .collect()
    };
    assert_eq!(without_agent(m), without_agent(b));
}
