//! What a side costs, counted: instructions per call under callgrind (and the code a call
//! runs), the calling thread's CPU time, and allocations.

use std::time::Duration;

use crate::CASES;

/// Instructions per call on the calling thread, each side of each case counted by
/// callgrind: this binary runs again under `valgrind --tool=callgrind --separate-threads=yes`
/// with `PAYSPEC_BENCH_ONLY`, for two numbers of rounds; the difference of the main thread's
/// totals, over the calls between them, leaves out start-up, the token and the warm-up, and
/// the server's thread is not counted. Deterministic to a fraction of a percent.
///
/// The same runs count each instruction apart (`--dump-instr=yes`): an instruction that
/// the calls between the two runs executed at least once per call on average is code
/// every call runs, and the 64-byte lines it lies in are the code a call has the
/// processor fetch.
pub(crate) fn instructions() {
    let exe = std::env::current_exe().expect("this binary");
    let dir = std::env::temp_dir().join(format!("payspec-callgrind-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("a directory for callgrind's output");
    let (few, many) = (2usize, 6usize);
    let count = |case: usize, side: &str, rounds: usize| -> Executed {
        let out = dir.join(format!("{case}-{side}-{rounds}"));
        let status = std::process::Command::new("valgrind")
            .args([
                "--tool=callgrind",
                "--separate-threads=yes",
                "--quiet",
                "--dump-instr=yes",
                "--dump-line=no",
            ])
            .arg(format!("--callgrind-out-file={}", out.display()))
            .arg(&exe)
            .env_remove("PAYSPEC_BENCH_INSTRUCTIONS")
            .env("PAYSPEC_BENCH_ONLY", format!("{case}:{side}"))
            .env("PAYSPEC_BENCH_ROUNDS", rounds.to_string())
            .stdout(std::process::Stdio::null())
            .status()
            .expect("valgrind runs (install it: Debian's package `valgrind`)");
        assert!(status.success(), "valgrind: {status}");
        // The main thread's file ends in `-01`.
        let text =
            std::fs::read_to_string(format!("{}-01", out.display())).expect("callgrind's main-thread output");
        Executed::read(&text)
    };
    println!(
        "per call on the calling thread (callgrind), generated client / hand-written reqwest: \
         instructions, and the 64-byte lines of code every call runs"
    );
    let chosen: Option<Vec<usize>> = std::env::var("PAYSPEC_BENCH_CASES")
        .ok()
        .map(|list| list.split(',').filter_map(|case| case.trim().parse().ok()).collect());
    for (case, (name, width)) in CASES.iter().enumerate() {
        if chosen.as_ref().is_some_and(|chosen| !chosen.contains(&case)) {
            continue;
        }
        let batches = if *width == 1 { 200 } else { 6 };
        let calls = (batches * (many - few) * width) as u64;
        let per_call = |side: &str| {
            let (few, many) = (count(case, side, few), count(case, side, many));
            ((many.total - few.total) as f64 / calls as f64, many.lines_run_by_every(&few, calls))
        };
        let ((generated, generated_lines), (raw, raw_lines)) = (per_call("generated"), per_call("raw"));
        println!(
            "{name:<34} {:.3}x ({:.0} vs {:.0})   code {:.3}x ({generated_lines} vs {raw_lines} lines)",
            generated / raw,
            generated,
            raw,
            generated_lines as f64 / raw_lines as f64
        );
    }
    let _ = std::fs::remove_dir_all(&dir);
}

/// What one callgrind run of the calling thread executed: its instructions, and how many
/// times each instruction ran, by address.
struct Executed {
    total: u64,
    by_address: std::collections::HashMap<u64, u64>,
}

impl Executed {
    /// Reads callgrind's output written with `--dump-instr=yes --dump-line=no`: each cost
    /// line is an address (absolute, `+`/`-` relative to the one before, or `*` for the
    /// same) and its count; the line after a `calls=` line is a call's inclusive cost, not
    /// the instruction's own, and is skipped.
    fn read(text: &str) -> Self {
        let mut by_address = std::collections::HashMap::new();
        let (mut address, mut after_call, mut total) = (0u64, false, None);
        for line in text.lines() {
            if line.starts_with("calls=") {
                after_call = true;
                continue;
            }
            if let Some(n) = line.strip_prefix("summary:").or_else(|| line.strip_prefix("totals:")) {
                total = n.split_whitespace().next().and_then(|n| n.parse().ok());
                continue;
            }
            let mut parts = line.split_whitespace();
            let (Some(position), Some(cost)) = (parts.next(), parts.next()) else { continue };
            address = if let Some(hex) = position.strip_prefix("0x") {
                u64::from_str_radix(hex, 16).expect("an address")
            } else if let Some(step) = position.strip_prefix('+') {
                address + step.parse::<u64>().expect("an address step")
            } else if let Some(step) = position.strip_prefix('-') {
                address - step.parse::<u64>().expect("an address step")
            } else if position == "*" {
                address
            } else {
                continue;
            };
            if std::mem::take(&mut after_call) {
                continue;
            }
            *by_address.entry(address).or_insert(0) += cost.parse::<u64>().expect("a count");
        }
        Executed { total: total.expect("an instruction total"), by_address }
    }

    /// The 64-byte lines holding an instruction that ran at least once per call, on
    /// average, over the `calls` this run made past `fewer`'s.
    fn lines_run_by_every(&self, fewer: &Executed, calls: u64) -> usize {
        let lines: std::collections::HashSet<u64> = self
            .by_address
            .iter()
            .filter(|&(address, &n)| n - fewer.by_address.get(address).copied().unwrap_or(0).min(n) >= calls)
            .map(|(address, _)| address / 64)
            .collect();
        lines.len()
    }
}

/// The CPU time the calling thread has used (user and system), which the server's
/// thread does not add to.
pub(crate) fn thread_cpu() -> Duration {
    let mut now = libc::timespec { tv_sec: 0, tv_nsec: 0 };
    // SAFETY: `now` is a valid `timespec` to write to, and the clock is one Linux has.
    let read = unsafe { libc::clock_gettime(libc::CLOCK_THREAD_CPUTIME_ID, &mut now) };
    assert_eq!(read, 0, "the thread's CPU clock");
    Duration::new(now.tv_sec.unsigned_abs(), now.tv_nsec.clamp(0, 999_999_999) as u32)
}

/// The calling thread's user and system time so far. The kernel splits a thread's time
/// between the two by sampling: over a run of seconds, as `PAYSPEC_BENCH_ONLY` runs, the
/// split is good to a few percent.
pub(crate) fn thread_times() -> (Duration, Duration) {
    // SAFETY: `usage` is a valid `rusage` to write to; RUSAGE_THREAD is Linux's.
    let mut usage: libc::rusage = unsafe { std::mem::zeroed() };
    let read = unsafe { libc::getrusage(libc::RUSAGE_THREAD, &mut usage) };
    assert_eq!(read, 0, "the thread's resource usage");
    let time = |t: libc::timeval| {
        Duration::new(t.tv_sec.unsigned_abs(), (t.tv_usec.clamp(0, 999_999) * 1000) as u32)
    };
    (time(usage.ru_utime), time(usage.ru_stime))
}
