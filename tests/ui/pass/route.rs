// `route!` names a route constant of the built-in spec by operation name, by canonical
// `METHOD /path`, by an alternative form, with a path variable, or as a string.

use payspec_client::{Method, Route};
use payspec_macros::route;

// A route is a constant: it can initialise one.
const BANK_TRANSFER: Route = route!(bank_transfer);

fn main() {
    assert_eq!(BANK_TRANSFER.operation, "bank_transfer");
    assert_eq!(BANK_TRANSFER.method, Method::Post);
    assert_eq!(BANK_TRANSFER.path, "/v2/transfers/bank");

    let canonical = route!(POST /v2/transfers/bank);
    assert_eq!(canonical.operation, "bank_transfer");
    assert_eq!(canonical.path, "/v2/transfers/bank");

    // The v1 form is an alias: it names the same operation, whose canonical path is v2.
    let alias = route!(POST /v1/transfers/bank);
    assert_eq!(alias.operation, "bank_transfer");
    assert_eq!(alias.path, "/v2/transfers/bank");
    assert!(alias.aliases.iter().any(|a| a.path == "/v1/transfers/bank"));

    let mandate = route!(GET /v1/direct-debits/{mandateId});
    assert_eq!(mandate.operation, "fetch_mandate");
    assert_eq!(mandate.method, Method::Get);
    assert_eq!(mandate.path, "/v1/direct-debits/{mandateId}");

    // Variable names do not matter; a literal segment is a different route.
    assert_eq!(route!(GET /v1/direct-debits/{id}).operation, "fetch_mandate");
    assert_eq!(route!(GET /v1/direct-debits/status).operation, "fetch_mandate_status");

    let accounts = route!("GET /v1/accounts");
    assert_eq!(accounts.operation, "list_sub_accounts");
    assert_eq!(accounts.path, "/v1/accounts");
    assert_eq!(route!("POST /v1/accounts").operation, "create_sub_account");
}
