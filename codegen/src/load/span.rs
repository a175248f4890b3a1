//! Where each key of a block-style YAML file stands.
//!
//! serde_yaml locates syntax errors but not the values it hands back, so semantic errors
//! (a path variable with no parameter, an unknown type, ...) need their own index from a
//! YAML path such as `operations.bank_transfer.params.amount` to a line and column.

pub use crate::model::Location;
use std::collections::HashMap;
use std::collections::hash_map::RandomState;
use std::hash::BuildHasher;

/// Maps YAML paths (`a.b[0].c`) to the location of their key or sequence item.
///
/// A tree, not a table of whole paths: each key or item is stored once, as its parent and
/// its own segment, so the index grows with the file, whatever the depth of its keys.
#[derive(Debug, Default)]
pub struct SpanIndex {
    /// Every key and item indexed; a node's parent comes before it. The root is not stored.
    nodes: Vec<Node>,
    /// The text of every key, one after another; a node's key is a range of it.
    keys: String,
    /// The node of each (parent, segment), by a keyed hash of the two; nodes whose hashes
    /// are equal are chained through [`Node::next`].
    children: HashMap<u64, u32>,
    hasher: RandomState,
    /// Keys met a second time in the same mapping, with the later location.
    repeated: Vec<(u32, Location)>,
}

/// The parent of a top-level key or item.
const ROOT: u32 = u32::MAX;
/// The end of a chain of nodes.
const NONE: u32 = u32::MAX;
/// The most lookups one path's resolution makes (keys with dots multiply the choices).
const MAX_LOOKUPS: usize = 1024;
/// [`Node::key_len`] of a sequence item, whose index is in [`Node::key_start`].
const ITEM: u32 = u32::MAX;

#[derive(Debug, Clone, Copy)]
struct Node {
    parent: u32,
    key_start: u32,
    key_len: u32,
    line: u32,
    column: u32,
    /// The column of the key's value when it is a scalar on the key's own line (`type:
    /// decimel`), where an error about the value points; 0 when there is none.
    value_column: u32,
    /// The next node whose (parent, segment) hash is this one's.
    next: u32,
}

/// One step of a path: a key, or an item's index.
#[derive(Clone, Copy, PartialEq, Eq, Hash)]
enum Segment<'a> {
    Key(&'a str),
    Item(usize),
}

#[derive(Debug)]
struct Frame {
    indent: usize,
    /// This frame's node ([`ROOT`] for the root).
    node: u32,
    /// A sequence item (its path ends in `[n]`).
    item: bool,
    /// Set on a key whose value starts on the next line, so a compact sequence
    /// (`key:` then `- item` at the same indent) belongs to it.
    opens_block: bool,
    next_item: usize,
}

fn narrow(n: usize) -> u32 {
    u32::try_from(n).unwrap_or(u32::MAX - 1)
}

impl SpanIndex {
    /// Indexes `text`. Flow collections are indexed by the key that holds them; block
    /// scalars (`|`, `>`) are skipped so their lines are never taken for keys.
    pub fn build(text: &str) -> SpanIndex {
        let mut index = SpanIndex::default();
        // Root is a virtual frame below every real indent.
        let mut stack: Vec<Frame> =
            vec![Frame { indent: 0, node: ROOT, item: false, opens_block: true, next_item: 0 }];
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
                let item = stack[parent].next_item;
                stack[parent].next_item += 1;
                let here = Location { line, column: column + 1 };
                let node = index.insert(stack[parent].node, Segment::Item(item), here);
                stack.push(Frame { indent: column, node, item: true, opens_block: false, next_item: 0 });
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
            let here = Location { line, column: column + 1 };
            let node = index.insert(stack[parent].node, Segment::Key(key), here);
            let leading = value.len() - value.trim_start().len();
            let value_at = column + (rest.len() - value.len()) + leading + 1;
            let value = value.trim();
            let value = strip_comment(value);
            // A scalar, not a flow mapping or list (an error about one is about its key's
            // entry), a block scalar, an anchor or a tag.
            if !value.is_empty() && !value.starts_with(['|', '>', '&', '*', '!', '#', '{', '[']) {
                index.set_value_column(node, value_at);
            }
            if value.starts_with('|') || value.starts_with('>') {
                scalar_block_indent = Some(column);
            }
            stack.push(Frame {
                indent: column,
                node,
                item: false,
                opens_block: value.is_empty(),
                next_item: 0,
            });
        }
        index
    }

    fn hash(&self, parent: u32, segment: Segment<'_>) -> u64 {
        self.hasher.hash_one((parent, segment))
    }

    fn segment(&self, node: &Node) -> Segment<'_> {
        if node.key_len == ITEM {
            return Segment::Item(node.key_start as usize);
        }
        let start = node.key_start as usize;
        Segment::Key(&self.keys[start..start + node.key_len as usize])
    }

    /// The node of `segment` under `parent`, if indexed.
    fn child(&self, parent: u32, segment: Segment<'_>) -> Option<u32> {
        let mut at = *self.children.get(&self.hash(parent, segment))?;
        while at != NONE {
            let node = &self.nodes[at as usize];
            if node.parent == parent && self.segment(node) == segment {
                return Some(at);
            }
            at = node.next;
        }
        None
    }

    /// Indexes `segment` under `parent` at `here`; a key already there is moved to `here`
    /// and remembered as repeated.
    fn insert(&mut self, parent: u32, segment: Segment<'_>, here: Location) -> u32 {
        let (line, column) = (narrow(here.line), narrow(here.column));
        if let Some(existing) = self.child(parent, segment) {
            let node = &mut self.nodes[existing as usize];
            (node.line, node.column, node.value_column) = (line, column, 0);
            self.repeated.push((existing, here));
            return existing;
        }
        let (key_start, key_len) = match segment {
            Segment::Key(key) => {
                let start = narrow(self.keys.len());
                self.keys.push_str(key);
                (start, narrow(key.len()))
            }
            Segment::Item(item) => (narrow(item), ITEM),
        };
        let id = narrow(self.nodes.len());
        let hash = self.hash(parent, segment);
        let next = self.children.insert(hash, id).unwrap_or(NONE);
        self.nodes.push(Node { parent, key_start, key_len, line, column, value_column: 0, next });
        id
    }

    /// The YAML path of `node`, as [`locate`](Self::locate) takes it.
    fn path_of(&self, node: u32) -> String {
        let mut segments = Vec::new();
        let mut at = node;
        while at != ROOT {
            let n = &self.nodes[at as usize];
            segments.push(self.segment(n));
            at = n.parent;
        }
        let mut path = String::new();
        for segment in segments.iter().rev() {
            match segment {
                Segment::Key(key) => {
                    if !path.is_empty() {
                        path.push('.');
                    }
                    path.push_str(key);
                }
                Segment::Item(item) => {
                    path.push('[');
                    path.push_str(&item.to_string());
                    path.push(']');
                }
            }
        }
        path
    }

    /// The first key written twice in one mapping whose last segment is `key`, with its
    /// path and the location of its second occurrence.
    pub fn repeated_key(&self, key: &str) -> Option<(String, Location)> {
        self.repeated
            .iter()
            .find(|(node, _)| self.segment(&self.nodes[*node as usize]) == Segment::Key(key))
            .map(|(node, location)| (self.path_of(*node), *location))
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

    /// The node that the longest leading part of `path` names, and whether it names all
    /// of `path`. A key may hold dots (`a.b`), so a key step tries each dot as the key's
    /// end, within a bounded number of lookups.
    fn resolve(&self, path: &str) -> (u32, bool) {
        let mut budget = MAX_LOOKUPS;
        let (node, left) = self.resolve_from(ROOT, path, &mut budget);
        (node, left == 0)
    }

    /// The node reached from `at` along `rest`, and how many bytes of `rest` it leaves.
    fn resolve_from(&self, at: u32, rest: &str, budget: &mut usize) -> (u32, usize) {
        if rest.is_empty() {
            return (at, 0);
        }
        if let Some(after) = rest.strip_prefix('[') {
            let Some(end) = after.find(']') else { return (at, rest.len()) };
            *budget = budget.saturating_sub(1);
            return match after[..end].parse().ok().and_then(|i| self.child(at, Segment::Item(i))) {
                Some(node) => {
                    let rest = &after[end + 1..];
                    self.resolve_from(node, rest.strip_prefix('.').unwrap_or(rest), budget)
                }
                None => (at, rest.len()),
            };
        }
        let mut best = (at, rest.len());
        let ends = rest.match_indices(['.', '[']).map(|(i, _)| i).chain([rest.len()]);
        for end in ends {
            if *budget == 0 {
                break;
            }
            *budget -= 1;
            if let Some(node) = self.child(at, Segment::Key(&rest[..end])) {
                let after = &rest[end..];
                let found = self.resolve_from(node, after.strip_prefix('.').unwrap_or(after), budget);
                if found.1 == 0 {
                    return found;
                }
                if found.1 < best.1 {
                    best = found;
                }
            }
        }
        best
    }

    fn location_of(&self, node: u32) -> Option<Location> {
        let n = self.nodes.get(node as usize)?;
        Some(Location { line: n.line as usize, column: n.column as usize })
    }

    fn set_value_column(&mut self, node: u32, column: usize) {
        if let Some(n) = self.nodes.get_mut(node as usize) {
            n.value_column = narrow(column);
        }
    }

    /// The location of `path`'s value when it is a scalar on the key's own line (what an
    /// error about the value points at); else [`locate`](Self::locate)'s.
    pub fn locate_value(&self, path: &str) -> Location {
        match self.resolve(path) {
            (node, true) => match self.nodes.get(node as usize) {
                Some(n) if n.value_column > 0 => {
                    Location { line: n.line as usize, column: n.value_column as usize }
                }
                _ => self.location_of(node).unwrap_or(Location::START),
            },
            (node, false) => self.location_of(node).unwrap_or(Location::START),
        }
    }

    /// The location of `path`, or of its nearest indexed ancestor.
    pub fn locate(&self, path: &str) -> Location {
        self.location_of(self.resolve(path).0).unwrap_or(Location::START)
    }

    /// The location of `path` only if it was indexed itself.
    pub fn get(&self, path: &str) -> Option<Location> {
        match self.resolve(path) {
            (node, true) => self.location_of(node),
            _ => None,
        }
    }
}

/// Splits `key: value` (or `key:`) where the key is a plain or quoted scalar.
pub(crate) fn split_key(text: &str) -> Option<(&str, &str)> {
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
    fn keys_with_dots_and_repeated_keys_are_found() {
        let index = SpanIndex::build("a:\n  b.c:\n    d: 1\n  b: 2\n  b: 3\n");
        assert_eq!(at(&index, "a.b.c.d"), (3, 5));
        assert_eq!(at(&index, "a.b"), (5, 3));
        let (path, l) = index.repeated_key("b").unwrap_or_else(|| panic!("b is repeated"));
        assert_eq!((path.as_str(), l.line, l.column), ("a.b", 5, 3));
        assert!(index.get("a.b.c.e").is_none());
        assert_eq!(index.locate("a.b.c.e"), Location { line: 2, column: 3 });
    }

    #[test]
    fn falls_back_to_the_nearest_ancestor() {
        let index = SpanIndex::build(TEXT);
        let l = index.locate("operations.bank_transfer.params.quoted.in");
        assert_eq!((l.line, l.column), (14, 7));
        assert_eq!(index.locate("nowhere.at.all"), Location::START);
    }
}
