//! Peak memory of loading a spec, against its size, for a family of YAML shapes: shared by
//! the loader's memory test (`tests/loader_memory.rs`) and benchmark
//! (`benches/loader_memory.rs`).

use std::alloc::{GlobalAlloc, Layout, System};
use std::sync::atomic::{AtomicUsize, Ordering};

/// The system allocator, counting the bytes live and the most live at once.
pub struct Counting;

static LIVE: AtomicUsize = AtomicUsize::new(0);
static PEAK: AtomicUsize = AtomicUsize::new(0);

// SAFETY: every call is passed to the system allocator unchanged; the counters only
// observe the sizes.
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        // SAFETY: the caller's contract is the system allocator's.
        let block = unsafe { System.alloc(layout) };
        if !block.is_null() {
            grew(layout.size());
        }
        block
    }

    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        // SAFETY: as for `alloc`.
        let block = unsafe { System.alloc_zeroed(layout) };
        if !block.is_null() {
            grew(layout.size());
        }
        block
    }

    unsafe fn dealloc(&self, block: *mut u8, layout: Layout) {
        // SAFETY: `block` came from this allocator with `layout`.
        unsafe { System.dealloc(block, layout) };
        LIVE.fetch_sub(layout.size(), Ordering::Relaxed);
    }

    unsafe fn realloc(&self, block: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        // SAFETY: as for `dealloc` and `alloc`.
        let moved = unsafe { System.realloc(block, layout, new_size) };
        if !moved.is_null() {
            if new_size >= layout.size() {
                grew(new_size - layout.size());
            } else {
                LIVE.fetch_sub(layout.size() - new_size, Ordering::Relaxed);
            }
        }
        moved
    }
}

fn grew(bytes: usize) {
    let live = LIVE.fetch_add(bytes, Ordering::Relaxed) + bytes;
    PEAK.fetch_max(live, Ordering::Relaxed);
}

/// The most bytes `run` had live at once, above what was live when it started. Measure
/// on one thread: the counters are the whole process's.
pub fn peak_of<T>(run: impl FnOnce() -> T) -> (usize, T) {
    let before = LIVE.load(Ordering::Relaxed);
    PEAK.store(before, Ordering::Relaxed);
    let out = run();
    (PEAK.load(Ordering::Relaxed).saturating_sub(before), out)
}

/// The bound the loader keeps: at most this many bytes per byte of spec, above a fixed
/// allowance.
pub const MAX_BYTES_PER_INPUT_BYTE: usize = 64;
/// What loading any spec may take whatever its size (tables, the parser's buffers).
pub const FIXED_ALLOWANCE: usize = 2 << 20;

/// One shape of YAML, written out to about `size` bytes.
pub struct Shape {
    pub name: &'static str,
    pub write: fn(usize) -> String,
}

fn long_key(n: usize, length: usize) -> String {
    format!("k{}{n}", "x".repeat(length))
}

/// A chain of nested keys of `length` bytes each, `depth` deep, then short entries under
/// it up to `size` bytes: the long paths of many entries.
fn chain_then_entries(size: usize, depth: usize, length: usize) -> String {
    let mut text = String::from("format: 1\n");
    for d in 0..depth {
        text.push_str(&" ".repeat(d));
        text.push_str(&long_key(d, length));
        text.push_str(":\n");
    }
    let mut n = 0;
    while text.len() < size {
        text.push_str(&" ".repeat(depth));
        text.push_str(&format!("e{n}: 1\n"));
        n += 1;
    }
    text
}

/// Items of `line` repeated up to `size` bytes under `head`.
fn repeated(size: usize, head: &str, line: &str) -> String {
    let mut text = String::from(head);
    while text.len() < size {
        text.push_str(line);
    }
    text
}

/// A flow collection: `open`, `item` repeated with `, ` up to `size` bytes, `close`.
fn flow(size: usize, head: &str, open: &str, close: &str, item: &dyn Fn(usize) -> String) -> String {
    let mut text = format!("{head}{open}");
    let mut n = 0;
    while text.len() < size {
        if n > 0 {
            text.push_str(", ");
        }
        text.push_str(&item(n));
        n += 1;
    }
    text.push_str(close);
    text.push('\n');
    text
}

/// `line` with spaces before its end (inside any flow brackets it closes) up to `width`
/// bytes: as dense as the loader accepts when `width` is its bytes per value times the
/// values the line holds.
fn padded(line: &str, width: usize) -> String {
    let pad = " ".repeat(width.saturating_sub(line.len() + 1));
    let cut = line.trim_end_matches([']', '}']).len();
    format!("{}{pad}{}\n", &line[..cut], &line[cut..])
}

/// Whether the loader's pre-scan lets `text` through to the YAML parser.
fn dense_enough(text: &str) -> bool {
    match payspec_codegen::load_str("shape.yaml", text) {
        Ok(_) => true,
        Err(errors) => !errors.iter().any(|d| d.message.contains("more YAML values than")),
    }
}

/// The least width, from `least` up, at which the loader reads `text(width)` (found by
/// halving: a wider text is never refused where a narrower one is read).
fn narrowest(least: usize, text: impl Fn(usize) -> String) -> usize {
    let (mut low, mut high) = (least, 64 * least);
    while low < high {
        let mid = (low + high) / 2;
        if dense_enough(&text(mid)) {
            high = mid;
        } else {
            low = mid + 1;
        }
    }
    low
}

/// Lines of `line` up to `size` bytes, each padded as little as the loader allows: the
/// densest text of this line it reads.
fn dense(size: usize, line: &str) -> String {
    let text = |size: usize, width: usize| {
        let mut text = String::from("format: 1\nshapes:\n");
        let mut n = 0;
        while text.len() < size {
            text.push_str(&padded(&line.replace("{n}", &n.to_string()), width));
            n += 1;
        }
        text
    };
    text(size, narrowest(line.len() + 1, |width| text(size, width)))
}

/// A flow sequence of `item`s, each padded as little as the loader allows.
fn dense_flow(size: usize, item: &str) -> String {
    let text = |size: usize, width: usize| {
        let item = format!("{item}{}", " ".repeat(width.saturating_sub(item.len() + 2)));
        flow(size, "format: 1\nshapes: ", "[", "]", &|_| item.clone())
    };
    text(size, narrowest(item.len() + 2, |width| text(size, width)))
}

/// Every shape measured. Each is a spec the loader must refuse or accept within the bound.
pub const SHAPES: &[Shape] = &[
    Shape { name: "long-key chain, 30 deep, then short entries", write: |s| chain_then_entries(s, 30, 300) },
    Shape {
        name: "long-key chain, 120 deep, then short entries",
        write: |s| chain_then_entries(s, 120, 600),
    },
    Shape {
        name: "keys nested one space deeper each, 300 bytes long",
        write: |s| {
            let mut text = String::from("format: 1\n");
            let mut d = 0;
            while text.len() < s {
                text.push_str(&" ".repeat(d));
                text.push_str(&long_key(d, 300));
                text.push_str(":\n");
                d += 1;
            }
            text
        },
    },
    Shape {
        name: "thousands of 300-byte keys in one mapping",
        write: |s| {
            let mut text = String::from("format: 1\noperations:\n");
            let mut n = 0;
            while text.len() < s {
                text.push_str(&format!("  {}: 1\n", long_key(n, 300)));
                n += 1;
            }
            text
        },
    },
    Shape { name: "short keys, one mapping", write: |s| repeated(s, "format: 1\nshapes:\n", " a: 1\n") },
    Shape { name: "tiny block items", write: |s| repeated(s, "format: 1\nshapes:\n", "- 1\n") },
    Shape {
        name: "items nested on one line",
        write: |s| repeated(s, "format: 1\nshapes:\n", &format!("{}1\n", "- ".repeat(30))),
    },
    Shape { name: "empty block items", write: |s| repeated(s, "format: 1\nshapes:\n", "-\n") },
    Shape {
        name: "flow sequence of tiny items",
        write: |s| flow(s, "format: 1\nshapes: ", "[", "]", &|_| "1".into()),
    },
    Shape {
        name: "flow mapping of short keys",
        write: |s| flow(s, "format: 1\nshapes: ", "{", "}", &|n| format!("k{n}: 1")),
    },
    Shape {
        name: "flow sequences nested 30 deep",
        write: |s| {
            flow(s, "format: 1\nshapes: ", "[", "]", &|_| format!("{}1{}", "[".repeat(30), "]".repeat(30)))
        },
    },
    Shape {
        name: "long string values",
        write: |s| {
            let mut text = String::from("format: 1\nshapes:\n");
            let mut n = 0;
            while text.len() < s {
                text.push_str(&format!("  s{n}: {}\n", "v".repeat(500)));
                n += 1;
            }
            text
        },
    },
    Shape { name: "tiny block items, as dense as allowed", write: |s| dense(s, "- 1") },
    Shape { name: "empty block items, as dense as allowed", write: |s| dense(s, "-") },
    Shape { name: "short keys, as dense as allowed", write: |s| dense(s, " a{n}: 1") },
    Shape {
        name: "items nested on one line, as dense as allowed",
        write: |s| dense(s, &format!("{}1", "- ".repeat(30))),
    },
    Shape {
        name: "flow sequences nested 30 deep, as dense as allowed",
        write: |s| dense(s, &format!("- {}1{}", "[".repeat(30), "]".repeat(30))),
    },
    Shape { name: "one-key mappings, as dense as allowed", write: |s| dense(s, "- a: 1") },
    Shape { name: "keys holding one-key mappings, as dense as allowed", write: |s| dense(s, "k{n}:\n a: 1") },
    Shape { name: "items holding one-item sequences, as dense as allowed", write: |s| dense(s, "-\n - 1") },
    Shape {
        name: "one-key flow mappings nested 30 deep, as dense as allowed",
        write: |s| dense(s, &format!("- {}1{}", "{a: ".repeat(30), "}".repeat(30))),
    },
    Shape { name: "flow sequence, as dense as allowed", write: |s| dense_flow(s, "1") },
    Shape { name: "flow of empty mappings, as dense as allowed", write: |s| dense_flow(s, "{}") },
    Shape {
        name: "empty mappings in flow",
        write: |s| flow(s, "format: 1\nshapes: ", "[", "]", &|_| "{}".into()),
    },
];
