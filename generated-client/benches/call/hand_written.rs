//! The other side of each case: a call written by hand, as a careful developer would
//! write one, on reqwest's client ([`HandWritten`]) and on hyper-util's client directly
//! ([`HandWrittenHyper`]).

use std::time::Duration;

use payspec_client::runtime::serde_json;
use reqwest::header::{HeaderName, HeaderValue};
use serde::{Deserialize, Serialize};

use crate::server::{BALANCE_PATH, LISTING_PATH, TOKEN, TRANSFER_PATH};

/// What the hand-written call sends: the transfer's body.
#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct TransferBody<'a> {
    amount: f64,
    account_number: &'a str,
    bank_code: &'a str,
    narration: &'a str,
    merchant_tx_ref: &'a str,
    account_name: &'a str,
}

impl TransferBody<'static> {
    /// The transfer both hand-written calls send, as the generated client's.
    const BENCH: Self = TransferBody {
        amount: 2500.00,
        account_number: "0123456789",
        bank_code: "058",
        narration: "rent",
        merchant_tx_ref: "tx-bench-1",
        account_name: "Ada Obi",
    };
}

/// What the hand-written call reads: the envelope around an operation's data.
#[derive(Deserialize)]
#[allow(dead_code)]
pub(crate) struct RawEnvelope<T> {
    code: String,
    description: String,
    pub(crate) data: Option<T>,
}

/// A listing page as the hand-written call reads it.
#[derive(Deserialize)]
#[allow(dead_code)]
pub(crate) struct RawPage {
    pub(crate) results: Vec<RawTransaction>,
    cursor: Option<String>,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
#[allow(dead_code)]
pub(crate) struct RawTransaction {
    id: String,
    status: String,
    amount: String,
    fixed_charge: Option<String>,
    source: String,
    r#type: String,
    gateway_message: String,
    time_created: String,
    merchant_tx_ref: Option<String>,
}

/// A refusal as the hand-written call reports it: the status and the envelope's code and
/// description.
#[allow(dead_code)]
pub(crate) struct RawRefusal {
    pub(crate) status: u16,
    code: String,
    description: String,
}

/// A balance, as the hand-written call reads it.
#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
#[allow(dead_code)]
pub(crate) struct RawBalance {
    amount: String,
    currency: String,
    time_created: String,
}

/// A transfer's result, as the hand-written call reads it.
#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
#[allow(dead_code)]
pub(crate) struct RawTransfer {
    amount: String,
    time_created: String,
    status: String,
    id: String,
    r#type: String,
    fee: String,
    meta: RawMeta,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
#[allow(dead_code)]
pub(crate) struct RawMeta {
    merchant_tx_ref: Option<String>,
}

/// A hand-written client, as a careful developer would write one: headers that do not
/// change prepared once, a request id per call (the same header the generated client
/// sends), typed bodies and answers, and a timeout on every request (30 s,
/// as the generated client's default; progenitor's generated clients set one too), so
/// that no call can hang. `untimed` is the same without it, for the last case.
pub(crate) struct HandWritten {
    http: reqwest::Client,
    balance_url: String,
    transfer_url: String,
    listing_url: String,
    authorization: HeaderValue,
    account_id: HeaderValue,
}

impl HandWritten {
    pub(crate) fn new(base_url: &str, timeout: Option<Duration>, account_id: &'static str) -> Self {
        let http = match timeout {
            Some(timeout) => reqwest::Client::builder().timeout(timeout),
            None => reqwest::Client::builder(),
        };
        HandWritten {
            http: http.build().expect("a reqwest client"),
            balance_url: format!("{base_url}{BALANCE_PATH}"),
            transfer_url: format!("{base_url}{TRANSFER_PATH}"),
            listing_url: format!("{base_url}{LISTING_PATH}"),
            authorization: HeaderValue::from_str(&format!("Bearer {TOKEN}")).expect("a header value"),
            account_id: HeaderValue::from_static(account_id),
        }
    }

    /// A success's envelope, or the refusal a careful client would return as its error.
    async fn read<T: for<'de> Deserialize<'de>>(
        answer: reqwest::Response,
    ) -> Result<RawEnvelope<T>, RawRefusal> {
        let status = answer.status();
        let bytes = answer.bytes().await.expect("the body");
        if !status.is_success() {
            let envelope: RawEnvelope<serde_json::Value> =
                serde_json::from_slice(&bytes).expect("a JSON refusal");
            return Err(RawRefusal {
                status: status.as_u16(),
                code: envelope.code,
                description: envelope.description,
            });
        }
        let envelope: RawEnvelope<T> = serde_json::from_slice(&bytes).expect("a JSON answer");
        assert_eq!(envelope.code, "00");
        Ok(envelope)
    }

    /// A GET to `url` with the headers every call sends.
    async fn get<T: for<'de> Deserialize<'de>>(&self, url: &str) -> Result<RawEnvelope<T>, RawRefusal> {
        let answer = self
            .http
            .get(url)
            .header(reqwest::header::ACCEPT, HeaderValue::from_static("application/json"))
            .header(reqwest::header::AUTHORIZATION, self.authorization.clone())
            .header(HeaderName::from_static("accountid"), self.account_id.clone())
            .header(HeaderName::from_static("x-request-id"), request_id())
            .send()
            .await
            .expect("the GET is answered");
        Self::read(answer).await
    }

    pub(crate) async fn balance(&self) -> RawEnvelope<RawBalance> {
        self.get(&self.balance_url).await.ok().expect("a balance")
    }

    /// The balance of the account the server refuses.
    pub(crate) async fn refused(&self) -> RawRefusal {
        match self.get::<RawBalance>(&self.balance_url).await {
            Err(refusal) => refusal,
            Ok(_) => panic!("the server refuses this account"),
        }
    }

    /// The first page of ten transactions.
    pub(crate) async fn page(&self) -> RawEnvelope<RawPage> {
        let url = format!("{}?limit=10", self.listing_url);
        self.get(&url).await.ok().expect("a page")
    }

    pub(crate) async fn transfer(&self) -> RawEnvelope<RawTransfer> {
        let body = TransferBody::BENCH;
        let answer = self
            .http
            .post(self.transfer_url.as_str())
            .header(reqwest::header::ACCEPT, HeaderValue::from_static("application/json"))
            .header(reqwest::header::CONTENT_TYPE, HeaderValue::from_static("application/json"))
            .header(reqwest::header::AUTHORIZATION, self.authorization.clone())
            .header(HeaderName::from_static("accountid"), self.account_id.clone())
            .header(HeaderName::from_static("x-request-id"), request_id())
            // The transfer's reference, as the generated client sends it.
            .header(
                HeaderName::from_static("x-idempotent-key"),
                HeaderValue::from_str(body.merchant_tx_ref).expect("a header value"),
            )
            .body(serde_json::to_vec(&body).expect("a body"))
            .send()
            .await
            .expect("the POST is answered");
        Self::read(answer).await.ok().expect("a transfer")
    }
}

/// A request id of the call's own, as the generated client sends one (the spec's
/// `request_id_header`): 32 hex digits, made as the client makes its own (two random seeds
/// a thread draws once, numbered and mixed per id), the same request on the wire for the
/// same work.
pub(crate) fn request_id() -> HeaderValue {
    use std::cell::Cell;
    use std::hash::BuildHasher;
    const HEX: &[u8; 16] = b"0123456789abcdef";
    thread_local! {
        static NEXT: Cell<(u64, u64)> = Cell::new({
            let state = std::collections::hash_map::RandomState::new();
            (state.hash_one(0u8), state.hash_one(1u8))
        });
    }
    let mix = |mut z: u64| {
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    };
    let (a, b) = NEXT.with(|next| {
        let (a, b) = next.get();
        let advanced = (a.wrapping_add(0x9e37_79b9_7f4a_7c15), b.wrapping_add(0x9e37_79b9_7f4a_7c15));
        next.set(advanced);
        advanced
    });
    let bytes = (u128::from(mix(a)) << 64 | u128::from(mix(b))).to_be_bytes();
    let mut text = [0u8; 32];
    for (pair, byte) in text.chunks_exact_mut(2).zip(bytes) {
        pair[0] = HEX[usize::from(byte >> 4)];
        pair[1] = HEX[usize::from(byte & 0xf)];
    }
    HeaderValue::from_bytes(&text).expect("hex is a header value")
}

/// The same hand-written client on hyper-util's client directly (what reqwest and the
/// generated client's own sender are built on): the same headers, body and typed JSON
/// decode, the same 30 s timeout, no redirect layer and no URL parsed per call.
pub(crate) struct HandWrittenHyper {
    http: hyper_util::client::legacy::Client<
        hyper_util::client::legacy::connect::HttpConnector,
        http_body_util::Full<bytes::Bytes>,
    >,
    balance_uri: http::Uri,
    transfer_uri: http::Uri,
    authorization: HeaderValue,
    account_id: HeaderValue,
}

impl HandWrittenHyper {
    pub(crate) fn new(base_url: &str, account_id: &'static str) -> Self {
        let mut connector = hyper_util::client::legacy::connect::HttpConnector::new();
        connector.set_nodelay(true);
        let http = hyper_util::client::legacy::Client::builder(hyper_util::rt::TokioExecutor::new())
            .build(connector);
        HandWrittenHyper {
            http,
            balance_uri: format!("{base_url}{BALANCE_PATH}").parse().expect("a URI"),
            transfer_uri: format!("{base_url}{TRANSFER_PATH}").parse().expect("a URI"),
            authorization: HeaderValue::from_str(&format!("Bearer {TOKEN}")).expect("a header value"),
            account_id: HeaderValue::from_static(account_id),
        }
    }

    /// Sends `request` within 30 s and reads its envelope.
    async fn exchange<T: for<'de> Deserialize<'de>>(
        &self,
        request: http::Request<http_body_util::Full<bytes::Bytes>>,
    ) -> RawEnvelope<T> {
        use http_body_util::BodyExt as _;
        let sent = async {
            let answer = self.http.request(request).await.expect("answered");
            let status = answer.status();
            let bytes = answer.into_body().collect().await.expect("the body").to_bytes();
            (status, bytes)
        };
        let (status, bytes) = tokio::time::timeout(Duration::from_secs(30), sent).await.expect("in time");
        assert!(status.is_success());
        let envelope: RawEnvelope<T> = serde_json::from_slice(&bytes).expect("a JSON answer");
        assert_eq!(envelope.code, "00");
        envelope
    }

    /// A request of `method` to `uri` with the headers every call sends.
    fn request(&self, method: http::Method, uri: &http::Uri) -> http::request::Builder {
        http::Request::builder()
            .method(method)
            .uri(uri.clone())
            .header(reqwest::header::ACCEPT, HeaderValue::from_static("application/json"))
            .header(reqwest::header::AUTHORIZATION, self.authorization.clone())
            .header(HeaderName::from_static("accountid"), self.account_id.clone())
            .header(HeaderName::from_static("x-request-id"), request_id())
    }

    pub(crate) async fn balance(&self) -> RawEnvelope<RawBalance> {
        let request =
            self.request(http::Method::GET, &self.balance_uri).body(Default::default()).expect("a request");
        self.exchange(request).await
    }

    pub(crate) async fn transfer(&self) -> RawEnvelope<RawTransfer> {
        let body = TransferBody::BENCH;
        let request = self
            .request(http::Method::POST, &self.transfer_uri)
            .header(reqwest::header::CONTENT_TYPE, HeaderValue::from_static("application/json"))
            .header(
                HeaderName::from_static("x-idempotent-key"),
                HeaderValue::from_str(body.merchant_tx_ref).expect("a header value"),
            )
            .body(serde_json::to_vec(&body).expect("a body").into())
            .expect("a request");
        self.exchange(request).await
    }
}
