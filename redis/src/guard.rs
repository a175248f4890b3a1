//! Claim, then confirm: each webhook delivery handled once by all the replicas.

use std::fmt;
use std::time::Duration;

use crate::connection::Connection;
use payspec_store::{Claim, ReplayGuard, StoreError, StoreFuture};

use crate::command::{Bound, bounded, millis};
use crate::options::RedisOptions;

/// What a handled delivery's key holds; a claim's holder name is never this.
const HANDLED: &str = "handled";

/// Claims a delivery for ARGV[1] for ARGV[2] ms: 1 claimed, 2 handled before, 3 held by
/// another now.
const CLAIM_SCRIPT: &str = r"
local held = redis.call('GET', KEYS[1])
if not held then
  redis.call('SET', KEYS[1], ARGV[1], 'PX', ARGV[2])
  return 1
end
if held == ARGV[3] then return 2 end
return 3
";

/// Deletes the claim only if ARGV[1] still holds it (a claim that ran out and was taken by
/// another replica is left to that one).
const RELEASE_SCRIPT: &str = r"
if redis.call('GET', KEYS[1]) == ARGV[1] then
  return redis.call('DEL', KEYS[1])
end
return 0
";

/// A [`ReplayGuard`] shared through Redis by every replica receiving a merchant's webhooks.
///
/// A claim is a key set only if absent, holding the claim's holder, with the lease as its
/// time to live (`SET NX PX`, in a script that also tells a handled delivery from one held
/// now); a confirmed delivery's key holds a mark for the verifier's keep; a release deletes
/// the key only if its holder still holds it. When Redis fails or does not answer in time,
/// every answer is an error that names Redis: the verifier refuses the delivery with `503`
/// (the service delivers it again), so nothing is handled without a record.
#[derive(Clone)]
pub struct RedisReplayGuard {
    connection: Connection,
    claim: redis::Script,
    release: redis::Script,
    prefix: String,
    bound: Bound,
}

impl fmt::Debug for RedisReplayGuard {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("RedisReplayGuard").field("prefix", &self.prefix).finish_non_exhaustive()
    }
}

impl RedisReplayGuard {
    pub(crate) fn new(connection: Connection, options: &RedisOptions) -> Self {
        RedisReplayGuard {
            connection,
            claim: redis::Script::new(CLAIM_SCRIPT),
            release: redis::Script::new(RELEASE_SCRIPT),
            prefix: options.key("delivery:"),
            bound: Bound::of(options),
        }
    }

    fn key(&self, delivery: &str) -> String {
        format!("{}{delivery}", self.prefix)
    }
}

impl ReplayGuard for RedisReplayGuard {
    fn claim<'a>(
        &'a self,
        delivery: &'a str,
        holder: &'a str,
        lease: Duration,
    ) -> StoreFuture<'a, Result<Claim, StoreError>> {
        StoreFuture::new(async move {
            let mut connection = self.connection.clone();
            let mut invocation = self.claim.prepare_invoke();
            invocation.key(self.key(delivery)).arg(holder).arg(millis(lease)).arg(HANDLED);
            let answer: i64 =
                bounded(self.bound, "claiming a webhook delivery", invocation.invoke_async(&mut connection))
                    .await?;
            Ok(match answer {
                1 => Claim::Claimed,
                2 => Claim::Handled,
                _ => Claim::Busy,
            })
        })
    }

    fn confirm<'a>(
        &'a self,
        delivery: &'a str,
        _holder: &'a str,
        keep: Duration,
    ) -> StoreFuture<'a, Result<(), StoreError>> {
        StoreFuture::new(async move {
            let mut connection = self.connection.clone();
            let mut command = redis::cmd("SET");
            command.arg(self.key(delivery)).arg(HANDLED).arg("PX").arg(millis(keep));
            bounded(
                self.bound,
                "marking a webhook delivery handled",
                command.query_async::<()>(&mut connection),
            )
            .await
        })
    }

    fn release<'a>(&'a self, delivery: &'a str, holder: &'a str) -> StoreFuture<'a, Result<(), StoreError>> {
        StoreFuture::new(async move {
            let mut connection = self.connection.clone();
            let mut invocation = self.release.prepare_invoke();
            invocation.key(self.key(delivery)).arg(holder);
            bounded(
                self.bound,
                "releasing a webhook delivery",
                invocation.invoke_async::<i64>(&mut connection),
            )
            .await
            .map(|_| ())
        })
    }
}
