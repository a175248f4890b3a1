//! The loader's memory stays within a fixed multiple of the spec's size, whatever the shape
//! of its YAML: each shape of the family in `support/memory.rs`, and shapes drawn at random
//! from the same pieces, is loaded (or refused) with at most
//! [`MAX_BYTES_PER_INPUT_BYTE`] bytes live per byte of spec, above a fixed allowance. The
//! figures themselves: `cargo bench -p payspec-codegen --bench loader_memory`.

#[path = "support/memory.rs"]
mod memory;

use memory::{Counting, FIXED_ALLOWANCE, MAX_BYTES_PER_INPUT_BYTE, SHAPES, peak_of};

#[global_allocator]
static ALLOCATOR: Counting = Counting;

/// The peak of loading `text`, checked against the bound.
fn check(name: &str, text: &str) {
    let (peak, _) = peak_of(|| payspec_codegen::load_str("shape.yaml", text).is_ok());
    let bound = MAX_BYTES_PER_INPUT_BYTE * text.len() + FIXED_ALLOWANCE;
    assert!(
        peak <= bound,
        "{name}: {peak} bytes at the peak for {} bytes of spec ({:.1}x), past the bound of {bound}",
        text.len(),
        peak as f64 / text.len() as f64
    );
}

/// One test, so no other test's allocations are counted with a load's.
#[test]
fn loading_any_shape_stays_within_the_bound() {
    let builtin = std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/spec/payments.yaml"));
    if let Ok(text) = builtin {
        check("the built-in spec", &text);
    }
    for shape in SHAPES {
        for size in [20 * 1024, 256 * 1024] {
            check(shape.name, &(shape.write)(size));
        }
    }
    // Lines drawn from the pieces of every shape, in random order and indentation.
    let pieces: &[&str] = &[
        "- 1",
        "-",
        "a: 1",
        "- a: 1",
        "k: [1, [2, {a: [3]}]]",
        "- - - - - x",
        "? complex key",
        ": value",
        "key_with_some_length_to_it_and_more:",
        "- {a: {b: {c: {d: 1}}}}",
        "s: 'quoted, [not] {a} flow'",
        "t: |",
        "  block text: not: keys",
        "[1, 2, 3, 4, 5, 6, 7, 8, 9]",
    ];
    let mut state = 0x9e37_79b9_7f4a_7c15_u64;
    let mut next = move |below: usize| {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        usize::try_from(state % below as u64).unwrap_or(0)
    };
    for round in 0..40 {
        let mut text = String::from("format: 1\nshapes:\n");
        let target = 16 * 1024 + next(256 * 1024);
        while text.len() < target {
            text.push_str(&" ".repeat(next(40)));
            text.push_str(pieces[next(pieces.len())]);
            text.push('\n');
        }
        check(&format!("random shape {round}"), &text);
    }
}
