//! A seeded mutation test of the spec front end: thousands of mutants of the small spec
//! and hundreds of the built-in one (lines deleted, duplicated and swapped, values retyped,
//! keys renamed, truncation, stray bytes, deep nesting, anchors and aliases, tabs), each
//! loaded, and generated when it loads. For every mutant: no panic; either located errors,
//! every location inside the file, or code that parses; bounded time and memory (this
//! binary counts its allocations).

use std::panic::{AssertUnwindSafe, catch_unwind};
use std::time::{Duration, Instant};

use payspec_codegen::{Options, load_str};
use payspec_tests::counting;

#[global_allocator]
static ALLOCATOR: counting::Counting = counting::Counting;

/// A small, seeded, reproducible random source (xorshift64*).
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_f491_4f6c_dd1d)
    }

    fn below(&mut self, n: usize) -> usize {
        if n == 0 { 0 } else { (self.next() % n as u64) as usize }
    }

    fn pick<'a>(&mut self, items: &[&'a str]) -> &'a str {
        items[self.below(items.len())]
    }
}

const VALUES: &[&str] = &[
    "",
    "~",
    "null",
    "[]",
    "{}",
    "- x",
    "0",
    "-1",
    "99999999999999999999",
    "1e400",
    "true",
    "\"\"",
    "'",
    "\"",
    "GET",
    "FETCH",
    "decimel",
    "string",
    "self",
    "Self",
    "String",
    "3dsId",
    "type",
    "/v1/{x}",
    "/v1/{",
    "money",
    "json",
    "untyped",
    "[a, [b, [c]]]",
    "&a x",
    "*a",
    "|",
    ">-",
    "!!binary x",
    "\u{2028}",
    "\t",
];
const STRAY: &[&str] = &[
    "\u{0}", "\u{7}", "\r", "\t", "\u{85}", "\u{2028}", "\u{feff}", "\u{fffd}", "{", "}", ":", "-", "#", "&",
    "*", "'", "\"",
];

fn mutate(base: &str, rng: &mut Rng) -> String {
    let mut lines: Vec<String> = base.lines().map(str::to_owned).collect();
    let edits = 1 + rng.below(3);
    for _ in 0..edits {
        let n = lines.len().max(1);
        let i = rng.below(n).min(lines.len().saturating_sub(1));
        match rng.below(10) {
            0 if !lines.is_empty() => {
                lines.remove(i);
            }
            1 if !lines.is_empty() => {
                let line = lines[i].clone();
                lines.insert(i, line);
            }
            2 if lines.len() > 1 => {
                let j = rng.below(lines.len());
                lines.swap(i, j);
            }
            3 if !lines.is_empty() => {
                // Retype a value.
                if let Some((key, _)) = lines[i].split_once(':') {
                    lines[i] = format!("{key}: {}", rng.pick(VALUES));
                }
            }
            4 if !lines.is_empty() => {
                // Rename a key: a character changed or dropped.
                let chars: Vec<char> = lines[i].chars().collect();
                if let Some(colon) = chars.iter().position(|c| *c == ':') {
                    let at = rng.below(colon.max(1));
                    let mut out: Vec<char> = chars.clone();
                    if rng.below(2) == 0 {
                        out[at] = 'x'
                    } else {
                        out.remove(at);
                    }
                    lines[i] = out.into_iter().collect();
                }
            }
            5 if !lines.is_empty() => {
                let at = rng.below(lines[i].len() + 1);
                let at = (0..=at).rev().find(|a| lines[i].is_char_boundary(*a)).unwrap_or(0);
                lines[i].insert_str(at, rng.pick(STRAY));
            }
            6 if !lines.is_empty() => {
                let depth = 1 + rng.below(200);
                lines[i] = format!("{}{}", lines[i], "[".repeat(depth));
            }
            7 => {
                let indent = " ".repeat(2 * rng.below(4));
                lines.insert(i, format!("{indent}anchored: &a {}", rng.pick(VALUES)));
                lines.insert(i + 1, format!("{indent}aliased: *a"));
            }
            8 if !lines.is_empty() => {
                lines[i] = lines[i].replacen("  ", "\t", 1);
            }
            _ => {
                // Truncate the file at a random place.
                let text = lines.join("\n");
                let cut = rng.below(text.len() + 1);
                let cut = (0..=cut).rev().find(|c| text.is_char_boundary(*c)).unwrap_or(0);
                return text[..cut].to_owned();
            }
        }
    }
    let mut text = lines.join("\n");
    if rng.below(2) == 0 {
        text.push('\n');
    }
    text
}

/// Loads (and, when it loads, generates) one mutant; whether it loaded, and the problems
/// found, if any.
fn check(name: &str, text: &str, generate: bool) -> (bool, Vec<String>) {
    let mut problems = Vec::new();
    let started = Instant::now();
    let before = counting::reset_peak();
    let loaded = catch_unwind(AssertUnwindSafe(|| load_str(name, text)));
    let accepted = matches!(loaded, Ok(Ok(_)));
    let lines: Vec<&str> = text.split('\n').collect();
    match loaded {
        Err(_) => problems.push("the loader panicked".to_owned()),
        Ok(Err(errors)) => {
            for d in errors.iter() {
                let line = d.location.line;
                let inside = line >= 1
                    && line <= lines.len()
                    && d.location.column >= 1
                    && d.location.column <= lines[line - 1].chars().count() + 1;
                if !inside {
                    problems
                        .push(format!("{}:{} is outside the file: {}", line, d.location.column, d.message));
                }
            }
        }
        Ok(Ok(spec)) if generate => match catch_unwind(AssertUnwindSafe(|| {
            payspec_codegen::generate(&spec, &Options::new().formatted())
        })) {
            Err(_) => problems.push("the generator panicked".to_owned()),
            Ok(Err(error)) => problems.push(format!("the generated code does not parse: {error}")),
            Ok(Ok(_)) => {}
        },
        Ok(Ok(_)) => {}
    }
    let grew = counting::peak().saturating_sub(before);
    if grew > 100 * 1024 * 1024 {
        problems.push(format!("{grew} bytes of memory"));
    }
    if started.elapsed() > Duration::from_secs(2) {
        problems.push(format!("{:?}", started.elapsed()));
    }
    (accepted, problems)
}

/// Checks `mutants` mutants of `base`; the failures, and how many mutants loaded.
fn run(base: &str, seed: u64, mutants: usize, generate: bool) -> (Vec<String>, usize) {
    let mut rng = Rng(seed);
    let mut failures = Vec::new();
    let mut accepted = 0;
    for n in 0..mutants {
        let text = mutate(base, &mut rng);
        let (loaded, problems) = check("mutant.yaml", &text, generate);
        accepted += usize::from(loaded);
        if !problems.is_empty() && failures.len() < 5 {
            failures.push(format!("mutant {n} (seed {seed}): {problems:?}\n---\n{text}\n---"));
        }
    }
    (failures, accepted)
}

/// One test, so that the allocation counters and the panic hook are this test's alone.
#[test]
fn mutated_specs_are_refused_at_their_place_or_generate_code_that_parses() {
    // A panic is a failure this test reports itself; keep its message out of the output.
    std::panic::set_hook(Box::new(|_| {}));
    let (mut failures, small_accepted) = run(include_str!("fixtures/small.yaml"), 0x5eed_0001, 3000, true);
    let (builtin_failures, builtin_accepted) =
        run(&payspec_tests::builtin_spec_text(), 0x5eed_0002, 150, false);
    let _ = std::panic::take_hook();
    failures.extend(builtin_failures);
    assert!(failures.is_empty(), "{}", failures.join("\n"));
    // Both kinds of mutant occur: some still load (and generate), most are refused.
    assert!((100..2900).contains(&small_accepted), "{small_accepted} of 3000 small mutants loaded");
    assert!(builtin_accepted < 150, "{builtin_accepted} of 150 built-in mutants loaded");
}
