//! The client's spans, exported through `tracing-opentelemetry` to an in-memory exporter
//! as an OpenTelemetry pipeline would: one span per call and one per attempt, with the
//! HTTP client semantic-convention fields and payspec's own, and no secret or personal
//! value among them. Counted against what the server received.

#[path = "support/runtime.rs"]
mod support;

use std::collections::HashMap;

use opentelemetry::trace::{SpanKind, TracerProvider as _};
use opentelemetry::{KeyValue, Value};
use opentelemetry_sdk::trace::{InMemorySpanExporter, SdkTracerProvider, SpanData};
use payspec_tests::mock::Reply;
use serde_json::json;
use support::*;
use tracing_subscriber::layer::SubscriberExt;

fn attributes(span: &SpanData) -> HashMap<String, Value> {
    span.attributes.iter().map(|KeyValue { key, value, .. }| (key.to_string(), value.clone())).collect()
}

fn text(value: Option<&Value>) -> String {
    value.map(|v| v.as_str().into_owned()).unwrap_or_default()
}

#[test]
fn each_call_and_attempt_is_a_span_an_opentelemetry_pipeline_reads() {
    let exporter = InMemorySpanExporter::default();
    let provider = SdkTracerProvider::builder().with_simple_exporter(exporter.clone()).build();
    let subscriber = tracing_subscriber::registry()
        .with(tracing_opentelemetry::layer().with_tracer(provider.tracer("test")));
    let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build();
    let runtime = runtime.unwrap_or_else(|e| panic!("{e}"));
    let (server, request_id) = tracing::subscriber::with_default(subscriber, || {
        runtime.block_on(async {
            // Answered 503, then the balance: two attempts in one call.
            let server = server_with_token(|_, nth| {
                if nth == 0 { Reply::empty(503) } else { Reply::ok(json!({"amount": "10.00"})) }
            })
            .await;
            let client = client(&server);
            let outcome =
                client.send(&FetchBalance::new("acct-secret-7")).await.unwrap_or_else(|e| panic!("{e}"));
            let id = outcome.meta().request_id().map(str::to_owned).unwrap_or_default();
            (server, id)
        })
    });
    let _ = provider.force_flush();
    let spans = exporter.get_finished_spans().unwrap_or_else(|e| panic!("{e:?}"));
    let calls: Vec<&SpanData> =
        spans.iter().filter(|s| s.name == "GET /v1/accounts/{subAccountId}/balance").collect();
    // One call span and two attempt spans carry the route's name, all of kind client.
    assert_eq!(calls.len(), 3, "{:?}", spans.iter().map(|s| &s.name).collect::<Vec<_>>());
    assert!(calls.iter().all(|s| s.span_kind == SpanKind::Client));
    let call = calls
        .iter()
        .find(|s| attributes(s).contains_key("payspec.operation"))
        .unwrap_or_else(|| panic!("no call span"));
    let attempts: Vec<&&SpanData> =
        calls.iter().filter(|s| s.parent_span_id == call.span_context.span_id()).collect();
    assert_eq!(attempts.len(), 2);

    let fields = attributes(call);
    assert_eq!(text(fields.get("http.request.method")), "GET");
    assert_eq!(text(fields.get("server.address")), "127.0.0.1");
    assert_eq!(fields.get("server.port"), Some(&Value::I64(i64::from(server.addr().port()))));
    assert_eq!(text(fields.get("url.template")), "/v1/accounts/{subAccountId}/balance");
    assert_eq!(text(fields.get("payspec.operation")), "fetch_balance");
    assert_eq!(text(fields.get("payspec.effect")), "read");
    assert_eq!(text(fields.get("payspec.outcome")), "done");
    assert_eq!(text(fields.get("payspec.request_id")), request_id);
    assert_eq!(fields.get("http.response.status_code"), Some(&Value::I64(200)));

    let mut by_resend: Vec<HashMap<String, Value>> = attempts.iter().map(|s| attributes(s)).collect();
    by_resend.sort_by_key(|f| f.contains_key("http.request.resend_count"));
    assert_eq!(by_resend[0].get("http.response.status_code"), Some(&Value::I64(503)));
    assert_eq!(text(by_resend[0].get("error.type")), "503");
    assert_eq!(by_resend[1].get("http.request.resend_count"), Some(&Value::I64(1)));
    assert_eq!(by_resend[1].get("http.response.status_code"), Some(&Value::I64(200)));

    // Never a secret or a value of the request: not the token, the client secret or the
    // path's account id, in any span.
    for span in &spans {
        for (key, value) in attributes(span) {
            let value = value.as_str();
            for secret in ["tok-1", CLIENT_SECRET, "acct-secret-7"] {
                assert!(!value.contains(secret), "{} carries {key}={value}", span.name);
            }
        }
    }
    // Counted at the server: the two attempts the spans describe.
    assert_eq!(server.requests_to("GET", "/v1/accounts/acct-secret-7/balance").len(), 2);
}
