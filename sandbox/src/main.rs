//! `payspec-sandbox`: the sandbox as a program, for tools and tests in other languages.
//!
//! ```text
//! payspec-sandbox [--port N] [--spec FILE] [--strict] [--token TOKEN] [--rate-limit N/WINDOW] [--webhook URL --signing-key KEY] [--webhook-time-scale N] [--fault OPERATION=FAULT[*TIMES] ...]
//! payspec-sandbox trigger EVENT --url URL
//! payspec-sandbox resend DELIVERY_ID --url URL
//! payspec-sandbox payment ID_OR_REFERENCE --url URL
//! payspec-sandbox settle [success|failed|refund] --url URL
//! payspec-sandbox deliveries --url URL
//! payspec-sandbox state --url URL
//! payspec-sandbox --version
//! ```

use std::process::ExitCode;

const USAGE: &str =
    "usage: payspec-sandbox [--port N] [--spec FILE] [--strict] [--token TOKEN] [--rate-limit N/WINDOW] [--webhook URL --signing-key KEY] [--webhook-time-scale N] [--fault OPERATION=FAULT[*TIMES] ...]
       payspec-sandbox trigger EVENT --url URL
       payspec-sandbox resend DELIVERY_ID --url URL
       payspec-sandbox payment ID_OR_REFERENCE --url URL
       payspec-sandbox settle [success|failed|refund] --url URL
       payspec-sandbox deliveries --url URL
       payspec-sandbox state --url URL
       payspec-sandbox --version

Serves every operation of the spec on 127.0.0.1:N (a free port when N is 0 or absent)
until stopped, behaving like the service: it accepts what the service is known to accept
and ignores (and lists in its state) keys the spec does not describe. --strict refuses
anything the vendor's document does not describe. --token accepts TOKEN as a bearer token
without issuing it (for contract testers); --rate-limit 40/1s answers at most 40 requests
a second (429 beyond; every answer carries the X-Rate-Limit-* headers); --webhook sends payment and payout
notifications, signed with KEY, to URL, and sends a delivery not answered 2xx again about 2,
5, 11, 24 and 53 minutes after its first failure, as the service does (--webhook-time-scale
600 makes that 0.2 to 5.3 seconds). --fault bank_transfer=pending*2 plays a fault on the
operation's next requests (once unless *TIMES says): too_many_requests, server_error,
delay, drop, pending or declined; give it once per fault. Its page is at /__sandbox/ (the
payments with the times each reference was received and applied and looked up, the
deliveries with their attempts, buttons to settle, resend, trigger and queue a fault). The
control API is under /__sandbox/: GET state, GET faults, POST faults, DELETE faults, POST
reset, POST orders/<ref>/pay, POST settle (pending payments, or the one {\"id\"} names, to
{\"to\": \"success\" | \"failed\" | \"refund\"}), POST reverse/<id>, GET payments, GET
payments/<id, reference or key>, GET deliveries, POST deliveries/<id>/resend, POST trigger
({\"event\": one of the spec's events}), PUT webhook, PUT webhook/key ({\"signing_key\"}:
signs every attempt from then on with the new key). Under --spec, each operation is
answered by what its spec says of it (a money operation that settles, its lookups, a
listing, the balance, the token operations) or by the role its spec names (`role:`).

The other commands call that control API of a sandbox running at URL and print its answer:
trigger makes EVENT (an event of the spec: with the built-in spec payment_success,
payment_failed, payment_reversal, payout_success, payout_failed or payout_refund; with
another, an event that settles one of its payments) happen to a payment of the sandbox's
own and delivers it;
resend sends a delivery again now, to the webhook URL in force, and again on the service's
schedule while it is not answered 2xx; payment prints one payment with its deliveries and
their attempts; settle ends every pending transfer (as success unless told); deliveries
lists every delivery with its attempts; state prints what the sandbox holds.";

/// The commands that call a running sandbox's control API, and what each needs named.
const COMMANDS: &[(&str, Option<&str>)] = &[
    (
        "trigger",
        Some(
            "name the event to make happen (payment_success, payment_failed, payment_reversal, payout_success, payout_failed or payout_refund)",
        ),
    ),
    ("resend", Some("name the delivery to send again (its id, as `deliveries` lists it)")),
    ("payment", Some("name the payment to show (its id or its reference)")),
    ("settle", None),
    ("deliveries", None),
    ("state", None),
];

fn main() -> ExitCode {
    let all: Vec<String> = std::env::args().skip(1).collect();
    if let Some(command) = all.first().filter(|a| COMMANDS.iter().any(|(name, _)| name == a)) {
        return control(command, &all[1..]);
    }
    if all.iter().any(|a| a == "--version" || a == "-V") {
        println!("payspec-sandbox {}", env!("CARGO_PKG_VERSION"));
        return ExitCode::SUCCESS;
    }
    let mut builder = payspec_sandbox::Sandbox::builder();
    let mut args = all.into_iter();
    let mut webhook: (Option<String>, Option<String>) = (None, None);
    let mut faults: Vec<(String, payspec_sandbox::Fault, usize)> = Vec::new();
    while let Some(arg) = args.next() {
        let mut value = |name: &str| args.next().ok_or_else(|| format!("{name} needs a value"));
        let step = match arg.as_str() {
            "--port" => value("--port")
                .and_then(|v| v.parse::<u16>().map_err(|_| format!("--port: `{v}` is not a port")))
                .map(|port| {
                    builder = builder.clone().port(port);
                }),
            "--spec" => value("--spec").and_then(|path| {
                let text = std::fs::read_to_string(&path).map_err(|e| format!("cannot read {path}: {e}"))?;
                builder = builder.clone().spec(path, text);
                Ok(())
            }),
            "--strict" => {
                builder = builder.clone().strict();
                Ok(())
            }
            "--token" => value("--token").map(|token| builder = builder.clone().static_token(token)),
            "--rate-limit" => value("--rate-limit").and_then(|v| {
                let (limit, window) = rate_limit(&v).ok_or_else(|| {
                    format!("--rate-limit: `{v}` is not N/WINDOW, such as 40/1s or 5/500ms")
                })?;
                builder = builder.clone().rate_limit(limit, window);
                Ok(())
            }),
            "--webhook" => value("--webhook").map(|url| webhook.0 = Some(url)),
            "--webhook-time-scale" => value("--webhook-time-scale").and_then(|v| {
                let times = v.parse::<u32>().ok().filter(|n| *n > 0).ok_or_else(|| {
                    format!("--webhook-time-scale: `{v}` is not a whole number above 0, such as 600")
                })?;
                builder = builder.clone().webhook_time_scale(times);
                Ok(())
            }),
            "--signing-key" => value("--signing-key").map(|key| webhook.1 = Some(key)),
            "--fault" => value("--fault").and_then(|v| fault(&v).map(|f| faults.push(f))),
            "-h" | "--help" => {
                println!("{USAGE}");
                return ExitCode::SUCCESS;
            }
            other => Err(format!("unknown argument `{other}`")),
        };
        if let Err(message) = step {
            eprintln!("payspec-sandbox: {message}\n\n{USAGE}");
            return ExitCode::from(2);
        }
    }
    match webhook {
        (Some(url), Some(key)) => builder = builder.webhook(url, key),
        (None, None) => {}
        _ => {
            eprintln!("payspec-sandbox: --webhook and --signing-key go together\n\n{USAGE}");
            return ExitCode::from(2);
        }
    }
    let runtime = match tokio::runtime::Builder::new_multi_thread().enable_all().build() {
        Ok(runtime) => runtime,
        Err(error) => {
            eprintln!("payspec-sandbox: cannot start a runtime: {error}");
            return ExitCode::FAILURE;
        }
    };
    runtime.block_on(async move {
        let sandbox = match builder.start().await {
            Ok(sandbox) => sandbox,
            Err(error) => {
                eprintln!("payspec-sandbox: {error}");
                return ExitCode::FAILURE;
            }
        };
        // A reader that stops reading (closed its end of a pipe) does not stop the sandbox.
        use std::io::Write as _;
        let mut out = std::io::stdout();
        for (operation, fault, times) in faults {
            if let Err(error) = sandbox.inject(&operation, fault, times) {
                eprintln!("payspec-sandbox: --fault {operation}: {error}");
                return ExitCode::from(2);
            }
        }
        let _ = writeln!(out, "payspec-sandbox listening on {}", sandbox.base_url());
        let _ = writeln!(out, "{}", sandbox.credentials_line());
        let _ = writeln!(out, "see its payments and deliveries: {}", sandbox.page_url());
        let _ = out.flush();
        std::future::pending::<()>().await;
        ExitCode::SUCCESS
    })
}

/// A `--fault` value: `OPERATION=FAULT`, played once, or `OPERATION=FAULT*TIMES`.
fn fault(value: &str) -> Result<(String, payspec_sandbox::Fault, usize), String> {
    let names = payspec_sandbox::Fault::NAMES.join(", ");
    let (operation, rest) = value
        .split_once('=')
        .filter(|(operation, _)| !operation.is_empty())
        .ok_or_else(|| format!("--fault: `{value}` is not OPERATION=FAULT, such as bank_transfer=pending"))?;
    let (name, times) = match rest.split_once('*') {
        Some((name, times)) => {
            let times = times
                .parse::<usize>()
                .ok()
                .filter(|n| (1..=10_000).contains(n))
                .ok_or_else(|| format!("--fault: `{times}` is not a number of times from 1 to 10000"))?;
            (name, times)
        }
        None => (rest, 1),
    };
    let fault = payspec_sandbox::Fault::named(name)
        .ok_or_else(|| format!("--fault: unknown fault `{name}`: {names}"))?;
    Ok((operation.to_owned(), fault, times))
}

/// One of the [`COMMANDS`]: one call of the control API of the sandbox at `--url`, its
/// answer printed.
fn control(command: &str, args: &[String]) -> ExitCode {
    let mut target = None;
    let mut url = None;
    let mut rest = args.iter();
    while let Some(arg) = rest.next() {
        match arg.as_str() {
            "--url" => url = rest.next().cloned(),
            other if target.is_none() && !other.starts_with("--") => target = Some(other.to_owned()),
            other => {
                eprintln!("payspec-sandbox {command}: unknown argument `{other}`\n\n{USAGE}");
                return ExitCode::from(2);
            }
        }
    }
    let needs = COMMANDS.iter().find(|(name, _)| *name == command).and_then(|(_, needs)| *needs);
    let Some(url) = url else {
        eprintln!(
            "payspec-sandbox {command}: give the URL of the running sandbox with --url (as it printed when it started)\n\n{USAGE}"
        );
        return ExitCode::from(2);
    };
    let target = match (target, needs) {
        (Some(target), _) => target,
        (None, None) => String::new(),
        (None, Some(needs)) => {
            eprintln!("payspec-sandbox {command}: {needs}\n\n{USAGE}");
            return ExitCode::from(2);
        }
    };
    let base = url.trim_end_matches('/');
    let (method, path, body) = match command {
        "trigger" => {
            (reqwest::Method::POST, "trigger".to_owned(), serde_json::json!({"event": target}).to_string())
        }
        "resend" => (reqwest::Method::POST, format!("deliveries/{target}/resend"), String::new()),
        "settle" => {
            let to = if target.is_empty() { "success" } else { target.as_str() };
            (reqwest::Method::POST, "settle".to_owned(), serde_json::json!({"to": to}).to_string())
        }
        "deliveries" => (reqwest::Method::GET, "deliveries".to_owned(), String::new()),
        "state" => (reqwest::Method::GET, "state".to_owned(), String::new()),
        _ => (reqwest::Method::GET, format!("payments/{target}"), String::new()),
    };
    let runtime = match tokio::runtime::Builder::new_current_thread().enable_all().build() {
        Ok(runtime) => runtime,
        Err(error) => {
            eprintln!("payspec-sandbox: cannot start a runtime: {error}");
            return ExitCode::FAILURE;
        }
    };
    runtime.block_on(async move {
        payspec_runtime::install_tls_provider();
        let http = match reqwest::Client::builder().timeout(std::time::Duration::from_secs(10)).build() {
            Ok(http) => http,
            Err(error) => {
                eprintln!("payspec-sandbox: {error}");
                return ExitCode::FAILURE;
            }
        };
        let sent = http
            .request(method, format!("{base}/__sandbox/{path}"))
            .header(reqwest::header::CONTENT_TYPE, "application/json")
            .body(body)
            .send()
            .await;
        match sent {
            Ok(answer) => {
                let ok = answer.status().is_success();
                let text = answer.text().await.unwrap_or_default();
                println!("{text}");
                if ok { ExitCode::SUCCESS } else { ExitCode::FAILURE }
            }
            Err(error) => {
                eprintln!("payspec-sandbox {command}: no sandbox answered at {base}: {error}");
                ExitCode::FAILURE
            }
        }
    })
}

/// `N/WINDOW`: a count of requests and a window in `ms`, `s` or `m`, such as `40/1s`.
fn rate_limit(text: &str) -> Option<(u32, std::time::Duration)> {
    let (limit, window) = text.split_once('/')?;
    let limit = limit.trim().parse().ok().filter(|n| *n > 0)?;
    let window = window.trim();
    let digits = window.bytes().take_while(u8::is_ascii_digit).count();
    let count: u64 = window.get(..digits)?.parse().ok().filter(|n| *n > 0)?;
    let millis = match window.get(digits..)? {
        "ms" => 1,
        "s" => 1_000,
        "m" => 60_000,
        _ => return None,
    };
    Some((limit, std::time::Duration::from_millis(count.checked_mul(millis)?)))
}

#[cfg(test)]
mod tests {
    use super::rate_limit;
    use std::time::Duration;

    #[test]
    fn a_rate_limit_is_a_count_and_a_window() {
        assert_eq!(rate_limit("40/1s"), Some((40, Duration::from_secs(1))));
        assert_eq!(rate_limit("5/500ms"), Some((5, Duration::from_millis(500))));
        assert_eq!(rate_limit("100/2m"), Some((100, Duration::from_secs(120))));
        for bad in ["", "40", "0/1s", "40/0s", "40/1", "40/1h", "x/1s", "40/99999999999999999999m"] {
            assert_eq!(rate_limit(bad), None, "{bad}");
        }
    }
}
