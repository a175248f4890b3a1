//! Following listings over a real loopback socket, in the four page styles, and stopping
//! with an error when the service would make a listing loop.

use crate::support;

use futures::StreamExt;
use payspec_client::runtime::Json;
use payspec_client::{Error, ErrorDetail};
use payspec_tests::mock::Reply;
use serde_json::json;
use support::*;

/// Collects a listing: the pages, then the error that ended it, if any.
async fn collect<T>(stream: impl futures::Stream<Item = Result<T, Error>>) -> (Vec<T>, Option<Error>) {
    let mut stream = std::pin::pin!(stream);
    let mut pages = Vec::new();
    while let Some(item) = stream.next().await {
        match item {
            Ok(page) => pages.push(page),
            Err(e) => {
                // The stream must end after an error.
                assert!(stream.next().await.is_none(), "items after an error");
                return (pages, Some(e));
            }
        }
    }
    (pages, None)
}

#[tokio::test]
async fn cursor_listing_follows_data_cursor_until_it_is_empty() {
    let server = server_with_token(|req, _| match req.query_value("cursor") {
        None => Reply::ok(json!({"results": ["a", "b"], "cursor": "c1"})),
        Some("c1") => Reply::ok(json!({"results": ["c"], "cursor": "c%2"})),
        Some("c%252") => Reply::ok(json!({"results": ["d"], "cursor": ""})),
        Some(_) => Reply::empty(404),
    })
    .await;
    let client = client(&server);
    let (pages, error) = collect(client.pages(ListAccounts { limit: 2, cursor: None })).await;
    assert!(error.is_none(), "{error:?}");
    let items: Vec<String> = pages.into_iter().flat_map(|p| p.results).collect();
    assert_eq!(items, ["a", "b", "c", "d"]);
    let targets: Vec<String> =
        server.requests_to("GET", "/v1/accounts").into_iter().map(|r| r.target).collect();
    assert_eq!(
        targets,
        ["/v1/accounts?limit=2", "/v1/accounts?limit=2&cursor=c1", "/v1/accounts?limit=2&cursor=c%252"]
    );
}

#[tokio::test]
async fn cursor_listing_ends_when_the_cursor_is_absent() {
    let server = server_with_token(|_, _| Reply::ok(json!({"results": ["only"]}))).await;
    let client = client(&server);
    let (pages, error) = collect(client.pages(ListAccounts { limit: 50, cursor: None })).await;
    assert!(error.is_none(), "{error:?}");
    assert_eq!(pages.len(), 1);
    assert_eq!(server.count("GET", "/v1/accounts"), 1);
}

#[tokio::test]
async fn a_repeated_cursor_ends_the_listing_with_an_error() {
    let server = server_with_token(|req, _| match req.query_value("cursor") {
        None => Reply::ok(json!({"results": ["a"], "cursor": "c1"})),
        Some("c1") => Reply::ok(json!({"results": ["b"], "cursor": "c2"})),
        _ => Reply::ok(json!({"results": ["c"], "cursor": "c1"})),
    })
    .await;
    let client = client(&server);
    let (pages, error) = collect(client.pages(ListAccounts { limit: 1, cursor: None })).await;
    assert_eq!(pages.len(), 3, "every page received is yielded");
    assert!(matches!(error.as_ref().map(Error::detail), Some(ErrorDetail::Pagination { .. })), "{error:?}");
    assert_eq!(server.count("GET", "/v1/accounts"), 3);
}

#[tokio::test]
async fn a_failing_page_ends_the_listing_with_its_error() {
    let server = server_with_token(|req, _| match req.query_value("cursor") {
        None => Reply::ok(json!({"results": ["a"], "cursor": "c1"})),
        _ => Reply::json(404, json!({"code": "02", "description": "gone", "data": null})),
    })
    .await;
    let client = client(&server);
    let (pages, error) = collect(client.pages(ListAccounts { limit: 1, cursor: None })).await;
    assert_eq!(pages.len(), 1);
    assert!(
        matches!(error.as_ref().map(Error::detail), Some(ErrorDetail::Status { status: 404, .. })),
        "{error:?}"
    );
}

#[tokio::test]
async fn page_listing_follows_next_page_until_it_is_null() {
    let server = server_with_token(|req, _| match req.query_value("page") {
        None | Some("1") => Reply::ok(json!({"results": [1], "nextPage": 2})),
        Some("2") => Reply::ok(json!({"results": [2], "nextPage": "3"})),
        Some("3") => Reply::ok(json!({"results": [3], "nextPage": null})),
        Some(_) => Reply::empty(404),
    })
    .await;
    let client = client(&server);
    let (pages, error) = collect(client.pages(ListCards { page: Some(1), limit: 10 })).await;
    assert!(error.is_none(), "{error:?}");
    assert_eq!(pages.len(), 3);
    assert_eq!(pages[2].get("results"), Some(&Json::from(json!([3]))));
    let pages_asked: Vec<Option<String>> = server
        .requests_to("GET", "/v1/tokenized-cards")
        .iter()
        .map(|r| r.query_value("page").map(str::to_owned))
        .collect();
    assert_eq!(pages_asked, [Some("1".to_owned()), Some("2".to_owned()), Some("3".to_owned())]);
}

#[tokio::test]
async fn page_listing_stops_when_next_page_is_zero() {
    // The reference: nextPage "is zero if there are no more pages", and it types it as text.
    let server = server_with_token(|req, _| match req.query_value("page") {
        Some("1") => Reply::ok(json!({"results": [1], "nextPage": "2"})),
        Some("2") => Reply::ok(json!({"results": [2], "nextPage": "0"})),
        _ => Reply::empty(404),
    })
    .await;
    let client = client(&server);
    let (pages, error) = collect(client.pages(ListCards { page: Some(1), limit: 10 })).await;
    assert!(error.is_none(), "{error:?}");
    assert_eq!(pages.len(), 2);
    assert_eq!(server.count("GET", "/v1/tokenized-cards"), 2);
}

#[tokio::test]
async fn page_listing_stops_when_next_page_is_the_current_page() {
    let server = server_with_token(|req, _| match req.query_value("page") {
        Some("1") => Reply::ok(json!({"results": [1], "nextPage": 2})),
        _ => Reply::ok(json!({"results": [2], "nextPage": 2})),
    })
    .await;
    let client = client(&server);
    let (pages, error) = collect(client.pages(ListCards { page: Some(1), limit: 10 })).await;
    assert!(error.is_none(), "{error:?}");
    assert_eq!(pages.len(), 2);
    assert_eq!(server.count("GET", "/v1/tokenized-cards"), 2);
}

#[tokio::test]
async fn page_listing_that_goes_back_ends_with_an_error() {
    let server = server_with_token(|req, _| match req.query_value("page") {
        Some("1") => Reply::ok(json!({"results": [1], "nextPage": 2})),
        _ => Reply::ok(json!({"results": [2], "nextPage": 1})),
    })
    .await;
    let client = client(&server);
    let (pages, error) = collect(client.pages(ListCards { page: Some(1), limit: 10 })).await;
    assert_eq!(pages.len(), 2);
    assert!(matches!(error.as_ref().map(Error::detail), Some(ErrorDetail::Pagination { .. })), "{error:?}");
}

#[tokio::test]
async fn page_size_listing_follows_has_more_and_total_pages() {
    let server = server_with_token(|req, _| {
        let page: u32 = req.query_value("page").and_then(|p| p.parse().ok()).unwrap_or(0);
        Reply::ok(json!({
            "items": [format!("m{page}")],
            "page": page,
            "totalPages": 3,
            "hasMore": page < 3,
        }))
    })
    .await;
    let client = client(&server);
    let (pages, error) = collect(client.pages(ListMandates { page: 1, page_size: 20 })).await;
    assert!(error.is_none(), "{error:?}");
    let items: Vec<Option<&str>> = pages
        .iter()
        .map(|p| match p.get("items") {
            Some(Json::Array(items)) => items.first().and_then(Json::as_str),
            _ => None,
        })
        .collect();
    assert_eq!(items, [Some("m1"), Some("m2"), Some("m3")]);
    let targets: Vec<String> =
        server.requests_to("GET", "/v1/direct-debits/mandates").into_iter().map(|r| r.target).collect();
    assert_eq!(
        targets,
        [
            "/v1/direct-debits/mandates?page=1&pageSize=20",
            "/v1/direct-debits/mandates?page=2&pageSize=20",
            "/v1/direct-debits/mandates?page=3&pageSize=20"
        ]
    );
}

#[tokio::test]
async fn page_size_listing_stops_at_total_pages_even_if_has_more_is_missing() {
    let server = server_with_token(|req, _| {
        let page: u32 = req.query_value("page").and_then(|p| p.parse().ok()).unwrap_or(0);
        Reply::ok(json!({"items": [], "page": page, "totalPages": 2}))
    })
    .await;
    let client = client(&server);
    let (pages, error) = collect(client.pages(ListMandates { page: 1, page_size: 5 })).await;
    assert!(error.is_none(), "{error:?}");
    assert_eq!(pages.len(), 2);
}

#[tokio::test]
async fn page_size_listing_that_does_not_advance_ends_with_an_error() {
    let server = server_with_token(|_, _| {
        Reply::ok(json!({"items": [1], "page": 1, "totalPages": 9, "hasMore": true}))
    })
    .await;
    let client = client(&server);
    let (pages, error) = collect(client.pages(ListMandates { page: 1, page_size: 5 })).await;
    assert_eq!(pages.len(), 2);
    assert!(matches!(error.as_ref().map(Error::detail), Some(ErrorDetail::Pagination { .. })), "{error:?}");
    assert_eq!(server.count("GET", "/v1/direct-debits/mandates"), 2);
}

#[tokio::test]
async fn an_after_listing_starts_each_page_after_the_last_record_while_more_follow() {
    let record = |id: &str| json!({"id": id, "amount": 100});
    let server = server_with_token(move |req, _| match req.query_value("starting_after") {
        None => Reply::ok(json!({"data": [record("po_5"), record("po_4")], "has_more": true})),
        Some("po_4") => Reply::ok(json!({"data": [record("po_3"), record("po_2")], "has_more": true})),
        Some("po_2") => Reply::ok(json!({"data": [record("po_1")], "has_more": false})),
        Some(_) => Reply::empty(404),
    })
    .await;
    let client = client(&server);
    let (pages, error) = collect(client.pages(ListPayouts { limit: 2, after: None })).await;
    assert!(error.is_none(), "{error:?}");
    assert_eq!(pages.len(), 3);
    let targets: Vec<String> =
        server.requests_to("GET", "/v1/payouts").into_iter().map(|r| r.target).collect();
    assert_eq!(
        targets,
        [
            "/v1/payouts?limit=2",
            "/v1/payouts?limit=2&starting_after=po_4",
            "/v1/payouts?limit=2&starting_after=po_2"
        ]
    );
}

#[tokio::test]
async fn an_after_listing_that_says_more_with_no_record_or_the_same_last_one_ends_with_an_error() {
    // More promised, nothing to start after.
    let empty = server_with_token(|_, _| Reply::ok(json!({"data": [], "has_more": true}))).await;
    let (pages, error) = collect(client(&empty).pages(ListPayouts { limit: 2, after: None })).await;
    assert_eq!(pages.len(), 1, "the page received is yielded");
    assert!(
        matches!(error.as_ref().map(Error::detail), Some(ErrorDetail::Pagination { reason, .. }) if reason.contains("no record to start after")),
        "{error:?}"
    );
    assert_eq!(empty.count("GET", "/v1/payouts"), 1);
    // The same last record again: following it would never end.
    let stuck =
        server_with_token(|_, _| Reply::ok(json!({"data": [{"id": "po_9"}], "has_more": true}))).await;
    let (pages, error) = collect(client(&stuck).pages(ListPayouts { limit: 1, after: None })).await;
    assert_eq!(pages.len(), 2);
    assert!(matches!(error.as_ref().map(Error::detail), Some(ErrorDetail::Pagination { .. })), "{error:?}");
    assert_eq!(stuck.count("GET", "/v1/payouts"), 2);
}
