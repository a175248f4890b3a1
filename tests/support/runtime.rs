//! Shared pieces of the runtime wire tests: hand-written routes and operations shaped
//! like generated ones, token answers, and a client pointed at a [`MockServer`].
//!
//! Included by each `runtime_*` test with `#[path = "support/runtime.rs"] mod support;`.

#![allow(dead_code)]

use std::net::SocketAddr;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use payspec_client::runtime::__private::Paginated;
use payspec_client::runtime::__private::{AuthRoutes, RequestWriter, ReservedSegment};
use payspec_client::runtime::__private::{Reader, Slot};
use payspec_client::runtime::vocabulary::EnvelopeKind;
use payspec_client::runtime::vocabulary::{Answers, Auth, PageStyle};
use payspec_client::runtime::{ClientBuilder, Service};
use payspec_client::runtime::{DecodeError, FromJson, Json, JsonObject, Session as Client};
use payspec_client::{
    Amount, Credentials, Effect, Environment, Error, ExtraFields, Method, Operation, RetryPolicy, Route,
};
use payspec_tests::mock::{MockServer, Reply};
use serde_json::json;

pub const CLIENT_ID: &str = "client-abc";
pub const CLIENT_SECRET: &str = "sk_test_very_secret_value";
pub const ACCOUNT_ID: &str = "acct-parent-1";

pub const ISSUE_PATH: &str = "/v1/auth/token/issue";
pub const REFRESH_PATH: &str = "/v1/auth/token/refresh";
pub const REVOKE_PATH: &str = "/v1/auth/token/revoke";

const fn route(
    operation: &'static str,
    method: Method,
    path: &'static str,
    auth: Auth,
    effect: Effect,
) -> Route {
    Route {
        operation,
        group: "test",
        method,
        path,
        aliases: &[],
        auth,
        effect,
        reserved: &[],
        idempotency_header: None,
        answers: &STANDARD,
        settle_by_reference: None,
        body: payspec_runtime::vocabulary::BodyEncoding::Json,
    }
}

/// How the payments service's answers are read unless an operation says otherwise: its
/// envelope (from the spec, as generated), success `00`, its refusal codes.
pub static STANDARD: Answers = Answers {
    success_codes: &["00"],
    refusal_codes: &["01", "02", "05", "06"],
    envelope: EnvelopeKind::Wrapped { keys: &payspec_client::routes::ENVELOPE, spelling: 0 },
    ..Answers::PLAIN
};

pub static ISSUE: Route = route("issue_token", Method::Post, ISSUE_PATH, Auth::Account, Effect::Write);
pub static REFRESH: Route =
    route("refresh_token", Method::Post, REFRESH_PATH, Auth::BearerAndAccount, Effect::Write);
pub static REVOKE: Route = route("revoke_token", Method::Post, REVOKE_PATH, Auth::Bearer, Effect::Write);

/// The token routes above, with the payments spec's forms of their requests and answers.
pub const AUTH_ROUTES: AuthRoutes = match payspec_client::routes::TOKEN {
    Some(generated) => {
        AuthRoutes { issue: &ISSUE, refresh: Some(&REFRESH), revoke: Some(&REVOKE), ..generated }
    }
    None => panic!("the payments spec names its token operations"),
};

/// The payments service with the token routes above.
pub static SERVICE: Service = Service { tokens: Some(AUTH_ROUTES), ..payspec_client::routes::SERVICE };

/// An RFC 3339 UTC instant `seconds` from now (negative: in the past).
pub fn instant_in(seconds: i64) -> String {
    let now =
        SystemTime::now().duration_since(UNIX_EPOCH).map_or(0, |d| i64::try_from(d.as_secs()).unwrap_or(0));
    let t = now + seconds;
    let (days, secs) = (t.div_euclid(86_400), t.rem_euclid(86_400));
    // Civil date from days since 1970-01-01 (Howard Hinnant's algorithm).
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = doy - (153 * mp + 2) / 5 + 1;
    let month = if mp < 10 { mp + 3 } else { mp - 9 };
    let year = yoe + era * 400 + i64::from(month <= 2);
    format!("{year:04}-{month:02}-{day:02}T{:02}:{:02}:{:02}Z", secs / 3600, (secs / 60) % 60, secs % 60)
}

/// A token answer (issue or refresh) that expires `expires_in` seconds from now.
pub fn grant(access: &str, refresh: &str, expires_in: i64) -> Reply {
    Reply::ok(json!({
        "businessId": "biz-1",
        "access_token": access,
        "refresh_token": refresh,
        "expiresAt": instant_in(expires_in),
    }))
}

/// A token answer that expires `millis` milliseconds from now, with `expiresAt` written as
/// epoch milliseconds (one of the forms the client reads).
pub fn grant_in_ms(access: &str, refresh: &str, millis: u64) -> Reply {
    let now = SystemTime::now().duration_since(UNIX_EPOCH).map_or(0, |d| d.as_millis());
    Reply::ok(json!({
        "businessId": "biz-1",
        "access_token": access,
        "refresh_token": refresh,
        "expiresAt": u64::try_from(now).unwrap_or(u64::MAX).saturating_add(millis),
    }))
}

/// Retries quickly, so fault tests stay fast.
pub fn fast_retry() -> RetryPolicy {
    RetryPolicy::exponential(3, Duration::from_millis(10), Duration::from_millis(40))
}

pub fn credentials() -> Credentials {
    Credentials::new(CLIENT_ID, CLIENT_SECRET, ACCOUNT_ID)
}

/// A builder for a client of `server`, with fast retries.
pub fn builder(server: &MockServer) -> ClientBuilder {
    let builder = ClientBuilder::new(&SERVICE)
        .environment(Environment::custom(server.url()))
        .credentials(credentials())
        .retry_policy(fast_retry())
        .timeout(Duration::from_secs(5));
    with_test_transport(builder)
}

/// What this test binary sends through: the client's own sender, or (`runtime_tower`,
/// `runtime_reqwest`, which run these cases again) a transport of its own or reqwest's.
pub const CARRIER: payspec_tests::transport::Carrier =
    payspec_tests::transport::carrier(env!("CARGO_CRATE_NAME"));

/// `builder` sending through this binary's carrier.
pub fn with_test_transport(builder: ClientBuilder) -> ClientBuilder {
    payspec_tests::transport::choose(builder, CARRIER)
}

pub fn client(server: &MockServer) -> Client {
    match builder(server).build() {
        Ok(c) => c,
        Err(e) => panic!("client construction failed: {e}"),
    }
}

/// A server that issues `tok-1` (valid for an hour) and answers everything else with
/// `other`.
pub async fn server_with_token(
    other: impl Fn(&payspec_tests::mock::Recorded, usize) -> Reply + Send + Sync + 'static,
) -> MockServer {
    let started = MockServer::start(move |req, nth| {
        if req.is("POST", ISSUE_PATH) { grant("tok-1", "ref-1", 3600) } else { other(req, nth) }
    })
    .await;
    match started {
        Ok(s) => s,
        Err(e) => panic!("mock server did not start: {e}"),
    }
}

// ---- Operations written the way the generator writes them. ----

pub static FETCH_BALANCE: Route = Route {
    operation: "fetch_balance",
    group: "accounts",
    method: Method::Get,
    path: "/v1/accounts/{subAccountId}/balance",
    aliases: &[],
    auth: Auth::BearerAndAccount,
    effect: Effect::Read,
    reserved: &[],
    idempotency_header: None,
    answers: &STANDARD,
    settle_by_reference: None,
    body: payspec_runtime::vocabulary::BodyEncoding::Json,
};

/// A read.
pub struct FetchBalance {
    pub sub_account_id: String,
    pub currency: Option<String>,
}

impl FetchBalance {
    pub fn new(id: &str) -> Self {
        FetchBalance { sub_account_id: id.to_owned(), currency: None }
    }
}

impl Operation for FetchBalance {
    type Data = Json;
    const ROUTE: &'static Route = &FETCH_BALANCE;
    fn write(&self, w: &mut RequestWriter) -> Result<(), Error> {
        w.path("subAccountId", &self.sub_account_id)?;
        w.query_opt("currency", self.currency.as_ref());
        Ok(())
    }
}

/// How a transfer's answers are read: in flight while `PENDING_BILLING`.
pub static TRANSFER_ANSWERS: Answers =
    Answers { pending_statuses: &["PENDING_BILLING"], pending_descriptions: &["PROCESSING"], ..STANDARD };

pub static BANK_TRANSFER: Route = Route {
    operation: "bank_transfer",
    group: "transfers",
    method: Method::Post,
    path: "/v2/transfers/bank",
    aliases: &[],
    auth: Auth::BearerAndAccount,
    effect: Effect::Money,
    reserved: &[],
    idempotency_header: None,
    answers: &TRANSFER_ANSWERS,
    settle_by_reference: None,
    body: payspec_runtime::vocabulary::BodyEncoding::Json,
};

/// A money-moving call; its reference makes a retry safe when set.
pub struct BankTransfer {
    pub amount: Amount,
    pub account_number: String,
    pub narration: Option<String>,
    pub merchant_tx_ref: Option<String>,
    pub extra: ExtraFields,
}

impl BankTransfer {
    pub fn new(amount: &str, reference: Option<&str>) -> Self {
        BankTransfer {
            amount: match amount.parse() {
                Ok(a) => a,
                Err(e) => panic!("bad test amount {amount}: {e}"),
            },
            account_number: "0123456789".to_owned(),
            narration: None,
            merchant_tx_ref: reference.map(str::to_owned),
            extra: ExtraFields::new(),
        }
    }
}

impl Operation for BankTransfer {
    type Data = Json;
    const ROUTE: &'static Route = &BANK_TRANSFER;
    fn write(&self, w: &mut RequestWriter) -> Result<(), Error> {
        w.body("amount", &self.amount)?;
        w.body("accountNumber", &self.account_number)?;
        w.body_opt("narration", self.narration.as_ref())?;
        w.body_opt("merchantTxRef", self.merchant_tx_ref.as_ref())?;
        w.extra(&self.extra)
    }
    fn idempotency_key(&self) -> Option<&str> {
        self.merchant_tx_ref.as_deref()
    }
}

pub static CREATE_VIRTUAL_ACCOUNT: Route = Route {
    operation: "create_virtual_account",
    group: "accounts",
    method: Method::Post,
    path: "/v1/accounts/virtual",
    aliases: &[],
    auth: Auth::BearerAndAccount,
    effect: Effect::Write,
    reserved: &[],
    idempotency_header: None,
    answers: &STANDARD,
    settle_by_reference: None,
    body: payspec_runtime::vocabulary::BodyEncoding::Json,
};

/// A write that moves no money.
pub struct CreateVirtualAccount {
    pub account_ref: String,
}

impl Operation for CreateVirtualAccount {
    type Data = Json;
    const ROUTE: &'static Route = &CREATE_VIRTUAL_ACCOUNT;
    fn write(&self, w: &mut RequestWriter) -> Result<(), Error> {
        w.body("accountRef", &self.account_ref)
    }
}

pub static FETCH_MANDATE: Route = Route {
    operation: "fetch_mandate",
    group: "direct_debits",
    method: Method::Get,
    path: "/v1/direct-debits/{mandateId}",
    aliases: &[],
    auth: Auth::BearerAndAccount,
    effect: Effect::Read,
    reserved: &[ReservedSegment {
        variable: "mandateId",
        literal: "status",
        shadowed_by: "GET /v1/direct-debits/status",
    }],
    idempotency_header: None,
    answers: &STANDARD,
    settle_by_reference: None,
    body: payspec_runtime::vocabulary::BodyEncoding::Json,
};

/// A read whose path value may collide with a literal route.
pub struct FetchMandate {
    pub mandate_id: String,
}

impl Operation for FetchMandate {
    type Data = Json;
    const ROUTE: &'static Route = &FETCH_MANDATE;
    fn write(&self, w: &mut RequestWriter) -> Result<(), Error> {
        w.path("mandateId", &self.mandate_id)
    }
}

pub static CHARGE_CARD: Route = Route {
    operation: "submit_card_details",
    group: "charge",
    method: Method::Post,
    path: "/v1/checkout/checkout-card-detail",
    aliases: &[],
    auth: Auth::Bearer,
    effect: Effect::Write,
    reserved: &[],
    idempotency_header: None,
    answers: &STANDARD,
    settle_by_reference: None,
    body: payspec_runtime::vocabulary::BodyEncoding::Json,
};

/// A bearer-only call (card payment sequence): no `accountId` header.
pub struct ChargeCard {
    pub order_reference: String,
}

impl Operation for ChargeCard {
    type Data = Json;
    const ROUTE: &'static Route = &CHARGE_CARD;
    fn write(&self, w: &mut RequestWriter) -> Result<(), Error> {
        w.body("orderReference", &self.order_reference)
    }
}

// ---- Listings, one per page style. ----

pub static LIST_ACCOUNTS: Route =
    route("list_sub_accounts", Method::Get, "/v1/accounts", Auth::BearerAndAccount, Effect::Read);

/// A cursor listing whose data type does not even declare the cursor.
#[derive(Clone)]
pub struct ListAccounts {
    pub limit: u32,
    pub cursor: Option<String>,
}

#[derive(Debug, PartialEq)]
pub struct AccountsPage {
    pub results: Vec<String>,
}

impl FromJson for AccountsPage {
    fn read(
        reader: &mut Reader<'_>,
        at: &payspec_client::runtime::__private::Path<'_>,
    ) -> Result<Self, DecodeError> {
        let mut results = Slot::new();
        let mut unused = JsonObject::new();
        reader.object(at, |key, reader| match key {
            "results" => results.read(reader, at, key, &mut unused),
            _ => reader.skip(at),
        })?;
        Ok(AccountsPage { results: results.required(at, "results")? })
    }
}

impl Operation for ListAccounts {
    type Data = AccountsPage;
    const ROUTE: &'static Route = &LIST_ACCOUNTS;
    fn write(&self, w: &mut RequestWriter) -> Result<(), Error> {
        w.query("limit", &self.limit);
        w.query_opt("cursor", self.cursor.as_ref());
        Ok(())
    }
}

impl Paginated for ListAccounts {
    type Item = String;
    const STYLE: PageStyle = PageStyle::Cursor { next: "cursor" };
    fn items(page: AccountsPage) -> Vec<String> {
        page.results
    }
    fn set_cursor(&mut self, cursor: Option<String>) {
        self.cursor = cursor;
    }
    fn set_page(&mut self, _page: u32) {}
}

pub static LIST_PAYOUTS: Route =
    route("list_payouts", Method::Get, "/v1/payouts", Auth::BearerAndAccount, Effect::Read);

/// A listing that starts each page after the last record's id (`starting_after` in,
/// `data.has_more` out, the records in `data.data`).
#[derive(Clone)]
pub struct ListPayouts {
    pub limit: u32,
    pub after: Option<String>,
}

impl Operation for ListPayouts {
    type Data = Json;
    const ROUTE: &'static Route = &LIST_PAYOUTS;
    fn write(&self, w: &mut RequestWriter) -> Result<(), Error> {
        w.query("limit", &self.limit);
        w.query_opt("starting_after", self.after.as_ref());
        Ok(())
    }
}

impl Paginated for ListPayouts {
    type Item = Json;
    const STYLE: PageStyle = PageStyle::After { more: "has_more", last: false, records: "data", id: "id" };
    fn items(page: Json) -> Vec<Json> {
        json_list(page, "data")
    }
    fn set_cursor(&mut self, cursor: Option<String>) {
        self.after = cursor;
    }
    fn set_page(&mut self, _page: u32) {}
}

pub static LIST_CARDS: Route =
    route("list_tokenized_cards", Method::Get, "/v1/tokenized-cards", Auth::BearerAndAccount, Effect::Read);

/// A page-number listing (`page` in, `data.nextPage` out).
#[derive(Clone)]
pub struct ListCards {
    pub page: Option<u32>,
    pub limit: u32,
}

impl Operation for ListCards {
    type Data = Json;
    const ROUTE: &'static Route = &LIST_CARDS;
    fn write(&self, w: &mut RequestWriter) -> Result<(), Error> {
        w.query_opt("page", self.page.as_ref());
        w.query("limit", &self.limit);
        Ok(())
    }
}

impl Paginated for ListCards {
    type Item = Json;
    const STYLE: PageStyle = PageStyle::Page { next: "nextPage", current: &["page", "currentPage"] };
    fn items(page: Json) -> Vec<Json> {
        json_list(page, "results")
    }
    fn set_cursor(&mut self, _cursor: Option<String>) {}
    fn set_page(&mut self, page: u32) {
        self.page = Some(page);
    }
    fn page(&self) -> Option<u32> {
        self.page
    }
}

pub static LIST_MANDATES: Route =
    route("list_mandates", Method::Get, "/v1/direct-debits/mandates", Auth::BearerAndAccount, Effect::Read);

/// A page-and-size listing (`data.hasMore`, `page`, `totalPages`).
#[derive(Clone)]
pub struct ListMandates {
    pub page: u32,
    pub page_size: u32,
}

impl Operation for ListMandates {
    type Data = Json;
    const ROUTE: &'static Route = &LIST_MANDATES;
    fn write(&self, w: &mut RequestWriter) -> Result<(), Error> {
        w.query("page", &self.page);
        w.query("pageSize", &self.page_size);
        Ok(())
    }
}

impl Paginated for ListMandates {
    type Item = Json;
    const STYLE: PageStyle =
        PageStyle::PageSize { more: "hasMore", last: false, current: "page", total: "totalPages", first: 1 };
    fn items(page: Json) -> Vec<Json> {
        json_list(page, "items")
    }
    fn set_cursor(&mut self, _cursor: Option<String>) {}
    fn set_page(&mut self, page: u32) {
        self.page = page;
    }
    fn page(&self) -> Option<u32> {
        Some(self.page)
    }
}

// ---- Connection faults without touching anything but loopback. ----

/// A DNS resolver that counts lookups and answers each from a script: `None` fails the
/// lookup (a connect error: nothing was sent), `Some(addr)` resolves to `addr`. The last
/// entry repeats.
pub struct ScriptedResolver {
    pub lookups: Arc<AtomicUsize>,
    script: Vec<Option<SocketAddr>>,
}

impl ScriptedResolver {
    pub fn new(script: Vec<Option<SocketAddr>>) -> (Self, Arc<AtomicUsize>) {
        let lookups = Arc::new(AtomicUsize::new(0));
        (ScriptedResolver { lookups: Arc::clone(&lookups), script }, lookups)
    }
}

impl reqwest::dns::Resolve for ScriptedResolver {
    fn resolve(&self, _name: reqwest::dns::Name) -> reqwest::dns::Resolving {
        let n = self.lookups.fetch_add(1, Ordering::SeqCst);
        let answer = self.script.get(n).or(self.script.last()).copied().flatten();
        Box::pin(async move {
            match answer {
                Some(addr) => {
                    let addrs: reqwest::dns::Addrs = Box::new(std::iter::once(addr));
                    Ok(addrs)
                }
                None => Err("simulated DNS failure".into()),
            }
        })
    }
}

/// HTTP settings that resolve every host with `resolver` and never reuse a connection,
/// so each attempt resolves (and can fail) anew.
pub fn resolving_http(resolver: ScriptedResolver) -> reqwest::ClientBuilder {
    reqwest::Client::builder().dns_resolver(resolver).pool_max_idle_per_host(0)
}

/// A client for `http://payments.test` whose host is resolved by `resolver`. The URL
/// names no port, so the resolved address's port is used as is. The name is not this
/// machine's, though every address it resolves to is: clear text is allowed by name.
pub fn client_via_resolver(resolver: ScriptedResolver) -> Client {
    let built = ClientBuilder::new(&SERVICE)
        .environment(Environment::Custom("http://payments.test".to_owned()))
        .allow_cleartext()
        .credentials(credentials())
        .retry_policy(fast_retry())
        .http_client_builder(resolving_http(resolver))
        .build();
    match built {
        Ok(c) => c,
        Err(e) => panic!("client construction failed: {e}"),
    }
}

/// A loopback address where nothing listens (connection refused).
pub async fn closed_port() -> SocketAddr {
    let listener = match tokio::net::TcpListener::bind(("127.0.0.1", 0)).await {
        Ok(l) => l,
        Err(e) => panic!("bind: {e}"),
    };
    match listener.local_addr() {
        Ok(addr) => addr,
        Err(e) => panic!("local_addr: {e}"),
    }
}

/// The list under `key` of an untyped page.
fn json_list(page: Json, key: &str) -> Vec<Json> {
    match page.get(key) {
        Some(Json::Array(items)) => items.clone(),
        _ => Vec::new(),
    }
}
