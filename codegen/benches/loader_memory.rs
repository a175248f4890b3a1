//! Peak memory of loading a spec, against its size, for a family of YAML shapes:
//! `cargo bench -p payspec-codegen --bench loader_memory`. Prints, for each shape and
//! size, the bytes the loader had live at its peak and their ratio to the spec's size
//! (the loader keeps it under 64, `tests/loader_memory.rs` fails past it), and how long
//! the load took.

#[path = "../tests/support/memory.rs"]
mod memory;

use memory::{Counting, FIXED_ALLOWANCE, MAX_BYTES_PER_INPUT_BYTE, SHAPES, peak_of};
use std::time::Instant;

#[global_allocator]
static ALLOCATOR: Counting = Counting;

fn main() {
    let sizes = [64 * 1024, 640 * 1024, 4 * 1024 * 1024 - 4096];
    println!("{:<52} {:>9} {:>12} {:>8} {:>9}  outcome", "shape", "bytes", "peak bytes", "ratio", "ms");
    let builtin = std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/spec/payments.yaml"));
    let mut rows: Vec<(&str, String)> = Vec::new();
    if let Ok(text) = builtin {
        rows.push(("the built-in spec", text));
    }
    for shape in SHAPES {
        for size in sizes {
            rows.push((shape.name, (shape.write)(size)));
        }
    }
    let mut worst = 0.0f64;
    for (name, text) in &rows {
        let started = Instant::now();
        let (peak, loaded) = peak_of(|| payspec_codegen::load_str("shape.yaml", text).map(|_| ()));
        let elapsed = started.elapsed();
        let ratio = peak as f64 / text.len() as f64;
        worst = worst.max(ratio);
        let past = peak > MAX_BYTES_PER_INPUT_BYTE * text.len() + FIXED_ALLOWANCE;
        let outcome = match loaded {
            Ok(()) => "loaded".to_owned(),
            Err(errors) => {
                let first = errors.first().map(|d| d.message.clone()).unwrap_or_default();
                format!("refused: {}", first.chars().take(60).collect::<String>())
            }
        };
        let outcome = if past { format!("PAST THE BOUND; {outcome}") } else { outcome };
        println!(
            "{name:<52} {:>9} {peak:>12} {ratio:>8.1} {:>9.1}  {outcome}",
            text.len(),
            elapsed.as_secs_f64() * 1000.0
        );
    }
    println!(
        "worst ratio: {worst:.1} (the bound: {MAX_BYTES_PER_INPUT_BYTE}x the spec's size, plus {} MiB)",
        FIXED_ALLOWANCE >> 20
    );
}
