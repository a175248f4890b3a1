//! Checks that run on the raw text before the YAML parser sees it, so that no input can
//! make loading slow or large, and every location is one an editor shows:
//!
//! - at most [`MAX_SPEC_BYTES`] bytes, and not empty;
//! - no control characters, and no line breaks other than `\n` and `\r\n` (YAML also breaks
//!   lines at a lone `\r`, U+0085, U+2028 and U+2029, which editors count differently);
//! - no tab in a line's indentation (YAML refuses it, and points elsewhere);
//! - no anchors or aliases (`&name`, `*name`): the format needs none, and they are how a
//!   small file expands into a huge one;
//! - at most [`MAX_NESTING`] levels of nesting, in flow brackets or in `- ` on one line;
//! - up to any line, at least [`SCALAR_BYTES`] bytes of text for each scalar and
//!   [`COLLECTION_BYTES`] for each sequence or mapping, beyond [`FREE_BYTES`]: the parser's
//!   memory grows with the values it reads (about 260 bytes a scalar, 700 a collection),
//!   so this keeps a load within a fixed multiple of the file's size. A written spec has
//!   twice the text it needs or more; packed data such as `[1,1,1,...]` a third.

use super::diagnostics::Sink;
use super::span::Location;

/// The largest spec read.
pub const MAX_SPEC_BYTES: usize = 4 * 1024 * 1024;
/// The deepest nesting of flow collections, or of sequences opened on one line.
pub const MAX_NESTING: usize = 32;
/// The bytes of text a spec has for each scalar it holds, at least.
pub const SCALAR_BYTES: usize = 5;
/// The bytes of text a spec has for each sequence or mapping it holds, at least.
pub const COLLECTION_BYTES: usize = 13;
/// What the values of any spec may need beyond its size.
pub const FREE_BYTES: usize = 16 * 1024;
/// After this many problems the scan stops: the file is not a spec yet.
const MAX_PROBLEMS: usize = 20;

/// Scans `text`, recording each problem at its place. `true` when the YAML parser may run.
pub(crate) fn scan(text: &str, sink: &mut Sink<'_>) -> bool {
    if text.len() > MAX_SPEC_BYTES {
        sink.error_at(
            Location::START,
            "",
            format!("the spec is {} bytes, more than the {MAX_SPEC_BYTES} a spec may have", text.len()),
            "split the service into several specs",
        );
        return false;
    }
    let meaningful = text.lines().any(|l| {
        let t = l.trim_matches(|c: char| c.is_whitespace() || c == '\u{feff}');
        !t.is_empty() && !t.starts_with('#') && t != "---" && t != "..."
    });
    if !meaningful {
        sink.error_at(
            Location::START,
            "",
            "the spec is empty",
            "start it with `format: 1`, then `service`, `groups` and `operations` (see spec/FORMAT.md)",
        );
        return false;
    }
    let mut problems = 0;
    let mut block_scalar: Option<usize> = None;
    let mut needed = 0usize;
    let mut line_end = 0usize;
    // The last line with content: its indentation, and whether its value opens on the
    // lines below (`key:` or `-` with nothing after).
    let mut previous: Option<(usize, bool)> = None;
    for (index, raw_line) in text.split('\n').enumerate() {
        line_end += raw_line.len() + 1;
        if problems >= MAX_PROBLEMS {
            break;
        }
        let line_number = index + 1;
        let line = raw_line.strip_suffix('\r').unwrap_or(raw_line);
        let at = |column: usize| Location { line: line_number, column };
        // Printable ASCII and tabs need no look at each character.
        let plain = line.bytes().all(|b| matches!(b, b' '..=b'~' | b'\t'));
        if !plain {
            for (column, c) in line.chars().enumerate() {
                let problem = match c {
                    '\r' => Some(("a carriage return without a newline", "end lines with `\\n` or `\\r\\n`")),
                    '\u{85}' | '\u{2028}' | '\u{2029}' => Some((
                        "a Unicode line or paragraph separator",
                        "replace it with a newline, or remove it",
                    )),
                    '\t' => None,
                    c if c.is_control() => Some(("a control character", "remove it: a spec is plain text")),
                    '\u{feff}' if index > 0 || column > 0 => {
                        Some(("a byte order mark inside the file", "remove it"))
                    }
                    _ => None,
                };
                if let Some((problem, hint)) = problem {
                    sink.error_at(at(column + 1), "", format!("the spec holds {problem}"), hint);
                    problems += 1;
                }
            }
        }
        let indent = line.len() - line.trim_start_matches([' ', '\t']).len();
        if let Some(tab) = line[..indent].find('\t') {
            sink.error_at(
                at(tab + 1),
                "",
                "a tab in the indentation",
                "indent with spaces only; YAML does not accept tabs there",
            );
            problems += 1;
            continue;
        }
        let content = &line[indent..];
        if let Some(key_indent) = block_scalar {
            if content.is_empty() || indent > key_indent {
                continue;
            }
            block_scalar = None;
        }
        if content.is_empty() || content.starts_with('#') {
            continue;
        }
        match scan_line(content) {
            LineScan::Fine { opens_block_scalar, scalars, collections, dashes, opens_below } => {
                if opens_block_scalar {
                    block_scalar = Some(indent);
                }
                needed += scalars * SCALAR_BYTES + collections * COLLECTION_BYTES;
                // The first line of a block collection opened by the line above.
                if let Some((above, true)) = previous
                    && (indent > above || (dashes > 0 && indent == above))
                {
                    needed += COLLECTION_BYTES;
                }
                previous = Some((indent, opens_below));
                if needed > line_end + FREE_BYTES {
                    sink.error_at(
                        at(indent + 1),
                        "",
                        format!(
                            "the first {line_end} bytes hold more YAML values than a spec of their \
                             size needs (they would need {needed} bytes: {SCALAR_BYTES} for each scalar, \
                             {COLLECTION_BYTES} for each sequence or mapping), and would take too much \
                             memory to read"
                        ),
                        "write the spec one key per line, as spec/FORMAT.md shows; packed data does not belong in a spec",
                    );
                    return false;
                }
            }
            LineScan::Anchor(offset, kind) => {
                sink.error_at(
                    at(indent + char_column(content, offset)),
                    "",
                    format!("a YAML {kind}"),
                    "the spec format uses no anchors or aliases; write the value out where it is needed",
                );
                problems += 1;
            }
            LineScan::TooDeep(offset) => {
                sink.error_at(
                    at(indent + char_column(content, offset)),
                    "",
                    format!("more than {MAX_NESTING} levels of nesting"),
                    "the spec format nests a few levels deep; use block-style YAML as spec/FORMAT.md shows",
                );
                problems += 1;
            }
        }
    }
    problems == 0
}

fn char_column(text: &str, byte_offset: usize) -> usize {
    text.get(..byte_offset).map_or(0, |t| t.chars().count()) + 1
}

enum LineScan {
    Fine {
        opens_block_scalar: bool,
        /// The scalars the line holds.
        scalars: usize,
        /// The sequences and mappings the line opens, but for the block collection it may
        /// be the first line of.
        collections: usize,
        /// How many `- ` the line starts with.
        dashes: usize,
        /// Whether the line's value opens on the lines below: `key:` or `-` alone.
        opens_below: bool,
    },
    /// Byte offset in the line's content, and "anchor" or "alias".
    Anchor(usize, &'static str),
    /// Byte offset where the nesting passed the limit.
    TooDeep(usize),
}

/// One line's content (indentation removed), outside quotes and comments.
fn scan_line(content: &str) -> LineScan {
    let bytes = content.as_bytes();
    // Sequences opened on this line: `- - - x`.
    let mut depth = 0;
    let mut i = 0;
    let (mut scalars, mut collections) = (0, 0);
    let mut dashes = 0;
    while bytes.get(i) == Some(&b'-') && matches!(bytes.get(i + 1), Some(b' ') | None) {
        depth += 1;
        dashes += 1;
        // Each `- ` after the first opens a sequence inside the item.
        if dashes > 1 {
            collections += 1;
        }
        if depth > MAX_NESTING {
            return LineScan::TooDeep(i);
        }
        i += 2;
    }
    let mut quote: Option<u8> = None;
    let mut previous = b' ';
    while i < bytes.len() {
        let b = bytes[i];
        match quote {
            Some(b'"') if b == b'\\' => {
                i += 2;
                continue;
            }
            Some(q) if b == q => quote = None,
            Some(_) => {}
            None => match b {
                b'"' | b'\'' if matches!(previous, b' ' | b'[' | b'{' | b',' | b':') => quote = Some(b),
                b'#' if previous == b' ' => break,
                b',' if depth > dashes => scalars += 1,
                b':' if depth > dashes => scalars += 1,
                b'[' | b'{' => {
                    collections += 1;
                    depth += 1;
                    if depth > MAX_NESTING {
                        return LineScan::TooDeep(i);
                    }
                }
                b']' | b'}' => depth = depth.saturating_sub(1),
                b'&' | b'*' if matches!(previous, b' ' | b'[' | b'{' | b',') => {
                    let named = bytes
                        .get(i + 1)
                        .is_some_and(|n| !matches!(n, b' ' | b',' | b'[' | b']' | b'{' | b'}'));
                    if named {
                        return LineScan::Anchor(i, if b == b'&' { "anchor" } else { "alias" });
                    }
                }
                _ => {}
            },
        }
        previous = b;
        i += 1;
    }
    // `key: |`, `- >-`, `|2`: the further indented lines below are text.
    let trimmed = content.split(" #").next().unwrap_or_default().trim_end();
    let (before, token) = trimmed.rsplit_once(' ').unwrap_or(("", trimmed));
    let is_indicator = token.len() <= 3
        && token.starts_with(['|', '>'])
        && token[1..].chars().all(|c| matches!(c, '-' | '+' | '1'..='9'));
    let opens_block_scalar = quote.is_none()
        && is_indicator
        && (before.is_empty() || before.ends_with(':') || before.ends_with('-'));
    // The line's own scalar, or its key and the value after it.
    let rest = &content[(2 * dashes).min(content.len())..];
    let rest = rest.split(" #").next().unwrap_or_default().trim_end();
    let key = super::span::split_key(rest);
    scalars += match key {
        Some((_, value)) if value.trim().is_empty() => 1,
        Some(_) => 2,
        None => 1,
    };
    // `- key: value` makes the item a mapping.
    if dashes > 0 && key.is_some() {
        collections += 1;
    }
    let opens_below = match key {
        Some((_, value)) => value.trim().is_empty(),
        None => rest.is_empty(),
    };
    LineScan::Fine { opens_block_scalar, scalars, collections, dashes, opens_below }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn problems(text: &str) -> Vec<String> {
        let spans = super::super::SpanIndex::default();
        let mut sink = Sink::new("t.yaml", &spans);
        scan(text, &mut sink);
        sink.finish()
            .iter()
            .map(|d| format!("{}:{} {}", d.location.line, d.location.column, d.message))
            .collect()
    }

    #[test]
    fn plain_specs_pass() {
        let spec =
            "format: 1\nservice:\n  title: \"a & b *c\"\n  doc: |\n    *not an alias*\n    & neither\nx: 1\n";
        assert_eq!(problems(spec), Vec::<String>::new());
        let flow = "a: [1, [2, 3]]\nb: 'it''s # not a comment'\nc: x # comment & *y\nd: a&b\n";
        assert_eq!(problems(flow), Vec::<String>::new());
    }

    #[test]
    fn each_problem_is_where_it_is() {
        assert_eq!(problems(""), ["1:1 the spec is empty"]);
        assert_eq!(problems("# only a comment\n"), ["1:1 the spec is empty"]);
        assert_eq!(problems("a: 1\nb:\n\tc: 2\n"), ["3:1 a tab in the indentation"]);
        assert_eq!(
            problems("a: 1\nb: x\u{2028}y\n"),
            ["2:5 the spec holds a Unicode line or paragraph separator"]
        );
        assert_eq!(problems("a: 1\rb: 2\n"), ["1:5 the spec holds a carriage return without a newline"]);
        assert_eq!(problems("a: 1\r\nb: \u{7}\n"), ["2:4 the spec holds a control character"]);
        assert_eq!(problems("a: &x 1\nb: *x\n"), ["1:4 a YAML anchor", "2:4 a YAML alias"]);
        let bomb = format!("a: {}", "[".repeat(100_000));
        assert_eq!(problems(&bomb), ["1:36 more than 32 levels of nesting"]);
        let dashes = format!("a:\n{}x\n", "- ".repeat(30_000));
        assert_eq!(problems(&dashes), ["2:65 more than 32 levels of nesting"]);
    }

    #[test]
    fn packed_values_are_refused_where_they_pass_the_budget() {
        // Within the free bytes, any density passes.
        let small = format!("a: [{}1]\n", "1, ".repeat(1000));
        assert_eq!(problems(&small), Vec::<String>::new());
        let packed = format!("a:\n{}", "- 1\n".repeat(30_000));
        let found = problems(&packed);
        assert_eq!(found.len(), 1, "{found:?}");
        assert!(found[0].starts_with("16371:1 the first 65483 bytes hold more YAML values"), "{found:?}");
        let flow = format!("a: [{}1]\n", "1,".repeat(100_000));
        assert!(problems(&flow)[0].starts_with("1:1 the first 200007 bytes"), "{:?}", problems(&flow));
        // The same items, written with room, pass; and so does a spec's usual density.
        let roomy = format!("a:\n{}", "- 1 #\n".repeat(10_000));
        assert_eq!(problems(&roomy), Vec::<String>::new());
        let params: String =
            (0..30_000).map(|i| format!("  p{i}:\n    in: body\n    type: string\n")).collect();
        assert_eq!(problems(&format!("params:\n{params}")), Vec::<String>::new());
        // Commas and colons of prose are text, not values.
        let prose = format!("docs:\n{}", "  d: a,b,c,d,e,f,g,h,i,j:k:l:m\n".repeat(30_000));
        assert_eq!(problems(&prose), Vec::<String>::new());
    }
}
