//! Diagnostics: each error located (file, line, column) with its fix, the list a load
//! returns, and the [`Sink`] the loader's passes report into (bounded in count and in the
//! work its "did you mean" hints may take).

use super::span::{Location, SpanIndex};
use std::fmt;

/// One error in a spec file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Diagnostic {
    /// The file, as the caller named it.
    pub file: String,
    /// Where in the file.
    pub location: Location,
    /// The YAML path of the offending key (`operations.bank_transfer.params.amount`).
    pub path: String,
    /// What is wrong.
    pub message: String,
    /// What to write instead.
    pub hint: String,
}

impl Diagnostic {
    /// The error on one line, without the word `error` (for tools that add their own, as
    /// cargo and the compiler do): `file:line:col: path: message (help: hint)`.
    pub fn one_line(&self) -> String {
        let mut line = format!("{}:{}:{}: ", self.file, self.location.line, self.location.column);
        if !self.path.is_empty() {
            line.push_str(&self.path);
            line.push_str(": ");
        }
        line.push_str(&self.message);
        if !self.hint.is_empty() {
            line.push_str(" (help: ");
            line.push_str(&self.hint);
            line.push(')');
        }
        line
    }
}

impl fmt::Display for Diagnostic {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}:{}:{}: error: ", self.file, self.location.line, self.location.column)?;
        if !self.path.is_empty() {
            write!(f, "{}: ", self.path)?;
        }
        write!(f, "{}", self.message)?;
        if !self.hint.is_empty() {
            write!(f, "\n  = help: {}", self.hint)?;
        }
        Ok(())
    }
}

/// The most errors reported for one spec; the others are counted.
pub const MAX_ERRORS: usize = 50;

/// Every error found in a spec file, in file order: the first [`MAX_ERRORS`] found, and a
/// count of the others.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Diagnostics {
    pub(super) errors: Vec<Diagnostic>,
    omitted: usize,
}

impl Diagnostics {
    pub(super) fn one(diagnostic: Diagnostic) -> Self {
        Diagnostics { errors: vec![diagnostic], omitted: 0 }
    }

    /// The errors reported, in file order.
    pub fn iter(&self) -> std::slice::Iter<'_, Diagnostic> {
        self.errors.iter()
    }

    /// The first error in file order.
    pub fn first(&self) -> Option<&Diagnostic> {
        self.errors.first()
    }

    /// How many errors are reported.
    pub fn len(&self) -> usize {
        self.errors.len()
    }

    /// How many more errors were found past [`MAX_ERRORS`] and only counted.
    pub fn omitted(&self) -> usize {
        self.omitted
    }

    /// Whether there are none (a value of this type always has at least one).
    pub fn is_empty(&self) -> bool {
        self.errors.is_empty()
    }
}

impl fmt::Display for Diagnostics {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for (i, diagnostic) in self.errors.iter().enumerate() {
            if i > 0 {
                writeln!(f)?;
            }
            write!(f, "{diagnostic}")?;
        }
        if self.omitted > 0 {
            write!(
                f,
                "\n... and {} more errors in the spec ({} in all; mend these first)",
                self.omitted,
                self.errors.len() + self.omitted
            )?;
        } else if self.errors.len() > 1 {
            write!(f, "\n{} errors in the spec", self.errors.len())?;
        }
        Ok(())
    }
}

impl std::error::Error for Diagnostics {}

/// Collects diagnostics with their locations.
pub(crate) struct Sink<'a> {
    file: &'a str,
    spans: &'a SpanIndex,
    pub(super) found: Vec<Diagnostic>,
    /// Errors past [`MAX_ERRORS`], counted only.
    omitted: usize,
    /// How many more string comparisons "did you mean" may make for this spec.
    suggestion_budget: usize,
}

/// The string comparisons all "did you mean" hints of one spec may make together.
const SUGGESTION_BUDGET: usize = 200_000;

impl<'a> Sink<'a> {
    pub(crate) fn new(file: &'a str, spans: &'a SpanIndex) -> Self {
        Sink { file, spans, found: Vec::new(), omitted: 0, suggestion_budget: SUGGESTION_BUDGET }
    }

    /// Records an error about the value at `path`: located at the value when it sits on
    /// its key's line (`type: decimel` points at `decimel`), else at the key.
    pub(crate) fn error(&mut self, path: &str, message: impl Into<String>, hint: impl Into<String>) {
        let location = self.spans.locate_value(path);
        self.error_at(location, path, message, hint);
    }

    /// Records an error about the key at `path` itself (one not allowed there): located at
    /// the key.
    pub(crate) fn error_at_key(&mut self, path: &str, message: impl Into<String>, hint: impl Into<String>) {
        let location = self.spans.locate(path);
        self.error_at(location, path, message, hint);
    }

    /// Records an error at a known place.
    pub(crate) fn error_at(
        &mut self,
        location: Location,
        path: &str,
        message: impl Into<String>,
        hint: impl Into<String>,
    ) {
        if self.found.len() >= MAX_ERRORS {
            self.omitted += 1;
            return;
        }
        self.found.push(Diagnostic {
            file: self.file.to_owned(),
            location,
            path: path.to_owned(),
            message: message.into(),
            hint: hint.into(),
        });
    }

    /// The candidate closest to `word`, if one is close enough to be a likely typo. Free
    /// until the spec has used up its budget of comparisons, or has so many errors that
    /// this one will not be shown.
    pub(crate) fn suggest<'c>(&mut self, word: &str, candidates: &[&'c str]) -> Option<&'c str> {
        if self.found.len() >= MAX_ERRORS || candidates.len() > self.suggestion_budget {
            return None;
        }
        self.suggestion_budget -= candidates.len();
        closest(word, candidates)
    }

    /// The location of a YAML path.
    pub(crate) fn locate(&self, path: &str) -> Location {
        self.spans.locate(path)
    }

    pub(crate) fn finish(mut self) -> Diagnostics {
        self.found.sort_by(|a, b| a.location.cmp(&b.location).then_with(|| a.message.cmp(&b.message)));
        self.found.dedup();
        Diagnostics { errors: self.found, omitted: self.omitted }
    }

    pub(super) fn yaml_syntax(&mut self, error: &serde_yaml::Error) {
        let text = error.to_string();
        // For an unterminated scalar libyaml says where it began ("while scanning a quoted
        // scalar at line 26 column 14"): that is where the writer must look, not the end of
        // the file. For other errors the point of failure is the better place.
        let mut location = error.location().map(|l| Location { line: l.line(), column: l.column() });
        if let Some(start) = text.find("while scanning").and_then(|i| first_line_column(&text[i..])) {
            location = Some(start);
        }
        let mut message = format!("invalid YAML: {}", strip_positions(&text));
        let mut path = String::new();
        let hint = if message.contains("duplicate entry") {
            let key = message.split('"').nth(1).unwrap_or_default().to_owned();
            if let Some((repeated, at)) = self.spans.repeated_key(&key) {
                path = repeated;
                location = Some(at);
            }
            // Said once, at the second entry's place (the path names it), not again in
            // the parser's words.
            message = format!("`{key}` appears twice in this mapping");
            if path.starts_with("operations.") && path.matches('.').count() == 1 {
                "each operation has one name: rename one of the two, or merge them"
            } else {
                "each key appears once in a mapping: remove or merge one of the two entries"
            }
        } else {
            "the spec is block-style YAML indented with spaces; check the indentation and quoting near this place"
        };
        self.found.push(Diagnostic {
            file: self.file.to_owned(),
            location: location.unwrap_or(Location::START),
            path,
            message,
            hint: hint.into(),
        });
    }

    /// Deserializes `value` (found at YAML `base`), recording every error it holds, at most
    /// one per entry: after each error, the entry that holds it (the key itself when it is
    /// unknown, else the item two levels down, such as one parameter) is taken out and the
    /// rest read again, so one mistake hides no other. `None` when there was an error.
    pub(super) fn deserialize<T: serde::de::DeserializeOwned>(
        &mut self,
        mut value: serde_yaml::Value,
        base: &str,
    ) -> Option<T> {
        // Most values are right: read them without tracking where the reader is, and track
        // only to report what is wrong.
        if let Ok(parsed) = <T as serde::Deserialize>::deserialize(&value) {
            return Some(parsed);
        }
        let mut removed: Vec<Vec<Step>> = Vec::new();
        // Unknown keys reported, by the mapping that holds them.
        let mut unknown: Vec<(Vec<Step>, String)> = Vec::new();
        for _ in 0..MAX_ERRORS {
            let error = match serde_path_to_error::deserialize::<_, T>(&value) {
                Ok(parsed) if removed.is_empty() => return Some(parsed),
                Ok(_) => return None,
                Err(error) => error,
            };
            let mut steps: Vec<Step> = error
                .path()
                .iter()
                .filter_map(|segment| match segment {
                    serde_path_to_error::Segment::Map { key } => Some(Step::Key(key.clone())),
                    serde_path_to_error::Segment::Seq { index } => Some(Step::Index(*index)),
                    _ => None,
                })
                .collect();
            let raw_message = error.inner().to_string();
            if let Some(field) = raw_message.strip_prefix("missing field ") {
                // A key taken out above, now missing: already reported.
                let field = field.trim_matches('`');
                let mut was = steps.clone();
                was.push(Step::Key(field.to_owned()));
                // ...or the key a reported unknown key misspelt: one mistake, one error.
                let misspelt =
                    unknown.iter().any(|(at, key)| *at == steps && closest(key, &[field]).is_some());
                if removed.contains(&was) || misspelt {
                    return None;
                }
            }
            let inner = error.path().to_string();
            let mut path = join_path(base, if inner == "." { "" } else { &inner });
            let (message, hint) = explain_serde_error(self, &raw_message, &mut path);
            if raw_message.starts_with("unknown field ") {
                self.error_at_key(&path, message, hint);
            } else {
                self.error(&path, message, hint);
            }
            if raw_message.starts_with("unknown field ") {
                let key = raw_message.split('`').nth(1).unwrap_or_default().to_owned();
                if steps.last() == Some(&Step::Key(key.clone())) {
                    steps.pop();
                }
                unknown.push((steps.clone(), key.clone()));
                steps.push(Step::Key(key));
            } else if raw_message.starts_with("missing field ") {
                return None;
            } else {
                steps.truncate(2);
            }
            if steps.is_empty() || !remove_at(&mut value, &steps) {
                return None;
            }
            removed.push(steps);
        }
        None
    }
}

/// One step down a YAML value.
#[derive(Clone, Debug, PartialEq, Eq)]
enum Step {
    Key(String),
    Index(usize),
}

/// Takes out the entry at `steps`; false when there is none.
fn remove_at(value: &mut serde_yaml::Value, steps: &[Step]) -> bool {
    let Some((last, parents)) = steps.split_last() else { return false };
    let mut current = value;
    for step in parents {
        let next = match (step, current) {
            (Step::Key(key), serde_yaml::Value::Mapping(map)) => map.get_mut(key.as_str()),
            (Step::Index(i), serde_yaml::Value::Sequence(items)) => items.get_mut(*i),
            _ => None,
        };
        let Some(next) = next else { return false };
        current = next;
    }
    match (last, current) {
        (Step::Key(key), serde_yaml::Value::Mapping(map)) => map.remove(key.as_str()).is_some(),
        (Step::Index(i), serde_yaml::Value::Sequence(items)) if *i < items.len() => {
            items.remove(*i);
            true
        }
        _ => false,
    }
}

/// The first `line N column M` in `text`.
fn first_line_column(text: &str) -> Option<Location> {
    let rest = &text[text.find("line ")? + 5..];
    let (line, rest) = rest.split_once(' ')?;
    let column = rest.strip_prefix("column ")?;
    let column: String = column.chars().take_while(char::is_ascii_digit).collect();
    Some(Location { line: line.parse().ok()?, column: column.parse().ok()? })
}

/// `text` without its ` at line N column M` parts (the location is printed in front).
fn strip_positions(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(at) = rest.find(" at line ") {
        out.push_str(&rest[..at]);
        let tail = &rest[at + " at line ".len()..];
        let digits = |t: &str| t.len() - t.trim_start_matches(|c: char| c.is_ascii_digit()).len();
        let after_line = &tail[digits(tail)..];
        rest = match after_line.strip_prefix(" column ") {
            Some(column) => &column[digits(column)..],
            None => after_line,
        };
    }
    out.push_str(rest);
    out.trim_end().to_owned()
}

fn join_path(base: &str, inner: &str) -> String {
    match (base.is_empty(), inner.is_empty()) {
        (true, _) => inner.to_owned(),
        (false, true) => base.to_owned(),
        (false, false) if inner.starts_with('[') => format!("{base}{inner}"),
        (false, false) => format!("{base}.{inner}"),
    }
}

/// Turns serde's wording into a message and a hint; for unknown fields, points `path` at
/// the offending key itself.
fn explain_serde_error(sink: &mut Sink<'_>, message: &str, path: &mut String) -> (String, String) {
    let quoted: Vec<&str> = message.split('`').skip(1).step_by(2).collect();
    if let Some(rest) = message.strip_prefix("unknown field ") {
        let key = quoted.first().copied().unwrap_or_default();
        let expected: Vec<&str> = quoted.iter().skip(1).copied().collect();
        // serde_path_to_error already ends the path with the key (which may hold dots);
        // append it only if not.
        if *path != key && !path.ends_with(&format!(".{key}")) {
            *path = join_path(path, key);
        }
        // Words with a space are no key anyone meant: a comma inside an unquoted value of a
        // one-line mapping ended the value there, and the rest became a key.
        if key.contains(' ') {
            let hint =
                "a comma inside an unquoted value of a one-line mapping `{ .. }` ends the value there: \
                        quote the value (`doc: 'one, two'`)"
                    .to_owned();
            return (format!("unknown key `{key}`"), hint);
        }
        let hint = match sink.suggest(key, &expected) {
            Some(best) => {
                format!("did you mean `{best}`? the keys allowed here are: {}", expected.join(", "))
            }
            None if expected.is_empty() => "remove it: this mapping takes no keys".into(),
            None => format!("remove it; the keys allowed here are: {}", expected.join(", ")),
        };
        let _ = rest;
        return (format!("unknown key `{key}`"), hint);
    }
    if message.starts_with("unknown variant ") {
        let value = quoted.first().copied().unwrap_or_default();
        let expected: Vec<&str> = quoted.iter().skip(1).copied().collect();
        let hint = match sink.suggest(value, &expected) {
            Some(best) => format!("did you mean `{best}`? write one of: {}", expected.join(", ")),
            None => format!("write one of: {}", expected.join(", ")),
        };
        return (format!("`{value}` is not allowed here"), hint);
    }
    if let Some(field) = message.strip_prefix("missing field ") {
        let field = field.trim_matches('`');
        return (format!("missing key `{field}`"), format!("add `{field}:` to this mapping"));
    }
    // YAML reads an unquoted `true`, `false`, `null` or `~` as no word at all.
    if let Some(rest) = message.strip_prefix("invalid type: ")
        && rest.contains("expected a string")
    {
        let word = if rest.starts_with("boolean") {
            quoted.first().copied()
        } else if rest.starts_with("unit value") {
            Some("null")
        } else {
            None
        };
        if let Some(word) = word {
            return (
                format!(
                    "YAML reads the unquoted `{word}` here as {}, not as a name",
                    if word == "null" { "nothing" } else { "a boolean" }
                ),
                format!("quote it to mean the word (`\"{word}\"`), or choose another name"),
            );
        }
    }
    if message.starts_with("invalid type") {
        return (
            message.to_owned(),
            "check the value's form: a mapping, a list or a plain value as FORMAT.md shows".into(),
        );
    }
    (message.to_owned(), "see spec/FORMAT.md for the form of this key".into())
}

/// The candidate closest to `word`, if any is close enough to be a likely typo: alike by
/// Jaro–Winkler, and few edits apart (two at most, or under half its length), or `word` a
/// start of it; a shared prefix alone (`request_body`, `request_id_header`) suggests nothing.
fn closest<'a>(word: &str, candidates: &[&'a str]) -> Option<&'a str> {
    let few_edits = |c: &str| {
        let longer = word.chars().count().max(c.chars().count()) as f64;
        let edits = ((1.0 - crate::similar::normalized_levenshtein(word, c)) * longer).round();
        edits <= 2.0 || edits / longer <= 0.45
    };
    candidates
        .iter()
        .map(|c| (crate::similar::jaro_winkler(word, c), *c))
        .filter(|(score, c)| *score > 0.8 && (few_edits(c) || c.starts_with(word)))
        .max_by(|a, b| a.0.total_cmp(&b.0))
        .map(|(_, c)| c)
}

#[cfg(test)]
mod tests {
    use super::closest;

    #[test]
    fn a_suggestion_is_a_likely_typo_not_a_shared_prefix() {
        assert_eq!(closest("amout", &["amount", "account"]), Some("amount"));
        assert_eq!(closest("refresh_tokn", &["refresh_token", "revoke_token"]), Some("refresh_token"));
        assert_eq!(closest("TokenGrnt", &["TokenGrant"]), Some("TokenGrant"));
        assert_eq!(closest("wrie", &["wire", "doc"]), Some("wire"));
        // A start of the name is an abbreviation of it.
        assert_eq!(closest("refresh", &["refresh_token"]), Some("refresh_token"));
        // Alike in their first word alone: another key, not a typo of it.
        assert_eq!(closest("request_body", &["request_id_header", "rate_limit"]), None);
    }
}
