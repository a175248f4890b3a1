//! A Redis that speaks TLS only, reached from a process whose client has no TLS of its own
//! (this crate's tests build `payspec-runtime` without any: run alone, as
//! `cargo test -p payspec-redis --test tls`, they are the plain-HTTP merchant's build): no
//! store call panics for want of a rustls provider, and a `redis://` URL to the TLS port
//! is an error that names TLS and `rediss://`.

use std::time::Duration;

use payspec_redis::testing::RedisServer;
use payspec_redis::{RedisOptions, RedisStores};
use payspec_runtime::FinalState;
use payspec_runtime::store::{Claim, ReplayGuard, WatchStore};
use rcgen::{BasicConstraints, CertificateParams, IsCa, Issuer, KeyPair};

/// A private CA's certificate, and a certificate and key for `localhost` it signed (PEM).
fn certificates() -> (String, String, String) {
    let mut params = CertificateParams::new(Vec::<String>::new()).unwrap_or_else(|e| panic!("{e}"));
    params.is_ca = IsCa::Ca(BasicConstraints::Unconstrained);
    let ca_key = KeyPair::generate().unwrap_or_else(|e| panic!("{e}"));
    let ca = params.self_signed(&ca_key).unwrap_or_else(|e| panic!("{e}"));
    let issuer = Issuer::new(params, ca_key);
    let leaf = CertificateParams::new(vec!["localhost".to_owned()]).unwrap_or_else(|e| panic!("{e}"));
    let key = KeyPair::generate().unwrap_or_else(|e| panic!("{e}"));
    let certificate = leaf.signed_by(&key, &issuer).unwrap_or_else(|e| panic!("{e}"));
    (ca.pem(), certificate.pem(), key.serialize_pem())
}

#[tokio::test]
async fn a_tls_redis_is_used_without_a_panic_and_a_plain_url_to_it_names_tls() {
    let (ca, certificate, key) = certificates();
    let dir = std::env::temp_dir().join(format!("payspec-redis-tls-alone-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap_or_else(|e| panic!("{e}"));
    let (cert_file, key_file) = (dir.join("redis.crt"), dir.join("redis.key"));
    std::fs::write(&cert_file, certificate).unwrap_or_else(|e| panic!("{e}"));
    std::fs::write(&key_file, key).unwrap_or_else(|e| panic!("{e}"));
    let redis = RedisServer::start_tls(&cert_file, &key_file).unwrap_or_else(|e| panic!("{e}"));

    let options = || RedisOptions::new("tls-alone").root_certificates_pem(ca.clone().into_bytes());
    let stores = RedisStores::open(redis.url(), options()).unwrap_or_else(|e| panic!("{e}"));
    // The guard's claim, and the watch (its listener is a task of its own): a final state
    // recorded by one replica's stores is heard by another's.
    let claimed = stores.guard().claim("delivery-1", "replica-a", Duration::from_secs(30)).await;
    assert_eq!(claimed.map_err(|e| e.to_string()), Ok(Claim::Claimed));
    let other = RedisStores::open(redis.url(), options()).unwrap_or_else(|e| panic!("{e}"));
    let (heard, hear) = (other.watch(), stores.watch());
    heard.record("payment-1", FinalState::Succeeded).await.unwrap_or_else(|e| panic!("{e}"));
    let found = hear.heard(&["payment-1".to_owned()]).await.unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(found, Some(FinalState::Succeeded));

    // The same port with a plain URL: named as TLS, with the fix.
    let plain = redis.url().replacen("rediss://", "redis://", 1);
    let stores = RedisStores::open(&plain, options()).unwrap_or_else(|e| panic!("{e}"));
    let refused = stores.guard().claim("delivery-2", "replica-a", Duration::from_secs(30)).await;
    let error = refused.expect_err("a plain connection to a TLS port");
    let text = error.to_string();
    assert!(text.contains("rediss://") && text.contains("TLS"), "{text}");
    let _ = std::fs::remove_dir_all(&dir);
}
