//! `Credentials::from_env` reads its three documented variables and names the missing
//! ones, never a value. A binary of its own: no other test reads the environment while
//! this one changes it.

use payspec_client::Credentials;

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
    assert!(error.contains("PAYSPEC_CLIENT_ID, PAYSPEC_ACCOUNT_ID set in the environment"), "{error}");
    assert!(!error.contains("env-secret-123"), "{error}");
    // SAFETY: as above.
    unsafe {
        std::env::set_var("PAYSPEC_CLIENT_ID", "client-9");
        std::env::set_var("PAYSPEC_ACCOUNT_ID", "acct-9");
    }
    let credentials = Credentials::from_env().unwrap_or_else(|e| panic!("{e}"));
    assert_eq!((credentials.client_id.as_str(), credentials.account_id.as_str()), ("client-9", "acct-9"));
    assert_eq!(credentials.client_secret.expose(), "env-secret-123");
    assert!(!format!("{credentials:?}").contains("env-secret-123"));
}
