//! The client's metrics in Prometheus's text format: install a recorder (here
//! `metrics-exporter-prometheus`'s, without its HTTP listener), and every call, attempt,
//! retry, `429`, wait for the pace, token renewal, settle and webhook delivery is counted
//! under its name (`payspec_client::runtime::metrics`). Any other exporter of the `metrics`
//! facade reads the same. Needs the `metrics` feature.
//!
//! ```sh
//! PAYSPEC_BASE_URL=http://127.0.0.1:8080 PAYSPEC_CLIENT_ID=... PAYSPEC_CLIENT_SECRET=... \
//!     PAYSPEC_ACCOUNT_ID=... cargo run -p payspec-client --features metrics --example metrics_prometheus
//! ```
//!
//! It reads the parent account's balance and prints what a Prometheus scrape would read.
//! A service would serve [`PrometheusHandle::render`] at `/metrics` instead.

use std::process::ExitCode;

use metrics_exporter_prometheus::{PrometheusBuilder, PrometheusHandle};
use payspec_client::Client;
use payspec_client::requests::FetchParentAccountBalance;

/// Installs the Prometheus recorder for the whole process, with payspec's names described
/// (units and help texts). Call once, before the first call.
pub fn install() -> Result<PrometheusHandle, Box<dyn std::error::Error>> {
    let handle = PrometheusBuilder::new().install_recorder()?;
    payspec_client::runtime::metrics::enable();
    Ok(handle)
}

/// One call, then the text a scrape would read.
pub async fn balance_then_scrape(
    client: &Client,
    handle: &PrometheusHandle,
) -> Result<String, payspec_client::Error> {
    client.accounts().fetch_parent_account_balance(FetchParentAccountBalance::new()).await?;
    Ok(handle.render())
}

#[tokio::main(flavor = "current_thread")]
async fn main() -> ExitCode {
    let handle = match install() {
        Ok(handle) => handle,
        Err(error) => {
            eprintln!("no recorder: {error}");
            return ExitCode::FAILURE;
        }
    };
    let client = match Client::builder().from_env().and_then(|builder| builder.build()) {
        Ok(client) => client,
        Err(error) => {
            eprintln!("{error}");
            return ExitCode::FAILURE;
        }
    };
    match balance_then_scrape(&client, &handle).await {
        Ok(text) => {
            println!("{text}");
            ExitCode::SUCCESS
        }
        Err(error) => {
            eprintln!("{error}");
            // What was counted is printed too: the failed call is in it.
            println!("{}", handle.render());
            ExitCode::FAILURE
        }
    }
}
