//! The Redis merchants run in production, each started by the test: one that speaks TLS
//! only (`rediss://`, its certificate from a private CA trusted by
//! `RedisOptions::root_certificates_pem`), and one whose default user is off, reached as an
//! ACL user with its password. On each, the webhook guard claims a delivery once and the
//! shared pacer reserves and releases; a wrong password or an untrusted certificate is an
//! error that names Redis and shows no secret.

use std::time::Duration;

use payspec_client::store::{Claim, PaceStore, ReplayGuard, Reservation, SlotEnd};
use payspec_redis::testing::RedisServer;
use payspec_redis::{RedisOptions, RedisStores};
use payspec_tests::loopback::{authority, leaf_pem};

/// The guard and the pacer over `stores` hold their guarantees: a delivery claimed once, a
/// slot reserved and released.
async fn both_hold(stores: &RedisStores) {
    let guard = stores.guard();
    let lease = Duration::from_secs(30);
    let first = guard.claim("delivery-1", "replica-a", lease).await;
    assert_eq!(first.as_ref().map_err(ToString::to_string), Ok(&Claim::Claimed), "{first:?}");
    let second = guard.claim("delivery-1", "replica-b", lease).await;
    assert_eq!(second.map_err(|e| e.to_string()), Ok(Claim::Busy));
    let pace = stores.pace();
    match pace.reserve(Duration::from_secs(5)).await {
        Reservation::Granted(slot) => pace.release(slot, SlotEnd::NotSent),
        other => panic!("no slot: {other:?}"),
    }
}

#[tokio::test]
async fn a_redis_that_speaks_tls_only_is_reached_with_a_private_root_and_refused_without_it() {
    let ca = authority();
    let (certificate, key) = leaf_pem(&["localhost"], &ca);
    let dir = std::env::temp_dir().join(format!("payspec-redis-tls-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap_or_else(|e| panic!("{e}"));
    let (cert_file, key_file) = (dir.join("redis.crt"), dir.join("redis.key"));
    std::fs::write(&cert_file, certificate).unwrap_or_else(|e| panic!("{e}"));
    std::fs::write(&key_file, key).unwrap_or_else(|e| panic!("{e}"));
    let redis = RedisServer::start_tls(&cert_file, &key_file).unwrap_or_else(|e| panic!("{e}"));
    assert!(redis.url().starts_with("rediss://"), "{}", redis.url());

    let trusted =
        RedisStores::open(redis.url(), RedisOptions::new("tls-shop").root_certificates_pem(ca.pem.clone()))
            .unwrap_or_else(|e| panic!("{e}"));
    both_hold(&trusted).await;

    // Without the private root, the platform's roots do not know the server's CA.
    let untrusted =
        RedisStores::open(redis.url(), RedisOptions::new("tls-shop")).unwrap_or_else(|e| panic!("{e}"));
    let refused = untrusted.guard().claim("delivery-2", "replica-a", Duration::from_secs(30)).await;
    let error = refused.expect_err("an untrusted certificate");
    assert!(error.to_string().contains("Redis"), "{error}");
    let _ = std::fs::remove_dir_all(&dir);
}

#[tokio::test]
async fn an_acl_user_with_its_password_is_let_in_and_a_wrong_password_is_an_error_without_it() {
    let redis = RedisServer::start_with(&[
        "--user",
        "default",
        "off",
        "--user",
        "shop",
        "on",
        ">s3cret-word",
        "~*",
        "&*",
        "+@all",
    ])
    .unwrap_or_else(|e| panic!("{e}"));
    let address = redis.url().trim_start_matches("redis://").to_owned();
    let url = format!("redis://shop:s3cret-word@{address}");
    let stores = RedisStores::open(&url, RedisOptions::new("acl-shop")).unwrap_or_else(|e| panic!("{e}"));
    both_hold(&stores).await;

    let wrong = format!("redis://shop:not-the-word@{address}");
    let stores = RedisStores::open(&wrong, RedisOptions::new("acl-shop")).unwrap_or_else(|e| panic!("{e}"));
    let error =
        stores.guard().claim("delivery-3", "replica-a", Duration::from_secs(30)).await.expect_err("refused");
    let text = error.to_string();
    assert!(text.contains("Redis"), "{text}");
    assert!(!text.contains("not-the-word"), "the password in an error: {text}");
    assert!(!format!("{stores:?}").contains("not-the-word"), "the password in Debug");
    // Nothing was claimed by the refused user: the right one still can.
    let right = RedisStores::open(&url, RedisOptions::new("acl-shop")).unwrap_or_else(|e| panic!("{e}"));
    let claimed = right.guard().claim("delivery-3", "replica-a", Duration::from_secs(30)).await;
    assert_eq!(claimed.map_err(|e| e.to_string()), Ok(Claim::Claimed));
}

/// The ACL rules the replicas guide gives the stores' user (docs/replicas.md, "The Redis you
/// run"), for the merchant `acl-least`.
const LEAST_RULES: &[&str] = &[
    "~payspec:{acl-least}:*",
    "&payspec:{acl-least}:*",
    "-@all",
    "+evalsha",
    "+eval",
    "+script|load",
    "+get",
    "+set",
    "+mget",
    "+del",
    "+hget",
    "+hset",
    "+hdel",
    "+zadd",
    "+zrem",
    "+zcard",
    "+zcount",
    "+zrange",
    "+zrangebyscore",
    "+zremrangebyscore",
    "+zrevrange",
    "+pexpire",
    "+time",
    "+publish",
    "+subscribe",
    "+unsubscribe",
    "+ping",
    "+hello",
];

#[tokio::test]
async fn the_acl_rules_the_guide_states_are_all_every_store_needs() {
    use payspec_client::FinalState;
    use payspec_client::store::{BatchStore, ItemClaim, ItemEnd, WatchStore};
    let mut args = vec!["--user", "default", "off", "--user", "stores", "on", ">least-word"];
    args.extend_from_slice(LEAST_RULES);
    let redis = RedisServer::start_with(&args).unwrap_or_else(|e| panic!("{e}"));
    let address = redis.url().trim_start_matches("redis://").to_owned();
    let url = format!("redis://stores:least-word@{address}");
    let stores = RedisStores::open(&url, RedisOptions::new("acl-least").limit(40, Duration::from_secs(1)))
        .unwrap_or_else(|e| panic!("{e}"));
    both_hold(&stores).await;
    // The batch store: claimed, then ended for good.
    let batches = stores.batches();
    let lease = Duration::from_secs(30);
    let claim = batches.claim("b1", "ref-1", "runner-a", lease).await;
    assert_eq!(claim.map_err(|e| e.to_string()), Ok(ItemClaim::Fresh));
    batches
        .finish("b1", "ref-1", ItemEnd::Final(FinalState::Succeeded))
        .await
        .unwrap_or_else(|e| panic!("{e}"));
    let again = batches.claim("b1", "ref-1", "runner-b", lease).await;
    assert_eq!(again.map_err(|e| e.to_string()), Ok(ItemClaim::Ended(ItemEnd::Final(FinalState::Succeeded))));
    // The watch: a state recorded by one replica's stores wakes another's listener and is
    // found by its look.
    let other = RedisStores::open(&url, RedisOptions::new("acl-least")).unwrap_or_else(|e| panic!("{e}"));
    let listening = other.watch();
    let woken = std::sync::Arc::new(std::sync::atomic::AtomicUsize::new(0));
    let seen = std::sync::Arc::clone(&woken);
    listening.subscribe(std::sync::Arc::new(move || {
        seen.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
    }));
    // The listener subscribes on a connection of its own: a bounded wait for it.
    let watch = stores.watch();
    let until = std::time::Instant::now() + Duration::from_secs(5);
    while woken.load(std::sync::atomic::Ordering::SeqCst) == 0 && std::time::Instant::now() < until {
        watch.record("payment-1", FinalState::Succeeded).await.unwrap_or_else(|e| panic!("{e}"));
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    assert!(woken.load(std::sync::atomic::Ordering::SeqCst) > 0, "the listener never heard");
    let found = listening.heard(&["payment-1".to_owned()]).await.unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(found, Some(FinalState::Succeeded));

    // The same rules do not reach another merchant's keys: the key pattern is what keeps
    // merchants apart.
    let elsewhere =
        RedisStores::open(&url, RedisOptions::new("other-shop")).unwrap_or_else(|e| panic!("{e}"));
    let refused = elsewhere.guard().claim("delivery-9", "replica-a", lease).await;
    assert!(refused.is_err(), "another merchant's key was let in: {refused:?}");
}

/// The fields and values of the hash `key` in the Redis at `url` (`HGETALL`, over a plain
/// socket), sorted.
fn hgetall(url: &str, key: &str) -> Vec<(String, String)> {
    use std::io::{BufRead, BufReader, Write};
    let address = url.trim_start_matches("redis://").trim_end_matches('/');
    let mut stream = std::net::TcpStream::connect(address).unwrap_or_else(|e| panic!("Redis: {e}"));
    let _ = stream.set_read_timeout(Some(Duration::from_secs(2)));
    write!(stream, "*2\r\n$7\r\nHGETALL\r\n${}\r\n{key}\r\n", key.len()).unwrap_or_else(|e| panic!("{e}"));
    let mut reader = BufReader::new(stream);
    let mut read = || {
        let mut line = String::new();
        reader.read_line(&mut line).unwrap_or_else(|e| panic!("{e}"));
        line.trim_end().to_owned()
    };
    let count: usize = read().trim_start_matches('*').parse().unwrap_or_else(|e| panic!("HGETALL: {e}"));
    let mut values: Vec<String> = (0..count)
        .map(|_| {
            let _length = read();
            read()
        })
        .collect();
    let mut pairs = Vec::new();
    while values.len() >= 2 {
        let value = values.pop().unwrap_or_default();
        let field = values.pop().unwrap_or_default();
        pairs.push((field, value));
    }
    pairs.sort();
    pairs
}

#[tokio::test]
async fn a_batch_writes_the_two_hashes_the_guide_names_and_nothing_of_the_money() {
    use payspec_client::FinalState;
    use payspec_client::store::{BatchStore, ItemEnd};
    let redis = RedisServer::start().unwrap_or_else(|e| panic!("{e}"));
    let stores =
        RedisStores::open(redis.url(), RedisOptions::new("keys-shop")).unwrap_or_else(|e| panic!("{e}"));
    let batches = stores.batches();
    let lease = Duration::from_secs(30);
    for reference in ["vendor-1", "vendor-2"] {
        batches.claim("payroll", reference, "runner-a", lease).await.unwrap_or_else(|e| panic!("{e}"));
    }
    batches
        .finish("payroll", "vendor-1", ItemEnd::Final(FinalState::Succeeded))
        .await
        .unwrap_or_else(|e| panic!("{e}"));
    let items = hgetall(redis.url(), "payspec:{keys-shop}:batch:payroll:items");
    assert_eq!(
        items,
        [("vendor-1".to_owned(), "e:succeeded".to_owned()), ("vendor-2".to_owned(), "c".to_owned())]
    );
    let claims = hgetall(redis.url(), "payspec:{keys-shop}:batch:payroll:claims");
    assert_eq!(claims.len(), 1, "{claims:?}");
    let (reference, held) = &claims[0];
    assert_eq!(reference, "vendor-2");
    let (holder, until) = held.split_once('|').unwrap_or_else(|| panic!("{held}"));
    assert_eq!(holder, "runner-a");
    assert!(until.parse::<u64>().is_ok(), "{held}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_cluster_of_three_primaries_keeps_the_guarantees_and_a_failover_sends_nothing_twice() {
    use payspec_client::runtime::payout::PayoutBatch;
    use payspec_client::store::WatchStore;
    use payspec_client::{Client, Credentials, Environment};
    use payspec_tests::limited::LimitedService;

    let mut cluster = payspec_redis::testing::RedisCluster::start(3).unwrap_or_else(|e| panic!("{e}"));
    let urls = cluster.urls();
    let urls: Vec<&str> = urls.iter().map(String::as_str).collect();
    let options = || RedisOptions::new("cluster-shop").limit(40, Duration::from_secs(1));
    let stores = RedisStores::open_cluster(&urls, options()).unwrap_or_else(|e| panic!("{e}"));
    both_hold(&stores).await;
    // A final state recorded through one replica's stores is found through another's.
    let other = RedisStores::open_cluster(&urls[3..], options()).unwrap_or_else(|e| panic!("{e}"));
    stores
        .watch()
        .record("t-cluster-1", payspec_client::FinalState::Succeeded)
        .await
        .unwrap_or_else(|e| panic!("{e}"));
    let heard = other.watch().heard(&["t-cluster-1".to_owned()]).await.unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(heard, Some(payspec_client::FinalState::Succeeded));

    // A payout batch through the cluster; the primary holding the merchant's slot is
    // stopped mid-batch, and its replica takes over.
    let service = LimitedService::start(40, Duration::from_secs(1)).await.unwrap_or_else(|e| panic!("{e}"));
    let client = Client::builder()
        .environment(Environment::Custom(service.url()))
        .credentials(Credentials::new("client-id", "client-secret", "parent-account"))
        .pace(stores.pace())
        .build()
        .unwrap_or_else(|e| panic!("{e}"));
    let items: Vec<_> = (0..80)
        .map(|n| {
            payspec_tests::sandboxed::transfer(&format!("cluster-{n}"), "5.00")
                .unwrap_or_else(|e| panic!("{e}"))
        })
        .collect();
    let batch =
        PayoutBatch::new("cluster-batch", stores.batches()).concurrency(8).within(Duration::from_secs(90));
    let running = tokio::spawn(async move { batch.run(&client, items).await });
    let deadline = std::time::Instant::now() + Duration::from_secs(30);
    while service.counted().transfers.len() < 30 {
        assert!(std::time::Instant::now() < deadline, "the batch never reached 30");
        tokio::time::sleep(Duration::from_millis(5)).await;
    }
    let stopped = cluster.kill_primary_of("payspec:{cluster-shop}:any").unwrap_or_else(|e| panic!("{e}"));

    let report = running.await.unwrap_or_else(|e| panic!("{e}")).unwrap_or_else(|e| panic!("{e}"));
    println!(
        "stopped the primary {stopped} at 30 applied: {} (sent {}, resent {})",
        report.summary, report.sent, report.resent
    );
    assert!(report.is_done(), "{report:?}");
    let counted = service.counted();
    assert_eq!(counted.transfers.len(), 80);
    assert!(counted.twice().is_empty(), "applied twice: {:?}", counted.twice());
}
