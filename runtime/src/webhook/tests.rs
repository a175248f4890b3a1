//! The webhook room's tests: signing, verifying, claiming and reading notifications of a
//! scheme shaped like a real service's.

use std::time::{Duration, SystemTime};

use http::{HeaderMap, HeaderValue};

use super::signed::Signer;
use super::*;
use crate::values::timestamp::parse_rfc3339_strict as parse_rfc3339;
use payspec_store::{Claim, MemoryReplayGuard, ReplayGuard};
use payspec_vocabulary::{HmacDigest, SignatureEncoding, SignedOver, SignedValue, WebhookScheme};

/// A scheme shaped like a real service's (test data, not the runtime's).
static SCHEME: WebhookScheme = WebhookScheme {
    signature_header: SIGNATURE_HEADER,
    signature_field: None,
    time_field: None,
    digest: HmacDigest::Sha256,
    encoding: SignatureEncoding::Base64,
    signs: SignedOver::Values,
    timestamp_header: Some(TIMESTAMP_HEADER),
    tolerance_seconds: None,
    algorithm: Some((ALGORITHM_HEADER, "HmacSHA256")),
    version: Some(("x-signature-version", "1.0.0")),
    event_type: "event_type",
    request_id: &["request_id"],
    signed: &[
        SignedValue { name: "event_type", path: "event_type", instant: false },
        SignedValue { name: "request_id", path: "requestId", instant: false },
        SignedValue { name: "merchant_user_id", path: "data.merchant.userId", instant: false },
        SignedValue { name: "merchant_wallet_id", path: "data.merchant.walletId", instant: false },
        SignedValue { name: "transaction_id", path: "data.transaction.transactionId", instant: false },
        SignedValue { name: "transaction_type", path: "data.transaction.type", instant: false },
        SignedValue { name: "transaction_time", path: "data.transaction.time", instant: true },
        SignedValue { name: "response_code", path: "data.transaction.responseCode", instant: false },
    ],
};
const SIGNATURE_HEADER: &str = "x-signature";
const TIMESTAMP_HEADER: &str = "x-timestamp";
const ALGORITHM_HEADER: &str = "x-signature-algorithm";
const AMOUNT: &str = "data.transaction.transactionAmount";

// Vectors produced independently with python3's hmac module (and checked with
// `printf '%s' "$MESSAGE" | openssl dgst -sha256 -hmac whsec_test_3f9a1c -binary | base64`):
//   base64.b64encode(hmac.new(b"whsec_test_3f9a1c", MESSAGE.encode(), hashlib.sha256).digest())
// where MESSAGE is the colon-joined text noted beside each constant.
const KEY: &str = "whsec_test_3f9a1c";
const TIMESTAMP: &str = "2025-03-01T12:30:45Z";
const BODY: &str = r#"{"event_type":"payment_success","requestId":"req-7781","data":{"merchant":{"userId":"usr-12","walletId":"wal-34","walletBalance":5000.10},"transaction":{"transactionId":"txn-9001","type":"vact_transfer","time":"2025-03-01T12:30:40Z","responseCode":"","transactionAmount":10000.50,"fee":10.75},"customer":{"bankCode":"058","senderName":"Ada"}}}"#;
// MESSAGE = "payment_success:req-7781:usr-12:wal-34:txn-9001:vact_transfer:2025-03-01T12:30:40Z::2025-03-01T12:30:45Z"
const SIGNATURE: &str = "piZ5Ghh9pPNOykt/ulxM8ZNd5ZIIjJn77rUosd+xRbE=";
const BODY_NO_MERCHANT: &str = r#"{"event_type":"payout_failed","requestId":"req-2","data":{"transaction":{"transactionId":"t2","type":"transfer","time":"2025-03-02T00:00:00Z","responseCode":"05"}}}"#;
const TIMESTAMP_NO_MERCHANT: &str = "2025-03-02T00:00:01Z";
// MESSAGE = "payout_failed:req-2:::t2:transfer:2025-03-02T00:00:00Z:05:2025-03-02T00:00:01Z"
const SIGNATURE_NO_MERCHANT: &str = "CNB7OfBdIfEu0NgX8Zqfy0ejPH+nsKOqV6wBICItDdY=";

fn at(text: &str) -> SystemTime {
    parse_rfc3339(text).unwrap_or_else(|| panic!("bad test instant {text}"))
}

fn headers<'a>(signature: &'a str, timestamp: &'a str) -> SignedHeaders<'a> {
    SignedHeaders { signature, timestamp: Some(timestamp), algorithm: None }
}

fn verifier() -> Verifier {
    Verifier::with_scheme(&SCHEME, KEY).unwrap_or_else(|e| panic!("{e}"))
}

fn verify_at(body: &str, signature: &str, timestamp: &str, now: &str) -> Result<WebhookEvent, WebhookError> {
    verifier().verify_at(&headers(signature, timestamp), body.as_bytes(), at(now))
}

#[test]
fn accepts_a_valid_notification_and_reads_it() {
    let event = match verify_at(BODY, SIGNATURE, TIMESTAMP, "2025-03-01T12:31:00Z") {
        Ok(e) => e,
        Err(e) => panic!("valid notification refused: {e}"),
    };
    assert_eq!(event.event_type, "payment_success");
    assert_eq!(event.signed_at, Some(at(TIMESTAMP)));
    let signed = &event.signed;
    assert_eq!(signed.get("request_id").unwrap_or("-"), "req-7781");
    assert_eq!(signed.get("merchant_user_id").unwrap_or("-"), "usr-12");
    assert_eq!(signed.get("merchant_wallet_id").unwrap_or("-"), "wal-34");
    assert_eq!(signed.get("transaction_id").unwrap_or("-"), "txn-9001");
    assert_eq!(signed.get("transaction_type").unwrap_or("-"), "vact_transfer");
    assert_eq!(signed.get("transaction_time").unwrap_or("-"), "2025-03-01T12:30:40Z");
    assert_eq!(signed.get("response_code").unwrap_or("-"), "");
    assert_eq!(event.unsigned.amount_at(AMOUNT).map(|a| a.to_string()), Some("10000.50".into()));
    let debug = format!("{event:?}");
    assert!(!debug.contains("Ada") && !debug.contains("10000"), "{debug}");
}

#[test]
fn the_signing_helper_matches_the_independent_vectors() {
    let signed = sign(&SCHEME, BODY.as_bytes(), at(TIMESTAMP), KEY).unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(signed.timestamp.as_deref(), Some(TIMESTAMP));
    assert_eq!(signed.signature, SIGNATURE);
    let other = sign(&SCHEME, BODY_NO_MERCHANT.as_bytes(), at(TIMESTAMP_NO_MERCHANT), KEY);
    assert_eq!(other.map(|s| s.signature).ok().as_deref(), Some(SIGNATURE_NO_MERCHANT));
    let headers = signed.headers();
    assert!(
        verifier()
            .verify_at(
                &SignedHeaders::from_map(&SCHEME, &headers).unwrap_or_else(|e| panic!("{e}")),
                BODY.as_bytes(),
                at(TIMESTAMP)
            )
            .is_ok()
    );
    assert_eq!(headers.get(ALGORITHM_HEADER).map(|v| v.as_bytes()), Some(&b"HmacSHA256"[..]));
    assert_eq!(headers.get("x-signature-version").map(|v| v.as_bytes()), Some(&b"1.0.0"[..]));
}

#[test]
fn missing_values_sign_as_empty_strings() {
    let event =
        verify_at(BODY_NO_MERCHANT, SIGNATURE_NO_MERCHANT, TIMESTAMP_NO_MERCHANT, TIMESTAMP_NO_MERCHANT);
    assert!(
        matches!(event, Ok(ref e) if e.event_type == "payout_failed" && e.signed.get("merchant_user_id").is_none()),
        "{event:?}"
    );
}

#[test]
fn refuses_tampering_and_wrong_keys() {
    let now = "2025-03-01T12:31:00Z";
    let tampered = BODY.replace("txn-9001", "txn-9002");
    assert_eq!(verify_at(&tampered, SIGNATURE, TIMESTAMP, now).err(), Some(WebhookError::SignatureMismatch));
    assert_eq!(
        verify_at(BODY, SIGNATURE, "2025-03-01T12:30:46Z", now).err(),
        Some(WebhookError::SignatureMismatch)
    );
    let other_key = Verifier::with_scheme(&SCHEME, "other-key").unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(
        other_key.verify_at(&headers(SIGNATURE, TIMESTAMP), BODY.as_bytes(), at(now)).err(),
        Some(WebhookError::SignatureMismatch)
    );
    assert_eq!(
        verify_at(BODY, "not base64!!", TIMESTAMP, now).err(),
        Some(WebhookError::SignatureEncoding(SignatureEncoding::Base64))
    );
    assert_eq!(verify_at(BODY, "", TIMESTAMP, now).err(), Some(WebhookError::SignatureMismatch));
    assert!(matches!(verify_at("{not json", SIGNATURE, TIMESTAMP, now), Err(WebhookError::MalformedBody(_))));
    // A key given twice, even deep in what the signature does not cover, leaves the body
    // open to two readings: refused as the parser refuses it.
    let repeated = BODY.replace(r#""bankCode":"058""#, r#""bankCode":"058","bankCode":"999""#);
    let refused = verify_at(&repeated, SIGNATURE, TIMESTAMP, now);
    assert!(
        matches!(&refused, Err(WebhookError::MalformedBody(reason)) if reason.contains("a key repeated")),
        "{refused:?}"
    );
}

#[test]
fn an_empty_key_is_refused() {
    assert_eq!(Verifier::with_scheme(&SCHEME, "").err(), Some(WebhookError::EmptyKey));
    assert_eq!(sign(&SCHEME, BODY.as_bytes(), at(TIMESTAMP), b"").err(), Some(WebhookError::EmptyKey));
}

#[test]
fn old_future_and_unreadable_timestamps_are_refused() {
    let old =
        sign(&SCHEME, BODY.as_bytes(), at("2001-09-09T01:46:40Z"), KEY).unwrap_or_else(|e| panic!("{e}"));
    let result = verifier().verify_at(
        &headers(&old.signature, old.timestamp.as_deref().unwrap_or_default()),
        BODY.as_bytes(),
        at(TIMESTAMP),
    );
    assert!(matches!(result, Err(WebhookError::OutsideTolerance { .. })), "{result:?}");
    // Six minutes early or late: outside the default five.
    for now in ["2025-03-01T12:24:44Z", "2025-03-01T12:36:46Z"] {
        let result = verify_at(BODY, SIGNATURE, TIMESTAMP, now);
        assert!(matches!(result, Err(WebhookError::OutsideTolerance { .. })), "{now}: {result:?}");
    }
    // ...and inside a tolerance of ten.
    let lenient = verifier().tolerance(Duration::from_secs(600));
    assert!(
        lenient
            .verify_at(&headers(SIGNATURE, TIMESTAMP), BODY.as_bytes(), at("2025-03-01T12:36:46Z"))
            .is_ok()
    );
    // A correctly signed timestamp that is no instant at all.
    let message = "payment_success:req-7781:usr-12:wal-34:txn-9001:vact_transfer:2025-03-01T12:30:40Z::soon";
    let mut signer = Signer::new(HmacDigest::Sha256, KEY.as_bytes()).unwrap_or_else(|e| panic!("{e}"));
    signer.update(message.as_bytes());
    let signature = signer.finish(SignatureEncoding::Base64);
    assert_eq!(verify_at(BODY, &signature, "soon", TIMESTAMP).err(), Some(WebhookError::InvalidTimestamp));
}

#[tokio::test]
async fn deliveries_without_a_request_id_are_never_replays_of_each_other() {
    let verifier = verifier();
    let body = r#"{"event_type":"payout_success","data":{"transaction":{"transactionId":"t-1"}}}"#;
    let signed = sign(&SCHEME, body.as_bytes(), at(TIMESTAMP), KEY).unwrap_or_else(|e| panic!("{e}"));
    let now = at(TIMESTAMP);
    let first = verifier.verify_at(
        &headers(&signed.signature, signed.timestamp.as_deref().unwrap_or_default()),
        body.as_bytes(),
        now,
    );
    let Ok(first) = first else { panic!("{first:?}") };
    assert_eq!(first.signed.get("request_id"), None);
    let claimed = verifier.claim(first.clone()).await.unwrap_or_else(|e| panic!("{e}"));
    claimed.handled().await.unwrap_or_else(|e| panic!("{e}"));
    assert!(verifier.claim(first).await.is_ok(), "the same again is not taken for a replay");
}

#[tokio::test]
async fn a_second_delivery_is_a_replay_once_the_first_was_handled() {
    let verifier = verifier();
    let now = at("2025-03-01T12:31:00Z");
    let event = || {
        verifier
            .verify_at(&headers(SIGNATURE, TIMESTAMP), BODY.as_bytes(), now)
            .unwrap_or_else(|e| panic!("{e}"))
    };
    let first = verifier.claim(event()).await.unwrap_or_else(|e| panic!("{e}"));
    // Claimed: the same delivery at the same time is another receiver's to wait for.
    assert_eq!(verifier.claim(event()).await.err(), Some(WebhookError::InProgress));
    // Its handler failed (and answered 5xx): the service's next delivery is handled.
    first.failed().await;
    let again = verifier.claim(event()).await.unwrap_or_else(|e| panic!("{e}"));
    again.handled().await.unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(verifier.claim(event()).await.err(), Some(WebhookError::Replayed));
    // Dropped without a word (a handler that panicked): released, so handled later.
    let fresh = Verifier::with_scheme(&SCHEME, KEY).unwrap_or_else(|e| panic!("{e}"));
    drop(fresh.claim(event()).await.unwrap_or_else(|e| panic!("{e}")));
    tokio::task::yield_now().await;
    assert!(fresh.claim(event()).await.is_ok());
}

#[tokio::test(start_paused = true)]
async fn a_claim_runs_out_with_its_lease_and_a_mark_with_its_keep() {
    let guard = MemoryReplayGuard::new();
    let lease = Duration::from_secs(60);
    assert_eq!(guard.claim("d-1", "a", lease).await, Ok(Claim::Claimed));
    assert_eq!(guard.claim("d-1", "b", lease).await, Ok(Claim::Busy));
    // Only the holder releases it.
    guard.release("d-1", "b").await.unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(guard.claim("d-1", "b", lease).await, Ok(Claim::Busy));
    // The holder died: the lease runs out, and the next delivery is claimed.
    tokio::time::advance(lease + Duration::from_millis(1)).await;
    assert_eq!(guard.claim("d-1", "b", lease).await, Ok(Claim::Claimed));
    guard.confirm("d-1", "b", Duration::from_secs(3600)).await.unwrap_or_else(|e| panic!("{e}"));
    tokio::time::advance(Duration::from_secs(3599)).await;
    assert_eq!(guard.claim("d-1", "c", lease).await, Ok(Claim::Handled));
    tokio::time::advance(Duration::from_secs(2)).await;
    assert_eq!(guard.claim("d-1", "c", lease).await, Ok(Claim::Claimed));
}

#[test]
fn signed_values_moved_across_their_colons_do_not_verify() {
    // The genuine payout_failed above, re-split: responseCode "00" (success) and a
    // timestamp header of "01Z"; the joined text, and so the HMAC, are unchanged.
    let resplit = BODY_NO_MERCHANT
        .replace(r#""time":"2025-03-02T00:00:00Z""#, r#""time":"2025-03-02T00:00:00Z:05:2025-03-02T00""#)
        .replace(r#""responseCode":"05""#, r#""responseCode":"00""#);
    let result = verify_at(&resplit, SIGNATURE_NO_MERCHANT, "01Z", TIMESTAMP_NO_MERCHANT);
    assert_eq!(result.err(), Some(WebhookError::AmbiguousValue("data.transaction.time")));
    // Moving the colon into a value that holds none.
    let into_code =
        BODY_NO_MERCHANT.replace(r#""responseCode":"05""#, r#""responseCode":"05:2025-03-02T00""#);
    let result = verify_at(&into_code, SIGNATURE_NO_MERCHANT, "00:01Z", TIMESTAMP_NO_MERCHANT);
    assert_eq!(result.err(), Some(WebhookError::AmbiguousValue("data.transaction.responseCode")));
}

#[test]
fn the_amount_is_not_covered_and_says_so() {
    let changed = BODY.replace("10000.50", "99999.99");
    let event = verify_at(&changed, SIGNATURE, TIMESTAMP, TIMESTAMP).unwrap_or_else(|e| panic!("{e}"));
    // The signature still verifies: only the unsigned part tells the changed amount.
    assert_eq!(event.unsigned.amount_at(AMOUNT).map(|a| a.to_string()), Some("99999.99".into()));
    assert_eq!(event.signed.get("transaction_id"), Some("txn-9001"));
}

#[test]
fn header_map_checks_the_algorithm() {
    let mut map = HeaderMap::new();
    map.insert(SIGNATURE_HEADER, HeaderValue::from_static(SIGNATURE));
    map.insert(TIMESTAMP_HEADER, HeaderValue::from_static(TIMESTAMP));
    map.insert(ALGORITHM_HEADER, HeaderValue::from_static("HmacSHA256"));
    let read = |map: &HeaderMap| {
        let headers = SignedHeaders::from_map(&SCHEME, map)?;
        verifier().verify_at(&headers, BODY.as_bytes(), at(TIMESTAMP))
    };
    assert!(read(&map).is_ok());
    map.insert(ALGORITHM_HEADER, HeaderValue::from_static("HmacSHA1"));
    assert_eq!(read(&map).err(), Some(WebhookError::UnsupportedAlgorithm));
    map.remove(TIMESTAMP_HEADER);
    assert_eq!(read(&map).err(), Some(WebhookError::MissingHeader(TIMESTAMP_HEADER)));
}

#[test]
fn an_hmac_sha512_in_hex_matches_the_published_vector_and_verifies_a_notification_of_its_scheme() {
    // The HMAC-SHA512 of the pangram with the key `key`, as RFC 4231's examples are
    // commonly checked (and with python3's hmac module).
    let mut signer = Signer::new(HmacDigest::Sha512, b"key").unwrap_or_else(|e| panic!("{e}"));
    signer.update(b"The quick brown fox jumps over the lazy dog");
    assert_eq!(
        signer.finish(SignatureEncoding::Hex),
        "b42af09057bac1e2d41708e48a902e09b5ff7f12ab428a4fe86653c73dd248fb82f948a549f7b791a5b41915ee4d1ec3935357e4e2317250d0372afa2ebeeb3a"
    );
    // A scheme of SHA-512 in hex signs and verifies; the same signature read as the other
    // encoding, or a digit changed, does not.
    static SHA512_HEX: WebhookScheme =
        WebhookScheme { digest: HmacDigest::Sha512, encoding: SignatureEncoding::Hex, ..SCHEME };
    let signed = sign(&SHA512_HEX, BODY.as_bytes(), at(TIMESTAMP), KEY).unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(signed.signature.len(), 128, "{}", signed.signature);
    assert!(signed.signature.bytes().all(|b| b.is_ascii_hexdigit() && !b.is_ascii_uppercase()));
    let verifier = Verifier::with_scheme(&SHA512_HEX, KEY).unwrap_or_else(|e| panic!("{e}"));
    fn headers(signature: &str) -> SignedHeaders<'_> {
        SignedHeaders { signature, timestamp: Some(TIMESTAMP), algorithm: None }
    }
    assert!(verifier.verify_at(&headers(&signed.signature), BODY.as_bytes(), at(TIMESTAMP)).is_ok());
    assert!(
        verifier
            .verify_at(&headers(&signed.signature.to_uppercase()), BODY.as_bytes(), at(TIMESTAMP))
            .is_ok()
    );
    let mut changed = signed.signature.clone().into_bytes();
    changed[0] = if changed[0] == b'0' { b'1' } else { b'0' };
    let changed = String::from_utf8(changed).unwrap_or_default();
    assert_eq!(
        verifier.verify_at(&headers(&changed), BODY.as_bytes(), at(TIMESTAMP)).err(),
        Some(WebhookError::SignatureMismatch)
    );
    assert_eq!(
        verifier.verify_at(&headers("not hex!"), BODY.as_bytes(), at(TIMESTAMP)).err(),
        Some(WebhookError::SignatureEncoding(SignatureEncoding::Hex))
    );
    // The message names the scheme's encoding, not another's.
    let said =
        verifier.verify_at(&headers("not hex!"), BODY.as_bytes(), at(TIMESTAMP)).err().map(|e| e.to_string());
    assert_eq!(
        said.as_deref(),
        Some("the webhook signature is not valid hex, as the service's scheme writes it")
    );
    // The SHA-256 base64 scheme does not take it.
    let other = Verifier::with_scheme(&SCHEME, KEY).unwrap_or_else(|e| panic!("{e}"));
    assert!(other.verify_at(&headers(&signed.signature), BODY.as_bytes(), at(TIMESTAMP)).is_err());
}

/// A scheme that signs the raw body with HMAC-SHA512 in hex, with no timestamp (as some
/// services sign their notifications).
static RAW_BODY: WebhookScheme = WebhookScheme {
    signature_header: "x-body-signature",
    signature_field: None,
    time_field: None,
    digest: HmacDigest::Sha512,
    encoding: SignatureEncoding::Hex,
    signs: SignedOver::Body,
    timestamp_header: None,
    tolerance_seconds: None,
    algorithm: None,
    version: None,
    event_type: "event",
    request_id: &["event", "reference"],
    signed: &[
        SignedValue { name: "event", path: "event", instant: false },
        SignedValue { name: "reference", path: "data.reference", instant: false },
    ],
};
const RAW_KEY: &str = "sk_test_key_a1b2";
const RAW_BODY_TEXT: &str = r#"{"event":"charge.success","data":{"id":302961,"reference":"qTPrJoy9Bx","amount":10000,"status":"success"}}"#;
// python3: hmac.new(b"sk_test_key_a1b2", RAW_BODY_TEXT.encode(), hashlib.sha512).hexdigest()
const RAW_SIGNATURE: &str = "c4955e838cee649b81ab8813ae3bba071d589ab51c04b1b7892f61238acc3ff113dcaa02b0bbe7e142585b3ccb36b0d815999ddb7e44c2301bbd96b605c6d6c1";

#[tokio::test]
async fn a_raw_body_scheme_without_a_timestamp_signs_and_verifies_the_bytes_as_sent() {
    let signed =
        sign(&RAW_BODY, RAW_BODY_TEXT.as_bytes(), at(TIMESTAMP), RAW_KEY).unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(signed.signature, RAW_SIGNATURE);
    assert_eq!(signed.timestamp, None, "no time is sent where none is signed");
    let headers = signed.headers();
    assert_eq!(headers.len(), 1, "{headers:?}");
    let verifier = Verifier::with_scheme(&RAW_BODY, RAW_KEY).unwrap_or_else(|e| panic!("{e}"));
    // No timestamp: no tolerance to fall outside of, whenever it arrives.
    let event = verifier
        .verify_at(
            &SignedHeaders::from_map(&RAW_BODY, &headers).unwrap_or_else(|e| panic!("{e}")),
            RAW_BODY_TEXT.as_bytes(),
            at("2031-01-01T00:00:00Z"),
        )
        .unwrap_or_else(|e| panic!("{e}"));
    assert_eq!((event.event_type.as_str(), event.signed_at), ("charge.success", None));
    assert_eq!(event.signed.get("reference"), Some("qTPrJoy9Bx"));
    // The signature in upper-case hex is the same signature.
    let upper = RAW_SIGNATURE.to_ascii_uppercase();
    let headers_of = |signature: &'static str| SignedHeaders { signature, timestamp: None, algorithm: None };
    assert!(
        verifier
            .verify_at(
                &headers_of(Box::leak(upper.into_boxed_str())),
                RAW_BODY_TEXT.as_bytes(),
                at(TIMESTAMP)
            )
            .is_ok()
    );
    // Every byte counts: the same JSON with a space, or an amount changed, is refused.
    for altered in [RAW_BODY_TEXT.replacen(":", ": ", 1), RAW_BODY_TEXT.replace("10000", "90000")] {
        let result = verifier.verify_at(&headers_of(RAW_SIGNATURE), altered.as_bytes(), at(TIMESTAMP));
        assert_eq!(result.err(), Some(WebhookError::SignatureMismatch), "{altered}");
    }
    // A colon in a value is no ambiguity when the bytes themselves are signed.
    let colon = r#"{"event":"charge.success","data":{"reference":"a:b"}}"#;
    let signed = sign(&RAW_BODY, colon.as_bytes(), at(TIMESTAMP), RAW_KEY).unwrap_or_else(|e| panic!("{e}"));
    let delivery =
        verifier.receive(&signed.headers(), colon.as_bytes()).await.unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(delivery.event().signed.get("reference"), Some("a:b"));
}

#[test]
fn a_scheme_s_tolerance_is_the_verifier_s_default() {
    static STRICT: WebhookScheme = WebhookScheme { tolerance_seconds: Some(30), ..SCHEME };
    let strict = Verifier::with_scheme(&STRICT, KEY).unwrap_or_else(|e| panic!("{e}"));
    // 40 seconds late: inside the runtime's five minutes, outside the scheme's thirty.
    let late = strict.verify_at(&headers(SIGNATURE, TIMESTAMP), BODY.as_bytes(), at("2025-03-01T12:31:25Z"));
    assert!(matches!(late, Err(WebhookError::OutsideTolerance { .. })), "{late:?}");
    assert!(verify_at(BODY, SIGNATURE, TIMESTAMP, "2025-03-01T12:31:25Z").is_ok());
    // A scheme with a timestamp header refuses a delivery without it.
    let bare = SignedHeaders { signature: SIGNATURE, timestamp: None, algorithm: None };
    assert_eq!(
        verifier().verify_at(&bare, BODY.as_bytes(), at(TIMESTAMP)).err(),
        Some(WebhookError::MissingHeader(TIMESTAMP_HEADER))
    );
}

/// A scheme whose signature header holds `key=value` pairs (`t=<unix>,v1=<hex>`): an
/// HMAC-SHA256 in hex over the time, `.` and the raw body, as some services sign.
static PAIRS: WebhookScheme = WebhookScheme {
    signature_header: "x-pairs-signature",
    signature_field: Some("v1"),
    time_field: Some("t"),
    digest: HmacDigest::Sha256,
    encoding: SignatureEncoding::Hex,
    signs: SignedOver::TimeAndBody,
    timestamp_header: None,
    tolerance_seconds: None,
    algorithm: None,
    version: None,
    event_type: "event",
    request_id: &["id"],
    signed: &[
        SignedValue { name: "id", path: "id", instant: false },
        SignedValue { name: "event", path: "type", instant: false },
    ],
};
const PAIRS_BODY: &str =
    r#"{"id":"evt_1","type":"payout.paid","data":{"object":{"id":"po_1","amount":2000}}}"#;

fn pairs_header(value: &str) -> HeaderMap {
    let mut headers = HeaderMap::new();
    headers.insert("x-pairs-signature", HeaderValue::from_str(value).unwrap_or_else(|e| panic!("{e}")));
    headers
}

#[test]
fn a_header_of_pairs_signs_the_time_and_the_body_and_any_of_its_signatures_may_match() {
    use hmac::Mac;
    let signed_at = SystemTime::UNIX_EPOCH + Duration::from_secs(1_700_000_000);
    let signed = sign(&PAIRS, PAIRS_BODY.as_bytes(), signed_at, RAW_KEY).unwrap_or_else(|e| panic!("{e}"));
    // Computed here apart from the runtime: HMAC-SHA256 of "<t>.<body>", in hex.
    let mut mac =
        hmac::Hmac::<sha2::Sha256>::new_from_slice(RAW_KEY.as_bytes()).unwrap_or_else(|e| panic!("{e}"));
    mac.update(format!("1700000000.{PAIRS_BODY}").as_bytes());
    let hex: String = mac.finalize().into_bytes().iter().map(|b| format!("{b:02x}")).collect();
    let header = signed.headers();
    let sent = header.get("x-pairs-signature").and_then(|v| v.to_str().ok()).unwrap_or_default().to_owned();
    assert_eq!(sent, format!("t=1700000000,v1={hex}"));
    assert_eq!(signed.timestamp.as_deref(), Some("1700000000"));

    let verifier = Verifier::with_scheme(&PAIRS, RAW_KEY).unwrap_or_else(|e| panic!("{e}"));
    let verify = |value: &str, body: &str, now: u64| {
        let now = SystemTime::UNIX_EPOCH + Duration::from_secs(now);
        verifier.verify_at(&SignedHeaders::from_map(&PAIRS, &pairs_header(value))?, body.as_bytes(), now)
    };
    let event = verify(&sent, PAIRS_BODY, 1_700_000_030).unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(event.signed_at, Some(signed_at));
    assert_eq!((event.event_type.as_str(), event.signed.get("id")), ("payout.paid", Some("evt_1")));
    // Spaces, another scheme's pair and a signature of an old key beside the new one.
    let rotated = format!("t=1700000000, v0=abcd, v1={}, v1={hex}", "0".repeat(64));
    assert!(verify(&rotated, PAIRS_BODY, 1_700_000_030).is_ok());
    // Stale beyond the default tolerance (5 minutes), either way.
    assert!(matches!(verify(&sent, PAIRS_BODY, 1_700_000_301), Err(WebhookError::OutsideTolerance { .. })));
    assert!(matches!(verify(&sent, PAIRS_BODY, 1_699_999_699), Err(WebhookError::OutsideTolerance { .. })));
    // The time moved to pass the tolerance breaks the signature; so does a changed body.
    let moved = sent.replace("t=1700000000", "t=1700000400");
    assert_eq!(verify(&moved, PAIRS_BODY, 1_700_000_400).err(), Some(WebhookError::SignatureMismatch));
    let changed = PAIRS_BODY.replace("2000", "9000");
    assert_eq!(verify(&sent, &changed, 1_700_000_030).err(), Some(WebhookError::SignatureMismatch));
    // What is missing is named: the signature's pair, the time's.
    assert_eq!(
        verify("t=1700000000,v0=abcd", PAIRS_BODY, 1_700_000_030).err(),
        Some(WebhookError::MissingField("v1"))
    );
    assert_eq!(
        verify(&format!("v1={hex}"), PAIRS_BODY, 1_700_000_030).err(),
        Some(WebhookError::MissingField("t"))
    );
    // A time that is not Unix seconds: signed over as sent, then refused as no time.
    let mut mac =
        hmac::Hmac::<sha2::Sha256>::new_from_slice(RAW_KEY.as_bytes()).unwrap_or_else(|e| panic!("{e}"));
    mac.update(format!("17e8.{PAIRS_BODY}").as_bytes());
    let odd: String = mac.finalize().into_bytes().iter().map(|b| format!("{b:02x}")).collect();
    assert_eq!(
        verify(&format!("t=17e8,v1={odd}"), PAIRS_BODY, 1_700_000_030).err(),
        Some(WebhookError::InvalidTimestamp)
    );
    assert_eq!(
        verify(&format!("t=1700000000,v1=zz{}", &hex[2..]), PAIRS_BODY, 1_700_000_030).err(),
        Some(WebhookError::SignatureEncoding(SignatureEncoding::Hex))
    );
    assert_eq!(WebhookError::MissingField("v1").http_status(), 401);
    // A header of many signatures is checked no further than the first few: the right one
    // after them is not looked at, so no delivery costs more than that many HMACs.
    let crowded = format!(
        "t=1700000000,{}v1={hex}",
        format!("v1={},", "0".repeat(64)).repeat(super::signed::MAX_SIGNATURES)
    );
    assert_eq!(verify(&crowded, PAIRS_BODY, 1_700_000_030).err(), Some(WebhookError::SignatureMismatch));
}

/// A scheme that sends the merchant's shared secret itself in a header, as some services do.
static SHARED_SECRET: WebhookScheme = WebhookScheme {
    signature_header: "verif-hash",
    signature_field: None,
    time_field: None,
    digest: HmacDigest::Sha256,
    encoding: SignatureEncoding::Base64,
    signs: SignedOver::Secret,
    timestamp_header: None,
    tolerance_seconds: None,
    algorithm: None,
    version: None,
    event_type: "event",
    request_id: &["event", "id"],
    signed: &[
        SignedValue { name: "event", path: "event", instant: false },
        SignedValue { name: "id", path: "data.id", instant: false },
        SignedValue { name: "status", path: "data.status", instant: false },
    ],
};

#[test]
fn a_shared_secret_is_compared_as_sent_and_never_shown() {
    let body = br#"{"event":"transfer.completed","data":{"id":408136,"status":"SUCCESSFUL"}}"#;
    let secret = "merchant-chosen-hash-9";
    let signed = sign(&SHARED_SECRET, body, SystemTime::now(), secret).unwrap_or_else(|e| panic!("{e}"));
    let headers = signed.headers();
    assert_eq!(
        headers.get("verif-hash").map(|v| (v.as_bytes(), v.is_sensitive())),
        Some((secret.as_bytes(), true))
    );
    assert!(!format!("{signed:?}").contains(secret), "{signed:?}");

    let verifier = Verifier::with_scheme(&SHARED_SECRET, secret).unwrap_or_else(|e| panic!("{e}"));
    let event = verifier.verify_headers(&headers, body).unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(
        (event.signed.get("id"), event.signed.get("status"), event.signed_at),
        (Some("408136"), Some("SUCCESSFUL"), None)
    );
    let with = |value: &str| {
        let mut headers = HeaderMap::new();
        headers.insert("verif-hash", HeaderValue::from_str(value).unwrap_or_else(|e| panic!("{e}")));
        verifier.verify_headers(&headers, body)
    };
    assert!(with(&format!(" {secret} ")).is_ok(), "the header's surrounding spaces are not the secret's");
    for wrong in ["merchant-chosen-hash-8", "merchant-chosen-hash-", "merchant-chosen-hash-99", "x"] {
        assert_eq!(with(wrong).err(), Some(WebhookError::SignatureMismatch), "{wrong}");
    }
    assert_eq!(
        verifier.verify_headers(&HeaderMap::new(), body).err(),
        Some(WebhookError::MissingHeader("verif-hash"))
    );
    assert_eq!(
        sign(&SHARED_SECRET, body, SystemTime::now(), b"\xff\xfe").err(),
        Some(WebhookError::KeyNotText)
    );
    assert_eq!(
        sign(&SHARED_SECRET, body, SystemTime::now(), "two\nlines").err(),
        Some(WebhookError::KeyNotText)
    );
}

#[test]
fn a_rotating_verifier_takes_the_new_key_and_the_old_and_nothing_else() {
    let now = "2025-03-01T12:31:00Z";
    let new_key = "whsec_test_next_77e2";
    let by_old = headers(SIGNATURE, TIMESTAMP);
    let signed_by_new =
        sign(&SCHEME, BODY.as_bytes(), at(TIMESTAMP), new_key).unwrap_or_else(|e| panic!("{e}"));
    let new_signature = signed_by_new.signature.clone();
    let by_new = headers(&new_signature, TIMESTAMP);

    let new_only = Verifier::with_scheme(&SCHEME, new_key).unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(
        new_only.verify_at(&by_old, BODY.as_bytes(), at(now)).err(),
        Some(WebhookError::SignatureMismatch)
    );

    let rotating = new_only.also_key(KEY).unwrap_or_else(|e| panic!("{e}"));
    for (what, signed) in [("the old key", &by_old), ("the new key", &by_new)] {
        let event = rotating.verify_at(signed, BODY.as_bytes(), at(now));
        assert_eq!(event.map(|e| e.event_type).ok().as_deref(), Some("payment_success"), "{what}");
    }
    // A third key signs nothing the verifier takes, and a body changed under either key
    // is refused as the first key refuses it.
    let stranger =
        sign(&SCHEME, BODY.as_bytes(), at(TIMESTAMP), "whsec_someone_else").unwrap_or_else(|e| panic!("{e}"));
    let stranger = stranger.signature;
    assert_eq!(
        rotating.verify_at(&headers(&stranger, TIMESTAMP), BODY.as_bytes(), at(now)).err(),
        Some(WebhookError::SignatureMismatch)
    );
    let tampered = BODY.replace("txn-9001", "txn-9002");
    assert_eq!(
        rotating.verify_at(&by_old, tampered.as_bytes(), at(now)).err(),
        Some(WebhookError::SignatureMismatch)
    );
    assert_eq!(
        rotating.verify_at(&headers("not base64!!", TIMESTAMP), BODY.as_bytes(), at(now)).err(),
        Some(WebhookError::SignatureEncoding(SignatureEncoding::Base64))
    );
    assert!(format!("{rotating:?}").contains("keys: 2"), "{rotating:?}");
    assert!(!format!("{rotating:?}").contains(KEY), "{rotating:?}");
}

#[test]
fn a_verifier_takes_a_bounded_number_of_keys_none_empty() {
    let mut verifier = Verifier::with_scheme(&SCHEME, "key-0").unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(
        Verifier::with_scheme(&SCHEME, "key-0").and_then(|v| v.also_key("")).err(),
        Some(WebhookError::EmptyKey)
    );
    for n in 1..MAX_SIGNING_KEYS {
        verifier = verifier.also_key(format!("key-{n}")).unwrap_or_else(|e| panic!("{e}"));
    }
    // A key it holds already is no new one.
    verifier = verifier.also_key("key-1").unwrap_or_else(|e| panic!("{e}"));
    let refused = verifier.also_key("one-too-many").err();
    assert_eq!(refused, Some(WebhookError::TooManyKeys(MAX_SIGNING_KEYS)));
    assert!(refused.is_some_and(|e| e.to_string().contains("drop the oldest")));
}

#[test]
fn a_shared_secret_rotates_as_a_signature_does() {
    let body = br#"{"event":"transfer.completed","data":{"id":408136,"status":"SUCCESSFUL"}}"#;
    let verifier = Verifier::with_scheme(&SHARED_SECRET, "hash-new")
        .and_then(|v| v.also_key("hash-old"))
        .unwrap_or_else(|e| panic!("{e}"));
    let with = |secret: &str| {
        let signed = sign(&SHARED_SECRET, body, SystemTime::now(), secret).unwrap_or_else(|e| panic!("{e}"));
        verifier.verify_headers(&signed.headers(), body)
    };
    assert!(with("hash-new").is_ok());
    assert!(with("hash-old").is_ok());
    assert_eq!(with("hash-other").err(), Some(WebhookError::SignatureMismatch));
}
