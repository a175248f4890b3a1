//! What the spec's readings of the service and its facts rest on: a reading's evidence
//! (a guide or a capture names where it is shown; an inference says what it is inferred
//! from), a fact's source, and who brought an operation or a parameter into the spec.
//! Every section that records one reads it here.

use super::super::diagnostics::Sink;
use super::super::raw::Word;
use crate::model::{Evidence, FactSource, ReadingSource};

/// The evidence of a reading of the service: a guide or a capture needs `seen_in`, an
/// inference a note that says what it is inferred from, and `seen_in` needs a source.
pub(super) fn evidence(
    source: Option<Word<ReadingSource>>,
    seen_in: Option<&str>,
    has_note: bool,
    at: &str,
    sink: &mut Sink,
) -> Option<Evidence> {
    let seen_in = seen_in.map(str::trim).filter(|s| !s.is_empty()).map(str::to_owned);
    let Some(source) = source else {
        if seen_in.is_some() {
            sink.error(
                &format!("{at}.seen_in"),
                "`seen_in` names the evidence of a source, and no `source` is given",
                "add `source: developer_docs`, `observed`, `reference` or `inference`",
            );
        }
        return None;
    };
    let Word(source) = source;
    if matches!(source, ReadingSource::DeveloperDocs | ReadingSource::Observed) && seen_in.is_none() {
        sink.error(
            &format!("{at}.source"),
            format!("a reading from `{}` needs `seen_in`", source.as_str()),
            "name the guide, or where the traffic was published, in `seen_in`",
        );
    }
    if source == ReadingSource::Inference && !has_note {
        sink.error(
            &format!("{at}.source"),
            "an inference needs a `note` that says what it is inferred from",
            "add a `note`, or name the source that shows it",
        );
    }
    Some(Evidence { source, seen_in })
}

/// The source and place of a fact about the live service beyond its document (another
/// spelling of a path, a rule it follows, another way it takes an operation): a developer
/// guide or published traffic, and where it is shown. `None`, with the error at
/// `{at}.source` saying `what` is such a fact, when either is missing.
pub(super) fn service_fact(
    source: Word<FactSource>,
    seen_in: Option<&str>,
    at: &str,
    what: &str,
    sink: &mut Sink,
) -> Option<(FactSource, String)> {
    let source = Some(source.0).filter(|s| s.is_service());
    let seen_in = seen_in.map(str::trim).filter(|s| !s.is_empty());
    match (source, seen_in) {
        (Some(source), Some(seen_in)) => Some((source, seen_in.to_owned())),
        _ => {
            sink.error(
                &format!("{at}.source"),
                format!("{what} is a fact about the live service"),
                "add `source: developer_docs` or `observed`, and `seen_in` naming the guide, the published traffic or the published code",
            );
            None
        }
    }
}

/// A fact's note, trimmed; `None`, with the error at `{at}.note` and `fix`, when empty.
pub(super) fn fact_note(note: &str, at: &str, fix: &str, sink: &mut Sink) -> Option<String> {
    let note = note.trim();
    if note.is_empty() {
        sink.error(&format!("{at}.note"), "the note is empty", fix);
        return None;
    }
    Some(note.to_owned())
}
