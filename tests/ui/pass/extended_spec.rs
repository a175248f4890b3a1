// A copy of small.yaml with one operation appended (`fetch_settlement`): its request type,
// route constant and group method exist with no other edit.

use payspec_client::{Credentials, Method};

payspec_macros::generate!("extended.yaml");

fn main() {
    let request = requests::FetchSettlement::new("settlement-7");
    assert_eq!(request.settlement_id, "settlement-7");
    assert_eq!(routes::FETCH_SETTLEMENT.method, Method::Get);
    assert_eq!(routes::FETCH_SETTLEMENT.path, "/v1/settlements/{settlementId}");
    assert_eq!(routes::FETCH_SETTLEMENT.group, "transfers");
    assert_eq!(routes::ALL.len(), 5);

    let client: Client = Client::builder()
        .environment(Environment::Custom("http://127.0.0.1:9".into()))
        .credentials(Credentials::new("client-id", "client-secret", "parent-account"))
        .build()
        .expect("a client");
    // The future borrows the group handle, so the handle is bound first.
    let transfers = client.transfers();
    let pending = transfers.fetch_settlement(request);
    drop(pending);
}
