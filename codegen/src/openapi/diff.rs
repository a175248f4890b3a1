//! Compares the spec with an OpenAPI document, and says which differences the spec's
//! recorded disagreements account for.
//!
//! Both sides are brought to one flat view first: routes by method and shape, parameters
//! by location and wire key, answer fields by wire path. The spec's view comes from its
//! model; the document's from [`read_document`](super::read_document).

use super::difference::{DiffReport, Difference, DifferenceKind, Stale};
use super::document::{ApiDocument, ApiField, ApiOperation, ApiParam, WireType};
use super::read::MAX_SCHEMA_DEPTH;
use crate::model::{
    AnswerType, Auth, Concern, EnvelopeKind, Method, Operation, Param, ParamLocation, PathTemplate, Spec,
    Type,
};
use std::collections::{BTreeMap, HashMap, HashSet};

/// A spec route: the canonical form or an alias.
struct SpecRoute<'a> {
    op: &'a Operation,
    method: Method,
    path: &'a str,
    /// An alias declared identical to another operation's route: that operation answers it.
    shared: bool,
}

/// Compares `spec` with `document`.
pub fn diff(spec: &Spec, document: &ApiDocument) -> DiffReport {
    let mut found: Vec<Difference> = Vec::new();
    let mut push = |op: Option<&Operation>,
                    method: Method,
                    path: &str,
                    kind,
                    subject: String,
                    s: Option<String>,
                    d: Option<String>| {
        found.push(Difference {
            status: "new",
            operation: op.map(|op| op.name.clone()),
            method,
            path: path.to_owned(),
            kind,
            subject,
            spec: s,
            document: d,
        });
    };

    let mut by_route: HashMap<(Method, String), Vec<usize>> = HashMap::new();
    let mut by_shape: HashMap<String, Vec<usize>> = HashMap::new();
    for (i, op) in document.operations.iter().enumerate() {
        let shape = PathTemplate::shape_of(&op.path);
        by_route.entry((op.method, shape.clone())).or_default().push(i);
        by_shape.entry(shape).or_default().push(i);
    }
    let mut matched = vec![false; document.operations.len()];
    // Each spec operation and the document operations its routes met.
    let mut pairs: Vec<(&Operation, Vec<usize>)> = Vec::with_capacity(spec.operations.len());

    let routes: Vec<SpecRoute> = spec
        .routes()
        .map(|r| SpecRoute {
            op: r.operation,
            method: r.method,
            path: r.path.as_str(),
            shared: r.alias.is_some_and(|a| a.same_route_as.is_some()),
        })
        .collect();
    let mut unmatched_routes = Vec::new();
    for route in &routes {
        let shape = PathTemplate::shape_of(route.path);
        let candidates = by_route.get(&(route.method, shape)).map(Vec::as_slice).unwrap_or(&[]);
        // The document's own alias marks (payspec's export) name the operation they belong to.
        let pick = candidates
            .iter()
            .copied()
            .find(|&i| document.operations[i].path == route.path)
            .or_else(|| candidates.first().copied());
        let Some(i) = pick else {
            if !route.shared {
                unmatched_routes.push(route);
            }
            continue;
        };
        for &same in candidates {
            matched[same] = true;
        }
        if route.shared {
            continue;
        }
        let doc_op = &document.operations[i];
        if doc_op.path != route.path {
            route_difference(
                &mut push,
                route,
                DifferenceKind::Path,
                route.path.to_owned(),
                Some(doc_op.path.clone()),
            );
        }
        add_pair(&mut pairs, route.op, i);
    }
    // A spec route the document has under another method.
    for route in unmatched_routes {
        let shape = PathTemplate::shape_of(route.path);
        let other = by_shape.get(&shape).and_then(|list| {
            list.iter().copied().find(|&i| !matched[i] && document.operations[i].path == route.path)
        });
        match other {
            Some(i) => {
                matched[i] = true;
                let doc_op = &document.operations[i];
                let (ours, theirs) = (route.method.to_string(), Some(doc_op.method.to_string()));
                route_difference(&mut push, route, DifferenceKind::Method, ours, theirs);
                add_pair(&mut pairs, route.op, i);
            }
            None => {
                let ours = format!("{} {}", route.method, route.path);
                route_difference(&mut push, route, DifferenceKind::Operation, ours, None);
            }
        }
    }
    for (i, op) in document.operations.iter().enumerate() {
        if !matched[i] {
            push(
                None,
                op.method,
                &op.path,
                DifferenceKind::Operation,
                format!("{} {}", op.method, op.path),
                None,
                Some(op.operation_id.clone().unwrap_or_else(|| format!("{} {}", op.method, op.path))),
            );
        }
    }

    for (op, docs) in &pairs {
        let spec_params = spec_params(op);
        let spec_answer = spec_answer(spec, op);
        for &i in docs {
            let doc_op = &document.operations[i];
            compare_params(op, &spec_params, doc_op, &mut push);
            if let Some(spec_answer) = &spec_answer {
                compare_answers(op, spec_answer, doc_op, &mut push);
            }
            compare_auth(op, doc_op, &mut push);
        }
    }

    // The same difference found through two routes of one operation is one difference.
    let mut seen = HashSet::new();
    found.retain(|d| {
        seen.insert((d.operation.clone(), d.kind, d.subject.clone(), d.spec.clone(), d.document.clone()))
    });

    let checked = !document.payspec_export;
    let stale = if checked { record(spec, &mut found) } else { Vec::new() };
    found.sort_by(|a, b| {
        (a.operation.is_none(), &a.operation, a.kind, &a.subject).cmp(&(
            b.operation.is_none(),
            &b.operation,
            b.kind,
            &b.subject,
        ))
    });
    DiffReport { differences: found, stale, quirks: document.quirks.clone(), disagreements_checked: checked }
}

/// A difference about one of the spec's routes, named `METHOD /path`.
fn route_difference(
    push: &mut Push<'_>,
    route: &SpecRoute<'_>,
    kind: DifferenceKind,
    spec: String,
    document: Option<String>,
) {
    push(
        Some(route.op),
        route.method,
        route.path,
        kind,
        format!("{} {}", route.method, route.path),
        Some(spec),
        document,
    );
}

fn add_pair<'a>(pairs: &mut Vec<(&'a Operation, Vec<usize>)>, op: &'a Operation, i: usize) {
    match pairs.iter_mut().find(|(o, _)| std::ptr::eq(*o, op)) {
        Some((_, docs)) => {
            if !docs.contains(&i) {
                docs.push(i);
            }
        }
        None => pairs.push((op, vec![i])),
    }
}

type Push<'p> =
    dyn FnMut(Option<&Operation>, Method, &str, DifferenceKind, String, Option<String>, Option<String>) + 'p;

/// The type a spec parameter travels as.
pub(crate) fn param_wire_type(param: &Param) -> WireType {
    if param.as_string {
        return WireType::String;
    }
    match &param.ty {
        Type::String | Type::DateTime | Type::Identifier(_) => WireType::String,
        Type::Integer => WireType::Integer,
        Type::Boolean => WireType::Boolean,
        Type::Decimal => WireType::Number,
        Type::Json => WireType::Any,
        Type::StringList => WireType::Array,
        Type::Shape(_) => WireType::Object,
    }
}

/// The spec's parameters as the document would list them.
pub(crate) fn spec_params(op: &Operation) -> Vec<(ApiParam, &Param)> {
    op.params
        .iter()
        .map(|p| {
            let param = ApiParam {
                location: p.location,
                key: p.wire.clone(),
                ty: param_wire_type(p),
                // A constant is always sent.
                required: p.required || p.fixed.is_some() || p.location == ParamLocation::Path,
            };
            (param, p)
        })
        .collect()
}

/// The fields of the spec's typed answer, from the top of its data (the empty key); `None`
/// when the answer is untyped.
pub(crate) fn spec_answer(spec: &Spec, op: &Operation) -> Option<Vec<ApiField>> {
    let AnswerType { ty, list } = op.response.as_ref()?;
    let mut out = Vec::new();
    // Depth as the document reader counts it, from the top of the body: an envelope puts
    // the data one level down.
    let start = usize::from(op.answers.reading.envelope != EnvelopeKind::Unwrapped);
    answer_type_fields(spec, ty, *list, String::new(), start, &mut out);
    Some(out)
}

/// The wire type of an answer value of type `ty`.
pub(crate) fn answer_wire_type(ty: &Type) -> WireType {
    match ty {
        Type::String | Type::DateTime | Type::Identifier(_) => WireType::String,
        Type::Integer => WireType::Integer,
        Type::Boolean => WireType::Boolean,
        // The answer reader takes an amount as a number or as a decimal string.
        Type::Decimal => WireType::NumberOrString,
        Type::Json => WireType::Any,
        Type::StringList => WireType::Array,
        Type::Shape(_) => WireType::Object,
    }
}

fn answer_type_fields(
    spec: &Spec,
    ty: &Type,
    list: bool,
    key: String,
    depth: usize,
    out: &mut Vec<ApiField>,
) {
    if list {
        out.push(ApiField { key: key.clone(), ty: WireType::Array });
        if depth < MAX_SCHEMA_DEPTH {
            answer_type_fields(spec, ty, false, format!("{key}[]"), depth + 1, out);
        }
        return;
    }
    out.push(ApiField { key: key.clone(), ty: answer_wire_type(ty) });
    if depth >= MAX_SCHEMA_DEPTH {
        return;
    }
    match ty {
        Type::StringList => out.push(ApiField { key: format!("{key}[]"), ty: WireType::String }),
        Type::Shape(name) => {
            let Some(shape) = spec.shape(name) else { return };
            for field in &shape.fields {
                let sub = if key.is_empty() { field.wire.clone() } else { format!("{key}.{}", field.wire) };
                answer_type_fields(spec, &field.ty, field.list, sub, depth + 1, out);
            }
        }
        _ => {}
    }
}

/// Whether `key` lies below one of `set` (a free-form value that stands for its keys, or
/// a key already reported): each of the key's ancestors is looked up, so the cost follows
/// the key's length, not the size of the set.
fn covered(key: &str, set: &HashSet<&str>) -> bool {
    if key.is_empty() {
        return false;
    }
    set.contains("") || key.char_indices().any(|(i, c)| matches!(c, '.' | '[') && set.contains(&key[..i]))
}

/// Whether `key` is strictly below `parent` (`order.amount` below `order`, `a[].b` below `a`).
fn below(key: &str, parent: &str) -> bool {
    if parent.is_empty() {
        return !key.is_empty();
    }
    key.len() > parent.len() && key.starts_with(parent) && matches!(key.as_bytes()[parent.len()], b'.' | b'[')
}

fn compare_params(
    op: &Operation,
    spec_params: &[(ApiParam, &Param)],
    doc: &ApiOperation,
    push: &mut Push<'_>,
) {
    let (method, path) = (doc.method, doc.path.as_str());
    let doc_params = &doc.params;
    let spec_opaque: HashSet<&str> =
        spec_params.iter().filter(|(p, _)| p.ty.is_opaque()).map(|(p, _)| p.key.as_str()).collect();
    let doc_opaque: HashSet<&str> =
        doc_params.iter().filter(|p| p.ty.is_opaque()).map(|p| p.key.as_str()).collect();
    // Path variables that differ only in name are one `path` difference, already reported.
    let renamed_path = op.path.as_str() != path && !op.aliases.iter().any(|a| a.path.as_str() == path);
    for (sp, _) in spec_params {
        if renamed_path && sp.location == ParamLocation::Path {
            continue;
        }
        let same_key: Vec<&ApiParam> = doc_params.iter().filter(|d| d.key == sp.key).collect();
        match same_key.iter().find(|d| d.location == sp.location).or(same_key.first()) {
            None => {
                // A free-form value on one side, its fields listed on the other.
                let detailed = sp.ty.is_opaque() && doc_params.iter().any(|d| below(&d.key, &sp.key));
                if !detailed && !covered(&sp.key, &doc_opaque) {
                    push(
                        Some(op),
                        method,
                        path,
                        DifferenceKind::WireKey,
                        sp.key.clone(),
                        Some(describe(sp)),
                        None,
                    );
                }
            }
            Some(dp) if dp.location != sp.location => push(
                Some(op),
                method,
                path,
                DifferenceKind::Location,
                sp.key.clone(),
                Some(sp.location.as_str().to_owned()),
                Some(dp.location.as_str().to_owned()),
            ),
            Some(dp) => {
                if !sp.ty.compatible(dp.ty) {
                    push(
                        Some(op),
                        method,
                        path,
                        DifferenceKind::Type,
                        sp.key.clone(),
                        Some(sp.ty.as_str().to_owned()),
                        Some(dp.ty.as_str().to_owned()),
                    );
                }
                if sp.required != dp.required {
                    let says = |r: bool| Some(if r { "required" } else { "optional" }.to_owned());
                    push(
                        Some(op),
                        method,
                        path,
                        DifferenceKind::Required,
                        sp.key.clone(),
                        says(sp.required),
                        says(dp.required),
                    );
                }
            }
        }
    }
    let mut reported: HashSet<&str> = HashSet::new();
    for dp in doc_params {
        if renamed_path && dp.location == ParamLocation::Path {
            continue;
        }
        let detailed = dp.ty.is_opaque() && spec_params.iter().any(|(sp, _)| below(&sp.key, &dp.key));
        if detailed
            || spec_params.iter().any(|(sp, _)| sp.key == dp.key)
            || covered(&dp.key, &spec_opaque)
            || covered(&dp.key, &reported)
        {
            continue;
        }
        push(Some(op), method, path, DifferenceKind::WireKey, dp.key.clone(), None, Some(describe(dp)));
        reported.insert(&dp.key);
    }
}

fn describe(p: &ApiParam) -> String {
    format!("{} {}{}", p.location.as_str(), p.ty.as_str(), if p.required { ", required" } else { "" })
}

/// The document's answer fields inside the data the spec's envelope wraps, re-rooted at
/// the empty key; `None` when the answer has no data there.
fn document_data(op: &Operation, doc: &ApiOperation) -> Option<Vec<ApiField>> {
    let fields = doc.answer.as_ref()?;
    if op.answers.reading.envelope == EnvelopeKind::Unwrapped {
        return Some(fields.clone());
    }
    let data: Vec<ApiField> = fields
        .iter()
        .filter_map(|f| {
            let rest = f.key.strip_prefix("data")?;
            let rest = match rest.as_bytes().first() {
                None => "",
                Some(b'.') => &rest[1..],
                Some(b'[') => rest,
                Some(_) => return None,
            };
            Some(ApiField { key: rest.to_owned(), ty: f.ty })
        })
        .collect();
    (!data.is_empty()).then_some(data)
}

fn compare_answers(op: &Operation, spec_fields: &[ApiField], doc: &ApiOperation, push: &mut Push<'_>) {
    let (method, path) = (doc.method, doc.path.as_str());
    let Some(doc_fields) = document_data(op, doc) else {
        push(
            Some(op),
            method,
            path,
            DifferenceKind::AnswerField,
            String::new(),
            Some("typed data".to_owned()),
            None,
        );
        return;
    };
    let spec_by_key: BTreeMap<&str, WireType> = spec_fields.iter().map(|f| (f.key.as_str(), f.ty)).collect();
    let doc_by_key: BTreeMap<&str, WireType> = doc_fields.iter().map(|f| (f.key.as_str(), f.ty)).collect();
    let spec_opaque: HashSet<&str> = spec_fields
        .iter()
        .filter(|f| f.ty.is_opaque() && f.ty != WireType::Object)
        .map(|f| f.key.as_str())
        .collect();
    // Any value, or an object with no fields listed (the fields come depth first, so an
    // object has fields when the next one lies below it), stands for anything below it.
    let doc_opaque: HashSet<&str> = doc_fields
        .iter()
        .enumerate()
        .filter(|(i, f)| {
            f.ty == WireType::Any
                || (f.ty == WireType::Object
                    && doc_fields.get(i + 1).is_none_or(|next| !below(&next.key, &f.key)))
        })
        .map(|(_, f)| f.key.as_str())
        .collect();
    let mut reported: HashSet<&str> = HashSet::new();
    for (key, ty) in &spec_by_key {
        if covered(key, &reported) {
            continue;
        }
        match doc_by_key.get(key) {
            None if covered(key, &doc_opaque) => {}
            None => {
                push(
                    Some(op),
                    method,
                    path,
                    DifferenceKind::AnswerField,
                    (*key).to_owned(),
                    Some(ty.as_str().to_owned()),
                    None,
                );
                reported.insert(key);
            }
            Some(doc_ty) if !ty.compatible(*doc_ty) => {
                push(
                    Some(op),
                    method,
                    path,
                    DifferenceKind::AnswerField,
                    (*key).to_owned(),
                    Some(ty.as_str().to_owned()),
                    Some(doc_ty.as_str().to_owned()),
                );
                reported.insert(key);
            }
            Some(_) => {}
        }
    }
    for (key, ty) in &doc_by_key {
        if spec_by_key.contains_key(key) || covered(key, &spec_opaque) || covered(key, &reported) {
            continue;
        }
        push(
            Some(op),
            method,
            path,
            DifferenceKind::AnswerField,
            (*key).to_owned(),
            None,
            Some(ty.as_str().to_owned()),
        );
        reported.insert(key);
    }
}

fn compare_auth(op: &Operation, doc: &ApiOperation, push: &mut Push<'_>) {
    let (bearer, account) = match op.auth {
        Auth::BearerAndAccount => (true, true),
        Auth::Bearer => (true, false),
        Auth::Account => (false, true),
        // HTTP Basic or a credential of the service's own: neither the token nor the
        // account id.
        Auth::Basic | Auth::None | Auth::Key(_) => (false, false),
    };
    let says = |needed: bool| Some(if needed { "required" } else { "not sent" }.to_owned());
    if bearer != doc.bearer {
        push(
            Some(op),
            doc.method,
            &doc.path,
            DifferenceKind::Auth,
            "bearer".to_owned(),
            says(bearer),
            says(doc.bearer),
        );
    }
    if account != doc.account {
        push(
            Some(op),
            doc.method,
            &doc.path,
            DifferenceKind::Auth,
            "accountId".to_owned(),
            says(account),
            says(doc.account),
        );
    }
}

/// Marks each difference a disagreement of its operation records, and returns the
/// disagreements (or their subjects) that record nothing.
fn record(spec: &Spec, found: &mut [Difference]) -> Vec<Stale> {
    // (operation, disagreement index, subject index or usize::MAX for none) that matched.
    let mut used: HashSet<(String, usize, usize)> = HashSet::new();
    for difference in found.iter_mut() {
        let Some(op) = difference.operation.as_deref().and_then(|name| spec.operation(name)) else {
            continue;
        };
        for (index, disagreement) in op.disagreements.iter().enumerate() {
            if disagreement.concerns != difference.kind.concern() {
                continue;
            }
            let subjects = subject_keys(op, disagreement);
            if subjects.is_empty() {
                used.insert((op.name.clone(), index, usize::MAX));
                difference.status = "recorded";
                continue;
            }
            for (s, subject) in subjects.iter().enumerate() {
                let hit = match difference.kind {
                    DifferenceKind::Operation | DifferenceKind::Method | DifferenceKind::Path => {
                        normalize_route(subject) == normalize_route(&difference.subject)
                    }
                    _ => *subject == difference.subject || below(&difference.subject, subject),
                };
                if hit {
                    used.insert((op.name.clone(), index, s));
                    difference.status = "recorded";
                }
            }
        }
    }
    let mut stale = Vec::new();
    for op in &spec.operations {
        for (index, disagreement) in op.disagreements.iter().enumerate() {
            // Facts for readers, and facts about the service that no difference of the
            // spec from the document shows, are never stale.
            if matches!(disagreement.concerns, Concern::Note | Concern::Service) {
                continue;
            }
            let subjects = subject_keys(op, disagreement);
            let mut missing: Vec<String> = Vec::new();
            if subjects.is_empty() {
                if !used.contains(&(op.name.clone(), index, usize::MAX)) {
                    missing.push(String::new());
                }
            } else {
                for (s, _) in subjects.iter().enumerate() {
                    if !used.contains(&(op.name.clone(), index, s)) {
                        missing.push(disagreement.subjects().nth(s).unwrap_or_default().to_owned());
                    }
                }
            }
            for subject in missing {
                stale.push(Stale {
                    operation: op.name.clone(),
                    concerns: disagreement.concerns.as_str(),
                    subject,
                    text: disagreement.text.clone(),
                    at: format!("{}:{}", disagreement.location.line, disagreement.location.column),
                });
            }
        }
    }
    stale
}

/// A disagreement's subjects as the diff names them: routes as written, parameters by
/// their wire keys, keys and fields as written (in the order of `Disagreement::subjects`).
fn subject_keys(op: &Operation, disagreement: &crate::model::Disagreement) -> Vec<String> {
    let params = disagreement
        .params
        .iter()
        .map(|name| op.param(name).map_or_else(|| name.clone(), |p| p.wire.clone()));
    disagreement
        .routes
        .iter()
        .cloned()
        .chain(params)
        .chain(disagreement.keys.iter().cloned())
        .chain(disagreement.fields.iter().cloned())
        .collect()
}

fn normalize_route(route: &str) -> String {
    let mut parts = route.split_whitespace();
    let method = parts.next().unwrap_or("").to_ascii_uppercase();
    format!("{method} {}", parts.collect::<Vec<_>>().join(" "))
}
