//! `Credentials::from_env` reads its three documented variables and names the missing
//! ones, never a value (the account id is required by a client whose service takes one);
//! `Client::from_env` takes the whole configuration from the environment and calls where it
//! says. A binary of its own: no other test reads the
//! environment while this one changes it.

use payspec_client::Credentials;
use serde_json::json;

#[test]
fn credentials_come_from_the_documented_variables() {
    let names = [Credentials::CLIENT_ID_VAR, Credentials::CLIENT_SECRET_VAR, Credentials::ACCOUNT_ID_VAR];
    assert_eq!(names, ["PAYSPEC_CLIENT_ID", "PAYSPEC_CLIENT_SECRET", "PAYSPEC_ACCOUNT_ID"]);
    // SAFETY: this binary's only test, on its only thread; nothing else reads the
    // environment meanwhile.
    unsafe {
        std::env::remove_var("PAYSPEC_CLIENT_ID");
        std::env::set_var("PAYSPEC_CLIENT_SECRET", "env-secret-123");
        std::env::set_var("PAYSPEC_ACCOUNT_ID", "  ");
    }
    let error = Credentials::from_env().err().map(|e| e.to_string()).unwrap_or_default();
    assert!(error.contains("need PAYSPEC_CLIENT_ID set in the environment"), "{error}");
    assert!(!error.contains("env-secret-123"), "{error}");
    // Without the account id (blank): the client id and secret alone, for a service that
    // takes none; the built-in service's client requires it (below).
    // SAFETY: as above.
    unsafe {
        std::env::set_var("PAYSPEC_CLIENT_ID", "client-9");
    }
    let credentials = Credentials::from_env().unwrap_or_else(|e| panic!("{e}"));
    assert_eq!((credentials.client_id.as_str(), credentials.account_id.as_deref()), ("client-9", None));
    let error = payspec_client::Client::from_env().err().map(|e| e.to_string()).unwrap_or_default();
    assert!(error.contains("need PAYSPEC_ACCOUNT_ID set in the environment"), "{error}");
    // SAFETY: as above.
    unsafe {
        std::env::set_var("PAYSPEC_ACCOUNT_ID", "acct-9");
    }
    let credentials = Credentials::from_env().unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(
        (credentials.client_id.as_str(), credentials.account_id.as_deref()),
        ("client-9", Some("acct-9"))
    );
    assert_eq!(credentials.client_secret.expose(), "env-secret-123");
    assert!(!format!("{credentials:?}").contains("env-secret-123"));

    // The whole client from the environment: where it sends, its credentials, its timeout.
    let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build();
    let runtime = runtime.unwrap_or_else(|e| panic!("{e}"));
    runtime.block_on(async {
        let server = payspec_tests::mock::MockServer::start(|request, _| {
            if request.path().ends_with("/token/issue") {
                payspec_tests::mock::Reply::ok(
                    json!({"access_token": "tok-env", "expiresAt": "2099-01-01T00:00:00Z"}),
                )
            } else {
                payspec_tests::mock::Reply::ok(json!({"amount": "1.00", "currency": "NGN"}))
            }
        })
        .await
        .unwrap_or_else(|e| panic!("{e}"));
        // SAFETY: as above.
        unsafe {
            std::env::set_var("PAYSPEC_ENVIRONMENT", "nowhere");
        }
        let error = payspec_client::Client::from_env().err().map(|e| e.to_string()).unwrap_or_default();
        assert!(error.contains("PAYSPEC_ENVIRONMENT is `nowhere`"), "{error}");
        // A base URL beside an environment that names another place: refused, naming both.
        // SAFETY: as above.
        unsafe {
            std::env::set_var("PAYSPEC_BASE_URL", server.url());
            std::env::set_var("PAYSPEC_TIMEOUT", "5s");
        }
        let error = payspec_client::Client::from_env().err().map(|e| e.to_string()).unwrap_or_default();
        assert!(error.contains("both PAYSPEC_BASE_URL") && error.contains("PAYSPEC_ENVIRONMENT"), "{error}");
        // SAFETY: as above.
        unsafe {
            std::env::remove_var("PAYSPEC_ENVIRONMENT");
        }
        let client = payspec_client::Client::from_env().unwrap_or_else(|e| panic!("{e}"));
        let request = payspec_client::requests::FetchParentAccountBalance::default();
        client.accounts().fetch_parent_account_balance(request).await.unwrap_or_else(|e| panic!("{e}"));
        // Counted at the server: the call went to the base URL, with the account from the
        // environment and the token its credentials obtained.
        let calls = server.requests();
        let balance =
            calls.iter().find(|r| !r.path().ends_with("/token/issue")).unwrap_or_else(|| panic!("{calls:?}"));
        assert_eq!(balance.header("accountId"), Some("acct-9"));
        assert_eq!(balance.header("authorization"), Some("Bearer tok-env"));

        // Credentials given in code stay when the environment names none.
        // SAFETY: as above.
        unsafe {
            for name in ["PAYSPEC_CLIENT_ID", "PAYSPEC_CLIENT_SECRET", "PAYSPEC_ACCOUNT_ID"] {
                std::env::remove_var(name);
            }
        }
        let missing = payspec_client::Client::from_env().err().map(|e| e.to_string()).unwrap_or_default();
        assert!(
            missing.contains("PAYSPEC_CLIENT_ID, PAYSPEC_CLIENT_SECRET, PAYSPEC_ACCOUNT_ID"),
            "{missing}"
        );
        let given = payspec_client::Client::builder()
            .credentials(Credentials::new("client-code", "code-secret", "acct-code"))
            .from_env()
            .and_then(|builder| builder.build());
        assert!(given.is_ok(), "{given:?}");
    });
}
