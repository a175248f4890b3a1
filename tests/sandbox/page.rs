//! The sandbox's page (`/__sandbox/`) in a real headless browser: Debian's chromium driven
//! by its chromedriver over the WebDriver protocol. A payment made through the client
//! appears with its counts, a click settles it, and its delivery appears with its attempts.
//! What the page shows is checked against what the sandbox and the receiver counted.
//!
//! It needs `chromedriver` and `chromium` (CI installs both from the distribution's
//! packages). Where the driver is missing it says so and passes, unless `CI` is set: there
//! a missing driver fails it. `PAYSPEC_PAGE_SCREENSHOT=FILE` saves the page, settled, as a
//! PNG (the guide's picture).

use std::net::TcpListener;
use std::os::unix::process::CommandExt as _;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use base64::Engine as _;
use payspec_client::requests::{FetchTransaction, FetchTransactionKey};
use payspec_sandbox::{Fault, Sandbox};
use payspec_tests::mock::{MockServer, Reply};
use payspec_tests::sandboxed::{client, transfer};
use serde_json::{Value, json};

use super::TestResult;

/// The WebDriver key an element's reference comes under.
const ELEMENT: &str = "element-6066-11e4-a52e-4f735466cecf";

/// How long the page may take to show a change (it refreshes every second).
const WITHIN: Duration = Duration::from_secs(15);

/// A chromedriver on a port of its own, in a process group of its own: stopped with the
/// browsers it started when dropped, whatever the test came to.
struct Driver {
    process: Child,
    url: String,
}

impl Drop for Driver {
    fn drop(&mut self) {
        // The group's id is the driver's: every chromium it started is in it.
        let _ = Command::new("kill").args(["-KILL", "--", &format!("-{}", self.process.id())]).status();
        let _ = self.process.kill();
        let _ = self.process.wait();
    }
}

/// Where the distribution puts the driver and the browser.
fn installed(name: &str) -> Option<String> {
    let candidates = [format!("/usr/bin/{name}"), format!("/usr/lib/chromium/{name}")];
    candidates.into_iter().find(|path| std::path::Path::new(path).exists())
}

fn free_port() -> std::io::Result<u16> {
    Ok(TcpListener::bind("127.0.0.1:0")?.local_addr()?.port())
}

async fn start_driver(path: &str, http: &reqwest::Client) -> Result<Driver, Box<dyn std::error::Error>> {
    let port = free_port()?;
    let process = Command::new(path)
        .process_group(0)
        .arg(format!("--port={port}"))
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()?;
    let driver = Driver { process, url: format!("http://127.0.0.1:{port}") };
    let deadline = Instant::now() + Duration::from_secs(20);
    loop {
        let ready = http.get(format!("{}/status", driver.url)).send().await;
        if let Ok(answer) = ready
            && answer.json::<Value>().await.ok().and_then(|v| v["value"]["ready"].as_bool()) == Some(true)
        {
            return Ok(driver);
        }
        if Instant::now() >= deadline {
            return Err("chromedriver did not become ready within 20 s".into());
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

/// One browser session of the driver.
struct Browser<'a> {
    http: &'a reqwest::Client,
    session: String,
}

impl Browser<'_> {
    async fn command(
        &self,
        method: reqwest::Method,
        path: &str,
        body: Option<Value>,
    ) -> Result<Value, String> {
        let url = format!("{}{path}", self.session);
        let request = self.http.request(method, &url);
        let request = match body {
            Some(body) => request.json(&body),
            None => request,
        };
        let answer = request.send().await.map_err(|e| format!("{path}: {e}"))?;
        let status = answer.status();
        let value: Value = answer.json().await.map_err(|e| format!("{path}: {e}"))?;
        if status.is_success() {
            Ok(value["value"].clone())
        } else {
            Err(format!("{path}: {status} {value}"))
        }
    }

    async fn open(&self, url: &str) -> Result<(), String> {
        self.command(reqwest::Method::POST, "/url", Some(json!({ "url": url }))).await.map(drop)
    }

    /// The element `css` selects, if the page has it now.
    async fn find(&self, css: &str) -> Option<String> {
        let found = self
            .command(reqwest::Method::POST, "/element", Some(json!({"using": "css selector", "value": css})))
            .await
            .ok()?;
        found[ELEMENT].as_str().map(str::to_owned)
    }

    /// The text of the element `css` selects, once `wanted` holds of it (the page
    /// refreshes itself), within [`WITHIN`].
    async fn text_when(&self, css: &str, wanted: impl Fn(&str) -> bool) -> Result<String, String> {
        let deadline = Instant::now() + WITHIN;
        let mut last = None;
        loop {
            if let Some(element) = self.find(css).await {
                // The table is redrawn every second: an element may go stale between the
                // find and the read, and is looked for again.
                if let Ok(text) =
                    self.command(reqwest::Method::GET, &format!("/element/{element}/text"), None).await
                {
                    let text = text.as_str().unwrap_or_default().to_owned();
                    if wanted(&text) {
                        return Ok(text);
                    }
                    last = Some(text);
                }
            }
            if Instant::now() >= deadline {
                return Err(format!("`{css}` never showed what was waited for (last: {last:?})"));
            }
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
    }

    /// Clicks the element `css` selects, once it is there.
    async fn click(&self, css: &str) -> Result<(), String> {
        let deadline = Instant::now() + WITHIN;
        loop {
            if let Some(element) = self.find(css).await
                && self
                    .command(reqwest::Method::POST, &format!("/element/{element}/click"), Some(json!({})))
                    .await
                    .is_ok()
            {
                return Ok(());
            }
            if Instant::now() >= deadline {
                return Err(format!("`{css}` could not be clicked"));
            }
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
    }

    async fn screenshot(&self) -> Result<Vec<u8>, Box<dyn std::error::Error>> {
        let shot = self.command(reqwest::Method::GET, "/screenshot", None).await?;
        Ok(base64::engine::general_purpose::STANDARD.decode(shot.as_str().unwrap_or_default())?)
    }

    async fn close(self) {
        let _ = self.command(reqwest::Method::DELETE, "", None).await;
    }
}

async fn browser<'a>(
    driver: &Driver,
    http: &'a reqwest::Client,
    chromium: &str,
) -> Result<Browser<'a>, String> {
    let capabilities = json!({"capabilities": {"alwaysMatch": {
        "browserName": "chrome",
        "goog:chromeOptions": {
            "binary": chromium,
            "args": ["--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage", "--window-size=1400,900"],
        },
    }}});
    let answer = http
        .post(format!("{}/session", driver.url))
        .json(&capabilities)
        .send()
        .await
        .map_err(|e| e.to_string())?;
    let value: Value = answer.json().await.map_err(|e| e.to_string())?;
    let id = value["value"]["sessionId"].as_str().ok_or_else(|| format!("no session: {value}"))?;
    Ok(Browser { http, session: format!("{}/session/{id}", driver.url) })
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_payment_appears_on_the_page_a_click_settles_it_and_its_delivery_appears() -> TestResult {
    let (Some(driver_path), Some(chromium)) = (installed("chromedriver"), installed("chromium")) else {
        if std::env::var_os("CI").is_some() {
            return Err("CI runs the page in a real browser: install chromium and chromium-driver".into());
        }
        eprintln!("skipped: no chromedriver and chromium here (CI installs them)");
        return Ok(());
    };
    let hooks = MockServer::start(|_, _| Reply::json(200, json!({"ok": true}))).await?;
    let sandbox =
        Sandbox::builder().webhook(format!("{}/hooks", hooks.url()), "whsec_page_test").start().await?;
    // The transfer is applied and answered as still in flight, as the service answers one.
    sandbox.inject("bank_transfer", Fault::Pending, 1)?;
    let client = client(&sandbox)?;
    client.transfers().bank_transfer(transfer("page-1", "25.00")?).await?;
    let made = sandbox.payment("page-1").ok_or("the payment")?;
    assert!(made.state.contains("PENDING"), "{made:?}");
    assert!(made.deliveries.is_empty(), "nothing delivered before it settles");
    // Looked up twice, once by the merchant's reference and once by the service's id, as
    // a settle does.
    for key in [
        FetchTransactionKey::merchant_tx_ref("page-1"),
        FetchTransactionKey::transaction_id(made.id.as_str()),
    ] {
        client.transactions().fetch_transaction(FetchTransaction::new(key)).await?;
    }

    let http = reqwest::Client::new();
    let driver = start_driver(&driver_path, &http).await?;
    let page = browser(&driver, &http, &chromium).await?;
    // Closed whatever the steps came to: the browser quits with its session.
    let seen = on_the_page(&page, &sandbox, &made.id).await;
    page.close().await;
    seen?;

    // Counted at the sandbox and the receiver: the click settled this payment alone, once,
    // and its one delivery was received once.
    let settled = sandbox.payment("page-1").ok_or("the payment")?;
    assert_eq!(
        (settled.state.as_str(), settled.received, settled.applied, settled.lookups),
        ("SUCCESS", 1, 1, 2)
    );
    assert_eq!(sandbox.received("fetch_transaction"), 2);
    assert_eq!(settled.deliveries.len(), 1);
    assert_eq!(hooks.count("POST", "/hooks"), 1);
    assert_eq!(sandbox.received("bank_transfer"), 1);
    Ok(())
}

/// What the page shows of the payment `page-1` (id `id`), and a click on its Settle.
async fn on_the_page(page: &Browser<'_>, sandbox: &Sandbox, id: &str) -> TestResult {
    page.open(&sandbox.page_url()).await?;
    let row = "#payments tr[data-reference='page-1']";
    let state = page.text_when(&format!("{row} [data-field='state']"), |t| t.contains("PENDING")).await?;
    let received = page.text_when(&format!("{row} [data-field='received']"), |t| !t.is_empty()).await?;
    let applied = page.text_when(&format!("{row} [data-field='applied']"), |t| !t.is_empty()).await?;
    assert_eq!((received.as_str(), applied.as_str()), ("1", "1"), "{state}");
    page.text_when(&format!("{row} [data-field='lookups']"), |t| t == "2").await?;

    page.click(&format!("{row} button[data-action='settle']")).await?;
    page.text_when(&format!("{row} [data-field='state']"), |t| t == "SUCCESS").await?;
    let delivery = format!("#deliveries tr[data-payment='{}'] [data-field='attempts']", id);
    let attempts = page.text_when(&delivery, |t| t.contains("200")).await?;
    assert!(attempts.contains("first"), "{attempts}");
    page.text_when(&format!("{row} [data-field='deliveries']"), |t| t == "1").await?;

    if let Some(file) = std::env::var_os("PAYSPEC_PAGE_SCREENSHOT") {
        std::fs::write(file, page.screenshot().await?)?;
    }
    Ok(())
}
