//! The path audit of the real spec, pinned finding by finding, and the audit's rules on
//! small inline specs.

use payspec_codegen::audit::{self, Finding, KINDS, RouteName};
use payspec_codegen::{Spec, load_str, report};
use payspec_tests::load_builtin;
use std::collections::BTreeSet;

/// Every finding of the audit of `spec/payments.yaml`, in the form of [`key`]. An added or
/// lost finding fails [`every_finding_of_the_real_spec_is_pinned`] with the difference.
const EXPECTED: &[&str] = &[
    r#"identical_route: GET /v1/transactions/accounts/{subAccountId} (list_transactions_for_sub_account) = GET /v1/transactions/accounts/{subAccountId} (filter_transactions_for_sub_account, alias) [declared]"#,
    r#"identical_route: GET /v1/transactions/accounts (list_transactions) = GET /v1/transactions/accounts (filter_transactions, alias) [declared]"#,
    r#"alternative_form: POST /v1/transfers/bank/lookup (lookup_bank_account) -> POST /v2/transfers/bank/lookup (lookup_bank_account, alias)"#,
    r#"alternative_form: POST /v2/transfers/bank (bank_transfer) -> POST /v1/transfers/bank (bank_transfer, alias)"#,
    r#"alternative_form: POST /v2/transfers/bank/{subAccountId} (bank_transfer_from_sub_account) -> POST /v1/transfers/bank/{subAccountId} (bank_transfer_from_sub_account, alias)"#,
    r#"alternative_form: POST /v2/transfers/wallet (wallet_transfer) -> POST /v1/transfers/wallet (wallet_transfer, alias)"#,
    r#"alternative_form: POST /v2/transfers/wallet/{subAccountId} (wallet_transfer_from_sub_account) -> POST /v1/transfers/wallet/{subAccountId} (wallet_transfer_from_sub_account, alias)"#,
    r#"alternative_form: POST /v1/transactions/accounts/{subAccountId} (filter_transactions_for_sub_account) -> GET /v1/transactions/accounts/{subAccountId} (filter_transactions_for_sub_account, alias)"#,
    r#"alternative_form: POST /v1/transactions/accounts (filter_transactions) -> GET /v1/transactions/accounts (filter_transactions, alias)"#,
    r#"alternative_form: POST /v1/bill/topup (buy_airtime) -> POST /v2/bill/topup (buy_airtime, alias)"#,
    r#"alternative_form: POST /v1/bill/topup/{subAccountId} (buy_airtime_for_sub_account) -> POST /v2/bill/topup/{subAccountId} (buy_airtime_for_sub_account, alias)"#,
    r#"alternative_form: POST /v1/bill/data (buy_data) -> POST /v2/bill/data (buy_data, alias)"#,
    r#"alternative_form: POST /v1/bill/data/{subAccountId} (buy_data_for_sub_account) -> POST /v2/bill/data/{subAccountId} (buy_data_for_sub_account, alias)"#,
    r#"alternative_form: POST /v1/bill/cabletv (pay_cable_tv_subscription) -> POST /v2/bill/cabletv (pay_cable_tv_subscription, alias)"#,
    r#"alternative_form: POST /v1/bill/cabletv/{subAccountId} (pay_cable_tv_subscription_for_sub_account) -> POST /v2/bill/cabletv/{subAccountId} (pay_cable_tv_subscription_for_sub_account, alias)"#,
    r#"alternative_form: POST /v1/bill/electricity (buy_electricity) -> POST /v2/bill/electricity (buy_electricity, alias)"#,
    r#"alternative_form: POST /v1/bill/electricity/{subAccountId} (buy_electricity_for_sub_account) -> POST /v2/bill/electricity/{subAccountId} (buy_electricity_for_sub_account, alias)"#,
    r#"alternative_form: POST /v1/bill/betting (fund_betting_account) -> POST /v2/bill/betting (fund_betting_account, alias)"#,
    r#"alternative_form: POST /v1/bill/betting/{subAccountId} (fund_betting_account_for_sub_account) -> POST /v2/bill/betting/{subAccountId} (fund_betting_account_for_sub_account, alias)"#,
    r#"method_ambiguity: GET /v1/transactions/accounts/{subAccountId} (filter_transactions_for_sub_account, alias) ~ POST /v1/transactions/accounts/{subAccountId} (filter_transactions_for_sub_account): account_id, cursor, from_date, limit, status, to_date, transaction_type"#,
    r#"method_ambiguity: GET /v1/transactions/accounts (filter_transactions, alias) ~ POST /v1/transactions/accounts (filter_transactions): cursor, from_date, limit, status, to_date, transaction_type"#,
    r#"listed_twice: list_sub_account_terminals (accounts) also as accounts/fetch_account_terminals"#,
    r#"listed_twice: charge_tokenized_card (checkout) also as charge"#,
    r#"listed_twice: list_tokenized_cards (checkout) also as charge"#,
    r#"listed_twice: update_tokenized_card (checkout) also as charge"#,
    r#"listed_twice: delete_tokenized_card (checkout) also as charge"#,
    r#"shadowing: GET /v1/accounts/{subAccountId}/balance (fetch_sub_account_balance) <- GET /v1/accounts/virtual/{accountRef} (fetch_virtual_account): {subAccountId} = "virtual""#,
    r#"shadowing: PUT /v1/accounts/suspend/{subAccountId} (suspend_sub_account) <- PUT /v1/accounts/{subAccountId}/access (update_sub_account_access): {subAccountId} = "access""#,
    r#"shadowing: PUT /v1/accounts/reactivate/{subAccountId} (reactivate_sub_account) <- PUT /v1/accounts/{subAccountId}/access (update_sub_account_access): {subAccountId} = "access""#,
    r#"shadowing: GET /v1/accounts/{subAccountId}/terminals (list_sub_account_terminals) <- GET /v1/accounts/virtual/{accountRef} (fetch_virtual_account): {subAccountId} = "virtual""#,
    r#"shadowing: PUT /v1/accounts/{subAccountId}/access (update_sub_account_access) <- PUT /v1/accounts/suspend/{subAccountId} (suspend_sub_account): {subAccountId} = "suspend""#,
    r#"shadowing: PUT /v1/accounts/{subAccountId}/access (update_sub_account_access) <- PUT /v1/accounts/reactivate/{subAccountId} (reactivate_sub_account): {subAccountId} = "reactivate""#,
    r#"shadowing: PUT /v1/accounts/{subAccountId}/access (update_sub_account_access) <- PUT /v1/accounts/virtual/{accountRef} (update_virtual_account): {subAccountId} = "virtual""#,
    r#"shadowing: POST /v1/accounts/virtual/{subAccountId} (create_virtual_account_for_sub_account) <- POST /v1/accounts/virtual/list (list_virtual_accounts): {subAccountId} = "list""#,
    r#"shadowing: PUT /v1/accounts/virtual/{accountRef} (update_virtual_account) <- PUT /v1/accounts/{subAccountId}/access (update_sub_account_access): {accountRef} = "access""#,
    r#"shadowing: GET /v1/accounts/virtual/{accountRef} (fetch_virtual_account) <- GET /v1/accounts/{subAccountId}/balance (fetch_sub_account_balance): {accountRef} = "balance""#,
    r#"shadowing: GET /v1/accounts/virtual/{accountRef} (fetch_virtual_account) <- GET /v1/accounts/{subAccountId}/terminals (list_sub_account_terminals): {accountRef} = "terminals""#,
    r#"shadowing: POST /v2/transfers/bank/{subAccountId} (bank_transfer_from_sub_account) <- POST /v2/transfers/bank/lookup (lookup_bank_account, alias): {subAccountId} = "lookup""#,
    r#"shadowing: POST /v1/transfers/bank/{subAccountId} (bank_transfer_from_sub_account, alias) <- POST /v1/transfers/bank/lookup (lookup_bank_account): {subAccountId} = "lookup""#,
    r#"shadowing: GET /v1/transactions/accounts/{subAccountId} (list_transactions_for_sub_account) <- GET /v1/transactions/accounts/single (fetch_transaction): {subAccountId} = "single""#,
    r#"shadowing: GET /v1/transactions/accounts/{subAccountId} (filter_transactions_for_sub_account, alias) <- GET /v1/transactions/accounts/single (fetch_transaction): {subAccountId} = "single""#,
    r#"shadowing: GET /v1/direct-debits/{mandateId} (fetch_mandate) <- GET /v1/direct-debits/mandates (list_mandates): {mandateId} = "mandates""#,
    r#"shadowing: GET /v1/direct-debits/{mandateId} (fetch_mandate) <- GET /v1/direct-debits/status (fetch_mandate_status): {mandateId} = "status""#,
];

fn route(r: &RouteName) -> String {
    format!("{} {} ({}{})", r.method, r.path, r.operation, if r.alias { ", alias" } else { "" })
}

/// A compact line naming everything that identifies a finding (notes left out).
fn key(finding: &Finding) -> String {
    let body = match finding {
        Finding::IdenticalRoute { routes, declared } => format!(
            "{} [{}]",
            routes.iter().map(route).collect::<Vec<_>>().join(" = "),
            if *declared { "declared" } else { "NOT DECLARED" }
        ),
        Finding::AlternativeForm { canonical, alternative, .. } => {
            format!("{} -> {}", route(canonical), route(alternative))
        }
        Finding::MethodAmbiguity { get, post, params } => {
            format!("{} ~ {}: {}", route(get), route(post), params.join(", "))
        }
        Finding::ListedTwice { operation, group, listings } => {
            let others: Vec<&str> =
                listings.iter().map(|l| l.split_once(':').map_or(l.as_str(), |(head, _)| head)).collect();
            format!("{operation} ({group}) also as {}", others.join("; "))
        }
        Finding::Shadowing { literal, variable, variable_name, misrouted_value } => {
            format!("{} <- {}: {{{variable_name}}} = \"{misrouted_value}\"", route(variable), route(literal))
        }
    };
    format!("{}: {body}", finding.kind())
}

fn builtin() -> Spec {
    load_builtin().unwrap_or_else(|errors| panic!("the built-in spec does not load:\n{errors}"))
}

fn findings() -> Vec<Finding> {
    audit::audit(&builtin())
}

#[test]
fn every_finding_of_the_real_spec_is_pinned() {
    let actual: BTreeSet<String> = findings().iter().map(key).collect();
    let expected: BTreeSet<String> = EXPECTED.iter().map(|s| s.to_string()).collect();
    assert_eq!(expected.len(), EXPECTED.len(), "EXPECTED lists a finding twice");
    let lost: Vec<&String> = expected.difference(&actual).collect();
    let added: Vec<&String> = actual.difference(&expected).collect();
    assert!(
        lost.is_empty() && added.is_empty(),
        "the audit of spec/payments.yaml changed\n- expected, not found:\n{}\n+ found, not expected:\n{}",
        lost.iter().map(|s| format!("    {s}")).collect::<Vec<_>>().join("\n"),
        added.iter().map(|s| format!("    {s}")).collect::<Vec<_>>().join("\n"),
    );
    assert_eq!(findings().len(), EXPECTED.len(), "the audit reports a finding twice");
}

#[test]
fn counts_per_kind() {
    let findings = findings();
    let counts: Vec<(&str, usize)> = KINDS
        .iter()
        .map(|(kind, _)| (*kind, findings.iter().filter(|f| f.kind() == *kind).count()))
        .collect();
    assert_eq!(
        counts,
        [
            ("identical_route", 2),
            ("alternative_form", 17),
            ("method_ambiguity", 2),
            ("listed_twice", 5),
            ("shadowing", 17),
        ]
    );
}

fn shadowing<'a>(findings: &'a [Finding], variable_path: &str, literal_path: &str) -> Vec<&'a Finding> {
    findings
        .iter()
        .filter(|f| {
            matches!(f, Finding::Shadowing { literal, variable, .. }
                if variable.path == variable_path && literal.path == literal_path)
        })
        .collect()
}

fn assert_shadowed(
    findings: &[Finding],
    (method, variable_path, variable_op, alias): (&str, &str, &str, bool),
    (literal_path, literal_op): (&str, &str),
    (variable_name, value): (&str, &str),
) {
    let found = shadowing(findings, variable_path, literal_path);
    let [Finding::Shadowing { literal, variable, variable_name: name, misrouted_value }] = found.as_slice()
    else {
        panic!("expected one finding of {variable_path} shadowed by {literal_path}, found {found:#?}");
    };
    assert_eq!((variable.method, variable.operation.as_str(), variable.alias), (method, variable_op, alias));
    assert_eq!((literal.method, literal.operation.as_str(), literal.alias), (method, literal_op, false));
    assert_eq!((name.as_str(), misrouted_value.as_str()), (variable_name, value));
}

#[test]
fn the_three_shadowings_the_issue_names() {
    let findings = findings();
    assert_shadowed(
        &findings,
        ("GET", "/v1/direct-debits/{mandateId}", "fetch_mandate", false),
        ("/v1/direct-debits/status", "fetch_mandate_status"),
        ("mandateId", "status"),
    );
    assert_shadowed(
        &findings,
        ("POST", "/v1/accounts/virtual/{subAccountId}", "create_virtual_account_for_sub_account", false),
        ("/v1/accounts/virtual/list", "list_virtual_accounts"),
        ("subAccountId", "list"),
    );
    // Only the v1 alias is shadowed: lookup has no v2 form.
    assert_shadowed(
        &findings,
        ("POST", "/v1/transfers/bank/{subAccountId}", "bank_transfer_from_sub_account", true),
        ("/v1/transfers/bank/lookup", "lookup_bank_account"),
        ("subAccountId", "lookup"),
    );
    assert!(
        shadowing(&findings, "/v2/transfers/bank/{subAccountId}", "/v1/transfers/bank/lookup").is_empty()
    );

    let described: Vec<String> =
        shadowing(&findings, "/v1/direct-debits/{mandateId}", "/v1/direct-debits/status")
            .iter()
            .map(|f| f.describe())
            .collect();
    assert_eq!(
        described,
        [
            r#"GET /v1/direct-debits/{mandateId} (fetch_mandate) is shadowed by GET /v1/direct-debits/status (fetch_mandate_status): {mandateId} = "status" would be misrouted"#
        ]
    );
}

#[test]
fn the_two_identical_routes_are_declared() {
    let findings = findings();
    let identical: Vec<(Vec<String>, bool)> = findings
        .iter()
        .filter_map(|f| match f {
            Finding::IdenticalRoute { routes, declared } => {
                Some((routes.iter().map(route).collect(), *declared))
            }
            _ => None,
        })
        .collect();
    assert_eq!(
        identical,
        [
            (
                vec![
                    "GET /v1/transactions/accounts/{subAccountId} (list_transactions_for_sub_account)".to_owned(),
                    "GET /v1/transactions/accounts/{subAccountId} (filter_transactions_for_sub_account, alias)"
                        .to_owned(),
                ],
                true
            ),
            (
                vec![
                    "GET /v1/transactions/accounts (list_transactions)".to_owned(),
                    "GET /v1/transactions/accounts (filter_transactions, alias)".to_owned(),
                ],
                true
            ),
        ]
    );
    assert!(!audit::has_undeclared_identical_route(&findings));
}

#[test]
fn the_two_method_ambiguities_are_the_filter_forms() {
    let findings = findings();
    let ambiguous: Vec<(String, String, Vec<String>)> = findings
        .iter()
        .filter_map(|f| match f {
            Finding::MethodAmbiguity { get, post, params } => Some((route(get), route(post), params.clone())),
            _ => None,
        })
        .collect();
    let names = |list: &[&str]| list.iter().map(|s| s.to_string()).collect::<Vec<_>>();
    assert_eq!(
        ambiguous,
        [
            (
                "GET /v1/transactions/accounts/{subAccountId} (filter_transactions_for_sub_account, alias)"
                    .to_owned(),
                "POST /v1/transactions/accounts/{subAccountId} (filter_transactions_for_sub_account)"
                    .to_owned(),
                names(&[
                    "account_id",
                    "cursor",
                    "from_date",
                    "limit",
                    "status",
                    "to_date",
                    "transaction_type"
                ]),
            ),
            (
                "GET /v1/transactions/accounts (filter_transactions, alias)".to_owned(),
                "POST /v1/transactions/accounts (filter_transactions)".to_owned(),
                names(&["cursor", "from_date", "limit", "status", "to_date", "transaction_type"]),
            ),
        ]
    );
}

#[test]
fn each_operation_listed_twice() {
    let findings = findings();
    let listed: Vec<(&str, &str, &[String])> = findings
        .iter()
        .filter_map(|f| match f {
            Finding::ListedTwice { operation, group, listings } => {
                Some((operation.as_str(), group.as_str(), listings.as_slice()))
            }
            _ => None,
        })
        .collect();
    let names: Vec<(&str, &str)> = listed.iter().map(|(op, group, _)| (*op, *group)).collect();
    assert_eq!(
        names,
        [
            ("list_sub_account_terminals", "accounts"),
            ("charge_tokenized_card", "checkout"),
            ("list_tokenized_cards", "checkout"),
            ("update_tokenized_card", "checkout"),
            ("delete_tokenized_card", "checkout"),
        ]
    );
    for (op, _, listings) in &listed {
        assert_eq!(listings.len(), 1, "{op}: {listings:?}");
        let (head, note) =
            listings[0].split_once(": ").unwrap_or_else(|| panic!("{op}: no note in {listings:?}"));
        assert!(!note.trim().is_empty(), "{op}: empty note");
        let expected =
            if *op == "list_sub_account_terminals" { "accounts/fetch_account_terminals" } else { "charge" };
        assert_eq!(head, expected, "{op}");
    }
}

#[test]
fn every_alternative_form() {
    let findings = findings();
    let pairs: BTreeSet<(String, String)> = findings
        .iter()
        .filter_map(|f| match f {
            Finding::AlternativeForm { canonical, alternative, note } => {
                assert_eq!(canonical.operation, alternative.operation);
                assert!(!canonical.alias && alternative.alias);
                assert!(!note.trim().is_empty(), "{}: empty note", canonical.operation);
                Some((
                    format!("{} {}", canonical.method, canonical.path),
                    format!("{} {}", alternative.method, alternative.path),
                ))
            }
            _ => None,
        })
        .collect();
    let expected: BTreeSet<(String, String)> = [
        ("POST /v1/transfers/bank/lookup", "POST /v2/transfers/bank/lookup"),
        ("POST /v2/transfers/bank", "POST /v1/transfers/bank"),
        ("POST /v2/transfers/bank/{subAccountId}", "POST /v1/transfers/bank/{subAccountId}"),
        ("POST /v2/transfers/wallet", "POST /v1/transfers/wallet"),
        ("POST /v2/transfers/wallet/{subAccountId}", "POST /v1/transfers/wallet/{subAccountId}"),
        ("POST /v1/transactions/accounts/{subAccountId}", "GET /v1/transactions/accounts/{subAccountId}"),
        ("POST /v1/transactions/accounts", "GET /v1/transactions/accounts"),
        ("POST /v1/bill/topup", "POST /v2/bill/topup"),
        ("POST /v1/bill/topup/{subAccountId}", "POST /v2/bill/topup/{subAccountId}"),
        ("POST /v1/bill/data", "POST /v2/bill/data"),
        ("POST /v1/bill/data/{subAccountId}", "POST /v2/bill/data/{subAccountId}"),
        ("POST /v1/bill/cabletv", "POST /v2/bill/cabletv"),
        ("POST /v1/bill/cabletv/{subAccountId}", "POST /v2/bill/cabletv/{subAccountId}"),
        ("POST /v1/bill/electricity", "POST /v2/bill/electricity"),
        ("POST /v1/bill/electricity/{subAccountId}", "POST /v2/bill/electricity/{subAccountId}"),
        ("POST /v1/bill/betting", "POST /v2/bill/betting"),
        ("POST /v1/bill/betting/{subAccountId}", "POST /v2/bill/betting/{subAccountId}"),
    ]
    .iter()
    .map(|(a, b)| (a.to_string(), b.to_string()))
    .collect();
    assert_eq!(pairs, expected);
    assert_eq!(expected.len(), 17);
}

#[test]
fn reserved_segments_of_the_real_spec() {
    let findings = findings();
    let reserved = audit::reserved_segments(&findings);
    assert!(
        reserved.contains(&("fetch_mandate", "mandateId", "status", "fetch_mandate_status")),
        "{reserved:#?}"
    );
    assert_eq!(
        reserved,
        [
            ("bank_transfer_from_sub_account", "subAccountId", "lookup", "lookup_bank_account"),
            ("create_virtual_account_for_sub_account", "subAccountId", "list", "list_virtual_accounts"),
            ("fetch_mandate", "mandateId", "mandates", "list_mandates"),
            ("fetch_mandate", "mandateId", "status", "fetch_mandate_status"),
            ("fetch_sub_account_balance", "subAccountId", "virtual", "fetch_virtual_account"),
            ("fetch_virtual_account", "accountRef", "balance", "fetch_sub_account_balance"),
            ("fetch_virtual_account", "accountRef", "terminals", "list_sub_account_terminals"),
            ("list_sub_account_terminals", "subAccountId", "virtual", "fetch_virtual_account"),
            ("list_transactions_for_sub_account", "subAccountId", "single", "fetch_transaction"),
            ("reactivate_sub_account", "subAccountId", "access", "update_sub_account_access"),
            ("suspend_sub_account", "subAccountId", "access", "update_sub_account_access"),
            ("update_sub_account_access", "subAccountId", "reactivate", "reactivate_sub_account"),
            ("update_sub_account_access", "subAccountId", "suspend", "suspend_sub_account"),
            ("update_sub_account_access", "subAccountId", "virtual", "update_virtual_account"),
            ("update_virtual_account", "accountRef", "access", "update_sub_account_access"),
        ]
    );
}

#[test]
fn the_report_has_a_heading_per_kind() {
    let text = report::audit_text(&findings());
    for heading in [
        "Identical routes: 2",
        "Alternative forms: 17",
        "Method ambiguity (GET and POST): 2",
        "Operations listed twice: 5",
        "Templates that shadow each other: 17",
    ] {
        assert!(text.lines().any(|l| l == heading), "no line `{heading}` in:\n{text}");
    }
    assert_eq!(text.lines().filter(|l| l.starts_with("  - ")).count(), EXPECTED.len());
}

#[test]
fn findings_serialize_with_their_kind() {
    for finding in findings() {
        let value = serde_json::to_value(&finding).expect("a finding serializes");
        assert_eq!(value["kind"], finding.kind(), "{value}");
    }
}

// --- The audit's rules on small inline specs. ---

const HEAD: &str = "\
format: 1
service:
  title: Inline
  environments:
    live: https://api.example.com
  token_operations:
    issue: issue_token
    refresh: refresh_token
    revoke: revoke_token
identifiers:
  SubAccountId: A sub-account.
groups:
  things:
    title: Things
operations:
";

/// The token operations every spec names under `service.token_operations`.
const TOKEN_OPERATIONS: &str = "  issue_token:
    group: things
    summary: Obtains an access token.
    method: POST
    path: /v1/auth/token/issue
  refresh_token:
    group: things
    summary: Refreshes an access token.
    method: POST
    path: /v1/auth/token/refresh
  revoke_token:
    group: things
    summary: Revokes an access token.
    method: POST
    path: /v1/auth/token/revoke
";

/// An inline spec: `HEAD`, then `operations` from line 16 on, then the token operations.
fn inline(operations: &str) -> String {
    format!("{HEAD}{operations}{TOKEN_OPERATIONS}")
}

fn load_inline(operations: &str) -> Spec {
    load_str("inline.yaml", &inline(operations))
        .unwrap_or_else(|errors| panic!("inline spec refused:\n{errors}"))
}

const FETCH_THING: &str = "  fetch_thing:
    group: things
    summary: Fetches a thing.
    method: GET
    path: /v1/things/{subAccountId}
    params:
      account_id: { in: path, type: SubAccountId, wire: subAccountId }
";

#[test]
fn an_undeclared_identical_route_is_refused_with_its_location() {
    let name = "tests/fixtures/undeclared-identical-route.yaml";
    let text = include_str!("fixtures/undeclared-identical-route.yaml");
    let errors = load_str(name, text).expect_err("an undeclared identical route must be refused");
    let lines: Vec<String> = errors.iter().map(|d| d.to_string()).collect();
    assert_eq!(errors.len(), 1, "{lines:#?}");
    let first = lines[0].lines().next().unwrap_or_default();
    assert_eq!(
        first,
        format!(
            "{name}:26:11: error: operations.fetch_thing_again.path: `fetch_thing_again` has the same route as `fetch_thing`: GET /v1/things/{{thingId}} and GET /v1/things/{{id}}"
        )
    );
    assert_eq!(text.lines().nth(25).map(str::trim), Some("path: /v1/things/{thingId}"));
    assert!(lines[0].contains("same_route_as: fetch_thing"), "{}", lines[0]);
}

#[test]
fn a_declared_identical_route_is_reported_declared() {
    let spec = load_inline(&format!(
        "{FETCH_THING}  filter_things:
    group: things
    summary: Filters things.
    method: POST
    path: /v1/things/{{subAccountId}}
    aliases:
      - method: GET
        path: /v1/things/{{subAccountId}}
        note: Also listed as GET.
        same_route_as: fetch_thing
    params:
      account_id: {{ in: path, type: SubAccountId, wire: subAccountId }}
"
    ));
    let findings = audit::audit(&spec);
    let identical: Vec<&Finding> = findings.iter().filter(|f| f.kind() == "identical_route").collect();
    let [Finding::IdenticalRoute { routes, declared }] = identical.as_slice() else {
        panic!("{findings:#?}");
    };
    assert!(*declared);
    assert_eq!(
        routes.iter().map(route).collect::<Vec<_>>(),
        [
            "GET /v1/things/{subAccountId} (fetch_thing)",
            "GET /v1/things/{subAccountId} (filter_things, alias)"
        ]
    );
    assert!(!audit::has_undeclared_identical_route(&findings));
}

#[test]
fn shadowing_is_found_in_both_directions() {
    // GET /v1/{subAccountId}/list and GET /v1/things/{id} both receive GET /v1/things/list.
    let spec = load_inline(
        "  list_for_sub_account:
    group: things
    summary: Lists for a sub-account.
    method: GET
    path: /v1/{subAccountId}/list
    params:
      account_id: { in: path, type: SubAccountId, wire: subAccountId }
  fetch_thing:
    group: things
    summary: Fetches a thing.
    method: GET
    path: /v1/things/{id}
    params:
      id: { in: path, type: string }
  create_thing:
    group: things
    summary: Creates a thing; another method shadows nothing.
    method: POST
    path: /v1/things/new
",
    );
    let findings = audit::audit(&spec);
    let keys: Vec<String> = findings.iter().filter(|f| f.kind() == "shadowing").map(key).collect();
    assert_eq!(
        keys,
        [
            r#"shadowing: GET /v1/{subAccountId}/list (list_for_sub_account) <- GET /v1/things/{id} (fetch_thing): {subAccountId} = "things""#,
            r#"shadowing: GET /v1/things/{id} (fetch_thing) <- GET /v1/{subAccountId}/list (list_for_sub_account): {id} = "list""#,
        ]
    );
    assert_eq!(
        audit::reserved_segments(&findings),
        [
            ("fetch_thing", "id", "list", "list_for_sub_account"),
            ("list_for_sub_account", "subAccountId", "things", "fetch_thing"),
        ]
    );
}

#[test]
fn a_literal_route_shadows_a_variable_one_and_reserves_the_value() {
    let spec = load_inline(&format!(
        "{FETCH_THING}  fetch_thing_status:
    group: things
    summary: Fetches the status of things.
    method: GET
    path: /v1/things/status
  delete_thing:
    group: things
    summary: Deletes a thing; DELETE is not shadowed by GET.
    method: DELETE
    path: /v1/things/{{subAccountId}}
    params:
      account_id: {{ in: path, type: SubAccountId, wire: subAccountId }}
"
    ));
    let findings = audit::audit(&spec);
    assert_eq!(
        findings.iter().map(key).collect::<Vec<_>>(),
        [
            r#"shadowing: GET /v1/things/{subAccountId} (fetch_thing) <- GET /v1/things/status (fetch_thing_status): {subAccountId} = "status""#
        ]
    );
    assert_eq!(
        audit::reserved_segments(&findings),
        [("fetch_thing", "subAccountId", "status", "fetch_thing_status")]
    );
}

#[test]
fn routes_that_differ_in_a_literal_do_not_shadow() {
    let spec = load_inline(&format!(
        "{FETCH_THING}  fetch_other_status:
    group: things
    summary: Fetches the status of others.
    method: GET
    path: /v1/others/status
"
    ));
    let findings = audit::audit(&spec);
    assert!(findings.is_empty(), "{findings:#?}");
    assert!(audit::reserved_segments(&findings).is_empty());
}
