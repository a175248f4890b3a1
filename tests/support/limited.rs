//! A server limited as the service announces its limit, stricter than the sandbox's fixed
//! windows: at most `limit` requests answered in any sliding window (every request counts,
//! the token's too), `X-Rate-Limit-*` on every answer, and `429` with `Retry-After` beyond
//! it (not applied, not counted). It issues tokens, answers bank transfers at once as
//! `SUCCESS`, and answers a transaction lookup `SUCCESS` for a transfer it applied, `404`
//! for a reference it never received (as the service does), and `PENDING` for one it was
//! told to expect pending until told it settled. It counts what it received: every
//! arrival, every refusal, each reference.

use std::collections::{HashMap, VecDeque};
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use serde_json::json;

use crate::mock::{MockServer, Recorded, Reply};

/// What the server counted.
#[derive(Debug, Default)]
pub struct Counted {
    /// When each answered request arrived, in order.
    pub answered: Vec<Instant>,
    /// Requests refused with `429`.
    pub refused: usize,
    /// Bank transfers applied, by their reference: how many times each.
    pub transfers: HashMap<String, usize>,
    /// Transaction lookups answered.
    pub lookups: usize,
    /// Once set, lookups of the references expected pending answer `SUCCESS`.
    pub settled: bool,
    /// References whose lookups answer `PENDING` until settled, though no transfer came.
    pub pending: std::collections::HashSet<String>,
    window_log: VecDeque<Instant>,
}

/// The server and what it counted.
pub struct LimitedService {
    /// The server (its URL is the client's base URL).
    pub server: MockServer,
    counted: Arc<Mutex<Counted>>,
}

impl LimitedService {
    /// A server that answers at most `limit` requests in any `window`.
    pub async fn start(limit: usize, window: Duration) -> std::io::Result<Self> {
        let counted = Arc::new(Mutex::new(Counted::default()));
        let shared = Arc::clone(&counted);
        let server = MockServer::start(move |request, _| answer(&shared, request, limit, window)).await?;
        Ok(LimitedService { server, counted })
    }

    /// Its base URL.
    pub fn url(&self) -> String {
        self.server.url()
    }

    /// What it counted so far.
    pub fn counted(&self) -> MutexGuard<'_, Counted> {
        self.counted.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Lookups of `reference` answer `PENDING` until [`settle`](Self::settle).
    pub fn expect_pending(&self, reference: &str) {
        self.counted().pending.insert(reference.to_owned());
    }

    /// From now on, lookups of the references expected pending answer `SUCCESS`.
    pub fn settle(&self) {
        self.counted().settled = true;
    }
}

impl Counted {
    /// The most requests answered in any span of `window`.
    pub fn busiest(&self, window: Duration) -> usize {
        let mut most = 0;
        for (i, first) in self.answered.iter().enumerate() {
            let within =
                self.answered[i..].iter().take_while(|at| at.duration_since(*first) < window).count();
            most = most.max(within);
        }
        most
    }

    /// From the first answered request to the last.
    pub fn span(&self) -> Duration {
        match (self.answered.first(), self.answered.last()) {
            (Some(first), Some(last)) => last.duration_since(*first),
            _ => Duration::ZERO,
        }
    }

    /// The rate of answered requests from the first to the last, as a share of `limit` per
    /// `window`.
    pub fn share_of(&self, limit: usize, window: Duration) -> f64 {
        let span = self.span().as_secs_f64();
        if span == 0.0 {
            return 0.0;
        }
        (self.answered.len() - 1) as f64 / span / (limit as f64 / window.as_secs_f64())
    }

    /// References applied more than once.
    pub fn twice(&self) -> Vec<(&String, &usize)> {
        self.transfers.iter().filter(|(_, n)| **n > 1).collect()
    }
}

fn answer(counted: &Mutex<Counted>, request: &Recorded, limit: usize, window: Duration) -> Reply {
    let now = Instant::now();
    let mut counted = counted.lock().unwrap_or_else(|p| p.into_inner());
    while counted.window_log.front().is_some_and(|at| now.duration_since(*at) >= window) {
        counted.window_log.pop_front();
    }
    let window_text = format!("{}ms", window.as_millis());
    if counted.window_log.len() >= limit {
        counted.refused += 1;
        let free = counted
            .window_log
            .front()
            .map_or(window, |first| window.saturating_sub(now.duration_since(*first)));
        let seconds = free.as_secs() + u64::from(free.subsec_nanos() > 0);
        return Reply::json(429, json!({"code": "01", "description": "too many requests"}))
            .header("Retry-After", &seconds.max(1).to_string())
            .header("X-Rate-Limit-Limit", &limit.to_string())
            .header("X-Rate-Limit-Remaining", "0")
            .header("X-Rate-Limit-Window", &window_text);
    }
    counted.window_log.push_back(now);
    counted.answered.push(now);
    let remaining = limit - counted.window_log.len();
    let reply = if request.is("POST", "/v1/auth/token/issue") {
        Reply::ok(json!({
            "businessId": "biz-1",
            "access_token": "tok-limited",
            "refresh_token": "ref-limited",
            "expiresAt": epoch_ms_in(Duration::from_secs(3600)),
        }))
    } else if request.is("POST", "/v2/transfers/bank") {
        let reference = request
            .json()
            .and_then(|body| body.get("merchantTxRef").and_then(|r| r.as_str()).map(str::to_owned))
            .unwrap_or_default();
        *counted.transfers.entry(reference.clone()).or_default() += 1;
        Reply::json(
            200,
            json!({"code": "00", "description": "SUCCESS", "status": true,
                   "data": {"id": format!("API-TRANSFER-{reference}"), "status": "SUCCESS"}}),
        )
    } else if request.is("GET", "/v1/transactions/accounts/single") {
        counted.lookups += 1;
        // By the merchant's reference, or by the id the transfer's answer gave.
        let asked =
            request.query_value("merchantTxRef").or(request.query_value("transactionRef")).unwrap_or("");
        let reference = asked.strip_prefix("API-TRANSFER-").unwrap_or(asked).to_owned();
        if counted.pending.contains(&reference) {
            let status = if counted.settled { "SUCCESS" } else { "PENDING" };
            Reply::ok(json!({"id": reference, "status": status}))
        } else if counted.transfers.contains_key(&reference) {
            Reply::ok(
                json!({"id": format!("API-TRANSFER-{reference}"), "status": "SUCCESS", "merchantTxRef": reference}),
            )
        } else {
            // What the service answers for a reference it never received (the spec records it).
            Reply::json(404, json!({"code": "404", "description": "Transaction matching query not found"}))
        }
    } else {
        Reply::json(404, json!({"code": "404", "description": "no such route here"}))
    };
    reply
        .header("X-Rate-Limit-Limit", &limit.to_string())
        .header("X-Rate-Limit-Remaining", &remaining.to_string())
        .header("X-Rate-Limit-Window", &window_text)
}

/// Today's date in UTC, `YYYY-MM-DD`, as the delivery log's filters take it.
pub fn today() -> String {
    payspec_client::runtime::time::OffsetDateTime::now_utc().date().to_string()
}

fn epoch_ms_in(after: Duration) -> u64 {
    let now = SystemTime::now().duration_since(UNIX_EPOCH).map_or(0, |d| d.as_millis());
    u64::try_from(now).unwrap_or(u64::MAX).saturating_add(u64::try_from(after.as_millis()).unwrap_or(0))
}
