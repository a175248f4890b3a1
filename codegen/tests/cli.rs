//! The `payspec` command, run as a user runs it: exit codes, stdout and stderr.

use payspec_codegen::{Diagnostics, Spec, audit, report};

/// The repository's spec, read when the test runs.
fn load_builtin() -> Result<Spec, Diagnostics> {
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../spec/payments.yaml");
    let text = std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{path}: {e}"));
    payspec_codegen::load_str(payspec_codegen::load::BUILTIN_SPEC_NAME, &text)
}
use serde_json::Value;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

fn workspace_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("..")
}

/// Runs `payspec args...` from the workspace root, so relative spec paths read as a user types them.
fn payspec(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_payspec"))
        .args(args)
        .current_dir(workspace_root())
        .output()
        .expect("payspec runs")
}

fn stdout(output: &Output) -> String {
    String::from_utf8(output.stdout.clone()).expect("stdout is UTF-8")
}

fn stderr(output: &Output) -> String {
    String::from_utf8(output.stderr.clone()).expect("stderr is UTF-8")
}

/// A spec file under the temp directory, removed when dropped.
struct TempSpec(PathBuf);

impl TempSpec {
    fn new(name: &str, text: &str) -> TempSpec {
        let path = std::env::temp_dir().join(format!("payspec-cli-{}-{name}.yaml", std::process::id()));
        std::fs::write(&path, text).expect("write a temp spec");
        TempSpec(path)
    }

    fn path(&self) -> &str {
        self.0.to_str().expect("a UTF-8 temp path")
    }
}

impl Drop for TempSpec {
    fn drop(&mut self) {
        let _ = std::fs::remove_file(&self.0);
    }
}

#[test]
fn check_prints_the_summary_of_the_builtin_spec() {
    // Away from the repository, there is no spec on disk: the built-in copy is checked.
    let output = Command::new(env!("CARGO_BIN_EXE_payspec"))
        .arg("check")
        .current_dir(std::env::temp_dir())
        .output()
        .expect("payspec runs");
    assert_eq!(output.status.code(), Some(0), "stderr: {}", stderr(&output));
    let spec = load_builtin().expect("the built-in spec loads");
    assert_eq!(stdout(&output), format!("{} (the copy built into payspec)\n", report::summary(&spec)));
    assert!(
        stdout(&output)
            .starts_with("spec/payments.yaml: ok: 99 operations, 116 routes (17 alternative forms), "),
        "{}",
        stdout(&output)
    );
    assert_eq!(stderr(&output), "");
}

#[test]
fn check_reads_the_spec_given_with_spec() {
    let output = payspec(&["--spec", "tests/fixtures/small.yaml", "check"]);
    assert_eq!(output.status.code(), Some(0), "stderr: {}", stderr(&output));
    assert!(stdout(&output).starts_with("tests/fixtures/small.yaml: ok: "), "{}", stdout(&output));
}

#[test]
fn check_of_a_malformed_spec_fails_with_located_errors() {
    let output = payspec(&["--spec", "tests/fixtures/malformed/unknown_type.yaml", "check"]);
    assert_eq!(output.status.code(), Some(1));
    assert_eq!(stdout(&output), "");
    let err = stderr(&output);
    let mut lines = err.lines();
    assert_eq!(
        lines.next(),
        Some(
            "tests/fixtures/malformed/unknown_type.yaml:42:15: error: operations.bank_transfer_from_sub_account.params.amount.type: unknown type `decimel`"
        ),
        "{err}"
    );
    assert!(lines.next().is_some_and(|l| l.starts_with("  = help: did you mean `decimal`?")), "{err}");
}

#[test]
fn every_error_of_a_malformed_spec_is_printed() {
    let output = payspec(&["--spec", "tests/fixtures/malformed/several_errors.yaml", "audit"]);
    assert_eq!(output.status.code(), Some(1));
    let err = stderr(&output);
    let located: Vec<&str> = err
        .lines()
        .filter(|l| l.starts_with("tests/fixtures/malformed/several_errors.yaml:") && l.contains(": error: "))
        .collect();
    assert_eq!(located.len(), 5, "{err}");
    assert!(err.ends_with("5 errors in the spec\n"), "{err}");
}

#[test]
fn a_missing_spec_file_fails_with_a_located_error() {
    let output = payspec(&["--spec", "no/such/spec.yaml", "check"]);
    assert_eq!(output.status.code(), Some(1));
    assert!(
        stderr(&output).starts_with("no/such/spec.yaml:1:1: error: cannot read the spec: "),
        "{}",
        stderr(&output)
    );
}

fn routes_json() -> Vec<Value> {
    let output = payspec(&["routes", "--json"]);
    assert_eq!(output.status.code(), Some(0), "stderr: {}", stderr(&output));
    stdout(&output)
        .lines()
        .map(|line| serde_json::from_str(line).unwrap_or_else(|e| panic!("not JSON ({e}): {line}")))
        .collect()
}

fn keys(value: &Value) -> Vec<&str> {
    let mut keys: Vec<&str> = value.as_object().expect("an object").keys().map(String::as_str).collect();
    keys.sort();
    keys
}

fn has_keys(value: &Value, wanted: &[&str], what: &str) {
    let keys = keys(value);
    for key in wanted {
        assert!(keys.contains(key), "{what} lacks `{key}`: {value}");
    }
}

#[test]
fn routes_json_prints_one_object_per_operation() {
    let lines = routes_json();
    assert_eq!(lines.len(), 99);
    let spec = load_builtin().expect("the built-in spec loads");
    let names: Vec<&str> =
        lines.iter().map(|l| l["operation"].as_str().expect("an operation name")).collect();
    let expected: Vec<&str> = spec.operations.iter().map(|op| op.name.as_str()).collect();
    assert_eq!(names, expected, "operations in spec order");

    for line in &lines {
        let op = line["operation"].as_str().unwrap_or_default();
        has_keys(
            line,
            &["operation", "group", "also_listed_as", "method", "path", "aliases", "params", "auth"],
            op,
        );
        for alias in line["aliases"].as_array().expect("aliases is a list") {
            has_keys(alias, &["method", "path", "note"], op);
        }
        for param in line["params"].as_array().expect("params is a list") {
            has_keys(param, &["name", "in", "wire", "type", "required", "origin", "secret"], op);
            assert!(param["required"].is_boolean() && param["secret"].is_boolean(), "{op}: {param}");
        }
        for listing in line["also_listed_as"].as_array().expect("also_listed_as is a list") {
            has_keys(listing, &["group", "note"], op);
        }
        assert!(
            ["bearer_and_account", "bearer", "account", "none"]
                .contains(&line["auth"].as_str().unwrap_or_default()),
            "{op}: {}",
            line["auth"]
        );
    }
    let aliases: usize = lines.iter().map(|l| l["aliases"].as_array().map_or(0, Vec::len)).sum();
    assert_eq!(aliases, 17, "alternative forms over all operations");
}

#[test]
fn routes_json_describes_bank_transfer() {
    let lines = routes_json();
    let bank = lines.iter().find(|l| l["operation"] == "bank_transfer").expect("bank_transfer is listed");
    assert_eq!((bank["method"].as_str(), bank["path"].as_str()), (Some("POST"), Some("/v2/transfers/bank")));
    assert_eq!(bank["group"], "transfers");
    assert_eq!(bank["auth"], "bearer_and_account");
    let aliases = bank["aliases"].as_array().expect("aliases");
    assert_eq!(aliases.len(), 1, "{bank}");
    assert_eq!(
        (aliases[0]["method"].as_str(), aliases[0]["path"].as_str()),
        (Some("POST"), Some("/v1/transfers/bank"))
    );
    assert!(aliases[0]["note"].as_str().is_some_and(|n| !n.is_empty()));

    let params = bank["params"].as_array().expect("params");
    let destination = params
        .iter()
        .find(|p| p["name"] == "destination_account_number")
        .unwrap_or_else(|| panic!("no destination_account_number in {bank}"));
    assert_eq!(destination["wire"], "accountNumber");
    assert_eq!(destination["in"], "body");
    assert_eq!(destination["required"], true);
    let amount = params.iter().find(|p| p["name"] == "amount").expect("amount");
    assert_eq!((amount["type"].as_str(), amount["in"].as_str()), (Some("decimal"), Some("body")));
}

#[test]
fn routes_prints_a_table_grouped_by_group() {
    let output = payspec(&["routes"]);
    assert_eq!(output.status.code(), Some(0), "stderr: {}", stderr(&output));
    let text = stdout(&output);
    assert!(text.lines().any(|l| l == "Transfers (transfers)"), "{text}");
    let bank =
        text.lines().position(|l| l.trim_end().ends_with(" bank_transfer")).expect("a bank_transfer row");
    let row = text.lines().nth(bank).unwrap_or_default();
    assert!(row.trim_start().starts_with("POST") && row.contains("/v2/transfers/bank "), "{row}");
    let next = text.lines().nth(bank + 1).unwrap_or_default();
    assert_eq!(next.split_whitespace().collect::<Vec<_>>(), ["also", "POST", "/v1/transfers/bank"]);
}

#[test]
fn audit_prints_every_kind_heading_and_exits_0() {
    let output = payspec(&["audit"]);
    assert_eq!(output.status.code(), Some(0), "stderr: {}", stderr(&output));
    let text = stdout(&output);
    for heading in [
        "Identical routes: 2",
        "Alternative forms: 17",
        "Method ambiguity (GET and POST): 2",
        "Operations listed twice: 5",
        "Templates that shadow each other: 17",
    ] {
        assert!(text.lines().any(|l| l == heading), "no `{heading}` in:\n{text}");
    }
    assert!(
        text.contains(r#"GET /v1/direct-debits/{mandateId} (fetch_mandate) is shadowed by GET /v1/direct-debits/status (fetch_mandate_status): {mandateId} = "status" would be misrouted"#),
        "{text}"
    );
}

#[test]
fn audit_json_prints_one_finding_per_line() {
    let output = payspec(&["audit", "--json"]);
    assert_eq!(output.status.code(), Some(0), "stderr: {}", stderr(&output));
    let text = stdout(&output);
    let findings: Vec<Value> = text
        .lines()
        .map(|line| serde_json::from_str(line).unwrap_or_else(|e| panic!("not JSON ({e}): {line}")))
        .collect();
    let expected = audit::audit(&load_builtin().expect("the built-in spec loads"));
    assert_eq!(findings.len(), expected.len());
    assert_eq!(findings.len(), 43);
    for (line, finding) in findings.iter().zip(&expected) {
        assert_eq!(line["kind"], finding.kind(), "{line}");
        assert_eq!(*line, serde_json::to_value(finding).expect("a finding serializes"));
    }
    let mandate = findings
        .iter()
        .find(|f| f["kind"] == "shadowing" && f["misrouted_value"] == "status")
        .expect("the mandate status shadowing");
    assert_eq!(mandate["variable"]["operation"], "fetch_mandate");
    assert_eq!(mandate["literal"]["operation"], "fetch_mandate_status");
}

/// Two operations on one route; the second is not declared `same_route_as` the first.
const UNDECLARED_IDENTICAL_ROUTE: &str = include_str!("../../tests/fixtures/undeclared-identical-route.yaml");

#[test]
fn audit_of_a_spec_with_an_undeclared_identical_route_exits_1() {
    let spec = TempSpec::new("undeclared", UNDECLARED_IDENTICAL_ROUTE);
    let output = payspec(&["--spec", spec.path(), "audit"]);
    assert_eq!(output.status.code(), Some(1), "stdout: {}", stdout(&output));
    let err = stderr(&output);
    assert_eq!(
        err.lines().next(),
        Some(
            format!(
                "{}:26:11: error: operations.fetch_thing_again.path: `fetch_thing_again` has the same route as `fetch_thing`: GET /v1/things/{{thingId}} and GET /v1/things/{{id}}",
                spec.path()
            )
            .as_str()
        ),
        "{err}"
    );
    assert!(err.contains("same_route_as: fetch_thing"), "{err}");

    // Declared, the same overlap passes the audit and is reported as declared.
    let declared = UNDECLARED_IDENTICAL_ROUTE.replace(
        "  fetch_thing_again:
    group: things
    summary: Fetches a thing again.
    method: GET
    path: /v1/things/{thingId}
",
        "  fetch_thing_again:
    group: things
    summary: Fetches a thing again.
    method: POST
    path: /v1/things/{thingId}
    aliases:
      - method: GET
        path: /v1/things/{thingId}
        note: Listed as GET too.
        same_route_as: fetch_thing
",
    );
    let spec = TempSpec::new("declared", &declared);
    let output = payspec(&["--spec", spec.path(), "audit", "--json"]);
    assert_eq!(output.status.code(), Some(0), "stderr: {}", stderr(&output));
    let identical: Vec<Value> = stdout(&output)
        .lines()
        .map(|l| serde_json::from_str::<Value>(l).expect("JSON"))
        .filter(|f| f["kind"] == "identical_route")
        .collect();
    assert_eq!(identical.len(), 1);
    assert_eq!(identical[0]["declared"], true);
}

#[test]
fn a_spec_on_standard_input_is_read_with_dash() {
    use std::io::Write as _;
    let small = include_str!("../../tests/fixtures/small.yaml");
    let run = |input: &[u8]| {
        let mut child = Command::new(env!("CARGO_BIN_EXE_payspec"))
            .args(["--spec", "-", "check"])
            .stdin(std::process::Stdio::piped())
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::piped())
            .spawn()
            .expect("payspec runs");
        child.stdin.take().expect("a stdin").write_all(input).expect("the spec is written");
        child.wait_with_output().expect("payspec ends")
    };
    let output = run(small.as_bytes());
    assert_eq!(output.status.code(), Some(0), "stderr: {}", stderr(&output));
    assert!(stdout(&output).starts_with("<stdin>: ok: 4 operations"), "{}", stdout(&output));
    assert!(stdout(&output).trim_end().ends_with("(standard input)"), "{}", stdout(&output));

    let output = run(b"format: 1\nservice: \xff\n");
    assert_eq!(output.status.code(), Some(1));
    assert!(
        stderr(&output).starts_with("<stdin>:2:10: error: the spec is not UTF-8 text"),
        "{}",
        stderr(&output)
    );
}

#[test]
fn run_from_the_repository_it_checks_the_spec_on_disk() {
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
    let output =
        Command::new(env!("CARGO_BIN_EXE_payspec")).arg("check").current_dir(&root).output().expect("runs");
    assert_eq!(output.status.code(), Some(0), "stderr: {}", stderr(&output));
    assert!(stdout(&output).trim_end().ends_with("(the file on disk)"), "{}", stdout(&output));
}

/// The facts of the vendor's OpenAPI document, kept in the repository (relative to the
/// workspace root; `spec/facts/refresh.py` writes them from the document).
const VENDOR_DOCUMENT: &str = "spec/facts/vendor-openapi.json";

#[test]
fn openapi_writes_a_document_that_diff_finds_equal_to_the_spec() {
    let out = TempSpec::new("export", "");
    let output = payspec(&["openapi", "--out", out.path()]);
    assert!(output.status.success(), "{}", stderr(&output));
    assert!(stderr(&output).contains("(OpenAPI 3.1.0)"), "{}", stderr(&output));
    let written = std::fs::read_to_string(out.path()).expect("the document");
    let on_stdout = payspec(&["openapi"]);
    assert_eq!(stdout(&on_stdout), written, "--out and standard output write the same document");
    let doc: Value = serde_json::from_str(&written).expect("JSON");
    assert_eq!(doc["openapi"], "3.1.0");

    let output = payspec(&["diff", "--openapi", out.path()]);
    assert!(output.status.success(), "{}{}", stdout(&output), stderr(&output));
    assert_eq!(stdout(&output), "");
    assert!(stderr(&output).contains("0 differences"), "{}", stderr(&output));
}

#[test]
fn diff_against_the_vendor_document_finds_only_recorded_differences() {
    let output = payspec(&["diff", "--openapi", VENDOR_DOCUMENT]);
    assert!(output.status.success(), "{}{}", stdout(&output), stderr(&output));
    let text = stdout(&output);
    assert!(
        text.lines().any(|l| l.starts_with("recorded") && l.contains("POST /v1/transfers/bank ")),
        "{text}"
    );
    assert!(text.lines().any(|l| l.starts_with("quirk") && l.contains("query string")), "{text}");
    assert!(!text.lines().any(|l| l.starts_with("new") || l.starts_with("stale")), "{text}");

    let output = payspec(&["diff", "--openapi", VENDOR_DOCUMENT, "--json"]);
    assert!(output.status.success(), "{}", stderr(&output));
    let lines: Vec<Value> =
        stdout(&output).lines().map(|l| serde_json::from_str(l).expect("one JSON object per line")).collect();
    assert!(lines.len() > 100);
    for line in &lines {
        assert!(["recorded", "quirk"].contains(&line["status"].as_str().unwrap_or("")), "{line}");
    }
    let transfer = lines
        .iter()
        .find(|l| l["kind"] == "operation" && l["path"] == "/v1/transfers/bank")
        .expect("the v1 transfer form, which the vendor does not document");
    assert_eq!(transfer["operation"], "bank_transfer");
    assert_eq!(transfer["method"], "POST");
    assert_eq!(transfer["document"], Value::Null);
}

#[test]
fn diff_fails_on_a_new_difference_and_on_a_stale_disagreement() {
    let vendor =
        std::fs::read_to_string(workspace_root().join(VENDOR_DOCUMENT)).expect("the vendor's document");
    // The vendor now documents the sub-account type the spec records it lacks, and drops
    // the bank list.
    let mut doc: Value = serde_json::from_str(&vendor).expect("JSON");
    doc["components"]["schemas"]["CreateAccountRequest"]["properties"]["accountType"] =
        serde_json::json!({"type": "string"});
    doc["paths"].as_object_mut().expect("paths").remove("/v1/transfers/banks");
    let changed = TempSpec::new("changed-vendor", &doc.to_string());
    let output = payspec(&["diff", "--openapi", changed.path()]);
    assert_eq!(output.status.code(), Some(1), "{}", stderr(&output));
    let text = stdout(&output);
    assert!(text.lines().any(|l| l.starts_with("new") && l.contains("GET /v1/transfers/banks")), "{text}");
    assert!(text.lines().any(|l| l.starts_with("stale") && l.contains("account_type")), "{text}");
    assert!(stderr(&output).contains("1 new"), "{}", stderr(&output));
}

#[test]
fn diff_refuses_what_is_not_an_openapi_document_with_its_place() {
    let cases = [
        ("garbage", "\u{0}\u{1}{{{ not: [yaml", "neither JSON nor valid YAML"),
        ("swagger", "{\"swagger\": \"2.0\"}", "Swagger 2.0"),
        (
            "broken-ref",
            "openapi: 3.1.0\npaths:\n  /x:\n    get:\n      responses:\n        '200': {$ref: '#/components/responses/Gone'}\n",
            "broken `$ref: #/components/responses/Gone`",
        ),
    ];
    for (name, text, message) in cases {
        let file = TempSpec::new(name, text);
        let output = payspec(&["diff", "--openapi", file.path()]);
        assert_eq!(output.status.code(), Some(1), "{name}");
        let error = stderr(&output);
        assert!(error.contains(message), "{name}: {error}");
        assert!(
            error.starts_with(&format!("{}:", file.path())),
            "{name}: the file and place come first: {error}"
        );
        assert!(!error.contains("panicked"), "{name}: {error}");
    }
    let output = payspec(&["diff", "--openapi", "no/such/file.json"]);
    assert_eq!(output.status.code(), Some(1));
    assert!(stderr(&output).contains("cannot read no/such/file.json"), "{}", stderr(&output));
}

#[test]
fn import_writes_a_draft_that_check_accepts_and_says_what_it_inferred_and_left_out() {
    let out = std::env::temp_dir().join(format!("payspec-cli-{}-draft.yaml", std::process::id()));
    let out_path = out.to_str().expect("a UTF-8 temp path");
    let output = payspec(&["import", "spec/facts/vendor-openapi.json", "--out", out_path]);
    let err = stderr(&output);
    assert!(output.status.success(), "{err}");
    assert!(err.contains("inferred: an envelope most answers share: data `data`, code `code`"), "{err}");
    assert!(err.contains("not imported: GET /v1/accounts/"), "{err}");
    assert!(err.contains("payspec: drafted 96 operations"), "{err}");
    assert!(err.contains("the draft passes `payspec check`"), "{err}");
    let checked = payspec(&["--spec", out_path, "check"]);
    assert!(checked.status.success(), "{}", stderr(&checked));
    assert!(stdout(&checked).contains("ok: 96 operations"), "{}", stdout(&checked));
    let _ = std::fs::remove_file(&out);
    // What is no OpenAPI 3.x document is refused with its place.
    let swagger = TempSpec::new("import-swagger", "swagger: '2.0'\ninfo: {title: t}\n");
    let output = payspec(&["import", swagger.path()]);
    assert!(!output.status.success());
    assert!(stderr(&output).contains(":1:1: error: a Swagger 2.0 document"), "{}", stderr(&output));
}
