//! `payspec-sandbox`: the sandbox as a program, for tools and tests in other languages.
//!
//! ```text
//! payspec-sandbox [--port N] [--spec FILE] [--strict] [--token TOKEN] [--rate-limit N/WINDOW] [--webhook URL --signing-key KEY]
//! ```

use std::process::ExitCode;

const USAGE: &str =
    "usage: payspec-sandbox [--port N] [--spec FILE] [--strict] [--token TOKEN] [--rate-limit N/WINDOW] [--webhook URL --signing-key KEY]

Serves every operation of the spec on 127.0.0.1:N (a free port when N is 0 or absent)
until stopped, behaving like the service: it accepts what the service is known to accept
and ignores (and lists in its state) keys the spec does not describe. --strict refuses
anything the vendor's document does not describe. --token accepts TOKEN as a bearer token
without issuing it (for contract testers); --rate-limit 40/1s answers at most 40 requests
a second (429 beyond; every answer carries the X-Rate-Limit-* headers); --webhook sends payment and payout
notifications, signed with KEY, to URL. The control API is under /__sandbox/: GET state,
GET faults, POST faults, DELETE faults, POST reset, POST orders/<ref>/pay, POST settle
(pending transfers to {\"to\": \"success\" | \"failed\" | \"refund\"}), POST reverse/<id>, PUT webhook.";

fn main() -> ExitCode {
    let mut builder = payspec_sandbox::Sandbox::builder();
    let mut args = std::env::args().skip(1);
    let mut webhook: (Option<String>, Option<String>) = (None, None);
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
            "--signing-key" => value("--signing-key").map(|key| webhook.1 = Some(key)),
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
        println!("payspec-sandbox listening on {}", sandbox.base_url());
        println!(
            "client id {}, client secret {}, accountId {}",
            payspec_sandbox::CLIENT_ID,
            payspec_sandbox::CLIENT_SECRET,
            payspec_sandbox::ACCOUNT_ID
        );
        std::future::pending::<()>().await;
        ExitCode::SUCCESS
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
