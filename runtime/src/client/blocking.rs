//! What the `blocking` client runs its calls on: a runtime of its own, on the caller's
//! thread, so that scripts and command-line tools need no async code.

use std::fmt;
use std::future::Future;

use crate::error::Error;

/// A single-threaded runtime that runs one call at a time to its end.
pub struct BlockingRuntime {
    /// Taken when dropped.
    runtime: Option<tokio::runtime::Runtime>,
}

impl Drop for BlockingRuntime {
    /// Shuts the runtime down without waiting for it, so that a blocking client dropped
    /// anywhere, async code included, never panics. (Nothing of a finished call runs on
    /// it; a token renewal in flight is abandoned, as its task's guard records.)
    fn drop(&mut self) {
        if let Some(runtime) = self.runtime.take() {
            runtime.shutdown_background();
        }
    }
}

impl fmt::Debug for BlockingRuntime {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("BlockingRuntime")
    }
}

/// Refuses to block inside an async runtime, where a runtime of its own cannot start.
fn outside_async() -> Result<(), Error> {
    match tokio::runtime::Handle::try_current() {
        Ok(_) => Err(Error::config(
            "the blocking client cannot run inside an async runtime (it would block the \
                     runtime's thread): call the async `Client` there, or call the blocking one from \
                     a thread of its own (`tokio::task::spawn_blocking`)",
        )),
        Err(_) => Ok(()),
    }
}

impl BlockingRuntime {
    /// A runtime with timers and I/O; a configuration error inside an async runtime, where it
    /// could not run.
    pub fn new() -> Result<Self, Error> {
        outside_async()?;
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .map_err(|_| Error::config("the blocking runtime could not be started"))?;
        Ok(BlockingRuntime { runtime: Some(runtime) })
    }

    /// Runs `call` to its end on this thread; a configuration error, without running it, when
    /// the thread is inside an async runtime.
    pub fn block_on<T, F: Future<Output = Result<T, Error>>>(&self, call: F) -> Result<T, Error> {
        outside_async()?;
        match &self.runtime {
            Some(runtime) => runtime.block_on(call),
            None => Err(Error::config("the blocking runtime was shut down")),
        }
    }
}
