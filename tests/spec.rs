//! The spec covers the interface: every row of the endpoint tables of the interface
//! (`payments-api.md`), with every parameter name, is an operation of `spec/payments.yaml`.
//! The tables are read from their copy in the repository, `spec/facts/interface-endpoints.md`
//! (`spec/facts/refresh.py` writes it from the interface, and CI checks it is current), so a
//! changed interface makes this test fail with the row that no longer matches.

// These suites link into this test binary, one binary fewer to build for each.
#[path = "audit.rs"]
mod audit_suite;
#[path = "docs.rs"]
mod docs_suite;
#[path = "extend.rs"]
mod extend_suite;
#[path = "first_errors.rs"]
mod first_errors_suite;
#[path = "malformed.rs"]
mod malformed_suite;
#[path = "one_engine.rs"]
mod one_engine_suite;
#[path = "openapi.rs"]
mod openapi_suite;
#[path = "reserved_names.rs"]
mod reserved_names_suite;

use payspec_codegen::model::{Method, Operation, Origin, ParamLocation, Spec};
use payspec_codegen::report;
use payspec_tests::load_builtin;
use std::collections::BTreeSet;
use std::path::PathBuf;

/// Rows of the endpoint tables today; a new or removed row changes it.
const EXPECTED_ROWS: usize = 96;
/// Method and path pairs of those rows, counting every method of `GET or POST` and every
/// `(also ...)` form.
const EXPECTED_PAIRS: usize = 112;

fn interface_path() -> PathBuf {
    PathBuf::from(concat!(env!("CARGO_MANIFEST_DIR"), "/../spec/facts/interface-endpoints.md"))
}

/// The interface's endpoint tables.
fn interface_text() -> String {
    let path = interface_path();
    std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

/// The built-in spec as the interface checks see it: operations a user added with
/// `origin: extension` are theirs, and those only the vendor's guides document
/// (`origin: developer_docs`, such as the webhook delivery log) are the guides': neither is
/// the interface's, and both are left out, with groups that hold nothing else.
fn spec() -> Spec {
    let spec = load_builtin().unwrap_or_else(|errors| panic!("the built-in spec does not load:\n{errors}"));
    interface_part(spec)
}

fn interface_part(mut spec: Spec) -> Spec {
    spec.operations.retain(|op| !matches!(op.origin, Origin::Extension | Origin::DeveloperDocs));
    let kept: BTreeSet<String> = spec.operations.iter().map(|op| op.group.clone()).collect();
    spec.groups.retain(|group| kept.contains(&group.key));
    spec
}

/// One row of an endpoint table.
#[derive(Debug)]
struct Row {
    /// The `###` heading the row stands under.
    section: String,
    /// One-based line in the interface file.
    line: usize,
    /// The row as written, for messages.
    text: String,
    /// Every method and path the row names.
    pairs: Vec<(Method, String)>,
    /// What the parameters cell asks of the operation.
    params: Vec<ParamNeed>,
    /// The whole parameters cell, notes included.
    params_cell: String,
}

impl Row {
    fn describe(&self) -> String {
        format!("interface-endpoints.md:{} ({}): {}", self.line, self.section, self.text)
    }
}

/// What one token of a parameters cell requires.
#[derive(Debug, Clone, PartialEq, Eq)]
enum ParamNeed {
    /// A parameter with exactly this name.
    Named(String),
    /// A parameter with this wire key, in this location if given.
    Wire { wire: String, location: Option<ParamLocation> },
}

impl ParamNeed {
    fn describe(&self) -> String {
        match self {
            ParamNeed::Named(name) => format!("`{name}`"),
            ParamNeed::Wire { wire, location: Some(l) } => format!("wire `{wire}` in the {}", l.as_str()),
            ParamNeed::Wire { wire, location: None } => format!("wire `{wire}`"),
        }
    }
}

fn is_snake_identifier(token: &str) -> bool {
    token.starts_with(|c: char| c.is_ascii_lowercase())
        && token.chars().all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '_')
}

/// Replaces the first (version) segment of `path` with `v1`.
fn with_v1(path: &str) -> Option<String> {
    let rest = path.strip_prefix('/')?;
    let (_, tail) = rest.split_once('/')?;
    Some(format!("/v1/{tail}"))
}

fn parse_paths(cell: &str, context: &str) -> Vec<String> {
    let (main, note) = match cell.split_once(" (") {
        Some((main, note)) => {
            let note = note
                .strip_suffix(')')
                .unwrap_or_else(|| panic!("{context}: unclosed parenthesis in the path cell"));
            (main.trim(), Some(note.trim()))
        }
        None => (cell.trim(), None),
    };
    assert!(
        main.starts_with('/') && !main.contains(' '),
        "{context}: the path cell does not start with a path: `{cell}`"
    );
    let mut paths = vec![main.to_owned()];
    let Some(note) = note else { return paths };
    let other = note.strip_prefix("also listed as ").or_else(|| note.strip_prefix("also "));
    match other {
        Some("/v1/...") => {
            paths.push(with_v1(main).unwrap_or_else(|| panic!("{context}: `{main}` has no version segment")))
        }
        Some(other) => {
            assert!(
                other.starts_with('/') && !other.contains(' ') && !other.contains("..."),
                "{context}: cannot read the other form `{other}`"
            );
            paths.push(other.to_owned());
        }
        // A note about the filter form, not another path.
        None => assert!(
            note.contains("filter form"),
            "{context}: the path cell has a note this test does not know: `({note})`"
        ),
    }
    paths
}

fn parse_methods(cell: &str, context: &str) -> Vec<Method> {
    cell.split(" or ")
        .map(|m| Method::parse(m.trim()).unwrap_or_else(|| panic!("{context}: `{m}` is not an HTTP method")))
        .collect()
}

fn parse_params(cell: &str, context: &str) -> Vec<ParamNeed> {
    let names = cell.split(';').next().unwrap_or_default();
    let mut out = Vec::new();
    for token in names.split(',').map(str::trim) {
        match token {
            "" => panic!("{context}: empty parameter name"),
            "none" => {}
            "sub-account id" => {
                out.push(ParamNeed::Wire { wire: "subAccountId".into(), location: Some(ParamLocation::Path) })
            }
            "order reference" => out.push(ParamNeed::Wire { wire: "orderReference".into(), location: None }),
            token if is_snake_identifier(token) => out.push(ParamNeed::Named(token.to_owned())),
            token => {
                // "mandate identifier in query parameter mandateId": the wire key is named.
                if let Some((_, wire)) = token.split_once(" in query parameter ") {
                    out.push(ParamNeed::Wire {
                        wire: wire.trim().to_owned(),
                        location: Some(ParamLocation::Query),
                    });
                } else {
                    eprintln!("{context}: `{token}` is a description, not a parameter name; not checked");
                }
            }
        }
    }
    out
}

/// Reads every row of the tables under `## Endpoints`.
fn endpoint_rows(text: &str) -> Vec<Row> {
    let mut rows = Vec::new();
    let mut in_endpoints = false;
    let mut section = String::new();
    let mut header_seen = false;
    for (index, line) in text.lines().enumerate() {
        let number = index + 1;
        if let Some(heading) = line.strip_prefix("## ") {
            in_endpoints = heading.trim() == "Endpoints";
            continue;
        }
        if !in_endpoints {
            continue;
        }
        if let Some(heading) = line.strip_prefix("### ") {
            section = heading.trim().to_owned();
            header_seen = false;
            continue;
        }
        let line = line.trim();
        if !line.starts_with('|') {
            continue;
        }
        let context = format!("interface-endpoints.md:{number} ({section})");
        let cells: Vec<&str> = line.trim_matches('|').split('|').map(str::trim).collect();
        assert_eq!(cells.len(), 3, "{context}: a row has three cells: `{line}`");
        if cells.iter().all(|c| c.chars().all(|ch| ch == '-' || ch == ':')) {
            continue;
        }
        if cells == ["Method", "Path", "Parameters"] {
            header_seen = true;
            continue;
        }
        assert!(header_seen, "{context}: a row before the `| Method | Path | Parameters |` header");
        let methods = parse_methods(cells[0], &context);
        let paths = parse_paths(cells[1], &context);
        let pairs = methods.iter().flat_map(|m| paths.iter().map(move |p| (*m, p.clone()))).collect();
        rows.push(Row {
            section: section.clone(),
            line: number,
            text: line.to_owned(),
            pairs,
            params: parse_params(cells[2], &context),
            params_cell: cells[2].to_owned(),
        });
    }
    rows
}

fn has_route(op: &Operation, method: Method, path: &str) -> bool {
    (op.method == method && op.path.as_str() == path)
        || op.aliases.iter().any(|a| a.method == method && a.path.as_str() == path)
}

fn satisfies(op: &Operation, need: &ParamNeed) -> bool {
    match need {
        ParamNeed::Named(name) => op.param(name).is_some(),
        ParamNeed::Wire { wire, location } => {
            op.params.iter().any(|p| &p.wire == wire && location.is_none_or(|l| l == p.location))
        }
    }
}

/// The operations that answer every method and path of `row` and take every parameter it names.
fn matching<'a>(spec: &'a Spec, row: &Row) -> Vec<&'a Operation> {
    spec.operations
        .iter()
        .filter(|op| row.pairs.iter().all(|(m, p)| has_route(op, *m, p)))
        .filter(|op| row.params.iter().all(|need| satisfies(op, need)))
        .collect()
}

/// Says, for a row with no match, what the closest operation lacks.
fn explain_miss(spec: &Spec, row: &Row) -> String {
    let on_route: Vec<&Operation> =
        spec.operations.iter().filter(|op| row.pairs.iter().any(|(m, p)| has_route(op, *m, p))).collect();
    if on_route.is_empty() {
        return format!("no operation has any of the routes {:?}", row.pairs);
    }
    on_route
        .iter()
        .map(|op| {
            let missing_routes: Vec<String> = row
                .pairs
                .iter()
                .filter(|(m, p)| !has_route(op, *m, p))
                .map(|(m, p)| format!("{m} {p}"))
                .collect();
            let missing_params: Vec<String> =
                row.params.iter().filter(|need| !satisfies(op, need)).map(ParamNeed::describe).collect();
            format!("`{}` lacks routes {missing_routes:?} and params {missing_params:?}", op.name)
        })
        .collect::<Vec<_>>()
        .join("; ")
}

#[test]
fn every_endpoint_row_is_an_operation_with_its_parameters() {
    let text = interface_text();
    let spec = spec();
    let rows = endpoint_rows(&text);

    let mut failures = Vec::new();
    for row in &rows {
        if matching(&spec, row).is_empty() {
            failures.push(format!("{}\n    {}", row.describe(), explain_miss(&spec, row)));
        }
    }
    assert!(
        failures.is_empty(),
        "{} interface row(s) have no operation in the spec:\n  {}",
        failures.len(),
        failures.join("\n  ")
    );

    let pairs: usize = rows.iter().map(|r| r.pairs.len()).sum();
    assert_eq!(rows.len(), EXPECTED_ROWS, "rows in the endpoint tables of the interface");
    assert_eq!(pairs, EXPECTED_PAIRS, "method and path pairs in the endpoint tables");
}

#[test]
fn every_interface_route_and_no_other_is_in_the_spec() {
    let text = interface_text();
    let spec = spec();
    let interface: BTreeSet<(Method, String)> =
        endpoint_rows(&text).into_iter().flat_map(|r| r.pairs).collect();
    let routes: BTreeSet<(Method, String)> =
        spec.routes().map(|r| (r.method, r.path.as_str().to_owned())).collect();

    let only_spec: Vec<String> = routes.difference(&interface).map(|(m, p)| format!("{m} {p}")).collect();
    // Beyond the interface: the token issue, and forms the live service answers, each
    // recorded as observed.
    let observed: BTreeSet<&str> = spec
        .operations
        .iter()
        .flat_map(|op| &op.disagreements)
        .filter(|d| d.concerns == payspec_codegen::model::Concern::Route)
        .filter(|d| d.source == payspec_codegen::model::FactSource::Observed)
        .flat_map(|d| d.routes.iter().map(String::as_str))
        .collect();
    let unexplained: Vec<&str> =
        only_spec.iter().map(String::as_str).filter(|r| !observed.contains(r)).collect();
    assert_eq!(unexplained, ["POST /v1/auth/token/issue"], "routes of the spec the interface does not list");
    let only_interface: Vec<String> =
        interface.difference(&routes).map(|(m, p)| format!("{m} {p}")).collect();
    assert!(only_interface.is_empty(), "interface routes missing from the spec: {only_interface:?}");
}

#[test]
fn only_token_issue_comes_from_the_reference_alone() {
    let text = interface_text();
    let spec = spec();
    let rows = endpoint_rows(&text);
    let unlisted: Vec<&Operation> = spec
        .operations
        .iter()
        .filter(|op| !rows.iter().any(|row| matching(&spec, row).iter().any(|m| m.name == op.name)))
        .collect();
    let names: Vec<&str> = unlisted.iter().map(|op| op.name.as_str()).collect();
    assert_eq!(names, ["issue_token"], "operations that no interface row accounts for");
    let issue = unlisted[0];
    assert_eq!(issue.origin, Origin::Reference);
    assert_eq!((issue.method, issue.path.as_str()), (Method::Post, "/v1/auth/token/issue"));

    let reference_only: Vec<&str> = spec
        .operations
        .iter()
        .filter(|op| op.origin == Origin::Reference)
        .map(|op| op.name.as_str())
        .collect();
    assert_eq!(reference_only, ["issue_token"], "operations with `origin: reference`");
}

#[test]
fn each_row_is_in_the_group_of_its_section() {
    let text = interface_text();
    let spec = spec();
    let mut failures = Vec::new();
    for row in endpoint_rows(&text) {
        let ops = matching(&spec, &row);
        // A row without an operation fails `every_endpoint_row_is_an_operation_with_its_parameters`.
        let in_section = ops.is_empty()
            || ops.into_iter().any(|op| {
                let titles = std::iter::once(op.group.as_str())
                    .chain(op.also_listed_as.iter().map(|l| l.group.as_str()))
                    .filter_map(|key| spec.group(key))
                    .map(|g| g.title.as_str())
                    .collect::<Vec<_>>();
                titles.contains(&row.section.as_str())
            });
        if !in_section {
            failures.push(row.describe());
        }
    }
    assert!(
        failures.is_empty(),
        "rows whose operation is not in the section's group:\n  {}",
        failures.join("\n  ")
    );

    let sections: Vec<String> = {
        let mut seen: Vec<String> = Vec::new();
        for row in endpoint_rows(&text) {
            if seen.last() != Some(&row.section) {
                seen.push(row.section);
            }
        }
        seen
    };
    let titles: Vec<String> = spec.groups.iter().map(|g| g.title.clone()).collect();
    assert_eq!(titles, sections, "the spec's groups, in the order of the interface's sections");
}

#[test]
fn the_row_listed_twice_names_its_other_listing() {
    let text = interface_text();
    let spec = spec();
    let rows: Vec<Row> = endpoint_rows(&text)
        .into_iter()
        .filter(|r| r.params_cell.contains("listed twice under two operation names"))
        .collect();
    assert_eq!(rows.len(), 1, "rows listed twice under two operation names: {rows:#?}");
    let row = &rows[0];
    let ops = matching(&spec, row);
    assert_eq!(
        ops.len(),
        1,
        "{}: operations {:?}",
        row.describe(),
        ops.iter().map(|o| &o.name).collect::<Vec<_>>()
    );
    let op = ops[0];
    let named: Vec<&str> = op.also_listed_as.iter().filter_map(|l| l.name.as_deref()).collect();
    assert_eq!(
        named.len(),
        1,
        "{}: `{}` names its other listing: {:?}",
        row.describe(),
        op.name,
        op.also_listed_as
    );
    assert_ne!(named[0], op.name);
    assert!(spec.operation(named[0]).is_none(), "the other listing `{}` is not a second operation", named[0]);
    assert_eq!((op.name.as_str(), named[0]), ("list_sub_account_terminals", "fetch_account_terminals"));
}

#[test]
fn tokenized_card_operations_are_also_listed_under_charge() {
    let text = interface_text();
    assert!(
        text.contains("The tokenized-card operations and the card-sequence operations above are also listed under the Charge group"),
        "the interface no longer says where the tokenized-card operations are also listed"
    );
    let spec = spec();
    let rows: Vec<Row> = endpoint_rows(&text)
        .into_iter()
        .filter(|r| {
            r.section == "Online Checkout" && r.pairs.iter().any(|(_, p)| p.contains("tokenized-card"))
        })
        .collect();
    assert_eq!(rows.len(), 4, "tokenized-card rows: {rows:#?}");
    let mut names = Vec::new();
    for row in &rows {
        let ops = matching(&spec, row);
        assert_eq!(ops.len(), 1, "{}", row.describe());
        let op = ops[0];
        assert_eq!(op.group, "checkout", "{}", row.describe());
        assert!(
            op.also_listed_as.iter().any(|l| l.group == "charge"),
            "{}: `{}` has no also_listed_as in group charge: {:?}",
            row.describe(),
            op.name,
            op.also_listed_as
        );
        names.push(op.name.as_str());
    }
    assert_eq!(
        names,
        ["charge_tokenized_card", "list_tokenized_cards", "update_tokenized_card", "delete_tokenized_card"]
    );
}

#[test]
fn the_interface_parser_reads_every_cell_form() {
    let context = "test";
    assert_eq!(
        parse_paths("/v2/transfers/bank/{subAccountId} (also listed as /v1/...)", context),
        ["/v2/transfers/bank/{subAccountId}", "/v1/transfers/bank/{subAccountId}"]
    );
    assert_eq!(
        parse_paths("/v2/bill/topup (also /v1/bill/topup)", context),
        ["/v2/bill/topup", "/v1/bill/topup"]
    );
    assert_eq!(
        parse_paths("/v1/transactions/accounts (filter form, same method ambiguity)", context),
        ["/v1/transactions/accounts"]
    );
    assert_eq!(parse_methods("GET or POST", context), [Method::Get, Method::Post]);
    assert_eq!(
        parse_params("sub-account id, order reference, otp, none; notes, with, commas", context),
        [
            ParamNeed::Wire { wire: "subAccountId".into(), location: Some(ParamLocation::Path) },
            ParamNeed::Wire { wire: "orderReference".into(), location: None },
            ParamNeed::Named("otp".into()),
        ]
    );
    assert_eq!(
        parse_params("mandate identifier in query parameter mandateId", context),
        [ParamNeed::Wire { wire: "mandateId".into(), location: Some(ParamLocation::Query) }]
    );
    let unknown_note = std::panic::catch_unwind(|| parse_paths("/v1/x (also somewhere else)", "row 7"));
    assert!(unknown_note.is_err(), "a path note the parser does not know must fail");
    let bad_method = std::panic::catch_unwind(|| parse_methods("FETCH", "row 7"));
    assert!(bad_method.is_err());

    let table = "## Endpoints\n\n### Things\n\n| Method | Path | Parameters |\n|---|---|---|\n\
                 | GET or POST | /v2/things (also /v1/...) | thing_id, none; a note |\n\n## After\n\n\
                 | GET | /v1/ignored | x |\n";
    let rows = endpoint_rows(table);
    assert_eq!(rows.len(), 1);
    assert_eq!((rows[0].line, rows[0].section.as_str()), (7, "Things"));
    assert_eq!(
        rows[0].pairs,
        [
            (Method::Get, "/v2/things".to_owned()),
            (Method::Get, "/v1/things".to_owned()),
            (Method::Post, "/v2/things".to_owned()),
            (Method::Post, "/v1/things".to_owned()),
        ]
    );
}

#[test]
fn summary_counts_operations_and_routes() {
    let spec = spec();
    let summary = report::summary(&spec);
    assert_eq!(
        summary,
        format!(
            "spec/payments.yaml: ok: 97 operations, 114 routes (17 alternative forms), {} parameters, 15 groups, 95 of 97 answers typed ({} shapes), 19 of 23 money operations settle (4 cannot, and say why), 38 facts of the live service (19 from developer guides, 19 observed), 45 of 45 readings of the service cited (14 reference, 6 developer guides, 12 observed, 13 inferred)",
            spec.parameter_count(),
            spec.shapes.len()
        )
    );
    assert!(spec.parameter_count() > 300, "{summary}");
}

/// The operation of the guide "Extending the spec", exactly as the guide writes it.
fn readme_extension() -> String {
    let readme = include_str!("../docs/extend-spec.md");
    let section = readme.split("# Extending the spec").nth(1).expect("the guide has the section");
    let block = section.split("```yaml\n").nth(1).expect("a YAML block");
    block.split("```").next().unwrap_or_default().to_owned()
}

#[test]
fn the_readme_extension_keeps_the_interface_checks_green() {
    let builtin = load_builtin().unwrap_or_else(|e| panic!("{e}"));
    // A user who followed the README already has it; otherwise it is added here.
    let extended = if builtin.operation("fetch_settlement").is_some() {
        builtin
    } else {
        let text = format!("{}{}", payspec_tests::builtin_spec_text(), readme_extension());
        let extended =
            payspec_codegen::load_str("spec/payments.yaml", &text).unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(extended.operations.len(), builtin.operations.len() + 1);
        extended
    };
    let added = extended.operation("fetch_settlement").expect("the README's operation");
    assert_eq!(added.origin, Origin::Extension);
    // The interface checks see exactly the spec they saw before the edit...
    let checked = interface_part(extended.clone());
    assert_eq!(report::summary(&checked), report::summary(&spec()));
    // ...and the extended spec still audits and generates.
    assert!(
        payspec_codegen::audit::audit(&extended)
            .iter()
            .all(|f| !matches!(f, payspec_codegen::audit::Finding::IdenticalRoute { declared: false, .. }))
    );
    let source = payspec_codegen::generate(&extended, &payspec_codegen::Options::new().formatted())
        .unwrap_or_else(|e| panic!("{e}"));
    assert!(source.contains("pub fn fetch_settlement("));
}

/// `payspec-client` declares one cargo feature per group of the spec (its build step gates
/// each group's items behind it), and `all-groups`, on by default, turns on every one. A
/// group's feature turns on the groups its money operations settle through, so that
/// `settle_bank_transfer` comes with `transfers` alone.
#[test]
fn the_client_has_a_feature_per_group_and_all_are_on_by_default() {
    let spec = load_builtin().unwrap_or_else(|errors| panic!("{errors}"));
    let manifest_path = concat!(env!("CARGO_MANIFEST_DIR"), "/../generated-client/Cargo.toml");
    let manifest = std::fs::read_to_string(manifest_path).unwrap_or_else(|e| panic!("{manifest_path}: {e}"));
    let features = &manifest[manifest.find("[features]").expect("a [features] table")..];
    let features = &features[..features[1..].find("\n[").map_or(features.len(), |end| end + 1)];
    let line =
        |name: &str| features.lines().find(|l| l.starts_with(&format!("{name} = "))).map(str::to_owned);
    let all = line("all-groups").expect("an all-groups feature");
    let default = line("default").expect("a default feature list");
    assert!(default.contains("\"all-groups\""), "{default}");
    for group in &spec.groups {
        let needs: std::collections::BTreeSet<&str> = spec
            .operations
            .iter()
            .filter(|op| op.group == group.key)
            .filter_map(|op| op.settle.as_ref())
            .flat_map(|settle| &settle.lookups)
            .filter_map(|lookup| spec.operation(&lookup.operation))
            .map(|read| read.group.as_str())
            .filter(|g| *g != group.key)
            .collect();
        let list = needs.iter().map(|g| format!("\"{g}\"")).collect::<Vec<_>>().join(", ");
        assert_eq!(
            line(&group.key).as_deref(),
            Some(format!("{} = [{list}]", group.key).as_str()),
            "{}: its feature turns on the groups its settling asks",
            group.key
        );
        assert!(all.contains(&format!("\"{}\"", group.key)), "all-groups lacks {}", group.key);
    }
    let listed = all.matches('"').count() / 2;
    assert_eq!(listed, spec.groups.len(), "all-groups names a feature that is no group: {all}");
}

#[test]
fn a_boolean_state_is_read_as_true_or_false_and_nothing_else() {
    let text = payspec_tests::builtin_spec_text();
    let wrong = text.replacen("      succeeded: [\"true\"]", "      succeeded: [PAID]", 1);
    assert_ne!(wrong, text, "the spec settles on a boolean state");
    let error = payspec_codegen::load_str("spec/payments.yaml", &wrong).map(|_| ()).unwrap_err().to_string();
    assert!(
        error.contains("settle.state_field: `success` is a boolean, and `PAID` is not one of its states"),
        "{error}"
    );
}

#[test]
fn a_money_operation_settles_or_says_why_not_never_both() {
    let text = payspec_tests::builtin_spec_text();
    let both = text.replacen(
        "    settle:\n      source: developer_docs\n",
        "    unsettled: No lookup.\n    settle:\n      source: developer_docs\n",
        1,
    );
    assert_ne!(both, text);
    let error = payspec_codegen::load_str("spec/payments.yaml", &both).map(|_| ()).unwrap_err().to_string();
    assert!(error.contains("unsettled: the operation settles and says it does not"), "{error}");
    // The built-in spec: every money operation does one or the other.
    let spec = load_builtin().unwrap_or_else(|e| panic!("{e}"));
    for op in spec.operations.iter().filter(|op| op.effect == payspec_codegen::model::Effect::Money) {
        assert!(op.settle.is_some() != op.unsettled.is_some(), "{}", op.name);
    }
}

/// Every reading of the service the built-in spec makes (how an operation's answers are
/// read, how a payment settles) names what shows it: the document, a guide, published
/// traffic, or an inference its note explains.
#[test]
fn every_reading_of_the_service_cites_its_source() {
    let spec = load_builtin().unwrap_or_else(|errors| panic!("{errors}"));
    let uncited: Vec<String> =
        spec.readings().into_iter().filter(|(_, evidence)| evidence.is_none()).map(|(at, _)| at).collect();
    assert!(uncited.is_empty(), "readings without a source: {uncited:?}");
    assert!(spec.readings().len() >= 40);
}
