//! Creates a hosted checkout order, fetches it back, and refunds it once it is paid.
//!
//! ```sh
//! PAYSPEC_CLIENT_ID=... PAYSPEC_CLIENT_SECRET=... PAYSPEC_ACCOUNT_ID=... \
//!     cargo run -p payspec-client --example checkout -- [AMOUNT] [ORDER_REFERENCE]
//! ```
//!
//! - `PAYSPEC_BASE_URL`: optional, the sandbox by default (sandbox credentials differ from
//!   live ones).
//! - `PAYSPEC_CLIENT_ID`, `PAYSPEC_CLIENT_SECRET`, `PAYSPEC_ACCOUNT_ID` (the parent account):
//!   required; without them the example says which are missing and exits with status 2.
//! - The amount in naira (default `1000.00`) and the order reference (default: one made
//!   from the current time) come from the arguments, or from `PAYSPEC_AMOUNT` and
//!   `PAYSPEC_ORDER_REFERENCE`; `PAYSPEC_CUSTOMER_EMAIL` and `PAYSPEC_REDIRECT_URL` are
//!   optional too.
//!
//! A new order is unpaid: the example prints its checkout link and stops before the refund.
//! Pay it (in the sandbox) and run the example again with the same order reference to see
//! the refund. Nothing secret is printed: the client's errors never carry credentials.

use std::process::ExitCode;
use std::time::{SystemTime, UNIX_EPOCH};

use payspec_client::requests::{CreateCheckoutOrder, FetchCheckoutTransaction, RefundCheckoutTransaction};
use payspec_client::types::Currency;
use payspec_client::{Amount, Client, Credentials, Environment, Error, ErrorKind, Outcome};

/// The variables without which nothing can be sent.
const REQUIRED: [&str; 3] = ["PAYSPEC_CLIENT_ID", "PAYSPEC_CLIENT_SECRET", "PAYSPEC_ACCOUNT_ID"];

/// The order the example creates.
#[derive(Clone, Debug)]
pub struct Order {
    /// What the customer pays, in naira.
    pub amount: Amount,
    /// Our reference for the order.
    pub order_reference: String,
    /// The customer's email address.
    pub customer_email: String,
    /// Where the customer lands after paying.
    pub redirect_url: String,
}

/// Where to send, as whom, and what to order. `Debug` hides the client secret.
#[derive(Debug)]
pub struct Settings {
    /// The service's base URL.
    pub environment: Environment,
    /// The merchant's credentials.
    pub credentials: Credentials,
    /// The order to create.
    pub order: Order,
}

impl Settings {
    /// Reads the settings from variables (`var`) and command-line arguments (amount, then
    /// order reference). The error names every missing variable.
    pub fn from_sources(var: impl Fn(&str) -> Option<String>, args: Vec<String>) -> Result<Settings, String> {
        let var = |name: &str| var(name).filter(|value| !value.trim().is_empty());
        let missing: Vec<&str> = REQUIRED.iter().copied().filter(|name| var(name).is_none()).collect();
        if !missing.is_empty() {
            return Err(format!(
                "missing credentials: set {} (PAYSPEC_BASE_URL is optional and defaults to the sandbox)",
                missing.join(", ")
            ));
        }
        let credentials = Credentials::new(
            var("PAYSPEC_CLIENT_ID").unwrap_or_default(),
            var("PAYSPEC_CLIENT_SECRET").unwrap_or_default(),
            var("PAYSPEC_ACCOUNT_ID").unwrap_or_default(),
        );
        let mut args = args.into_iter();
        let amount_text =
            args.next().or_else(|| var("PAYSPEC_AMOUNT")).unwrap_or_else(|| "1000.00".to_owned());
        let amount: Amount =
            amount_text.parse().map_err(|e| format!("the amount `{amount_text}` is not valid: {e}"))?;
        let order_reference = args.next().or_else(|| var("PAYSPEC_ORDER_REFERENCE")).unwrap_or_else(|| {
            let now = SystemTime::now().duration_since(UNIX_EPOCH).map(|d| d.as_secs()).unwrap_or(0);
            format!("payspec-example-{now}")
        });
        Ok(Settings {
            environment: var("PAYSPEC_BASE_URL").map_or(Environment::HostedSandbox, Environment::Custom),
            credentials,
            order: Order {
                amount,
                order_reference,
                customer_email: var("PAYSPEC_CUSTOMER_EMAIL")
                    .unwrap_or_else(|| "buyer@example.com".to_owned()),
                redirect_url: var("PAYSPEC_REDIRECT_URL")
                    .unwrap_or_else(|| "https://example.com/checkout/done".to_owned()),
            },
        })
    }
}

/// What happened to the order.
#[derive(Debug, Default)]
pub struct CheckoutReport {
    /// The order's reference: the merchant's own, which the lookups take.
    pub order_reference: String,
    /// The service's own id of the order (the create answer's `orderReference`), when
    /// this run created it.
    pub order_id: Option<String>,
    /// Where the customer pays.
    pub checkout_link: Option<String>,
    /// Whether the fetched transaction says it was paid.
    pub paid: bool,
    /// The transaction refunded, when the order was paid.
    pub refunded_transaction: Option<String>,
}

fn describe<T>(step: &str, outcome: &Outcome<T>) {
    let state = match outcome {
        Outcome::Done(_) => "done",
        Outcome::Pending(_) => "still processing",
        Outcome::Failed(_) => "failed",
    };
    println!("{step}: {state}, code {} ({})", outcome.code(), outcome.description());
}

/// Creates the order, fetches it, and refunds it when it was paid.
pub async fn run_checkout(client: &Client, order: &Order) -> Result<CheckoutReport, Error> {
    let create = CreateCheckoutOrder::builder()
        .amount(order.amount)
        .currency(Currency::Ngn)
        .customer_email(order.customer_email.as_str())
        .redirect_url(order.redirect_url.as_str())
        .order_reference(order.order_reference.as_str())
        .build()?;
    let mut report =
        CheckoutReport { order_reference: order.order_reference.clone(), ..CheckoutReport::default() };
    match client.checkout().create_checkout_order(create).await {
        Ok(created) => {
            describe("create order", &created);
            // The answer is typed: `CreateOrderResponse { checkout_link, order_reference, .. }`;
            // its `order_reference` is the service's own id of the order, not ours.
            report.order_id = created.data().and_then(|d| d.order_reference.clone());
            report.checkout_link = created.data().and_then(|d| d.checkout_link.clone());
        }
        // An order reference is single use: an earlier run (or an earlier attempt of this
        // call) created the order, so read it by our reference instead.
        Err(error) if error.kind() == ErrorKind::ReferenceUsed => {
            println!("order {} exists already", order.order_reference)
        }
        Err(error) => return Err(error),
    }
    println!("order {} for {} NGN", report.order_reference, order.amount);
    if let Some(link) = &report.checkout_link {
        println!("checkout link: {link}");
    }

    let fetched = client
        .checkout()
        .fetch_checkout_transaction(FetchCheckoutTransaction::new(report.order_reference.as_str()))
        .await?;
    describe("fetch order", &fetched);
    report.paid = fetched.data().and_then(|d| d.success).unwrap_or(false);
    // The reference does not say which id a refund wants; the payment reference of the
    // fetched transaction is the one it documents.
    let transaction =
        fetched.data().and_then(|d| d.transaction_details.as_ref()).and_then(|t| t.payment_reference.clone());
    let Some(transaction) = transaction.filter(|_| report.paid) else {
        println!(
            "the order is not paid yet: pay it at the checkout link, then run again with the same reference"
        );
        return Ok(report);
    };

    let refund = RefundCheckoutTransaction::new(transaction.as_str())
        .order_reference(report.order_reference.as_str())
        .amount(order.amount)
        .reason("payspec checkout example");
    let refunded = client.checkout().refund_checkout_transaction(refund).await?;
    describe("refund", &refunded);
    report.refunded_transaction = Some(transaction);
    Ok(report)
}

#[tokio::main(flavor = "current_thread")]
async fn main() -> ExitCode {
    let settings =
        match Settings::from_sources(|name| std::env::var(name).ok(), std::env::args().skip(1).collect()) {
            Ok(settings) => settings,
            Err(message) => {
                eprintln!("checkout example: {message}");
                return ExitCode::from(2);
            }
        };
    let built = Client::builder()
        .environment(settings.environment.clone())
        .credentials(settings.credentials.clone())
        .build();
    let client: Client = match built {
        Ok(client) => client,
        Err(error) => {
            eprintln!("checkout example: {error}");
            return ExitCode::from(2);
        }
    };
    println!("sending to {}", settings.environment.base_url());
    match run_checkout(&client, &settings.order).await {
        Ok(report) => {
            let refund = report.refunded_transaction.as_deref().unwrap_or("none");
            println!("paid: {}, refunded transaction: {refund}", report.paid);
            ExitCode::SUCCESS
        }
        Err(error) => {
            eprintln!("checkout example: {error}");
            ExitCode::FAILURE
        }
    }
}
