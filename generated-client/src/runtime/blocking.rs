//! What the `blocking` client runs its calls on: a runtime of its own, on the caller's
//! thread, so that scripts and command-line tools need no async code.

use std::fmt;
use std::future::Future;

use super::error::Error;

/// A single-threaded runtime that runs one call at a time to its end.
pub struct BlockingRuntime {
    runtime: tokio::runtime::Runtime,
}

impl fmt::Debug for BlockingRuntime {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("BlockingRuntime")
    }
}

impl BlockingRuntime {
    /// A runtime with timers and I/O.
    pub fn new() -> Result<Self, Error> {
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .map_err(|_| Error::Config { reason: "the blocking runtime could not be started".to_owned() })?;
        Ok(BlockingRuntime { runtime })
    }

    /// Runs `call` to its end on this thread. Calling it from async code panics, as any
    /// runtime started inside another does.
    pub fn block_on<F: Future>(&self, call: F) -> F::Output {
        self.runtime.block_on(call)
    }
}
