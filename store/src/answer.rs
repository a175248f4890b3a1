//! What every store answers with ([`StoreFuture`]: ready at once, or boxed to await) and
//! fails with ([`StoreError`]).

use std::fmt;
use std::future::Future;
use std::pin::Pin;
use std::task::{Context, Poll};

/// A store's answer: ready now, or a future to await.
#[must_use = "a store's answer does nothing unless awaited"]
pub struct StoreFuture<'a, T> {
    inner: Inner<'a, T>,
}

enum Inner<'a, T> {
    Ready(Option<T>),
    Boxed(Pin<Box<dyn Future<Output = T> + Send + 'a>>),
}

impl<'a, T> StoreFuture<'a, T> {
    /// An answer known now (a store in memory): awaiting it returns at once.
    pub fn ready(value: T) -> Self {
        StoreFuture { inner: Inner::Ready(Some(value)) }
    }

    /// An answer that comes later (a store over the network).
    pub fn new(future: impl Future<Output = T> + Send + 'a) -> Self {
        StoreFuture { inner: Inner::Boxed(Box::pin(future)) }
    }

    /// Whether the answer is known now (awaiting it returns at once): a caller need not
    /// bound the wait.
    pub fn is_ready(&self) -> bool {
        matches!(self.inner, Inner::Ready(Some(_)))
    }
}

impl<T> Unpin for StoreFuture<'_, T> {}

impl<T> Future for StoreFuture<'_, T> {
    type Output = T;

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<T> {
        match &mut self.get_mut().inner {
            // Polled again after it answered: a caller's bug, not the store's.
            Inner::Ready(value) => Poll::Ready(value.take().expect("a StoreFuture polled after it answered")),
            Inner::Boxed(future) => future.as_mut().poll(cx),
        }
    }
}

impl<T> fmt::Debug for StoreFuture<'_, T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let state = match &self.inner {
            Inner::Ready(Some(_)) => "ready",
            Inner::Ready(None) => "taken",
            Inner::Boxed(_) => "pending",
        };
        f.debug_struct("StoreFuture").field("state", &state).finish()
    }
}

/// A shared store could not be reached or refused a command: what the caller of the store
/// does then is documented where the store is used (the pacer falls back to a local share,
/// the webhook guard fails closed, the settlement watch falls back to polling).
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub struct StoreError {
    /// The store, as its errors name it (`"Redis"`).
    pub store: &'static str,
    /// What went wrong, with no secret in it.
    pub reason: String,
}

impl StoreError {
    /// An error of `store` for `reason`.
    pub fn new(store: &'static str, reason: impl Into<String>) -> Self {
        StoreError { store, reason: reason.into() }
    }
}

impl fmt::Display for StoreError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "the shared store ({}) failed: {}", self.store, self.reason)
    }
}

impl std::error::Error for StoreError {}
