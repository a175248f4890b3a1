//! What reaches the sandbox before any handler: each request counted by operation, the
//! rate limit's fixed windows, the faults queued per operation, and the keys the
//! service-like sandbox ignored.

use std::collections::{HashMap, VecDeque};
use std::time::{Duration, Instant};

use serde_json::{Value, json};

/// A fault the sandbox plays instead of (or before) answering.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Fault {
    /// `429 Too Many Requests` with `Retry-After` (whole seconds).
    TooManyRequests {
        /// The wait the answer asks for.
        retry_after: Duration,
    },
    /// `500` with the error envelope; nothing is applied.
    ServerError,
    /// Wait, then answer as usual.
    Delay(Duration),
    /// Close the connection without answering; nothing is applied.
    Drop,
    /// Apply the request, but answer it as still in flight, as the service does: a
    /// transfer `202` `PROCESSING` (it stays `PENDING_BILLING` until
    /// [`Sandbox::settle_pending`](crate::Sandbox::settle_pending)); a bill payment code
    /// `"202"` `Processing...`, settled the same way; a tokenized card charge `status:
    /// true` with the bank's request for the customer's OTP (nothing charged until
    /// [`Sandbox::pay_order`](crate::Sandbox::pay_order)).
    Pending,
    /// Answer a tokenized card charge as declined (`status: false`, "Tokenized charge
    /// failed"): nothing is charged. Other operations answer as usual.
    Declined,
}

/// How a handler plays one request: as usual, or as a queued fault asks.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Play {
    AsUsual,
    Pending,
    Declined,
}

impl Fault {
    /// Every fault's word, as the control API and the command line take them.
    pub const NAMES: [&'static str; 6] =
        ["too_many_requests", "server_error", "delay", "drop", "pending", "declined"];

    /// The fault `name` names, with its defaults: a 429 asks for a wait of 1 s, a delay is
    /// of 1 s.
    pub fn named(name: &str) -> Option<Fault> {
        Some(match name {
            "too_many_requests" => Fault::TooManyRequests { retry_after: Duration::from_secs(1) },
            "server_error" => Fault::ServerError,
            "delay" => Fault::Delay(Duration::from_secs(1)),
            "drop" => Fault::Drop,
            "pending" => Fault::Pending,
            "declined" => Fault::Declined,
            _ => return None,
        })
    }

    /// The control API's word for it.
    pub fn name(&self) -> &'static str {
        match self {
            Fault::TooManyRequests { .. } => "too_many_requests",
            Fault::ServerError => "server_error",
            Fault::Delay(_) => "delay",
            Fault::Drop => "drop",
            Fault::Pending => "pending",
            Fault::Declined => "declined",
        }
    }
}

/// Where the current rate-limit window stands, for one answer.
#[derive(Debug, Clone, Copy)]
pub(crate) struct RateCount {
    pub limit: u32,
    /// Requests left in the window after this one.
    pub remaining: u32,
    pub window: Duration,
    /// When over the limit: how long until the window ends.
    pub refused_for: Option<Duration>,
}

/// How many ignored keys the sandbox lists.
pub(crate) const MAX_IGNORED: usize = 1000;

/// The requests seen, the rate limit's window, and the faults still to play.
#[derive(Debug)]
pub(crate) struct Traffic {
    /// Requests per window, and the window, when the sandbox limits them.
    rate_limit: Option<(u32, Duration)>,
    /// When the current rate-limit window began, and the requests counted in it.
    window: Option<(Instant, u32)>,
    /// Requests refused by the rate limit.
    pub rate_limited: usize,
    pub received: HashMap<String, usize>,
    pub faults: HashMap<String, VecDeque<Fault>>,
    /// Keys the service-like sandbox ignored, by operation (the first [`MAX_IGNORED`]).
    pub ignored: Vec<(String, String)>,
}

impl Traffic {
    pub(crate) fn new(rate_limit: Option<(u32, Duration)>) -> Traffic {
        Traffic {
            rate_limit,
            window: None,
            rate_limited: 0,
            received: HashMap::new(),
            faults: HashMap::new(),
            ignored: Vec::new(),
        }
    }

    /// Counts a request of `operation`, and against the rate limit if there is one: fixed
    /// windows, the first beginning with the first request. A request over the limit is
    /// refused (and counted in `rate_limited`), not applied.
    pub(crate) fn arrive(&mut self, operation: &str, now: Instant) -> Option<RateCount> {
        *self.received.entry(operation.to_owned()).or_default() += 1;
        let (limit, window) = self.rate_limit?;
        let (started, used) = match self.window {
            Some((started, used)) if now.duration_since(started) < window => (started, used),
            _ => (now, 0),
        };
        let over = used >= limit;
        let used = if over { used } else { used + 1 };
        self.window = Some((started, used));
        if over {
            self.rate_limited += 1;
        }
        Some(RateCount {
            limit,
            remaining: limit - used,
            window,
            refused_for: over.then(|| window.saturating_sub(now.duration_since(started))),
        })
    }

    /// Queues a fault `times` times for an operation; how many are queued for it now.
    pub(crate) fn queue(&mut self, operation: &str, fault: Fault, times: usize) -> usize {
        let queue = self.faults.entry(operation.to_owned()).or_default();
        queue.extend(std::iter::repeat_n(fault, times));
        queue.len()
    }

    /// Takes the next fault queued for an operation.
    pub(crate) fn next_fault(&mut self, op: &str) -> Option<Fault> {
        let queue = self.faults.get_mut(op)?;
        let fault = queue.pop_front();
        if queue.is_empty() {
            self.faults.remove(op);
        }
        fault
    }

    /// Drops every queued fault; how many there were.
    pub(crate) fn clear_faults(&mut self) -> usize {
        let cleared = self.faults.values().map(VecDeque::len).sum();
        self.faults.clear();
        cleared
    }

    /// Notes the keys a request carried that the spec does not describe.
    pub(crate) fn note_ignored(&mut self, operation: &str, keys: &[String]) {
        for key in keys {
            if self.ignored.len() >= MAX_IGNORED {
                return;
            }
            let entry = (operation.to_owned(), key.clone());
            if !self.ignored.contains(&entry) {
                self.ignored.push(entry);
            }
        }
    }

    /// The faults still queued, by operation, in the order they will be played.
    pub(crate) fn faults_json(&self) -> Value {
        let mut names: Vec<&String> = self.faults.keys().collect();
        names.sort();
        Value::Object(
            names
                .into_iter()
                .map(|name| {
                    let queued: Vec<Value> = self.faults[name].iter().map(|f| json!(f.name())).collect();
                    (name.clone(), Value::Array(queued))
                })
                .collect(),
        )
    }
}
