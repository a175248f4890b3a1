//! An operation's `disagreements`: where the interface, the spec and the vendor's document
//! disagree about it, each with what it concerns and its source; and the service facts a
//! parameter's `also_layouts` or `document_requires` must be backed by.

use super::super::diagnostics::Sink;
use super::super::raw::RawDisagreementEntry;
use crate::model::{Concern, Disagreement, Method, Param};

/// What a parameter says the live service does beyond its document (`also_layouts`,
/// `document_requires`) rests on a recorded disagreement that names it and cites a guide
/// or published traffic.
pub(super) fn check_service_evidence(params: &[Param], found: &[Disagreement], base: &str, sink: &mut Sink) {
    for param in params {
        let claims = [
            ("also_layouts", !param.also_layouts.is_empty()),
            ("document_requires", param.document_requires),
        ];
        for (key, _) in claims.into_iter().filter(|(_, claimed)| *claimed) {
            let cited = found.iter().any(|d| {
                d.source.is_service()
                    && d.params.contains(&param.name)
                    && matches!(d.concerns, Concern::Service | Concern::Required)
            });
            if !cited {
                let at = format!("{base}.params.{}.{key}", param.name);
                sink.error(
                    &at,
                    format!("`{key}` on `{}` is a fact about the live service, and no disagreement cites it", param.name),
                    format!(
                        "add a disagreement with `concerns: {}`, `param: {}`, `source: developer_docs` or `observed`, and `seen_in` naming the guide or the published traffic",
                        if key == "document_requires" { "required" } else { "service" },
                        param.name
                    ),
                );
            }
        }
    }
}

/// Structured disagreements: a known concern, subjects that fit it, parameters that exist,
/// routes written `METHOD /path`, and a text for readers.
pub(super) fn disagreements(
    raw: Vec<RawDisagreementEntry>,
    params: &[Param],
    base: &str,
    sink: &mut Sink,
) -> Vec<Disagreement> {
    let names: Vec<&str> = params.iter().map(|p| p.name.as_str()).collect();
    let known = || Concern::ALL.iter().map(|(name, _)| *name).collect::<Vec<_>>().join(", ");
    raw.into_iter()
        .enumerate()
        .filter_map(|(i, raw)| {
            let at = format!("{base}.disagreements[{i}]");
            let raw = match raw {
                RawDisagreementEntry::Structured(raw) => raw,
                RawDisagreementEntry::Text(text) => {
                    let start: String = text.chars().take(40).collect();
                    sink.error(
                        &at,
                        format!("a disagreement is a mapping with `concerns` and `text`, not a bare line (\"{start}…\")"),
                        format!(
                            "write `concerns: <{}>`, what it names (`param`, `key`, `field` or `route`) and `text: <the line>`",
                            Concern::ALL.map(|(name, _)| name).join(" | ")
                        ),
                    );
                    return None;
                }
            };
            let concerns = match Concern::ALL.iter().find(|(name, _)| *name == raw.concerns) {
                Some((_, concern)) => Some(*concern),
                None => {
                    sink.error(
                        &format!("{at}.concerns"),
                        format!("unknown concern `{}`", raw.concerns),
                        format!("write one of {}", known()),
                    );
                    None
                }
            };
            if raw.text.trim().is_empty() {
                sink.error(&format!("{at}.text"), "a disagreement needs a text", "say what differs, and what the spec does about it");
            }
            let disagreement = Disagreement {
                concerns: concerns.unwrap_or(Concern::Note),
                params: raw.param.into_vec(),
                keys: raw.key.into_vec(),
                fields: raw.field.into_vec(),
                routes: raw.route.into_vec(),
                source: raw.source.0,
                seen_in: raw.seen_in.as_deref().map(str::trim).filter(|s| !s.is_empty()).map(str::to_owned),
                text: raw.text.trim().to_owned(),
                location: sink.locate(&at),
            };
            match (disagreement.source.is_service(), &disagreement.seen_in) {
                (true, None) => sink.error(
                    &format!("{at}.seen_in"),
                    format!("a fact from `{}` needs `seen_in`", disagreement.source.as_str()),
                    "name the guide (`\"Transfer to banks\" guide`) or where the traffic was published",
                ),
                (false, Some(_)) => sink.error(
                    &format!("{at}.seen_in"),
                    "`seen_in` names the evidence of a fact about the live service",
                    "add `source: developer_docs` or `source: observed`, or remove `seen_in`",
                ),
                _ => {}
            }
            if concerns == Some(Concern::Service) && !disagreement.source.is_service() {
                sink.error(
                    &format!("{at}.source"),
                    "a `service` fact rests on the developer guides or on observed traffic",
                    "add `source: developer_docs` (with the guide in `seen_in`) or `source: observed`",
                );
            }
            for name in &disagreement.params {
                if !names.contains(&name.as_str()) {
                    let hint = match sink.suggest(name, &names) {
                        Some(close) => format!("did you mean `{close}`? Name a parameter of this operation, or use `key` for a wire key the spec does not send"),
                        None => "name a parameter of this operation, or use `key` for a wire key the spec does not send".to_owned(),
                    };
                    sink.error(&format!("{at}.param"), format!("no parameter `{name}` in this operation"), hint);
                }
            }
            for route in &disagreement.routes {
                let well_formed = route
                    .split_once(' ')
                    .is_some_and(|(method, path)| Method::parse(method).is_some() && path.starts_with('/'));
                if !well_formed {
                    sink.error(&format!("{at}.route"), format!("`{route}` is not a route"), "write `METHOD /path`, e.g. `POST /v1/transfers/bank`");
                }
            }
            let subjects = |d: &Disagreement| (!d.routes.is_empty(), !d.params.is_empty() || !d.keys.is_empty(), !d.fields.is_empty());
            let (routes, keys, fields) = subjects(&disagreement);
            let misfit = match disagreement.concerns {
                Concern::Route => (keys || fields).then_some("a route disagreement names routes only (`route`)"),
                Concern::Location | Concern::WireKey | Concern::Type | Concern::Required => {
                    if routes || fields {
                        Some("a parameter disagreement names parameters (`param`) or wire keys (`key`) only")
                    } else if !keys {
                        Some("name the parameter it concerns with `param`, or the wire key the spec does not send with `key`")
                    } else {
                        None
                    }
                }
                Concern::AnswerField => (!fields || routes || keys).then_some("an answer disagreement names the answer fields it concerns with `field` (wire paths inside the data, `results[].id`)"),
                Concern::Auth => (routes || keys || fields).then_some("an auth disagreement names nothing; it concerns the operation's token and accountId header"),
                Concern::Note => (routes || keys || fields).then_some("a note names nothing a tool matches; give it a concern to name parameters, fields or routes"),
                Concern::Service => (routes || !(keys || fields)).then_some("a service fact names the parameters (`param`), wire keys (`key`) or answer fields (`field`) it concerns"),
            };
            if let (Some(hint), Some(concerns)) = (misfit, concerns) {
                sink.error(&format!("{at}.concerns"), format!("the subjects do not fit `concerns: {}`", concerns.as_str()), hint);
            }
            Some(disagreement)
        })
        .collect()
}
