//! What the `payspec` command prints, kept in the library so tests can check it.

use crate::audit::{Finding, KINDS};
use crate::model::{Effect, FactSource, Operation, ReadingSource, Spec};
use serde_json::{Value, json};
use std::fmt::Write as _;

/// The one-line summary of `payspec check`.
pub fn summary(spec: &Spec) -> String {
    // Each recorded disagreement with the service's evidence, each other spelling of a path
    // the service answers, each rule it follows and each other way it takes an operation
    // authenticated.
    let facts = |source: FactSource| {
        spec.operations.iter().flat_map(|op| &op.disagreements).filter(|d| d.source == source).count()
            + spec.also_paths.iter().filter(|a| a.source == source).count()
            + spec.also_takes.iter().filter(|t| t.source == source).count()
            + spec.operations.iter().flat_map(|op| &op.also_auth).filter(|a| a.source == source).count()
    };
    let readings = spec.readings();
    let cited = |source: ReadingSource| {
        readings.iter().filter(|(_, e)| e.is_some_and(|e| e.source == source)).count()
    };
    format!(
        "{}: ok: {} operations, {} routes ({} alternative forms), {} parameters, {} groups, {} of {} answers typed ({} shapes), {} of {} money operations settle ({} cannot, and say why), {} facts of the live service ({} from developer guides, {} observed), {} of {} readings of the service cited ({} reference, {} developer guides, {} observed, {} inferred)",
        spec.source,
        spec.operations.len(),
        spec.routes().count(),
        spec.routes().filter(|r| r.alias.is_some()).count(),
        spec.parameter_count(),
        spec.groups.len(),
        spec.typed_answers(),
        spec.operations.len(),
        spec.shapes.len(),
        spec.operations.iter().filter(|op| op.settle.is_some()).count(),
        spec.operations.iter().filter(|op| op.effect == Effect::Money).count(),
        spec.operations.iter().filter(|op| op.unsettled.is_some()).count(),
        facts(FactSource::DeveloperDocs) + facts(FactSource::Observed),
        facts(FactSource::DeveloperDocs),
        facts(FactSource::Observed),
        readings.iter().filter(|(_, e)| e.is_some()).count(),
        readings.len(),
        cited(ReadingSource::Reference),
        cited(ReadingSource::DeveloperDocs),
        cited(ReadingSource::Observed),
        cited(ReadingSource::Inference),
    )
}

/// One JSON object describing an operation, as `payspec routes --json` prints it.
pub fn operation_json(op: &Operation) -> Value {
    json!({
        "operation": op.name,
        "group": op.group,
        "summary": op.summary,
        "origin": op.origin.as_str(),
        "also_listed_as": op.also_listed_as.iter().map(|l| json!({
            "group": l.group, "name": l.name, "note": l.note,
        })).collect::<Vec<_>>(),
        "method": op.method.as_str(),
        "path": op.path.as_str(),
        "aliases": op.aliases.iter().map(|a| json!({
            "method": a.method.as_str(), "path": a.path.as_str(), "note": a.note,
            "same_route_as": a.same_route_as,
        })).collect::<Vec<_>>(),
        "params": op.params.iter().map(|p| json!({
            "name": p.name, "in": p.location.as_str(), "wire": p.wire, "type": p.ty.name(),
            "required": p.required, "origin": p.origin.as_str(), "secret": p.secret,
            "fixed": p.fixed, "values": p.values, "document_requires": p.document_requires,
            "also_layouts": p.also_layouts.iter().map(|l| l.pattern()).collect::<Vec<_>>(),
        })).collect::<Vec<_>>(),
        "one_of": op.one_of.iter().map(|set| json!({"name": set.name, "params": set.params})).collect::<Vec<_>>(),
        "auth": op.auth.as_str(),
        "effect": op.effect.as_str(),
        "idempotency": op.idempotency,
        "pagination": op.pagination.as_ref().map(|p| p.as_str()),
        "response": op.response.as_ref().map_or_else(
            || "untyped".to_owned(),
            |a| if a.list { format!("[{}]", a.ty.name()) } else { a.ty.name().to_owned() }
        ),
        "envelope": op.answers.envelope_word(),
        "disagreements": op.disagreements.iter().map(|d| json!({
            "concerns": d.concerns.as_str(), "params": d.params, "keys": d.keys,
            "fields": d.fields, "routes": d.routes, "text": d.text,
        })).collect::<Vec<_>>(),
    })
}

/// A readable table of every route, as `payspec routes` prints it.
pub fn routes_table(spec: &Spec) -> String {
    let mut out = String::new();
    for group in &spec.groups {
        let _ = writeln!(out, "{} ({})", group.title, group.key);
        for op in spec.operations.iter().filter(|op| op.group == group.key) {
            let _ = writeln!(out, "  {:<7}{:<58}{}", op.method.as_str(), op.path.as_str(), op.name);
            for alias in &op.aliases {
                let _ = writeln!(out, "    also {:<7}{}", alias.method.as_str(), alias.path.as_str());
            }
        }
    }
    out
}

/// The readable report of `payspec audit`, grouped by kind of finding.
pub fn audit_text(findings: &[Finding]) -> String {
    let mut out = String::new();
    for (kind, title) in KINDS {
        let of_kind: Vec<&Finding> = findings.iter().filter(|f| f.kind() == kind).collect();
        let _ = writeln!(out, "{title}: {}", of_kind.len());
        for finding in of_kind {
            let _ = writeln!(out, "  - {}", finding.describe());
        }
        out.push('\n');
    }
    out
}
