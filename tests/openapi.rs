//! The spec speaks OpenAPI: the export, the reader and the diff.
//!
//! The drift alarm reads the facts of the vendor's document (its routes, parameters,
//! schemas and examples, kept in the repository by `spec/facts/refresh.py`): every
//! difference from the spec must be recorded by a disagreement, and every disagreement
//! must still match a difference.

use payspec_codegen::model::Method;
use payspec_codegen::openapi::{self, DifferenceKind, DocumentError, read_document};
use payspec_tests::{builtin_spec_text, load_builtin};
use serde_json::{Value, json};

/// The facts of the vendor's OpenAPI document, kept in the repository.
const VENDOR_DOCUMENT: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/../spec/facts/vendor-openapi.json");

fn vendor_text() -> String {
    std::fs::read_to_string(VENDOR_DOCUMENT).unwrap_or_else(|e| panic!("{VENDOR_DOCUMENT}: {e}"))
}

fn vendor_json() -> Value {
    serde_json::from_str(&vendor_text()).expect("the vendor's document is JSON")
}

fn spec() -> payspec_codegen::Spec {
    load_builtin().unwrap_or_else(|e| panic!("{e}"))
}

fn read(text: &str) -> Result<openapi::ApiDocument, DocumentError> {
    read_document("doc.json", text)
}

#[test]
fn the_vendor_document_differs_only_where_a_disagreement_says_so() {
    let spec = spec();
    let document = read_document(VENDOR_DOCUMENT, &vendor_text()).unwrap_or_else(|e| panic!("{e}"));
    let report = openapi::diff(&spec, &document);
    let new: Vec<String> = report.new_differences().map(ToString::to_string).collect();
    let stale: Vec<String> = report.stale.iter().map(ToString::to_string).collect();
    assert!(new.is_empty(), "unrecorded differences from the vendor's document:\n{}", new.join("\n"));
    assert!(stale.is_empty(), "disagreements that match no difference:\n{}", stale.join("\n"));
    assert!(report.disagreements_checked);
    // The alarm has something to guard: the spec and the document really do differ, in
    // every kind the spec records.
    assert!(report.differences.len() > 100, "{} differences", report.differences.len());
    for kind in [
        DifferenceKind::Operation,
        DifferenceKind::Path,
        DifferenceKind::WireKey,
        DifferenceKind::Type,
        DifferenceKind::Required,
        DifferenceKind::AnswerField,
        DifferenceKind::Auth,
    ] {
        assert!(report.differences.iter().any(|d| d.kind == kind), "no {kind:?} difference");
    }
    // Its known quirks are read and reported, not refused.
    let quirks: Vec<&str> = report.quirks.iter().map(|q| q.message.as_str()).collect();
    assert!(quirks.iter().any(|q| q.contains("query string")), "{quirks:?}");
    assert!(quirks.iter().any(|q| q.contains("no declared parameter")), "{quirks:?}");
    assert!(quirks.iter().any(|q| q.contains("the same route as")), "{quirks:?}");
    // The query string written inside the path key is a query parameter of the route.
    let status = document
        .operations
        .iter()
        .find(|op| op.path == "/v1/direct-debits/status")
        .expect("the status route, without its query string");
    assert!(status.params.iter().any(|p| p.key == "mandateId" && p.location.as_str() == "query"));
}

#[test]
fn a_changed_vendor_document_shows_new_differences() {
    let spec = spec();
    let mut document = vendor_json();
    // A new required query parameter, an answer field retyped, an operation removed.
    let fetch = &mut document["paths"]["/v1/checkout/transaction"]["get"];
    fetch["parameters"].as_array_mut().expect("parameters").push(json!({
        "name": "channel", "in": "query", "required": true, "schema": {"type": "string"}
    }));
    document["paths"].as_object_mut().expect("paths").remove("/v1/transfers/banks");
    let text = serde_json::to_string(&document).expect("JSON");
    let report = openapi::diff(&spec, &read(&text).expect("readable"));
    let new: Vec<_> = report.new_differences().collect();
    assert!(
        new.iter().any(|d| d.kind == DifferenceKind::WireKey
            && d.subject == "channel"
            && d.operation.as_deref() == Some("fetch_checkout_transaction")),
        "{new:#?}"
    );
    assert!(
        new.iter().any(|d| d.kind == DifferenceKind::Operation
            && d.method == Method::Get
            && d.path == "/v1/transfers/banks"),
        "{new:#?}"
    );
    assert_eq!(new.len(), 2, "{new:#?}");
    assert!(!report.is_clean());
}

#[test]
fn a_moved_method_and_a_moved_parameter_are_their_own_differences() {
    let spec = spec();
    let mut document = vendor_json();
    let paths = document["paths"].as_object_mut().expect("paths");
    // The bank list answered on POST instead of GET.
    let banks = paths["/v1/transfers/banks"]["get"].take();
    paths["/v1/transfers/banks"] = json!({"post": banks});
    // The checkout transaction's id sent as a header instead of the query.
    let fetch = &mut paths["/v1/checkout/transaction"]["get"]["parameters"];
    let id = fetch.as_array_mut().expect("parameters").iter_mut().find(|p| p["name"] == "id").expect("id");
    id["in"] = json!("header");
    let text = serde_json::to_string(&document).expect("JSON");
    let report = openapi::diff(&spec, &read(&text).expect("readable"));
    let new: Vec<_> = report.new_differences().collect();
    let method = new.iter().find(|d| d.kind == DifferenceKind::Method).expect("a method difference");
    assert_eq!(
        (method.operation.as_deref(), method.spec.as_deref(), method.document.as_deref()),
        (Some("list_banks"), Some("GET"), Some("POST"))
    );
    let location = new.iter().find(|d| d.kind == DifferenceKind::Location).expect("a location difference");
    assert_eq!(
        (location.subject.as_str(), location.spec.as_deref(), location.document.as_deref()),
        ("id", Some("query"), Some("header"))
    );
    assert_eq!(new.len(), 2, "{new:#?}");
}

#[test]
fn a_disagreement_that_no_longer_matches_is_stale() {
    // The vendor now documents what a disagreement says it lacks: the record is stale.
    let spec = spec();
    let mut document = vendor_json();
    let body = &mut document["components"]["schemas"]["CreateAccountRequest"]["properties"];
    body["accountType"] = json!({"type": "string"});
    let text = serde_json::to_string(&document).expect("JSON");
    let report = openapi::diff(&spec, &read(&text).expect("readable"));
    assert_eq!(report.new_differences().count(), 0);
    assert_eq!(report.stale.len(), 1, "{:#?}", report.stale);
    assert_eq!(report.stale[0].operation, "create_sub_account");
    assert_eq!(report.stale[0].subject, "account_type");
    assert!(!report.is_clean());
}

#[test]
fn a_disagreement_added_for_nothing_is_stale() {
    let text = builtin_spec_text().replacen(
        "    disagreements:\n",
        "    disagreements:\n      - concerns: type\n        key: noSuchKey\n        text: A difference that is not there.\n",
        1,
    );
    let spec = payspec_codegen::load_str("edited.yaml", &text).unwrap_or_else(|e| panic!("{e}"));
    let report = openapi::diff(&spec, &read(&vendor_text()).expect("readable"));
    assert!(report.stale.iter().any(|s| s.subject == "noSuchKey"), "{:#?}", report.stale);
}

#[test]
fn the_export_round_trips_through_the_reader() {
    let spec = spec();
    let text = openapi::export_json(&spec);
    let document = read(&text).unwrap_or_else(|e| panic!("{e}"));
    assert!(document.payspec_export);
    let report = openapi::diff(&spec, &document);
    let found: Vec<String> = report.differences.iter().map(ToString::to_string).collect();
    assert!(found.is_empty(), "the export differs from its spec:\n{}", found.join("\n"));
    assert!(report.quirks.is_empty(), "{:#?}", report.quirks);
    // Every route is an operation: 97 canonical and the alternative forms that are not
    // another operation's route.
    let routes = spec.routes().filter(|r| r.alias.is_none_or(|a| a.same_route_as.is_none())).count();
    assert_eq!(document.operations.len(), routes);
    assert_eq!(
        document.operations.iter().filter(|op| op.alias_of.is_some()).count(),
        routes - spec.operations.len()
    );
}

#[test]
fn the_export_is_deterministic_and_says_what_openapi_cannot() {
    let spec = spec();
    let first = openapi::export_json(&spec);
    assert_eq!(first, openapi::export_json(&spec));
    let doc: Value = serde_json::from_str(&first).expect("JSON");
    assert_eq!(doc["openapi"], "3.1.0");
    let servers: Vec<&str> =
        doc["servers"].as_array().expect("servers").iter().filter_map(|s| s["url"].as_str()).collect();
    assert_eq!(servers, spec.environments.iter().map(|e| e.url.as_str()).collect::<Vec<_>>());

    let transfer = &doc["paths"]["/v2/transfers/bank"]["post"];
    assert_eq!(transfer["operationId"], "bank_transfer");
    assert_eq!(transfer["security"], json!([{"bearer": [], "accountId": []}]));
    assert_eq!(transfer["x-payspec-effect"], "money");
    assert_eq!(
        transfer["x-payspec-idempotency"],
        json!({"key": "merchantTxRef", "header": "X-Idempotent-key"})
    );
    let body = &transfer["requestBody"]["content"]["application/json"]["schema"];
    assert_eq!(body["properties"]["amount"]["type"], "number");
    assert!(body["required"].as_array().expect("required").contains(&json!("merchantTxRef")));
    let answer = &transfer["responses"]["200"]["content"]["application/json"]["schema"];
    assert_eq!(answer["properties"]["data"]["$ref"], "#/components/schemas/BankAccountTransferResult");
    assert_eq!(
        transfer["responses"]["default"]["content"]["application/json"]["schema"]["$ref"],
        "#/components/schemas/Error"
    );
    let old = &doc["paths"]["/v1/transfers/bank"]["post"];
    assert_eq!(old["x-payspec-alias-of"], "bank_transfer");
    // The codes the service documents, each with whether it may be sent again.
    let codes = doc["x-payspec"]["codes"].as_array().expect("codes");
    assert_eq!(codes.len(), spec.codes.len());
    let generic = spec.codes.iter().find(|c| c.retry).expect("a code to send again");
    assert!(codes.iter().any(|c| c["code"] == json!(generic.code) && c["retry"] == json!(true)), "{codes:?}");

    // Nesting and exact types: the checkout order nests under `order`; a decimal the
    // spec sends as a string is a string with a decimal pattern.
    let order =
        &doc["paths"]["/v1/checkout/order"]["post"]["requestBody"]["content"]["application/json"]["schema"];
    assert_eq!(order["properties"]["order"]["properties"]["amount"]["type"], "number");
    assert!(order["required"].as_array().expect("required").contains(&json!("order")));
    let debit = &doc["paths"]["/v1/direct-debits/debit-mandate"]["post"]["requestBody"]["content"]["application/json"]
        ["schema"];
    assert_eq!(debit["properties"]["amount"]["type"], "string");
    assert!(debit["properties"]["amount"]["pattern"].is_string());
    // Token issue sends the account header and no token; revoke the token only.
    assert_eq!(doc["paths"]["/v1/auth/token/issue"]["post"]["security"], json!([{"accountId": []}]));
    assert_eq!(doc["paths"]["/v1/auth/token/revoke"]["post"]["security"], json!([{"bearer": []}]));
    // Pages.
    assert_eq!(doc["paths"]["/v1/transactions/accounts"]["get"]["x-payspec-pagination"]["style"], "cursor");
}

#[test]
fn a_yaml_document_is_read_like_its_json() {
    let yaml = r#"
openapi: 3.0.3
info: {title: t, version: "1"}
paths:
  /v1/things/{id}:
    get:
      operationId: thing
      parameters:
        - {name: id, in: path, required: true, schema: {type: string}}
      responses:
        200:
          description: ok
          content:
            application/json:
              schema: {type: object, properties: {data: {type: object, properties: {n: {type: integer}}}}}
"#;
    let document = read_document("doc.yaml", yaml).unwrap_or_else(|e| panic!("{e}"));
    let op = &document.operations[0];
    assert_eq!((op.method, op.path.as_str()), (Method::Get, "/v1/things/{id}"));
    let keys: Vec<&str> = op.answer.as_ref().expect("an answer").iter().map(|f| f.key.as_str()).collect();
    assert_eq!(keys, ["", "data", "data.n"]);
}

/// What a document that cannot be read says, and where.
fn refused(name: &str, text: &str) -> DocumentError {
    match read_document(name, text) {
        Ok(_) => panic!("{name} was read"),
        Err(error) => error,
    }
}

#[test]
fn unreadable_documents_are_located_errors() {
    let error = refused("cut.json", "{\n  \"openapi\": \"3.1.0\",\n  \"paths\": {\n");
    assert!(error.message.starts_with("not valid JSON"), "{error}");
    assert_eq!(error.location.map(|l| l.line), Some(4), "{error}");

    let error = refused("tabs.yaml", "openapi: 3.0.0\npaths:\n\t/x: {}\n");
    assert!(error.message.contains("YAML"), "{error}");
    assert!(error.location.is_some(), "{error}");

    let error = refused("list.yaml", "- a\n- b\n");
    assert!(error.message.contains("not a mapping"), "{error}");

    let error = refused("old.json", "{\"swagger\": \"2.0\", \"paths\": {}}");
    assert!(error.message.contains("Swagger 2.0"), "{error}");
    assert_eq!(
        error.to_string(),
        "old.json:1:2: error: a Swagger 2.0 document; payspec reads OpenAPI 3.0 and 3.1 (convert it first) (at /swagger)"
    );

    let error = refused("two.yaml", "openapi: 2.0.0\npaths: {}\n");
    assert!(error.message.contains("not an OpenAPI 3.x document"), "{error}");

    let error = refused("none.yaml", "info: {title: t}\n");
    assert!(error.message.contains("no `openapi` version"), "{error}");
}

#[test]
fn broken_and_hostile_references_are_errors_not_hangs() {
    let with_body = |schema: Value, components: Value| {
        json!({
            "openapi": "3.1.0",
            "paths": {"/x": {"post": {
                "requestBody": {"content": {"application/json": {"schema": schema}}},
                "responses": {"200": {"description": "ok"}}
            }}},
            "components": {"schemas": components}
        })
        .to_string()
    };
    let text = serde_json::to_string_pretty(
        &serde_json::from_str::<Value>(&with_body(
            json!({"$ref": "#/components/schemas/Missing"}),
            json!({}),
        ))
        .expect("JSON"),
    )
    .expect("JSON");
    let error = refused("broken.json", &text);
    assert!(error.message.contains("broken `$ref: #/components/schemas/Missing`"), "{error}");
    let line =
        text.lines().position(|l| l.contains("#/components/schemas/Missing")).expect("the reference") + 1;
    assert_eq!(error.location.map(|l| l.line), Some(line), "{error}");
    assert_eq!(error.pointer, "/paths/~1x/post/requestBody/content/application~1json/schema");

    let error = refused("far.json", &with_body(json!({"$ref": "other.json#/A"}), json!({})));
    assert!(error.message.contains("points outside the document"), "{error}");

    let error = refused(
        "loop.json",
        &with_body(
            json!({"$ref": "#/components/schemas/A"}),
            json!({"A": {"$ref": "#/components/schemas/B"}, "B": {"$ref": "#/components/schemas/A"}}),
        ),
    );
    assert!(error.message.contains("a loop"), "{error}");

    // Each level holds the next twenty times: 20^12 fields if followed blindly.
    let mut components = serde_json::Map::new();
    for level in 0..12 {
        let next = json!({"$ref": format!("#/components/schemas/L{}", level + 1)});
        let properties: serde_json::Map<String, Value> =
            (0..20).map(|i| (format!("f{i}"), next.clone())).collect();
        components.insert(format!("L{level}"), json!({"type": "object", "properties": properties}));
    }
    components.insert("L12".to_owned(), json!({"type": "string"}));
    let error = refused(
        "wide.json",
        &with_body(json!({"$ref": "#/components/schemas/L0"}), Value::Object(components)),
    );
    assert!(error.message.contains("more than"), "{error}");

    // An `allOf` that holds itself, and one that doubles at every level.
    let error = refused(
        "all-loop.json",
        &with_body(
            json!({"$ref": "#/components/schemas/A"}),
            json!({"A": {"type": "object", "allOf": [{"$ref": "#/components/schemas/B"}]}, "B": {"allOf": [{"$ref": "#/components/schemas/A"}]}}),
        ),
    );
    assert!(error.message.contains("`allOf` nests deeper than"), "{error}");
    let mut doubling = serde_json::Map::new();
    for level in 0..40 {
        let next = json!({"$ref": format!("#/components/schemas/D{}", level + 1)});
        doubling.insert(format!("D{level}"), json!({"allOf": [next.clone(), next]}));
    }
    doubling.insert("D40".to_owned(), json!({"type": "object", "properties": {"x": {"type": "string"}}}));
    let error = refused(
        "all-wide.json",
        &with_body(json!({"$ref": "#/components/schemas/D0"}), Value::Object(doubling)),
    );
    assert!(error.message.contains("more than"), "{error}");

    // A schema that holds itself is legal: it is followed to a bounded depth.
    let text = with_body(
        json!({"$ref": "#/components/schemas/Node"}),
        json!({"Node": {"type": "object", "properties": {"next": {"$ref": "#/components/schemas/Node"}}}}),
    );
    let document = read(&text).unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(document.operations[0].params.len(), 1);

    // Nesting past the JSON reader's limit is an error too.
    let deep = format!("{}{}", "[".repeat(10_000), "]".repeat(10_000));
    let error = refused("deep.json", &deep);
    assert!(error.message.contains("recursion limit"), "{error}");
}

#[test]
fn a_document_of_many_quirky_paths_is_read_in_one_pass_over_its_text() {
    // Every path carries a query string (a quirk each): only the first ones are located,
    // so the text is not searched once per path.
    let paths: serde_json::Map<String, Value> = (0..20_000)
        .map(|i| (format!("/p{i}?q={{q}}"), json!({"get": {"responses": {"200": {"description": "ok"}}}})))
        .collect();
    let text = json!({"openapi": "3.0.0", "paths": paths}).to_string();
    let document = read(&text).unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(document.quirks.len(), 20_000);
    let located = document.quirks.iter().filter(|q| q.location.is_some()).count();
    assert!(located > 0 && located <= 256, "{located} located");
    assert!(document.operations.iter().all(|op| op.params.iter().any(|p| p.key == "q")));
}

#[test]
fn no_prefix_of_the_vendor_document_panics() {
    let text = vendor_text();
    let step = text.len() / 40;
    for cut in (1..40).map(|i| i * step) {
        let Some(prefix) = text.get(..cut) else { continue };
        assert!(read(prefix).is_err(), "a document cut at byte {cut} was read");
    }
}

/// The vendor's document imported (`payspec import`): a draft `payspec check` accepts as
/// written, whose requests and answers, read back as a document, differ from the spec's
/// exactly where the vendor's own document does: the readings the spec records against it.
#[test]
fn an_import_of_the_vendor_document_differs_from_the_spec_only_where_the_spec_records_it() {
    let spec = spec();
    let draft = openapi::import(VENDOR_DOCUMENT, &vendor_text()).unwrap_or_else(|e| panic!("{e}"));
    let drafted = payspec_codegen::load_str("draft.yaml", &draft.yaml)
        .unwrap_or_else(|e| panic!("{e}\n{}", draft.yaml));
    // The draft's wire, as a document: its export, read as any vendor's document is.
    let mut exported = openapi::export(&drafted);
    if let Some(top) = exported.as_object_mut() {
        top.remove("x-payspec");
    }
    let document = read_document("draft.json", &exported.to_string()).unwrap_or_else(|e| panic!("{e}"));
    let vendor = read_document(VENDOR_DOCUMENT, &vendor_text()).unwrap_or_else(|e| panic!("{e}"));
    let key = |d: &openapi::Difference| {
        format!("{:?} {} {} {:?} {}", d.kind, d.method, d.path, d.operation, d.subject)
    };
    let ours: std::collections::BTreeSet<String> =
        openapi::diff(&spec, &document).differences.iter().map(key).collect();
    let theirs: std::collections::BTreeSet<String> =
        openapi::diff(&spec, &vendor).differences.iter().map(key).collect();
    let only_draft: Vec<&String> = ours.difference(&theirs).collect();
    let only_vendor: Vec<&String> = theirs.difference(&ours).collect();
    assert!(
        only_draft.is_empty() && only_vendor.is_empty(),
        "the draft differs from the spec where the document does not:\n{}\nthe document differs where the draft does not:\n{}",
        only_draft.iter().map(|s| s.as_str()).collect::<Vec<_>>().join("\n"),
        only_vendor.iter().map(|s| s.as_str()).collect::<Vec<_>>().join("\n"),
    );
}

/// A document of thousands of operations, schemas that hold themselves, compositions and a
/// reference that leads nowhere: imported within seconds, every construct it cannot take
/// listed with its place, and what it drafts accepted by the loader.
#[test]
fn a_large_and_awkward_document_imports_in_bounded_time_and_says_what_it_left_out() {
    let mut paths = serde_json::Map::new();
    for i in 0..2_100 {
        paths.insert(
            format!("/v1/items{i}/{{id}}"),
            json!({
                "get": {
                    "operationId": format!("getItem{i}"),
                    "tags": [format!("Group {}", i % 7)],
                    "parameters": [{"name": "id", "in": "path", "required": true, "schema": {"type": "string"}},
                                   {"name": "session", "in": "cookie", "schema": {"type": "string"}}],
                    "responses": {"200": {"description": "ok", "content": {"application/json": {"schema": {"$ref": "#/components/schemas/Node"}}}}}
                },
                "post": {
                    "operationId": format!("updateItem{i}"),
                    "requestBody": {"content": {"application/json": {"schema": {
                        "allOf": [{"$ref": "#/components/schemas/Node"}, {"type": "object", "required": ["note"], "properties": {"note": {"type": ["string", "null"]}, "at": {"type": "string", "format": "date-time"}}}]
                    }}}},
                    "responses": {"201": {"description": "ok", "content": {"application/json": {"schema": {"$ref": "#/components/schemas/Missing"}}}}}
                }
            }),
        );
    }
    // A schema that holds itself every way: by each of ten properties, and twice in its own
    // `allOf`. Flattened as a body and read as an answer, it must end.
    let properties: serde_json::Map<String, Value> =
        (0..10).map(|i| (format!("p{i}"), json!({"$ref": "#/components/schemas/Loop"}))).collect();
    paths.insert(
        "/loop".to_owned(),
        json!({"post": {
            "operationId": "loop",
            "requestBody": {"content": {"application/json": {"schema": {"$ref": "#/components/schemas/Loop"}}}},
            "responses": {"200": {"description": "ok", "content": {"application/json": {"schema": {"$ref": "#/components/schemas/Loop"}}}}}
        }}),
    );
    let document = json!({
        "openapi": "3.1.0",
        "info": {"title": "Large", "version": "1"},
        "servers": [{"url": "https://{region}.example.com", "variables": {"region": {"default": "eu"}}}, {"url": "/relative"}],
        "components": {
            "securitySchemes": {"key": {"type": "apiKey", "in": "query", "name": "key"}},
            "schemas": {
                "Loop": {"type": "object", "properties": properties, "allOf": [{"$ref": "#/components/schemas/Loop"}, {"$ref": "#/components/schemas/Loop"}]},
                "Node": {"type": "object", "properties": {
                    "name": {"type": "string", "enum": ["a", "b", null]},
                    "amount": {"type": ["number", "string"]},
                    "parent": {"$ref": "#/components/schemas/Node"},
                    "children": {"type": "array", "items": {"$ref": "#/components/schemas/Node"}},
                    "either": {"oneOf": [{"type": "object", "properties": {"x": {"type": "integer"}}}, {"type": "object", "properties": {"y": {"type": "boolean"}}}]}
                }}
            }
        },
        "paths": paths,
    });
    let text = document.to_string();
    let started = std::time::Instant::now();
    let draft = openapi::import("large.json", &text).unwrap_or_else(|e| panic!("{e}"));
    let took = started.elapsed();
    // Bounded: a debug build drafts 4,200 operations in well under this.
    assert!(took < std::time::Duration::from_secs(20), "{took:?}");
    // Within the format's limits: 2,000 operations, and 4 MiB of text.
    assert!(
        draft.operations <= payspec_codegen::load::MAX_OPERATIONS && draft.operations > 500,
        "{}",
        draft.operations
    );
    assert!(draft.yaml.len() <= payspec_codegen::load::MAX_SPEC_BYTES);
    let said: Vec<String> = draft.unimported.iter().map(ToString::to_string).collect();
    let has = |needle: &str| said.iter().any(|line| line.contains(needle));
    assert!(has("holds at most 2000 operations"), "{said:#?}");
    assert!(has("larger than the 4194304 bytes a spec may have"), "{said:#?}");
    assert!(has("travels in `cookie`"), "{said:#?}");
    assert!(has("broken `$ref: #/components/schemas/Missing`"), "{said:#?}");
    assert!(has("`Node.parent` would make the shape hold itself"), "{said:#?}");
    assert!(has("the server `/relative` is not an absolute http(s) URL"), "{said:#?}");
    assert!(has("does not travel in a header"), "{said:#?}");
    assert!(has("`loop` has more than 500 parameters"), "{said:#?}");
    // Each with its place: a pointer, and a line and column where it was looked up.
    assert!(draft.unimported.iter().all(|u| !u.pointer.is_empty()), "{said:#?}");
    assert!(draft.unimported.iter().any(|u| u.location.is_some()), "{said:#?}");
    // The server's variable is written in; the self-holding field is exact JSON, the list of
    // itself a list; the nullable string a string, the number-or-string an amount.
    assert!(
        draft.yaml.contains("server_1: \"https://eu.example.com\"")
            || draft.yaml.contains("eu: \"https://eu.example.com\""),
        "{}",
        &draft.yaml[..2000]
    );
    assert!(draft.yaml.contains("parent: { type: json, wire: parent"), "{}", &draft.yaml[..3000]);
    assert!(
        draft.yaml.contains("children: { type: Node, wire: children, list: true"),
        "{}",
        &draft.yaml[..3000]
    );
    assert!(draft.yaml.contains("amount: { type: decimal"), "{}", &draft.yaml[..3000]);
    let spec = payspec_codegen::load_str("large.yaml", &draft.yaml).unwrap_or_else(|e| panic!("{e}"));
    let update = spec.operations.iter().find(|op| op.name == "update_item0").expect("update_item0");
    let note = update.params.iter().find(|p| p.name == "note").expect("note");
    assert!(note.required && note.wire == "note");
    let at = update.params.iter().find(|p| p.name == "at").expect("at");
    assert_eq!(at.ty, payspec_codegen::model::Type::DateTime);
    // What the loader accepts generates (the vendors' drafts compile: tests/imported.rs).
    let source =
        payspec_codegen::generate(&spec, &payspec_codegen::Options::new()).unwrap_or_else(|e| panic!("{e}"));
    assert!(source.contains("pub struct UpdateItem0"));
}
