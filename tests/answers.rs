//! Typed answers over a real loopback socket, through the generated client: amounts read
//! exactly from a number or a string, open enumerations, fields the spec does not know
//! kept, optional fields absent or null, and decode errors that name the operation and
//! the field path without showing a secret. (Every reference answer is decoded too: see
//! `every_operation::reference_answers` in `wire.rs`.)

use crate::wire_check;

use payspec_client::ErrorDetail;
use payspec_client::requests::{
    FetchTransaction, FetchTransactionKey, ListCableTvPlans, RefundCheckoutTransaction,
};
use payspec_client::runtime::__private::ToJson;
use payspec_client::runtime::Json;
use payspec_client::types::{TransactionResult, TransactionResultStatus};
use payspec_client::{Error, Outcome};
use payspec_tests::mock::MockServer;
use serde_json::{Value, json};

/// A finished `fetch_transaction` answer with every field the spec requires.
fn transaction() -> Value {
    json!({
        "id": "txn-1",
        "status": "SUCCESS",
        "amount": 4000.00,
        "source": "api",
        "type": "transfer",
        "gatewayMessage": "ok",
        "timeCreated": "2023-09-04T15:23:55.173Z",
        "merchantTxRef": "tx-1",
    })
}

/// Fetches one transaction whose `data` is `data` written as raw text.
async fn fetch_with(data: String) -> Result<Outcome<TransactionResult>, Error> {
    let body = format!(r#"{{"code":"00","description":"ok","data":{data}}}"#);
    let body: &'static str = Box::leak(body.into_boxed_str());
    let (_server, client) = answering("fetch_transaction", body).await;
    client
        .transactions()
        .fetch_transaction(FetchTransaction::new(FetchTransactionKey::transaction_id("txn-1")))
        .await
}

/// A loopback server answering `operation` with `body` (token issue aside), and a client
/// of it.
async fn answering(operation: &str, body: &'static str) -> (MockServer, payspec_client::Client) {
    let server = match wire_check::server_answering(operation, body).await {
        Ok(s) => s,
        Err(e) => panic!("server: {e}"),
    };
    match wire_check::client(&server) {
        Ok(client) => (server, client),
        Err(e) => panic!("client: {e}"),
    }
}

/// `transaction()` with `amount` written as the raw JSON text `amount`.
fn with_amount(amount: &str) -> String {
    transaction().to_string().replace("4000.0", amount)
}

fn done(outcome: Result<Outcome<TransactionResult>, Error>) -> TransactionResult {
    match outcome {
        Ok(Outcome::Done(envelope)) => match envelope.data {
            Some(data) => data,
            None => panic!("no data"),
        },
        other => panic!("expected a finished answer, got {other:?}"),
    }
}

#[tokio::test]
async fn amounts_decode_exactly_from_a_number_or_a_string() {
    for (written, text, as_json) in [
        ("1500.10", "1500.10", "1500.10"),
        ("\"1500.10\"", "1500.10", "\"1500.10\""),
        ("90071992547409.93", "90071992547409.93", "90071992547409.93"),
        ("0.10", "0.10", "0.10"),
        ("-250.00", "-250.00", "-250.00"),
    ] {
        let answer = done(fetch_with(with_amount(written)).await);
        let amount = answer.amount.unwrap_or_else(|| panic!("{written}: no amount"));
        assert_eq!(amount.to_string(), text, "{written}");
        let back = serde_json::to_string(&amount.to_json()).unwrap_or_default();
        assert_eq!(back, as_json, "{written} is written back as it came");
    }
}

#[tokio::test]
async fn an_amount_too_large_for_an_exact_decimal_is_read_as_absent_and_said() {
    // A success stays a success: the amount is absent, kept as sent, and the answer says
    // what it could not read.
    let result = fetch_with(with_amount("1e400")).await;
    let Ok(Outcome::Done(envelope)) = result else { panic!("expected a finished answer, got {result:?}") };
    let unread: Vec<String> = envelope.unread.iter().map(|e| e.path.clone()).collect();
    assert_eq!(unread, ["data.amount"], "{}", envelope.unread);
    assert!(envelope.unread.to_string().contains("amount"), "{}", envelope.unread);
    let data = envelope.data.as_ref().unwrap_or_else(|| panic!("no data"));
    assert_eq!(data.amount, None);
    assert!(data.id.is_some(), "the rest of the answer is read");
    let kept = data.other_fields.get("amount").map(|v| serde_json::to_string(v).unwrap_or_default());
    assert_eq!(kept.as_deref(), Some("1e400"));
    assert!(envelope.raw_data().is_some_and(|raw| raw.contains("1e400")));
}

#[tokio::test]
async fn unknown_values_and_fields_are_kept_and_optional_fields_may_be_absent_or_null() {
    let mut data = transaction();
    data["status"] = json!("ON_HOLD");
    data["fixedCharge"] = Value::Null;
    // Written as raw text: a `serde_json::Value` would already have turned 1.10 into 1.1.
    let text = data.to_string().replacen('{', r#"{"newField":{"rate":1.10,"list":[0.10]},"#, 1);
    // `customerBillerId` is optional and absent.
    let answer = done(fetch_with(text).await);
    assert_eq!(answer.status, Some(TransactionResultStatus::Other("ON_HOLD".to_owned())));
    assert_eq!(answer.fixed_charge, None);
    assert_eq!(answer.customer_biller_id, None);
    let kept = answer.other_fields.get("newField").map(|v| serde_json::to_string(v).unwrap_or_default());
    assert_eq!(kept.as_deref(), Some(r#"{"rate":1.10,"list":[0.10]}"#));
    assert_eq!(answer.time_created.as_ref().map(|t| t.as_str()), Some("2023-09-04T15:23:55.173Z"));
    // Written back: the same fields and values, less the null.
    let back = serde_json::to_value(answer.to_json()).unwrap_or_default();
    let mut expected = data.clone();
    if let Some(object) = expected.as_object_mut() {
        object.remove("fixedCharge");
        object.insert("newField".to_owned(), json!({"rate": 1.10, "list": [0.10]}));
    }
    assert_eq!(back, expected);
}

#[tokio::test]
async fn a_missing_required_field_or_a_wrong_type_is_absent_said_and_never_an_error() {
    let mut missing = transaction();
    if let Some(object) = missing.as_object_mut() {
        object.remove("id");
    }
    let result = fetch_with(missing.to_string()).await;
    let Ok(Outcome::Done(envelope)) = &result else { panic!("expected a finished answer, got {result:?}") };
    assert!(envelope.unread.is_empty(), "an absent field is not an unread one: {}", envelope.unread);
    assert_eq!(envelope.data.as_ref().map(|d| d.id.is_none()), Some(true));

    let mut wrong = transaction();
    wrong["timeCreated"] = json!(1_693_842_235);
    wrong["bvn"] = json!("22233344455");
    let result = fetch_with(wrong.to_string()).await;
    let Ok(Outcome::Done(envelope)) = &result else { panic!("expected a finished answer, got {result:?}") };
    let notes: Vec<String> = envelope.unread.iter().map(ToString::to_string).collect();
    assert_eq!(
        notes,
        ["`data.timeCreated`: expected an ISO-8601 date and time, found a number"],
        "{notes:?}"
    );
    // Neither the note nor the envelope's Debug shows the secret.
    assert!(!format!("{envelope:?}").contains("22233344455"));
    let data = envelope.data.as_ref().unwrap_or_else(|| panic!("no data"));
    assert_eq!(data.time_created, None);
    assert!(data.amount.is_some(), "the other fields are read");
}

#[tokio::test]
async fn data_that_is_not_json_is_the_answer_s_fault_at_its_place_whatever_the_read_reached() {
    // A well-formed envelope around data that is not JSON: the typed read checks the
    // text it reads, and a fault anywhere in it is reported for the whole answer, with
    // its place, before any field's type.
    let id = r#""id":"txn-1","#;
    for (data, place) in [
        (format!(r#"{{{id}"amount":tru}}"#), "expected a value"),
        (format!(r#"{{{id}"gatewayMessage":"a\x"}}"#), "invalid escape"),
        (format!("{{{id}\"gatewayMessage\":\"a{}b\"}}", '\u{1}'), "control character"),
        (format!(r#"{{{id}"status":"SUCCESS",}}"#), "expected a key"),
        (format!(r#"{{{id}"status" "SUCCESS"}}"#), "expected `:`"),
        (format!(r#"{{{id}"newField":[1 2]}}"#), "expected `,` or `]`"),
        // The wrong kind comes first, the fault after it.
        (r#"{"id":5,"amount":01}"#.to_owned(), "expected `,` or `}`"),
        (r#"[{"id":"a"} {"id":"b"}]"#.to_owned(), "expected `,` or `]`"),
        (format!("{}{}", "[".repeat(130), "]".repeat(130)), "nested too deeply"),
    ] {
        match fetch_with(data.clone()).await.map_err(payspec_client::Error::into_detail) {
            Err(ErrorDetail::Decode { path: None, reason, .. }) => {
                assert!(reason.contains(place), "{data}: {reason}");
                assert!(reason.contains("line 1 column"), "{data}: {reason}");
            }
            other => panic!("{data}: expected the answer's fault, got {other:?}"),
        }
    }
}

#[tokio::test]
async fn text_after_the_data_that_is_not_json_is_the_answer_s_fault_too() {
    // The envelope is read up to its data; what follows the data is read with it.
    let data = transaction().to_string();
    for (body, place) in [
        (format!(r#"{{"code":"00","description":"ok","data":{data},"x":tru}}"#), "expected a value"),
        (format!(r#"{{"code":"00","description":"ok","data":{data}}} trailing"#), "trailing characters"),
        (format!(r#"{{"code":"00","description":"ok","data":{data}"#), "unexpected end of JSON"),
        (format!(r#"{{"code":"00","description":"ok","data":{data}]"#), "expected `,` or `}`"),
        (r#"{"code":"00","description":"ok","data":null,"x":[}"#.to_owned(), "expected a value"),
    ] {
        let leaked: &'static str = Box::leak(body.clone().into_boxed_str());
        let (server, client) = answering("fetch_transaction", leaked).await;
        let result = client
            .transactions()
            .fetch_transaction(FetchTransaction::new(FetchTransactionKey::transaction_id("txn-1")))
            .await;
        match result.map_err(payspec_client::Error::into_detail) {
            Err(ErrorDetail::Decode { path: None, reason, .. }) => {
                assert!(reason.contains(place), "{body}: {reason}")
            }
            other => panic!("{body}: expected the answer's fault, got {other:?}"),
        }
        assert_eq!(server.requests().len(), 2, "{body}: the token, then one call");
    }
    // Other keys after the data are read and let be, whatever they hold.
    let body: &'static str = Box::leak(
        format!(r#"{{"code":"00","description":"ok","data":{data},"x":{{"y":[1,"}}"]}}}}"#).into_boxed_str(),
    );
    let (_server, client) = answering("fetch_transaction", body).await;
    let outcome = client
        .transactions()
        .fetch_transaction(FetchTransaction::new(FetchTransactionKey::transaction_id("txn-1")))
        .await;
    assert!(matches!(&outcome, Ok(Outcome::Done(e)) if e.code == "00" && e.data.is_some()), "{outcome:?}");
    // But a key after the data that repeats one before it makes the answer unreadable: a
    // reader that keeps the last `code` sees a failure where the first says success.
    // The same with many keys before the data (the envelope is then read whole).
    for body in [
        format!(r#"{{"code":"00","description":"ok","data":{data},"data":1,"code":"99"}}"#),
        format!(
            r#"{{"a":1,"b":2,"c":3,"d":4,"e":5,"code":"00","description":"ok","data":{data},"code":"99"}}"#
        ),
    ] {
        let body: &'static str = Box::leak(body.into_boxed_str());
        let (server, client) = answering("fetch_transaction", body).await;
        let outcome = client
            .transactions()
            .fetch_transaction(FetchTransaction::new(FetchTransactionKey::transaction_id("txn-1")))
            .await;
        assert!(
            matches!(&outcome.as_ref().map_err(|e| e.detail()), Err(ErrorDetail::Decode { reason, .. }) if reason.starts_with("a key repeated in one object")),
            "{body}: {outcome:?}"
        );
        assert_eq!(server.requests().len(), 2, "the token, then one call");
    }
}

#[tokio::test]
async fn an_untyped_answer_keeps_every_number_exact() {
    // The reference does not document `list_cable_tv_plans`: its data stays exact JSON.
    let body = r#"{"code":"00","description":"ok","data":{"plans":[{"price":90071992547409.93,"fee":"0.10"}],"n":1e2}}"#;
    let (_server, client) = answering("list_cable_tv_plans", body).await;
    let outcome = client.cable_tv().list_cable_tv_plans(ListCableTvPlans::new("dstv")).await;
    let data: Option<Json> = match outcome {
        Ok(Outcome::Done(envelope)) => envelope.data,
        other => panic!("{other:?}"),
    };
    let text = data.map(|d| serde_json::to_string(&d).unwrap_or_default());
    assert_eq!(text.as_deref(), Some(r#"{"plans":[{"price":90071992547409.93,"fee":"0.10"}],"n":1e2}"#));
}

#[tokio::test]
async fn an_answers_negative_amount_is_never_sent_in_a_request() {
    let answer = done(fetch_with(with_amount("-250.00")).await);
    let body = r#"{"code":"00","description":"ok","data":{}}"#;
    let (server, client) = answering("refund_checkout_transaction", body).await;
    let refund =
        RefundCheckoutTransaction::new("txn-1").amount(answer.amount.unwrap_or_else(|| panic!("amount")));
    let result = client.checkout().refund_checkout_transaction(refund).await;
    assert!(
        matches!(&result.as_ref().map_err(|e| e.detail()), Err(ErrorDetail::InvalidRequest { reason, .. }) if reason.contains("negative")),
        "{result:?}"
    );
    assert!(server.requests().is_empty(), "{:?}", server.requests());
}
