//! Where each key of a block-style YAML file stands.
//!
//! serde_yaml locates syntax errors but not the values it hands back, so semantic errors
//! (a path variable with no parameter, an unknown type, ...) need their own index from a
//! YAML path such as `operations.bank_transfer.params.amount` to a line and column.

use std::collections::HashMap;

/// A one-based line and column in the spec file.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Default)]
pub struct Location {
    /// One-based line.
    pub line: usize,
    /// One-based column.
    pub column: usize,
}

impl Location {
    /// The first character of the file.
    pub const START: Location = Location { line: 1, column: 1 };
}

/// Maps YAML paths (`a.b[0].c`) to the location of their key or sequence item.
#[derive(Debug, Default)]
pub struct SpanIndex {
    spans: HashMap<String, Location>,
    /// Keys met a second time in the same mapping, with the later location.
    repeated: Vec<(String, Location)>,
}

#[derive(Debug)]
struct Frame {
    indent: usize,
    /// The length of this frame's path, a prefix of the path being built.
    path_len: usize,
    /// A sequence item (its path ends in `[n]`).
    item: bool,
    /// Set on a key whose value starts on the next line, so a compact sequence
    /// (`key:` then `- item` at the same indent) belongs to it.
    opens_block: bool,
    next_item: usize,
}

impl SpanIndex {
    /// Indexes `text`. Flow collections are indexed by the key that holds them; block
    /// scalars (`|`, `>`) are skipped so their lines are never taken for keys.
    pub fn build(text: &str) -> SpanIndex {
        let mut spans = HashMap::new();
        let mut repeated = Vec::new();
        // The path of the key or item being indexed; each frame's path is a prefix of it.
        let mut path = String::new();
        // Root is a virtual frame below every real indent.
        let mut stack: Vec<Frame> =
            vec![Frame { indent: 0, path_len: 0, item: false, opens_block: true, next_item: 0 }];
        let mut scalar_block_indent: Option<usize> = None;

        for (number, raw_line) in text.lines().enumerate() {
            let line = number + 1;
            let indent = raw_line.len() - raw_line.trim_start_matches(' ').len();
            let content = &raw_line[indent..];
            if content.is_empty() || content.starts_with('#') {
                continue;
            }
            if let Some(block) = scalar_block_indent {
                if indent > block {
                    continue;
                }
                scalar_block_indent = None;
            }
            if content == "---" || content == "..." {
                continue;
            }

            let mut column = indent;
            let mut rest = content;
            // Each leading "- " opens a sequence item, possibly several on one line.
            while let Some(after) =
                rest.strip_prefix("- ").or_else(|| if rest == "-" { Some("") } else { None })
            {
                let parent = Self::parent_for(&mut stack, column, true);
                let index = stack[parent].next_item;
                stack[parent].next_item += 1;
                path.truncate(stack[parent].path_len);
                path.push('[');
                path.push_str(&index.to_string());
                path.push(']');
                spans.insert(path.clone(), Location { line, column: column + 1 });
                stack.push(Frame {
                    indent: column,
                    path_len: path.len(),
                    item: true,
                    opens_block: false,
                    next_item: 0,
                });
                let skipped = after.len() - after.trim_start_matches(' ').len();
                column += 2 + skipped;
                rest = &after[skipped..];
            }
            if rest.is_empty() {
                continue;
            }
            let Some((key, value)) = split_key(rest) else {
                continue;
            };
            let parent = Self::parent_for(&mut stack, column, false);
            path.truncate(stack[parent].path_len);
            if !path.is_empty() {
                path.push('.');
            }
            path.push_str(key);
            let here = Location { line, column: column + 1 };
            if spans.insert(path.clone(), here).is_some() {
                repeated.push((path.clone(), here));
            }
            let value = value.trim();
            let value = strip_comment(value);
            if value.starts_with('|') || value.starts_with('>') {
                scalar_block_indent = Some(column);
            }
            stack.push(Frame {
                indent: column,
                path_len: path.len(),
                item: false,
                opens_block: value.is_empty(),
                next_item: 0,
            });
        }
        SpanIndex { spans, repeated }
    }

    /// The first key written twice in one mapping whose last segment is `key`, with the
    /// location of its second occurrence.
    pub fn repeated_key(&self, key: &str) -> Option<(&str, Location)> {
        self.repeated
            .iter()
            .find(|(path, _)| path.rsplit('.').next() == Some(key))
            .map(|(path, location)| (path.as_str(), *location))
    }

    /// Pops frames that cannot hold something at `indent` and returns the parent's index.
    fn parent_for(stack: &mut Vec<Frame>, indent: usize, is_item: bool) -> usize {
        while stack.len() > 1 {
            let top = stack.last().map(|f| (f.indent, f.opens_block, f.item));
            let Some((top_indent, opens_block, top_is_item)) = top else { break };
            if top_indent < indent {
                break;
            }
            if top_indent == indent && is_item && opens_block && !top_is_item {
                break;
            }
            stack.pop();
        }
        stack.len() - 1
    }

    /// The location of `path`, or of its nearest indexed ancestor.
    pub fn locate(&self, path: &str) -> Location {
        let mut current = path;
        loop {
            if let Some(location) = self.spans.get(current) {
                return *location;
            }
            match current.rfind(['.', '[']) {
                Some(cut) => current = &current[..cut],
                None => return Location::START,
            }
        }
    }

    /// The location of `path` only if it was indexed itself.
    pub fn get(&self, path: &str) -> Option<Location> {
        self.spans.get(path).copied()
    }
}

/// Splits `key: value` (or `key:`) where the key is a plain or quoted scalar.
fn split_key(text: &str) -> Option<(&str, &str)> {
    if let Some(quote) = text.chars().next().filter(|c| *c == '"' || *c == '\'') {
        let end = text[1..].find(quote)? + 1;
        let after = &text[end + 1..];
        let value = after.strip_prefix(':')?;
        if !(value.is_empty() || value.starts_with(' ')) {
            return None;
        }
        return Some((&text[1..end], value));
    }
    if text.starts_with(['{', '[', '&', '*', '!', '|', '>']) {
        return None;
    }
    let bytes = text.as_bytes();
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] == b':' && (i + 1 == bytes.len() || bytes[i + 1] == b' ') {
            let key = text[..i].trim_end();
            if key.is_empty() || key.contains(" #") {
                return None;
            }
            return Some((key, &text[i + 1..]));
        }
        if bytes[i] == b' ' && bytes.get(i + 1) == Some(&b'#') {
            return None;
        }
        i += 1;
    }
    None
}

fn strip_comment(value: &str) -> &str {
    if value.starts_with('#') {
        return "";
    }
    match value.find(" #") {
        Some(cut) if !value.starts_with(['"', '\'']) => value[..cut].trim_end(),
        _ => value,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const TEXT: &str = "\
format: 1
operations:
  bank_transfer:
    doc: |
      not: a key
      - nor an item
    aliases:
    - method: POST
      path: /v1/x
    -   method: GET
    params:
      amount:
        type: decimal
      'quoted': { in: body }
  other:
    aliases:
      - method: PUT
";

    fn at(index: &SpanIndex, path: &str) -> (usize, usize) {
        let l = index.get(path).unwrap_or_else(|| panic!("{path} not indexed"));
        (l.line, l.column)
    }

    #[test]
    fn indexes_keys_items_and_skips_block_scalars() {
        let index = SpanIndex::build(TEXT);
        assert_eq!(at(&index, "format"), (1, 1));
        assert_eq!(at(&index, "operations.bank_transfer"), (3, 3));
        assert!(index.get("operations.bank_transfer.doc.not").is_none());
        assert_eq!(at(&index, "operations.bank_transfer.aliases[0]"), (8, 5));
        assert_eq!(at(&index, "operations.bank_transfer.aliases[0].path"), (9, 7));
        assert_eq!(at(&index, "operations.bank_transfer.aliases[1].method"), (10, 9));
        assert_eq!(at(&index, "operations.bank_transfer.params.amount.type"), (13, 9));
        assert_eq!(at(&index, "operations.bank_transfer.params.quoted"), (14, 7));
        assert_eq!(at(&index, "operations.other.aliases[0].method"), (17, 9));
    }

    #[test]
    fn falls_back_to_the_nearest_ancestor() {
        let index = SpanIndex::build(TEXT);
        let l = index.locate("operations.bank_transfer.params.quoted.in");
        assert_eq!((l.line, l.column), (14, 7));
        assert_eq!(index.locate("nowhere.at.all"), Location::START);
    }
}
