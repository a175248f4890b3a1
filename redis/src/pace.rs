//! One rate limit for every replica, decided inside Redis.

use std::fmt;
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use crate::connection::Connection;
use payspec_store::{
    MemoryPaceStore, PROBE_WAIT, PaceSlot, PaceStore, RateLimitNotice, Reservation, SlotEnd, StoreFuture,
};
use tokio::time::Instant;

use crate::command::{Bound, bounded, millis};
use crate::options::RedisOptions;

/// The reservation, and the releases queued since the last one, in one script on Redis's
/// clock (`TIME`): no two replicas' clocks are ever compared.
///
/// KEYS: the reservations in flight (a sorted set: member, then the end of the call's own
/// deadline, past which its request cannot be under way), the ended requests (member, then
/// when it ended), the learned state (a hash: limit, window, margin, spent, when replicas
/// were last looked at), the replicas alive (a hash: replica, then until when it is taken as
/// alive), the planned departures (a hash: member, then when its request may leave, for a
/// reservation granted with a wait). ARGV: within (ms, or -1 to release only), the new
/// member, this replica's name, the documented limit and window (0 when unknown), the first
/// margin (ms), the keys' time to live (ms), the count of releases, then eight values per
/// release: member, `s` (sent) or `n` (not sent), how long ago it ended (ms), and what its
/// answer announced: limit (-1 when no answer came), window (ms), refused (1 or 0),
/// Retry-After (ms), remaining (-1 for none); last, how soon to ask again while the first
/// answer is awaited, how long this replica is taken as alive without a word (ms), the name
/// it keeps across restarts (empty for none: the replica's name is then its life alone,
/// else `name~life`), and `1` on its life's first run.
///
/// Answers `{1, wait}` for a reservation held from now, `{0, after}` for none (ask again
/// after), `{2, 0}` for releases only.
const PACE_SCRIPT: &str = r"
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local flight, ended, state, alive, leave = KEYS[1], KEYS[2], KEYS[3], KEYS[4], KEYS[5]
local within, member, replica = tonumber(ARGV[1]), ARGV[2], ARGV[3]
local first_margin, ttl = tonumber(ARGV[6]), tonumber(ARGV[7])
local limit = tonumber(redis.call('HGET', state, 'limit') or ARGV[4])
local window = tonumber(redis.call('HGET', state, 'window') or ARGV[5])
local margin = tonumber(redis.call('HGET', state, 'margin') or first_margin)
local spent = tonumber(redis.call('HGET', state, 'spent') or 0)
local heard = tonumber(redis.call('HGET', state, 'heard') or 0)
local n, i = tonumber(ARGV[8]), 9
local alive_ms = tonumber(ARGV[10 + 8 * n])
redis.call('HSET', alive, replica, now + alive_ms)
for _ = 1, n do
  local m, kind, at = ARGV[i], ARGV[i + 1], now - tonumber(ARGV[i + 2])
  local a_limit, a_window = tonumber(ARGV[i + 3]), tonumber(ARGV[i + 4])
  local refused, retry, remaining = ARGV[i + 5], tonumber(ARGV[i + 6]), tonumber(ARGV[i + 7])
  i = i + 8
  redis.call('ZREM', flight, m)
  redis.call('HDEL', leave, m)
  if kind == 's' then
    redis.call('ZADD', ended, at, m)
    if a_limit >= 0 then heard = 1 end
    if a_limit > 0 and a_window > 0 then limit = a_limit; window = a_window end
    if refused == '1' then
      if window > 0 then margin = math.max(first_margin, math.min(margin * 2, math.floor(window / 4))) end
      local wait = retry
      if wait < 0 then wait = (window > 0) and window or 1000 end
      spent = math.max(spent, at + wait)
    elseif remaining == 0 and limit > 0 and window > 0 then
      local own = redis.call('ZCARD', flight) + redis.call('ZCOUNT', ended, at - window - margin, '+inf')
      if own < limit then spent = math.max(spent, at + window) end
    end
  else
    redis.call('ZREM', ended, m)
  end
end
-- A reservation whose replica never said it ended ended, at the latest, with its call's
-- deadline: its request cannot be under way after it.
local lapsed = redis.call('ZRANGEBYSCORE', flight, '-inf', now, 'WITHSCORES')
for j = 1, #lapsed, 2 do
  redis.call('ZADD', ended, lapsed[j + 1], lapsed[j])
  redis.call('ZREM', flight, lapsed[j])
  redis.call('HDEL', leave, lapsed[j])
end
-- This replica's earlier lives (its name, another life) have stopped: their reservations
-- end now, as a dead replica's do below, without waiting for them to fall silent.
local own_name, first = ARGV[11 + 8 * n], ARGV[12 + 8 * n]
if first == '1' and own_name ~= '' then
  local prefix = own_name .. '~'
  for _, m in ipairs(redis.call('ZRANGE', flight, 0, -1)) do
    local r = string.match(m, '^(.*):[^:]*$')
    if r and r ~= replica and string.sub(r, 1, #prefix) == prefix
        and not string.find(string.sub(r, #prefix + 1), '~', 1, true) then
      redis.call('ZADD', ended, math.max(now, tonumber(redis.call('HGET', leave, m) or now)), m)
      redis.call('ZREM', flight, m)
      redis.call('HDEL', leave, m)
      redis.call('HDEL', alive, r)
    end
  end
end
-- A replica that has said nothing for longer than it is taken as alive has stopped (killed,
-- or cut off from Redis, when it paces by its own share): its reservations end now, or
-- when their request was to leave if that is later, and count a window from then.
local scan = tonumber(redis.call('HGET', state, 'scan') or 0)
if now >= scan then
  local verdicts = {}
  for _, m in ipairs(redis.call('ZRANGE', flight, 0, -1)) do
    local r = string.match(m, '^(.*):[^:]*$')
    if r and r ~= replica then
      if verdicts[r] == nil then
        verdicts[r] = tonumber(redis.call('HGET', alive, r) or 0) < now
      end
      if verdicts[r] then
        redis.call('ZADD', ended, math.max(now, tonumber(redis.call('HGET', leave, m) or now)), m)
        redis.call('ZREM', flight, m)
        redis.call('HDEL', leave, m)
      end
    end
  end
  for r, dead in pairs(verdicts) do
    if dead then redis.call('HDEL', alive, r) end
  end
  redis.call('HSET', state, 'scan', now + math.floor(alive_ms / 4))
end
redis.call('ZREMRANGEBYSCORE', ended, '-inf', now - window - margin)
redis.call('HSET', state, 'limit', limit, 'window', window, 'margin', margin, 'spent', spent, 'heard', heard)
redis.call('PEXPIRE', state, ttl)
redis.call('PEXPIRE', ended, ttl)
redis.call('PEXPIRE', flight, ttl)
redis.call('PEXPIRE', alive, ttl)
redis.call('PEXPIRE', leave, ttl)
if within < 0 then return {2, 0} end
local at = math.max(now, spent)
if limit == 0 and heard == 0 and redis.call('ZCARD', flight) > 0 then
  -- The first request's answer may announce the limit: no burst before it.
  return {0, tonumber(ARGV[9 + 8 * n] or 10)}
end
if limit > 0 and window > 0 then
  local hold = window + margin
  local busy = redis.call('ZCARD', flight)
  if busy >= limit then return {0, at + hold - now} end
  local free = limit - busy
  if redis.call('ZCARD', ended) >= free then
    local oldest = redis.call('ZREVRANGE', ended, free - 1, free - 1, 'WITHSCORES')
    at = math.max(at, tonumber(oldest[2]) + hold)
  end
end
local wait = at - now
if wait > within then return {0, wait} end
redis.call('ZADD', flight, now + within, member)
if wait > 0 then
  redis.call('HSET', leave, member, at)
  redis.call('PEXPIRE', leave, ttl)
end
redis.call('PEXPIRE', flight, ttl)
return {1, wait}
";

/// The margin a pacer starts with (as the in-process one does).
const FIRST_MARGIN: Duration = Duration::from_millis(10);

/// How long the pacer paces locally after Redis failed, before it asks Redis again.
const LOCAL_SPELL: Duration = Duration::from_secs(1);

/// Slots the local fallback granted carry this bit in their id.
const LOCAL: u64 = 1 << 63;

/// A [`PaceStore`] shared through Redis by every replica of a merchant: at most the limit's
/// worth of requests are in flight or ended within a window (plus a margin that grows with
/// each `429` the pace did not prevent), counted across replicas, on Redis's clock.
///
/// A call waits for one round trip to Redis: its reservation, which also carries the
/// releases queued since this replica's last one. A release is sent at once, without any
/// call waiting for it; releases that end while one is on its way ride together on the
/// next reservation or the next send.
///
/// When Redis fails or does not answer within the command timeout, this replica paces by
/// its share of the limit ([`RedisOptions::replicas`]) in its own memory for a second,
/// then asks Redis again; the service's `429` and `Retry-After` stay the authority.
#[derive(Clone)]
pub struct RedisPaceStore {
    inner: Arc<Inner>,
}

struct Inner {
    connection: Connection,
    script: redis::Script,
    keys: [String; 5],
    replica: String,
    /// The name this replica keeps across restarts ("" for none).
    name: String,
    /// No run of this life's has reached Redis yet: the next frees its earlier lives'.
    first: AtomicBool,
    next: AtomicU64,
    bound: Bound,
    /// How long this replica is taken as alive without a word.
    alive: Duration,
    ttl: Duration,
    /// Reservations granted through Redis and not yet released: while there are any, a
    /// heartbeat tells Redis this replica is alive.
    holding: AtomicUsize,
    heartbeat: AtomicBool,
    documented: Option<(u32, Duration)>,
    /// Releases not yet sent.
    queued: Mutex<Vec<Release>>,
    flush_planned: AtomicBool,
    /// Until when this replica paces locally (Redis failed).
    local_until: Mutex<Option<Instant>>,
    /// Redis answered since this replica last lost it.
    heard: AtomicBool,
    local: MemoryPaceStore,
    replicas: u32,
}

/// One release, as the script reads it.
struct Release {
    id: u64,
    sent: bool,
    at: Instant,
    announced: Option<RateLimitNotice>,
}

impl fmt::Debug for RedisPaceStore {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("RedisPaceStore").field("keys", &self.inner.keys[2]).finish_non_exhaustive()
    }
}

impl RedisPaceStore {
    pub(crate) fn new(connection: Connection, options: &RedisOptions) -> Self {
        let share = |limit: u32| (limit / options.replicas).max(1);
        let local = match options.limit {
            Some((limit, window)) => MemoryPaceStore::with_limit(share(limit), window),
            None => MemoryPaceStore::new(),
        };
        RedisPaceStore {
            inner: Arc::new(Inner {
                connection,
                script: redis::Script::new(PACE_SCRIPT),
                keys: [
                    options.key("pace:flight"),
                    options.key("pace:ended"),
                    options.key("pace:state"),
                    options.key("pace:alive"),
                    options.key("pace:leave"),
                ],
                replica: match &options.replica_name {
                    Some(name) => format!("{name}~{}", payspec_store::unique_name()),
                    None => payspec_store::unique_name(),
                },
                name: options.replica_name.clone().unwrap_or_default(),
                first: AtomicBool::new(true),
                next: AtomicU64::new(0),
                bound: Bound::of(options),
                alive: options.alive,
                ttl: options.alive.max(Duration::from_secs(600)),
                holding: AtomicUsize::new(0),
                heartbeat: AtomicBool::new(false),
                documented: options.limit,
                queued: Mutex::new(Vec::new()),
                flush_planned: AtomicBool::new(false),
                local_until: Mutex::new(None),
                heard: AtomicBool::new(false),
                local,
                replicas: options.replicas,
            }),
        }
    }
}

impl Inner {
    fn member(&self, id: u64) -> String {
        format!("{}:{id}", self.replica)
    }

    fn pacing_locally(&self) -> bool {
        let until = *self.local_until.lock().unwrap_or_else(|p| p.into_inner());
        until.is_some_and(|until| until > Instant::now())
    }

    fn go_local(&self, error: &payspec_store::StoreError) {
        tracing::warn!(%error, "the shared pacer's store failed: pacing by this replica's share of the limit for a second");
        // Redis let through, in the last window, requests this replica cannot count (other
        // replicas', some perhaps past their share): its own share waits a whole window from
        // the loss, so that nothing is granted on top of them. Its own requests still under
        // way count from their end, as the fallback counted each Redis granted. Once a loss.
        if self.heard.swap(false, Ordering::SeqCst)
            && let Some((share, _)) = self.local.limit()
        {
            self.local.count_ended_now(share);
        }
        *self.local_until.lock().unwrap_or_else(|p| p.into_inner()) = Some(Instant::now() + LOCAL_SPELL);
    }

    fn take_queued(&self) -> Vec<Release> {
        std::mem::take(&mut *self.queued.lock().unwrap_or_else(|p| p.into_inner()))
    }

    /// Runs the script: a reservation within `within` (or releases only, for `None`).
    async fn run(
        &self,
        within: Option<Duration>,
        id: u64,
        releases: &[Release],
    ) -> Result<(i64, u64), payspec_store::StoreError> {
        let now = Instant::now();
        let (limit, window) =
            self.documented.map_or((0, 0), |(limit, window)| (u64::from(limit), millis(window)));
        let mut invocation = self.script.prepare_invoke();
        for key in &self.keys {
            invocation.key(key);
        }
        invocation
            .arg(within.map_or(-1, |w| i64::try_from(w.as_millis()).unwrap_or(i64::MAX)))
            .arg(self.member(id))
            .arg(&self.replica)
            .arg(limit)
            .arg(window)
            .arg(millis(FIRST_MARGIN))
            .arg(millis(self.ttl))
            .arg(releases.len());
        for release in releases {
            let ago = now.saturating_duration_since(release.at).as_millis();
            let announced = release.announced.unwrap_or_default();
            let limit = match (release.announced, announced.limit) {
                (None, _) => -1,
                (Some(_), limit) => limit.map_or(0, |l| i64::try_from(l).unwrap_or(i64::MAX)),
            };
            invocation
                .arg(self.member(release.id))
                .arg(if release.sent { "s" } else { "n" })
                .arg(u64::try_from(ago).unwrap_or(u64::MAX))
                .arg(limit)
                .arg(announced.window.map_or(0, millis))
                .arg(if announced.refused { "1" } else { "0" })
                .arg(announced.retry_after.map_or(-1, |d| i64::try_from(d.as_millis()).unwrap_or(i64::MAX)))
                .arg(announced.remaining.map_or(-1, |r| i64::try_from(r).unwrap_or(i64::MAX)));
        }
        let first = self.first.swap(false, Ordering::SeqCst);
        let life = if first { "1" } else { "0" };
        invocation.arg(millis(PROBE_WAIT)).arg(millis(self.alive)).arg(&self.name).arg(life);
        let mut connection = self.connection.clone();
        let ran = bounded(
            self.bound,
            "the pacer's reservation",
            invocation.invoke_async::<(i64, u64)>(&mut connection),
        )
        .await;
        match &ran {
            Ok(_) => self.heard.store(true, Ordering::SeqCst),
            // Whether it ran is unknown: the next run frees them (again, harmlessly).
            Err(_) if first => self.first.store(true, Ordering::SeqCst),
            Err(_) => {}
        }
        ran
    }

    /// Sends the queued releases alone, unless a reservation took them first; then those
    /// queued meanwhile.
    async fn flush(&self) {
        loop {
            let releases = self.take_queued();
            if releases.is_empty() {
                self.flush_planned.store(false, Ordering::SeqCst);
                // One queued between the look and the store has no flush planned: look again.
                if self.queued.lock().unwrap_or_else(|p| p.into_inner()).is_empty()
                    || self.flush_planned.swap(true, Ordering::SeqCst)
                {
                    return;
                }
                continue;
            }
            if let Err(error) = self.run(None, 0, &releases).await {
                // Their reservations end with their lease instead.
                tracing::warn!(%error, "the shared pacer could not record {} ended requests", releases.len());
                self.flush_planned.store(false, Ordering::SeqCst);
                return;
            }
        }
    }
}

/// Tells Redis this replica is alive while it holds places, a quarter of
/// [`RedisOptions::replica_timeout`] apart, with the releases queued meanwhile; ends when the
/// replica holds none, or the store is dropped.
async fn heartbeat(inner: std::sync::Weak<Inner>) {
    loop {
        let Some(every) = inner.upgrade().map(|inner| inner.alive / 4) else { return };
        tokio::time::sleep(every).await;
        let Some(strong) = inner.upgrade() else { return };
        if strong.holding.load(Ordering::SeqCst) == 0 {
            strong.heartbeat.store(false, Ordering::SeqCst);
            // One granted between the look and the store started no heartbeat: look again.
            if strong.holding.load(Ordering::SeqCst) == 0 || strong.heartbeat.swap(true, Ordering::SeqCst) {
                return;
            }
        }
        let releases = strong.take_queued();
        if let Err(error) = strong.run(None, 0, &releases).await {
            strong.queued.lock().unwrap_or_else(|p| p.into_inner()).extend(releases);
            tracing::debug!(%error, "the shared pacer's heartbeat failed");
        }
    }
}

impl Inner {
    /// One more place held through Redis: the heartbeat runs while any is.
    fn holds_one(self: &Arc<Self>) {
        self.holding.fetch_add(1, Ordering::SeqCst);
        if !self.heartbeat.swap(true, Ordering::SeqCst)
            && let Ok(runtime) = tokio::runtime::Handle::try_current()
        {
            runtime.spawn(heartbeat(Arc::downgrade(self)));
        }
    }
}

impl PaceStore for RedisPaceStore {
    fn reserve(&self, within: Duration) -> StoreFuture<'_, Reservation> {
        let inner = &self.inner;
        if inner.pacing_locally() {
            return StoreFuture::new(async move { local_slot(inner.local.reserve(within).await) });
        }
        StoreFuture::new(async move {
            let id = inner.next.fetch_add(1, Ordering::Relaxed) & !LOCAL;
            let releases = inner.take_queued();
            match inner.run(Some(within), id, &releases).await {
                Ok((1, wait)) => {
                    inner.holds_one();
                    // Counted in the fallback too, should Redis be lost while it runs.
                    inner.local.count_in_flight();
                    Reservation::Granted(PaceSlot::new(id, Duration::from_millis(wait)))
                }
                Ok((_, after)) => Reservation::Retry(Duration::from_millis(after.max(1))),
                Err(error) => {
                    // Whether the script ran is unknown: its releases are sent again (a
                    // release is idempotent), and this call paces locally.
                    inner.queued.lock().unwrap_or_else(|p| p.into_inner()).extend(releases);
                    inner.go_local(&error);
                    local_slot(inner.local.reserve(within).await)
                }
            }
        })
    }

    fn release(&self, slot: PaceSlot, ended: SlotEnd<'_>) {
        let (sent, announced) = match ended {
            SlotEnd::Sent(announced) => (true, announced.copied()),
            _ => (false, None),
        };
        // The local share learns the limit too, divided among the replicas.
        let share = announced.map(|mut announced| {
            announced.limit = announced.limit.map(|limit| (limit / u64::from(self.inner.replicas)).max(1));
            announced
        });
        let local_ended = if sent { SlotEnd::Sent(share.as_ref()) } else { SlotEnd::NotSent };
        if slot.id() & LOCAL != 0 {
            self.inner.local.release(PaceSlot::new(slot.id() & !LOCAL, slot.wait()), local_ended);
            return;
        }
        // What a 429 or a new limit said is for every replica at once; the rest rides on
        // the next reservation.
        let urgent = announced.is_some_and(|a| a.refused || a.limit.is_some() && !self.knows_limit());
        self.inner.holding.fetch_sub(1, Ordering::SeqCst);
        self.inner.queued.lock().unwrap_or_else(|p| p.into_inner()).push(Release {
            id: slot.id(),
            sent,
            at: Instant::now(),
            announced,
        });
        // The fallback counts it from its end, as it counts its own (and learns the limit).
        self.inner.local.release(PaceSlot::new(0, Duration::ZERO), local_ended);
        // Sent now, without the call waiting: a release other replicas do not hear of
        // holds its slot, and sends them to wait a window. Releases that come while one
        // flush is under way go with the next reservation or the next flush.
        let planned = self.inner.flush_planned.swap(true, Ordering::SeqCst);
        if (!planned || urgent)
            && let Ok(runtime) = tokio::runtime::Handle::try_current()
        {
            let inner = Arc::clone(&self.inner);
            runtime.spawn(async move { inner.flush().await });
        }
    }
}

impl RedisPaceStore {
    fn knows_limit(&self) -> bool {
        self.inner.local.limit().is_some()
    }
}

/// A local reservation, its slot marked as the local store's.
fn local_slot(reservation: Reservation) -> Reservation {
    match reservation {
        Reservation::Granted(slot) => Reservation::Granted(PaceSlot::new(slot.id() | LOCAL, slot.wait())),
        other => other,
    }
}
