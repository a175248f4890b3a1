//! Each operation of the document drafted: its name, group, route, parameters and body,
//! authentication, answer, and the conventions inferred for it or left to choose.

use super::draft::{Envelope, Group, Operation, PageKeys, Param};
use super::draft::{Service, Spec};
use super::infer;
use super::names::{self, Taken};
use super::schema::{BodyField, MAX_MEMBERS, ParamType, one_line};
use super::{Found, Importer};
use crate::model::{Method, ParamLocation, PathTemplate};
use crate::openapi::read::{json_schema, split_path_key};
use crate::openapi::text::escape;
use heck::ToUpperCamelCase;
use serde_json::Value;
use std::collections::HashMap;

/// The most operations a spec holds (the loader's limit).
const MAX_OPERATIONS: usize = crate::load::MAX_OPERATIONS;

impl<'a> Importer<'a> {
    /// Every operation of the document, with its successful answer's schema (the first
    /// `2xx` with JSON, `200` first), if it has one.
    pub(super) fn operations(&mut self) -> Vec<(Found<'a>, Option<(&'a Value, String)>)> {
        let found = self.found();
        found
            .into_iter()
            .map(|op| {
                let answer = self.success_schema(op.operation, &op.pointer);
                (op, answer)
            })
            .collect()
    }

    fn success_schema(&mut self, operation: &'a Value, pointer: &str) -> Option<(&'a Value, String)> {
        let responses = operation.get("responses")?;
        let responses = self.schemas.resolve(responses, &format!("{pointer}/responses"));
        let responses = responses.as_object()?;
        let mut codes: Vec<&String> = responses.keys().filter(|code| code.starts_with('2')).collect();
        codes.sort_by_key(|code| (code.as_str() != "200", code.as_str()));
        for code in codes {
            let at = format!("{pointer}/responses/{code}");
            let response = self.schemas.resolve(&responses[code.as_str()], &at);
            if let Some((schema, at)) = json_schema(response, &at) {
                return Some((schema, at));
            }
        }
        None
    }

    /// The spec: its groups, operations and conventions.
    pub(super) fn draft(
        &mut self,
        service: Service,
        found: &mut Vec<(Found<'a>, Option<(&'a Value, String)>)>,
        envelope: Option<Envelope>,
    ) -> Spec {
        let mut spec = Spec {
            service,
            envelope,
            pages: PageKeys::default(),
            choices: Vec::new(),
            groups: Vec::new(),
            shapes: Vec::new(),
            operations: Vec::new(),
        };
        let mut names = Taken::default();
        let mut types = Taken::default();
        let mut routes: HashMap<(Method, String), String> = HashMap::new();
        let mut groups: HashMap<String, usize> = HashMap::new();
        let mut group_names = Taken::default();
        let mut pages_set = false;
        self.authorization_parameter(found, &mut spec);
        prefer_declared_forms(found);
        for (op, answer) in found.drain(..) {
            if spec.operations.len() >= MAX_OPERATIONS {
                self.unimported(
                    &op.pointer,
                    "",
                    format!("{} {}: the spec format holds at most {MAX_OPERATIONS} operations; import the document by parts (its tags)", op.method, op.key),
                );
                continue;
            }
            let split = split_path_key(&op.key);
            if let Err(why) = PathTemplate::parse(&split.path) {
                self.unimported(
                    &op.pointer,
                    &op.key,
                    format!("{} {}: the path is not one the spec takes ({why})", op.method, op.key),
                );
                continue;
            }
            let shape = (op.method, PathTemplate::shape_of(&split.path));
            if let Some(first) = routes.get(&shape) {
                let what = format!(
                    "{} {}: the same route as `{first}` under other variable names; one operation answers both",
                    op.method, op.key
                );
                self.unimported(&op.pointer, &op.key, what);
                continue;
            }
            let name = self.operation_name(&op, &split.path, &mut names, &mut types);
            routes.insert(shape, name.clone());
            let group = self.group_of(&op, &split.path, &mut spec.groups, &mut groups, &mut group_names);
            let mut drafted = self.operation(&op, &split, name, group, &spec);
            self.answer(&mut drafted, answer, &spec);
            self.pages(&mut drafted, &mut spec.pages, &mut pages_set);
            spec.operations.push(drafted);
        }
        spec
    }

    /// An `Authorization` header the document declares as an operation's parameter is a
    /// credential the client sends (the bearer scheme's, where the document has one).
    fn authorization_parameter(
        &mut self,
        found: &[(Found<'a>, Option<(&'a Value, String)>)],
        spec: &mut Spec,
    ) {
        if !found.iter().any(|(op, _)| self.declares_authorization(op)) {
            return;
        }
        if spec.service.credentials.iter().any(|c| c.header.eq_ignore_ascii_case("authorization")) {
            return;
        }
        spec.service.credentials.push(super::draft::Credential {
            name: "authorization".to_owned(),
            header: "Authorization".to_owned(),
            prefix: "",
            note: "The `Authorization` header the document declares as a parameter of its operations."
                .to_owned(),
        });
    }

    /// Its name: the `operationId`'s, else its method and path's; free in the spec.
    fn operation_name(&mut self, op: &Found<'a>, path: &str, names: &mut Taken, types: &mut Taken) -> String {
        let wanted = match op.operation.get("operationId").and_then(Value::as_str) {
            Some(id) => names::operation(id),
            None => names::operation(&format!("{} {}", op.method.as_str().to_ascii_lowercase(), path)),
        };
        // Words the client adds beside an operation's own are kept clear of.
        let wanted = if wanted.starts_with("settle_")
            || wanted.ends_with("_pages")
            || wanted.ends_with("_items")
            || wanted.ends_with("_builder")
        {
            format!("{wanted}_operation")
        } else {
            wanted
        };
        loop {
            let name = names.take(wanted.clone());
            // Two names that become one type (`a2`, `a_2`) are told apart.
            let ty = name.to_upper_camel_case();
            if !types.contains(&ty) && !types.contains(&format!("{ty}Builder")) {
                types.reserve(&ty);
                types.reserve(&format!("{ty}Builder"));
                return name;
            }
        }
    }

    /// Its group: its first tag's, else its path's first segment that is not a version.
    fn group_of(
        &mut self,
        op: &Found<'a>,
        path: &str,
        list: &mut Vec<Group>,
        by_source: &mut HashMap<String, usize>,
        names: &mut Taken,
    ) -> String {
        let tag = op
            .operation
            .get("tags")
            .and_then(Value::as_array)
            .and_then(|tags| tags.first())
            .and_then(Value::as_str);
        let source = match tag {
            Some(tag) => tag.to_owned(),
            None => path
                .split('/')
                .find(|segment| !(segment.is_empty() || segment.starts_with('{') || is_version(segment)))
                .unwrap_or("api")
                .to_owned(),
        };
        if let Some(&i) = by_source.get(&source) {
            return list[i].name.clone();
        }
        let name = names.take(names::group(&source));
        let doc = match tag {
            Some(tag) => self
                .root
                .get("tags")
                .and_then(Value::as_array)
                .and_then(|tags| tags.iter().find(|t| t.get("name").and_then(Value::as_str) == Some(tag)))
                .and_then(|t| one_line(t.get("description").and_then(Value::as_str)))
                .unwrap_or_else(|| format!("The operations the document tags `{tag}`.")),
            None => format!("The operations under `/{source}`."),
        };
        let title = one_line(Some(&source)).unwrap_or_else(|| name.clone());
        by_source.insert(source, list.len());
        list.push(Group { name: name.clone(), title, doc });
        name
    }

    /// The operation's route, parameters, body and authentication.
    fn operation(
        &mut self,
        op: &Found<'a>,
        split: &crate::openapi::read::PathKey,
        name: String,
        group: String,
        spec: &Spec,
    ) -> Operation {
        // An `operationId` written as words (`Obtain access token`) says what it does too.
        let worded_id = op.operation.get("operationId").and_then(Value::as_str).filter(|id| id.contains(' '));
        let summary = one_line(op.operation.get("summary").and_then(Value::as_str))
            .or_else(|| one_line(op.operation.get("description").and_then(Value::as_str)))
            .or_else(|| one_line(worded_id))
            .unwrap_or_else(|| format!("{} {}", op.method, split.path));
        let doc =
            one_line(op.operation.get("description").and_then(Value::as_str)).filter(|doc| *doc != summary);
        let mut drafted = Operation {
            name,
            group,
            summary,
            doc,
            method: op.method,
            path: split.path.clone(),
            auth: "none".to_owned(),
            body_encoding: None,
            allows_body: false,
            params: Vec::new(),
            response: None,
            response_list: false,
            unwrapped: false,
            outside: Vec::new(),
            idempotency: None,
            pagination: None,
            choices: Vec::new(),
            pointer: op.pointer.clone(),
        };
        let mut taken = Taken::default();
        self.parameters(op, split, spec, &mut drafted, &mut taken);
        self.body(op, &mut drafted, &mut taken);
        self.auth(op, spec, &mut drafted);
        if drafted.method != Method::Get && infer::may_move_money(&drafted.name, &drafted.path) {
            // The caller's reference, where a parameter's name says it is one.
            let named = drafted.params.iter().find(|p| {
                p.ty == "string"
                    && matches!(p.location, ParamLocation::Body | ParamLocation::Header)
                    && (p.name.contains("reference") || p.name.ends_with("_ref"))
            });
            let reference = drafted
                .idempotency
                .as_ref()
                .map(|(p, _)| p.as_str())
                .or(named.map(|p| p.name.as_str()))
                .unwrap_or("<the caller's unique reference>");
            // Its idempotency key is written already where the document shows one.
            let key = if drafted.idempotency.is_some() {
                "(its `idempotency` is drafted below)".to_owned()
            } else {
                format!("and `idempotency: {reference}`")
            };
            drafted.choices.push(format!(
                "CHOICE money: if this moves money, write `effect: money` {key}, then `settle:` with the \
                 read that answers its final state (`lookups`, `succeeded`, `failed`; spec/FORMAT.md, \
                 \"settle\"), or `unsettled:` with why none does"
            ));
        }
        drafted
    }

    /// Path, query and header parameters (path-level ones under the operation's own).
    fn parameters(
        &mut self,
        op: &Found<'a>,
        split: &crate::openapi::read::PathKey,
        spec: &Spec,
        drafted: &mut Operation,
        taken: &mut Taken,
    ) {
        const NONE: &[Value] = &[];
        let own: &'a [Value] =
            op.operation.get("parameters").and_then(Value::as_array).map_or(NONE, Vec::as_slice);
        let shared: &'a [Value] = op.shared.as_array().map_or(NONE, Vec::as_slice);
        let mut seen: Vec<(String, String)> = Vec::new();
        let item = op.pointer.rsplit_once('/').map_or("", |(item, _)| item);
        let lists = [(own, format!("{}/parameters", op.pointer)), (shared, format!("{item}/parameters"))];
        let credential_headers: Vec<String> =
            spec.service.credentials.iter().map(|c| c.header.to_ascii_lowercase()).collect();
        for (list, base) in lists {
            for (i, param) in list.iter().enumerate() {
                let at = format!("{base}/{i}");
                let param = self.schemas.resolve(param, &at);
                let (Some(wire), Some(place)) =
                    (param.get("name").and_then(Value::as_str), param.get("in").and_then(Value::as_str))
                else {
                    self.unimported(&at, "", "a parameter without a `name` or an `in`".to_owned());
                    continue;
                };
                if seen.iter().any(|(w, p)| w == wire && p == place) {
                    continue;
                }
                seen.push((wire.to_owned(), place.to_owned()));
                let location = match place {
                    "path" => ParamLocation::Path,
                    "query" => ParamLocation::Query,
                    "header" => ParamLocation::Header,
                    other => {
                        self.unimported(&at, wire, format!("the parameter `{wire}` travels in `{other}`, which the spec format does not send"));
                        continue;
                    }
                };
                let lower = wire.to_ascii_lowercase();
                if location == ParamLocation::Header
                    && (["authorization", "content-type", "accept", "user-agent"].contains(&lower.as_str())
                        || credential_headers.contains(&lower))
                {
                    // The client sets these itself.
                    continue;
                }
                let ty = match param.get("schema") {
                    Some(schema) => self.schemas.param_type(schema, &format!("{at}/schema")),
                    None => ParamType { ty: "json", ..ParamType::default() },
                };
                let required = location == ParamLocation::Path
                    || param.get("required").and_then(Value::as_bool).unwrap_or(false);
                let doc = one_line(param.get("description").and_then(Value::as_str));
                self.push_param(drafted, taken, wire, location, ty, required, doc, &at);
            }
        }
        // A query parameter written inside the path key, and a path variable undeclared.
        for (wire, variable) in &split.query {
            if !drafted.params.iter().any(|p| p.location == ParamLocation::Query && p.wire == *wire) {
                let ty = ParamType { ty: "string", ..ParamType::default() };
                self.push_param(drafted, taken, wire, ParamLocation::Query, ty, *variable, None, &op.pointer);
            }
        }
        for variable in PathTemplate::variables_of(&split.path) {
            if !drafted.params.iter().any(|p| p.location == ParamLocation::Path && p.wire == variable) {
                let ty = ParamType { ty: "string", ..ParamType::default() };
                self.push_param(drafted, taken, variable, ParamLocation::Path, ty, true, None, &op.pointer);
            }
        }
        drafted.params.retain(|p| {
            p.location != ParamLocation::Path
                || PathTemplate::variables_of(&split.path).contains(&p.wire.as_str())
        });
        // An idempotency key in a header: the key the service deduplicates on.
        if drafted.method != Method::Get
            && let Some(param) = drafted.params.iter().find(|p| {
                p.location == ParamLocation::Header
                    && p.ty == "string"
                    && infer::is_idempotency_header(&p.wire)
            })
        {
            drafted.idempotency = Some((param.name.clone(), param.wire.clone()));
            self.inferred
                .push(format!("`{}` sends its `{}` header as its idempotency key", drafted.name, param.wire));
        }
    }

    #[allow(clippy::too_many_arguments)]
    fn push_param(
        &mut self,
        drafted: &mut Operation,
        taken: &mut Taken,
        wire: &str,
        location: ParamLocation,
        ty: ParamType,
        required: bool,
        doc: Option<String>,
        pointer: &str,
    ) {
        if drafted.params.len() >= MAX_MEMBERS {
            self.unimported(
                pointer,
                wire,
                format!(
                    "`{}` has more than {MAX_MEMBERS} parameters; `{wire}` and any after it are left out",
                    drafted.name
                ),
            );
            return;
        }
        if drafted.params.iter().any(|p| p.location == location && p.wire == wire) {
            return;
        }
        // Only text may be sent as `format`, `length` or `values`, and a path value is text.
        let ty = if location == ParamLocation::Path && !matches!(ty.ty, "string" | "integer") {
            ParamType { ty: "string", ..ParamType::default() }
        } else {
            ty
        };
        drafted.params.push(Param {
            name: taken.take(names::field(wire)),
            location,
            ty: ty.ty.to_owned(),
            wire: wire.to_owned(),
            required,
            values: ty.values,
            max: ty.max,
            format: ty.format,
            length: ty.length,
            layout: ty.layout,
            doc,
        });
    }

    /// The request body's fields, flattened; a form body says its encoding.
    fn body(&mut self, op: &Found<'a>, drafted: &mut Operation, taken: &mut Taken) {
        let Some(body) = op.operation.get("requestBody") else { return };
        let at = format!("{}/requestBody", op.pointer);
        let body = self.schemas.resolve(body, &at);
        let Some(content) = body.get("content").and_then(Value::as_object) else { return };
        // A field the body's schema requires is required, as the diff reads a document:
        // a body sent at all carries it.
        let required = true;
        let json = content.iter().find(|(kind, _)| kind.contains("json"));
        let form = content.iter().find(|(kind, _)| kind.as_str() == "application/x-www-form-urlencoded");
        let Some((kind, media)) = json.or(form) else {
            let kinds: Vec<&str> = content.keys().map(String::as_str).collect();
            self.unimported(
                &at,
                "",
                format!(
                    "`{}`'s body is {}, which the spec format does not send; only JSON and form bodies are",
                    drafted.name,
                    kinds.join(", ")
                ),
            );
            return;
        };
        if json.is_none() {
            drafted.body_encoding = Some("form");
        }
        let Some(schema) = media.get("schema") else { return };
        let at = format!("{at}/content/{}/schema", escape(kind));
        let mut fields: Vec<BodyField> = Vec::new();
        self.schemas.body_fields(schema, "", required, &at, 0, &mut fields);
        if fields.is_empty() {
            let resolved = self.schemas.resolve(schema, &at);
            let kind = crate::openapi::document::wire_type(resolved);
            if kind != crate::openapi::document::WireType::Object
                && kind != crate::openapi::document::WireType::Any
            {
                self.unimported(
                    &at,
                    "",
                    format!(
                        "`{}`'s body is a JSON {}, not an object of fields; the spec sends fields",
                        drafted.name,
                        kind.as_str()
                    ),
                );
            }
            return;
        }
        if matches!(drafted.method, Method::Get | Method::Delete) {
            drafted.allows_body = true;
        }
        for field in fields {
            // A body field never shares a wire key with a query or path one here.
            self.push_param(
                drafted,
                taken,
                &field.wire,
                ParamLocation::Body,
                field.ty,
                field.required,
                field.doc,
                &at,
            );
        }
    }

    /// The credential its first security requirement names.
    fn auth(&mut self, op: &Found<'a>, spec: &Spec, drafted: &mut Operation) {
        let requirements = op.operation.get("security").or_else(|| self.root.get("security"));
        let Some(Value::Array(requirements)) = requirements else {
            // No security, but an `Authorization` header parameter: its credential.
            if self.declares_authorization(op)
                && let Some(credential) =
                    spec.service.credentials.iter().find(|c| c.header.eq_ignore_ascii_case("authorization"))
            {
                drafted.auth = credential.name.clone();
            }
            return;
        };
        // Of alternatives, the first whose credentials are sent as they are given (a key, a
        // bearer token) rather than HTTP Basic, which the caller would have to encode.
        let usable: Vec<&serde_json::Map<String, Value>> =
            requirements.iter().filter_map(Value::as_object).filter(|r| !r.is_empty()).collect();
        let plain = |r: &&&serde_json::Map<String, Value>| {
            r.keys().all(|scheme| {
                spec.service.schemes.iter().find(|(s, _)| s == scheme).is_some_and(|(_, credential)| {
                    spec.service.credentials.iter().any(|c| &c.name == credential && c.prefix != "Basic ")
                })
            })
        };
        let Some(first) = usable.iter().find(plain).or(usable.first()).copied() else { return };
        let credentials: Vec<&String> = first
            .keys()
            .filter_map(|scheme| spec.service.schemes.iter().find(|(s, _)| s == scheme).map(|(_, c)| c))
            .collect();
        let Some(credential) = credentials.first() else { return };
        drafted.auth = (*credential).clone();
        if first.len() > 1 {
            let all: Vec<&str> = first.keys().map(String::as_str).collect();
            self.unimported(
                &format!("{}/security", op.pointer),
                "",
                format!(
                    "`{}` needs the schemes {} together; it sends `{credential}` alone",
                    drafted.name,
                    all.join(" and ")
                ),
            );
        }
    }

    /// Whether the operation (or its path) declares an `Authorization` header parameter.
    fn declares_authorization(&self, op: &Found<'a>) -> bool {
        let mut lists = [op.operation.get("parameters"), Some(op.shared)]
            .into_iter()
            .flatten()
            .filter_map(Value::as_array);
        lists.any(|list| {
            list.iter().any(|p| {
                let p = crate::openapi::refs::resolve(self.root, p).unwrap_or(p);
                p.get("in").and_then(Value::as_str) == Some("header")
                    && p.get("name")
                        .and_then(Value::as_str)
                        .is_some_and(|n| n.eq_ignore_ascii_case("authorization"))
            })
        })
    }
}

/// Of the forms of one route (one method, the same path but for its variables' names),
/// the one kept first: the form that declares every variable as a parameter, and whose
/// variables do not share their names with another of its parameters (a header of the
/// same name); the first listed among equals. The others are said where they stand.
fn prefer_declared_forms<'a>(found: &mut [(Found<'a>, Option<(&'a Value, String)>)]) {
    let score = |op: &Found<'a>| {
        let path = split_path_key(&op.key).path;
        let declared: Vec<(&str, &str)> = [op.operation.get("parameters"), Some(op.shared)]
            .into_iter()
            .flatten()
            .filter_map(Value::as_array)
            .flatten()
            .filter_map(|p| Some((p.get("name")?.as_str()?, p.get("in")?.as_str()?)))
            .collect();
        let variables = PathTemplate::variables_of(&path);
        let undeclared = variables.iter().filter(|v| !declared.contains(&(**v, "path"))).count();
        let shadowed = variables
            .iter()
            .filter(|v| declared.iter().any(|(n, place)| n == *v && *place != "path"))
            .count();
        (undeclared, shadowed)
    };
    let mut first: HashMap<(Method, String), usize> = HashMap::new();
    for i in 0..found.len() {
        let shape = (found[i].0.method, PathTemplate::shape_of(&split_path_key(&found[i].0.key).path));
        match first.get(&shape) {
            Some(&kept) if score(&found[i].0) < score(&found[kept].0) => {
                found.swap(kept, i);
            }
            Some(_) => {}
            None => {
                first.insert(shape, i);
            }
        }
    }
}

/// Whether a path segment is a version (`v1`) or the `api` prefix: not a group's name.
fn is_version(segment: &str) -> bool {
    segment == "api"
        || segment.strip_prefix('v').is_some_and(|n| !n.is_empty() && n.chars().all(|c| c.is_ascii_digit()))
}
