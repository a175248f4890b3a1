//! A payout batch's items, shared by every replica running the batch.

use std::fmt;
use std::time::Duration;

use crate::connection::Connection;
use payspec_store::{BatchStore, ItemClaim, ItemEnd, StoreError, StoreFuture};

use crate::command::{Bound, bounded, millis};
use crate::options::RedisOptions;

/// Claims ARGV[1] for ARGV[2] for ARGV[3] ms, on Redis's clock. KEYS: the items (a hash:
/// reference, then `c` for claimed or `e:<end>` once ended), the claims (a hash: reference,
/// then `<holder>|<until, ms>`). ARGV[4]: the keys' time to live (ms). Answers `{kind,
/// value}`: `fresh`, `resume`, `ended` with the end, `held` with the ms left.
const CLAIM_SCRIPT: &str = r"
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local items, claims = KEYS[1], KEYS[2]
local reference, holder, lease, ttl = ARGV[1], ARGV[2], tonumber(ARGV[3]), tonumber(ARGV[4])
local record = redis.call('HGET', items, reference)
if record and string.sub(record, 1, 2) == 'e:' then return {'ended', string.sub(record, 3)} end
local claim = redis.call('HGET', claims, reference)
if claim then
  local bar = string.find(claim, '|', 1, true)
  local by, until_ = string.sub(claim, 1, bar - 1), tonumber(string.sub(claim, bar + 1))
  if by ~= holder and until_ > now then return {'held', tostring(until_ - now)} end
end
redis.call('HSET', claims, reference, holder .. '|' .. tostring(now + lease))
redis.call('PEXPIRE', claims, ttl)
redis.call('PEXPIRE', items, ttl)
if record then return {'resume', ''} end
redis.call('HSET', items, reference, 'c')
return {'fresh', ''}
";

/// Extends ARGV[1]'s claims of ARGV[3..] to ARGV[2] ms from now.
const RENEW_SCRIPT: &str = r"
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local holder, lease = ARGV[1], tonumber(ARGV[2])
for i = 3, #ARGV do
  local claim = redis.call('HGET', KEYS[2], ARGV[i])
  if claim and string.sub(claim, 1, #holder + 1) == holder .. '|' then
    redis.call('HSET', KEYS[2], ARGV[i], holder .. '|' .. tostring(now + lease))
  end
end
return 0
";

/// Records ARGV[1]'s end ARGV[2] and drops its claim.
const FINISH_SCRIPT: &str = r"
redis.call('HSET', KEYS[1], ARGV[1], 'e:' .. ARGV[2])
redis.call('HDEL', KEYS[2], ARGV[1])
redis.call('PEXPIRE', KEYS[1], ARGV[3])
return 0
";

/// Drops ARGV[1]'s claim if ARGV[2] holds it.
const RELEASE_SCRIPT: &str = r"
local claim = redis.call('HGET', KEYS[2], ARGV[1])
if claim and string.sub(claim, 1, #ARGV[2] + 1) == ARGV[2] .. '|' then
  redis.call('HDEL', KEYS[2], ARGV[1])
end
return 0
";

/// A [`BatchStore`] shared through Redis by every replica running a merchant's payout
/// batches: a batch's items in one hash (claimed, or how each ended), its claims in another
/// (holder and lease end, on Redis's clock), both kept for
/// [`RedisOptions::batch_ttl`] after their last change. Every answer waits for one round
/// trip; when Redis fails or does not answer within the command timeout, the answer is an
/// error that names Redis, and the batch sends nothing for that item until it has a record.
///
/// Redis must keep what it was told: run it with persistence (`appendonly yes`; with
/// `appendfsync everysec` a crash of Redis itself can lose the last second's claims). A
/// batch whose records were lost claims its items as new; run it with
/// `payspec_runtime::payout::PayoutBatch::check_first` then,
/// and the service, asked by each reference, stays the authority.
#[derive(Clone)]
pub struct RedisBatchStore {
    connection: Connection,
    scripts: [redis::Script; 4],
    prefix: String,
    bound: Bound,
    ttl: Duration,
}

impl fmt::Debug for RedisBatchStore {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("RedisBatchStore").field("prefix", &self.prefix).finish_non_exhaustive()
    }
}

impl RedisBatchStore {
    pub(crate) fn new(connection: Connection, options: &RedisOptions) -> Self {
        RedisBatchStore {
            connection,
            scripts: [CLAIM_SCRIPT, RENEW_SCRIPT, FINISH_SCRIPT, RELEASE_SCRIPT].map(redis::Script::new),
            prefix: options.key("batch:"),
            bound: Bound::of(options),
            ttl: options.batch_ttl,
        }
    }

    /// The keys of `batch`: its items, its claims.
    fn keys(&self, batch: &str) -> [String; 2] {
        [format!("{}{batch}:items", self.prefix), format!("{}{batch}:claims", self.prefix)]
    }

    async fn invoke<T: redis::FromRedisValue>(
        &self,
        what: &str,
        script: &redis::Script,
        batch: &str,
        args: &[&str],
    ) -> Result<T, StoreError> {
        let mut invocation = script.prepare_invoke();
        for key in self.keys(batch) {
            invocation.key(key);
        }
        for arg in args {
            invocation.arg(*arg);
        }
        let mut connection = self.connection.clone();
        bounded(self.bound, what, invocation.invoke_async::<T>(&mut connection)).await
    }
}

impl BatchStore for RedisBatchStore {
    fn claim<'a>(
        &'a self,
        batch: &'a str,
        reference: &'a str,
        holder: &'a str,
        lease: Duration,
    ) -> StoreFuture<'a, Result<ItemClaim, StoreError>> {
        StoreFuture::new(async move {
            let (lease, ttl) = (millis(lease).to_string(), millis(self.ttl).to_string());
            let (kind, value): (String, String) = self
                .invoke("the batch's claim", &self.scripts[0], batch, &[reference, holder, &lease, &ttl])
                .await?;
            match kind.as_str() {
                "fresh" => Ok(ItemClaim::Fresh),
                "resume" => Ok(ItemClaim::Resume),
                "held" => Ok(ItemClaim::Held(Duration::from_millis(value.parse().unwrap_or(1_000)))),
                "ended" => ItemEnd::parse(&value).map(ItemClaim::Ended).ok_or_else(|| {
                    StoreError::new(
                        "Redis",
                        format!("the batch's record of an item reads `{value}`, not an end"),
                    )
                }),
                other => Err(StoreError::new("Redis", format!("the batch's claim answered `{other}`"))),
            }
        })
    }

    fn renew<'a>(
        &'a self,
        batch: &'a str,
        references: &'a [String],
        holder: &'a str,
        lease: Duration,
    ) -> StoreFuture<'a, Result<(), StoreError>> {
        StoreFuture::new(async move {
            let lease = millis(lease).to_string();
            let mut args: Vec<&str> = vec![holder, &lease];
            args.extend(references.iter().map(String::as_str));
            self.invoke::<i64>("the batch's renewal", &self.scripts[1], batch, &args).await.map(drop)
        })
    }

    fn finish<'a>(
        &'a self,
        batch: &'a str,
        reference: &'a str,
        end: ItemEnd,
    ) -> StoreFuture<'a, Result<(), StoreError>> {
        StoreFuture::new(async move {
            let ttl = millis(self.ttl).to_string();
            self.invoke::<i64>(
                "the batch's record of an end",
                &self.scripts[2],
                batch,
                &[reference, end.as_str(), &ttl],
            )
            .await
            .map(drop)
        })
    }

    fn release<'a>(
        &'a self,
        batch: &'a str,
        reference: &'a str,
        holder: &'a str,
    ) -> StoreFuture<'a, Result<(), StoreError>> {
        StoreFuture::new(async move {
            self.invoke::<i64>("the batch's release", &self.scripts[3], batch, &[reference, holder])
                .await
                .map(drop)
        })
    }
}
