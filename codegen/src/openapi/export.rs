//! The spec written as an OpenAPI 3.1 document.
//!
//! Every route is an operation: the canonical form under the operation's name, each
//! alternative form under `<name>__alias_<n>` with `x-payspec-alias-of`. Bodies keep their
//! nesting and exact types; answers sit inside the service's envelope; errors are the error
//! envelope; the deliveries are `webhooks`. What OpenAPI has no word for is an
//! `x-payspec-` extension: the effect, the idempotency key and header, the page style,
//! secrets and date layouts, a delivery's signature scheme and what it settles.
//!
//! The output is a function of the spec alone: the same spec writes the same bytes.

use super::diff::{answer_wire_type, param_wire_type};
use super::document::WireType;
use crate::model::{
    AnswerType, Auth, DateLayout, EnvelopeKeys, ErrorKeys, EventOutcome, Operation, Owned, PageStyle, Param,
    ParamLocation, Shape, Spec, SuccessBy, Type,
};
use serde_json::{Map, Value, json};

/// The OpenAPI version written.
pub const OPENAPI_VERSION: &str = "3.1.0";

/// The document as JSON text, pretty-printed, with a final newline.
pub fn export_json(spec: &Spec) -> String {
    let mut text = serde_json::to_string_pretty(&export(spec)).unwrap_or_default();
    text.push('\n');
    text
}

/// The document as a JSON value.
pub fn export(spec: &Spec) -> Value {
    let mut paths = Map::new();
    for op in &spec.operations {
        insert(&mut paths, op.path.as_str(), op.method.as_str(), operation(spec, op, None));
        for (i, alias) in op.aliases.iter().enumerate() {
            // A form identical to another operation's route is that operation in the document.
            if alias.same_route_as.is_some() {
                continue;
            }
            let mut object = operation(spec, op, Some(i));
            object["x-payspec-alias-of"] = json!(op.name);
            object["description"] = json!(format!("An alternative form of `{}`. {}", op.name, alias.note));
            insert(&mut paths, alias.path.as_str(), alias.method.as_str(), object);
        }
    }
    let mut schemas = Map::new();
    for shape in &spec.shapes {
        schemas.insert(shape.name.clone(), shape_schema(spec, shape));
    }
    // The error envelope under the spec's keys: its first code and description keys,
    // and its flag, where it has them.
    // Where the spec says an error holds them (`service.errors`), there instead.
    let error = match &spec.answers.reading.errors {
        Some(errors) => error_schema(errors),
        None => {
            let keys = &*spec.envelope;
            let spelled =
                (keys.code.first().map(String::as_str), keys.description.first().map(String::as_str));
            let mut error = envelope_schema(keys, spelled, None);
            error["description"] = json!("The service's error envelope: what went wrong.");
            error
        }
    };
    schemas.insert("Error".to_owned(), error);
    json!({
        "openapi": OPENAPI_VERSION,
        "info": {
            "title": spec.title,
            "version": "1",
            "description": format!("Written by payspec from {}.", spec.source),
        },
        "x-payspec": {
            "format": 1,
            "source": spec.source,
            // The codes the service documents: what each means, and whether the same
            // request may be sent again.
            "codes": spec.codes.iter().map(|c| json!({"code": c.code, "name": c.name, "retry": c.retry, "doc": c.doc})).collect::<Vec<_>>(),
        },
        "servers": spec.environments.iter().map(|e| json!({"url": e.url, "description": e.name})).collect::<Vec<_>>(),
        "tags": spec.groups.iter().map(|g| json!({"name": g.key, "description": g.title})).collect::<Vec<_>>(),
        "paths": paths,
        "webhooks": webhooks(spec),
        "components": {
            "securitySchemes": security_schemes(spec),
            "schemas": schemas,
        },
    })
}

/// An error answer whose code and description lie where `service.errors` says: their keys
/// (each a string; the code may also be a number), in the object at `at` if it names one.
fn error_schema(errors: &ErrorKeys<Owned>) -> Value {
    let mut properties = Map::new();
    for key in &errors.code {
        properties.insert(key.clone(), json!({"type": ["string", "number"]}));
    }
    for key in &errors.description {
        properties.insert(key.clone(), json!({"type": "string"}));
    }
    let inner = json!({"type": "object", "properties": properties});
    let description = "The service's error answer: what went wrong.";
    match &errors.at {
        Some(at) => json!({
            "type": "object",
            "description": description,
            "required": [at],
            "properties": { at.as_str(): inner },
        }),
        None => {
            let mut schema = inner;
            schema["description"] = json!(description);
            schema
        }
    }
}

/// The service's deliveries (OpenAPI 3.1 `webhooks`), one per event kind: the headers its
/// scheme sends, a body holding the signed values at their paths (and the declared payload
/// under its key), the scheme itself in `x-payspec-signature` (what is signed, how, and the
/// pairs of its header), and where an event settles a payment, `x-payspec-settles`: the
/// signed value that names the payment and the final state the event (or its value) says.
fn webhooks(spec: &Spec) -> Value {
    let Some(hooks) = &spec.webhooks else { return json!({}) };
    let scheme = &hooks.scheme;
    let header = |name: &str, description: &str| json!({"name": name, "in": "header", "required": true, "schema": {"type": "string"}, "description": description});
    let mut headers = vec![header(
        &scheme.signature_header,
        if scheme.signs.is_hmac() {
            "The signature."
        } else {
            "The merchant's shared secret, compared as sent."
        },
    )];
    if let Some(time) = &scheme.timestamp_header {
        headers.push(header(time, "The signing time, RFC 3339; signed last."));
    }
    for (name, value) in scheme.algorithm.iter().chain(&scheme.version) {
        headers.push(header(name, &format!("`{value}`.")));
    }
    let mut signature = json!({
        "header": scheme.signature_header,
        "signs": scheme.signs.as_str(),
        "event_type": scheme.event_type,
        "request_id": scheme.request_id,
        "signed": scheme.signed.iter().map(|v| (v.name.clone(), json!(v.path))).collect::<Map<_, _>>(),
    });
    if scheme.signs.is_hmac() {
        signature["digest"] = json!(scheme.digest.as_str());
        signature["encoding"] = json!(scheme.encoding.as_str());
    }
    for (key, value) in [
        ("signature_field", scheme.signature_field.as_ref()),
        ("time_field", scheme.time_field.as_ref()),
        ("timestamp_header", scheme.timestamp_header.as_ref()),
    ] {
        if let Some(value) = value {
            signature[key] = json!(value);
        }
    }
    if let Some(tolerance) = scheme.tolerance_seconds {
        signature["tolerance_seconds"] = json!(tolerance);
    }
    let mut out = Map::new();
    for event in &hooks.events {
        // The signed values at their paths, then the payload declared for this kind.
        let mut body = json!({"type": "object", "properties": {}});
        for value in &scheme.signed {
            let mut node = &mut body;
            for key in value.path.split('.') {
                node = &mut node["properties"][key];
                if node.get("type").is_none() {
                    *node = json!({"type": "object", "properties": {}});
                }
            }
            *node = json!({"description": format!("Signed, as `{}`.", value.name)});
        }
        if let (Some(key), Some(payload)) =
            (&hooks.payload_key, hooks.payloads.iter().find(|p| p.event == *event))
        {
            body["properties"][key.as_str()] =
                json!({"$ref": format!("#/components/schemas/{}", payload.shape)});
        }
        let mut post = json!({
            "summary": format!("The `{event}` delivery."),
            "parameters": headers,
            "requestBody": {"required": true, "content": {"application/json": {"schema": body}}},
            "responses": {
                "200": {"description": "Handled, or a replay of a handled delivery."},
                "401": {"description": "Not the service's: its signature does not hold."},
                "503": {"description": "Not handled now: deliver it again."},
            },
            "x-payspec-signature": signature,
        });
        let settles = hooks
            .settles
            .as_ref()
            .and_then(|s| s.events.iter().find(|(e, _)| e == event).map(|(_, o)| (s, o)));
        if let Some((settles, outcome)) = settles {
            post["x-payspec-settles"] = match outcome {
                EventOutcome::Always(state) => json!({"key": settles.key, "state": state.as_str()}),
                EventOutcome::ByValue { value, states } => json!({
                    "key": settles.key,
                    "value": value,
                    "states": states.iter().map(|(text, state)| (text.clone(), json!(state.as_str()))).collect::<Map<_, _>>(),
                }),
            };
        }
        out.insert(event.clone(), json!({"post": post}));
    }
    Value::Object(out)
}

/// The token, the client's HTTP Basic and the account id where operations send them, and
/// each credential of the spec's own: an HTTP scheme where it travels in `Authorization`
/// after `Bearer ` or `Basic ` (so that a generator reading the document sends the prefix),
/// else an `apiKey` in its header.
fn security_schemes(spec: &Spec) -> Value {
    let mut schemes = json!({});
    let sends = |auths: &[Auth]| spec.operations.iter().any(|op| auths.contains(&op.auth));
    if spec.token_operations.is_some() && sends(&[Auth::Bearer, Auth::BearerAndAccount]) {
        schemes["bearer"] = json!({"type": "http", "scheme": "bearer", "description": "The access token from the token operations."});
    }
    if sends(&[Auth::Basic]) {
        schemes["basic"] = json!({"type": "http", "scheme": "basic", "description": "The client id and client secret, as user and password."});
    }
    if sends(&[Auth::Account, Auth::BearerAndAccount]) {
        schemes["accountId"] = json!({"type": "apiKey", "in": "header", "name": spec.account_header, "description": "The parent account's id."});
    }
    for credential in &spec.credentials {
        let description =
            credential.note.clone().unwrap_or_else(|| format!("The `{}` credential.", credential.name));
        let http = credential.header.eq_ignore_ascii_case("authorization").then(|| {
            let prefix = credential.prefix.trim().to_ascii_lowercase();
            ["bearer", "basic"].into_iter().find(|scheme| prefix == *scheme)
        });
        schemes[credential.name.as_str()] = match http.flatten() {
            Some(scheme) => json!({"type": "http", "scheme": scheme, "description": description}),
            None => {
                json!({"type": "apiKey", "in": "header", "name": credential.header, "description": description})
            }
        };
    }
    schemes
}

fn insert(paths: &mut Map<String, Value>, path: &str, method: &str, object: Value) {
    let item = paths.entry(path.to_owned()).or_insert_with(|| json!({}));
    item[method.to_ascii_lowercase()] = object;
}

fn operation(spec: &Spec, op: &Operation, alias: Option<usize>) -> Value {
    let mut object = Map::new();
    let id = match alias {
        None => op.name.clone(),
        Some(i) => format!("{}__alias_{}", op.name, i + 1),
    };
    object.insert("operationId".to_owned(), json!(id));
    object.insert("tags".to_owned(), json!([op.group]));
    object.insert("summary".to_owned(), json!(op.summary));
    if !op.doc.is_empty() {
        object.insert("description".to_owned(), json!(op.doc.join("\n")));
    }
    let parameters: Vec<Value> = op
        .params
        .iter()
        .filter(|p| p.location != ParamLocation::Body)
        .map(|p| {
            let mut param = json!({
                "name": p.wire,
                "in": p.location.as_str(),
                "required": p.required || p.fixed.is_some() || p.location == ParamLocation::Path,
                "schema": param_schema(p),
            });
            let mut description = p.doc.join("\n");
            if let Some(set) = op.one_of_with(&p.name) {
                // OpenAPI 3.0 cannot say "exactly one of these query parameters": each
                // stays optional, as the vendor's document has it, and the text says so.
                let others: Vec<&str> =
                    set.params.iter().filter_map(|n| op.param(n)).map(|o| o.wire.as_str()).collect();
                description.push_str(&format!(
                    "{}Send exactly one of {}.",
                    if description.is_empty() { "" } else { "\n" },
                    others.join(", ")
                ));
            }
            if !description.is_empty() {
                param["description"] = json!(description);
            }
            param
        })
        .collect();
    if !parameters.is_empty() {
        object.insert("parameters".to_owned(), Value::Array(parameters));
    }
    if !op.one_of.is_empty() {
        let sets: Map<String, Value> = op
            .one_of
            .iter()
            .map(|set| {
                let wires: Vec<&str> =
                    set.params.iter().filter_map(|n| op.param(n)).map(|p| p.wire.as_str()).collect();
                (set.name.clone(), json!(wires))
            })
            .collect();
        object.insert("x-payspec-one-of".to_owned(), Value::Object(sets));
    }
    let body: Vec<&Param> = op.params_in(ParamLocation::Body).collect();
    if !body.is_empty() {
        object.insert(
            "requestBody".to_owned(),
            json!({
                "required": body.iter().any(|p| p.required || p.fixed.is_some()),
                "content": {op.body_encoding.content_type(): {"schema": body_schema(&body)}},
            }),
        );
    }
    object.insert(
        "responses".to_owned(),
        json!({
            "200": {
                "description": "The service's answer.",
                "content": {"application/json": {"schema": answer_schema(spec, op)}},
            },
            "default": {
                "description": "An error envelope.",
                "content": {"application/json": {"schema": {"$ref": "#/components/schemas/Error"}}},
            },
        }),
    );
    let security = match op.auth {
        Auth::BearerAndAccount => json!([{"bearer": [], "accountId": []}]),
        Auth::Bearer => json!([{"bearer": []}]),
        Auth::Account => json!([{"accountId": []}]),
        Auth::Basic => json!([{"basic": []}]),
        Auth::None => json!([]),
        Auth::Key(place) => match spec.credentials.get(usize::from(place)) {
            Some(credential) => json!([{ credential.name.as_str(): [] }]),
            None => json!([]),
        },
    };
    object.insert("security".to_owned(), security);
    object.insert("x-payspec-effect".to_owned(), json!(op.effect.as_str()));
    if let Some(key) = &op.idempotency {
        let mut idempotency = json!({"key": op.param(key).map_or(key.as_str(), |p| p.wire.as_str())});
        if let Some(header) = &op.idempotency_header {
            idempotency["header"] = json!(header.wire);
        }
        object.insert("x-payspec-idempotency".to_owned(), idempotency);
    }
    if let Some(style) = &op.pagination {
        object.insert("x-payspec-pagination".to_owned(), page_paths(style));
    }
    Value::Object(object)
}

/// A listing's page style with the paths its pages lead on by (from the page's data, or
/// from the whole answer after `$.`), and the parameter each next page is asked with.
fn page_paths(style: &PageStyle<Owned>) -> Value {
    match style {
        PageStyle::Cursor { next } => json!({"style": "cursor", "next": next, "asks": "cursor"}),
        PageStyle::Page { next, current } => {
            json!({"style": "page", "next": next, "current": current, "asks": "page"})
        }
        PageStyle::PageSize { more, last, current, total, first } => json!({
            "style": "page_size",
            if *last { "last" } else { "more" }: more,
            "current": current,
            "total": total,
            "first": first,
            "asks": "page",
        }),
        PageStyle::After { more, last, records, id } => json!({
            "style": "after",
            if *last { "last" } else { "more" }: more,
            "records": records,
            "record_id": id,
            "asks": "cursor",
        }),
    }
}

/// A request value's schema: its exact wire type, with the spec's allowed values, limits,
/// constants and date layouts.
fn param_schema(p: &Param) -> Value {
    let mut schema = match (param_wire_type(p), &p.ty) {
        (WireType::String, Type::DateTime) => {
            json!({"type": "string", "pattern": layout_pattern(p.layout), "x-payspec-layout": p.layout.pattern()})
        }
        (WireType::String, Type::Decimal) => json!({"type": "string", "pattern": "^-?[0-9]+(\\.[0-9]+)?$"}),
        (WireType::String, Type::Integer) => json!({"type": "string", "pattern": "^-?[0-9]+$"}),
        (WireType::String, Type::Boolean) => json!({"type": "string", "enum": ["true", "false"]}),
        (WireType::Array, _) => json!({"type": "array", "items": {"type": "string"}}),
        (WireType::Any, _) => json!({}),
        (ty, _) => json!({"type": ty.as_str()}),
    };
    if let Type::Identifier(name) = &p.ty {
        schema["x-payspec-identifier"] = json!(name);
    }
    if !p.values.is_empty() {
        schema["enum"] = json!(p.values);
    }
    if let Some(fixed) = &p.fixed {
        schema["const"] = json!(fixed);
    }
    if let Some(max) = p.max {
        schema["maximum"] = json!(max);
    }
    if p.secret {
        schema["x-payspec-secret"] = json!(true);
    }
    schema
}

fn layout_pattern(layout: DateLayout) -> &'static str {
    match layout {
        DateLayout::Seconds => "^[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}$",
        DateLayout::Minutes => "^[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}$",
        DateLayout::SpaceSeconds => "^[0-9]{4}-[0-9]{2}-[0-9]{2} [0-9]{2}:[0-9]{2}:[0-9]{2}$",
        DateLayout::Date => "^[0-9]{4}-[0-9]{2}-[0-9]{2}$",
        DateLayout::Instant => "^[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}\\.[0-9]{3}Z$",
    }
}

/// The body as nested objects: `order.amount` is `amount` inside `order`. An object is
/// required when a field below it is.
fn body_schema(body: &[&Param]) -> Value {
    let mut root = json!({"type": "object", "properties": {}});
    for p in body {
        let mut node = &mut root;
        let mut parts = p.wire.split('.').peekable();
        while let Some(part) = parts.next() {
            if p.required || p.fixed.is_some() {
                push_required(node, part);
            }
            if parts.peek().is_none() {
                let mut schema = param_schema(p);
                if !p.doc.is_empty() {
                    schema["description"] = json!(p.doc.join("\n"));
                }
                node["properties"][part] = schema;
            } else {
                if node["properties"].get(part).is_none() {
                    node["properties"][part] = json!({"type": "object", "properties": {}});
                }
                node = &mut node["properties"][part];
            }
        }
    }
    root
}

fn push_required(node: &mut Value, name: &str) {
    let list = node.as_object_mut().map(|o| o.entry("required").or_insert_with(|| json!([])));
    if let Some(Value::Array(list)) = list
        && !list.iter().any(|v| v == name)
    {
        list.push(json!(name));
    }
}

/// The answer: the data's schema inside the envelope the operation answers with.
fn answer_schema(spec: &Spec, op: &Operation) -> Value {
    let data = match &op.response {
        None => json!({}),
        Some(AnswerType { ty, list }) => value_schema(spec, ty, *list),
    };
    // The envelope's keys as this operation's answers spell them.
    let envelope = &op.answers.reading.envelope;
    let (Some(spelled), Some(keys)) = (envelope.spelled(), envelope.keys()) else { return data };
    envelope_schema(keys, spelled, Some(data))
}

/// An envelope under `keys`: its code and description as spelled, its flag, and `data`
/// under its data key when given; what says success is required.
fn envelope_schema(
    keys: &EnvelopeKeys<Owned>,
    (code, description): (Option<&str>, Option<&str>),
    data: Option<Value>,
) -> Value {
    let mut properties = Map::new();
    let mut required = Vec::new();
    if let Some(code) = code {
        properties.insert(code.to_owned(), json!({"type": "string"}));
        if keys.success == SuccessBy::Code {
            required.push(code.to_owned());
        }
    }
    if let Some(description) = description {
        properties.insert(description.to_owned(), json!({"type": "string"}));
    }
    if let Some(flag) = &keys.flag {
        properties.insert(flag.clone(), json!({"type": "boolean"}));
        if keys.success == SuccessBy::Flag {
            required.push(flag.clone());
        }
    }
    if let Some(data) = data {
        properties.insert(keys.data.clone(), data);
    }
    json!({"type": "object", "properties": properties, "required": required})
}

/// An answer value's schema; a shape is a reference to its component.
fn value_schema(spec: &Spec, ty: &Type, list: bool) -> Value {
    if list {
        return json!({"type": "array", "items": value_schema(spec, ty, false)});
    }
    match ty {
        Type::Shape(name) if spec.shape(name).is_some() => {
            json!({"$ref": format!("#/components/schemas/{name}")})
        }
        Type::StringList => json!({"type": "array", "items": {"type": "string"}}),
        other => match answer_wire_type(other) {
            WireType::NumberOrString => json!({"type": ["number", "string"]}),
            WireType::Any => json!({}),
            wire => json!({"type": wire.as_str()}),
        },
    }
}

fn shape_schema(spec: &Spec, shape: &Shape) -> Value {
    let mut properties = Map::new();
    let mut required = Vec::new();
    for field in &shape.fields {
        let mut schema = value_schema(spec, &field.ty, field.list);
        if !field.doc.is_empty() && schema.get("$ref").is_none() {
            schema["description"] = json!(field.doc.join("\n"));
        }
        if !field.values.is_empty() {
            // An open list: the client keeps any other value too.
            schema["x-payspec-values"] = json!(field.values);
        }
        if field.secret {
            schema["x-payspec-secret"] = json!(true);
        }
        if field.required {
            required.push(field.wire.clone());
        }
        properties.insert(field.wire.clone(), schema);
    }
    let mut schema = json!({"type": "object", "properties": properties});
    if !shape.doc.is_empty() {
        schema["description"] = json!(shape.doc.join("\n"));
    }
    if !required.is_empty() {
        schema["required"] = json!(required);
    }
    schema
}
