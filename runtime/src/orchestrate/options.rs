//! Per-call settings: what one call of a client does otherwise than the client's own.

use std::time::Duration;

use crate::retry::RetryPolicy;

/// Per-call settings that override the client's.
///
/// ```
/// use payspec_runtime::{CallOptions, RetryPolicy};
/// use std::time::Duration;
///
/// // One call that may take 60 s in all, each attempt 10 s, and is never sent again.
/// let options = CallOptions::new()
///     .deadline(Duration::from_secs(60))
///     .timeout(Duration::from_secs(10))
///     .retry(RetryPolicy::never());
/// # let _ = options;
/// ```
#[derive(Clone, Debug, Default)]
pub struct CallOptions {
    pub(crate) retry: Option<RetryPolicy>,
    pub(crate) timeout: Option<Duration>,
    pub(crate) deadline: Option<Duration>,
    pub(crate) max_pages: Option<u32>,
}

impl CallOptions {
    /// The client's settings, unchanged.
    pub fn new() -> Self {
        Self::default()
    }

    /// Uses this retry policy for the call.
    pub fn retry(mut self, policy: RetryPolicy) -> Self {
        self.retry = Some(policy);
        self
    }

    /// Uses this per-attempt timeout for the call.
    pub fn timeout(mut self, timeout: Duration) -> Self {
        self.timeout = Some(timeout);
        self
    }

    /// The longest the whole call may take: every attempt, every wait between attempts and
    /// the wait for an access token. For a listing, each page is one call.
    pub fn deadline(mut self, deadline: Duration) -> Self {
        self.deadline = Some(deadline);
        self
    }

    /// A copy of `options`, or the client's settings when there are none (what a group
    /// handle made with `with_options` passes each call).
    pub fn or_default(options: Option<&CallOptions>) -> CallOptions {
        options.cloned().unwrap_or_default()
    }

    /// For a listing: the most pages it follows (by default
    /// [`DEFAULT_MAX_PAGES`](crate::pages::DEFAULT_MAX_PAGES)). One more page ends the stream
    /// with [`ErrorDetail::Pagination`](crate::ErrorDetail::Pagination).
    pub fn max_pages(mut self, pages: u32) -> Self {
        self.max_pages = Some(pages);
        self
    }
}
