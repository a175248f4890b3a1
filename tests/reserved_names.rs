//! Whatever `payspec check` accepts generates and compiles: every operation renamed to each
//! Rust keyword is accepted and generates source that parses; the words Rust cannot escape
//! and the names the generated code already uses are refused where they stand, with the
//! fix; a spec that declares credentials never leaves an operation's out by a null or a
//! missing `auth`. A spec named with keywords in every role compiles (here, with
//! `generate!`) and pays through the sandbox serving it, counted there.

use std::time::Duration;

use payspec_codegen::model::Auth;
use payspec_codegen::{Diagnostics, Options, Spec, generate, load_str};
use payspec_runtime::payout::PayoutBatch;
use payspec_runtime::store::MemoryBatchStore;
use payspec_runtime::{FinalState, Outcome, SettleOptions, Settled};
use payspec_sandbox::Sandbox;

type TestResult = Result<(), Box<dyn std::error::Error>>;

mod keyword_named {
    payspec_macros::generate!("fixtures/keyword-named.yaml");
}

const PAYSTACK: &str = include_str!("../spec/examples/paystack.yaml");
const KEYED: &str = include_str!("fixtures/keyed-service.yaml");
const KEYWORD_NAMED: &str = include_str!("fixtures/keyword-named.yaml");
const BUILTIN: &str = include_str!("../spec/payments.yaml");

/// Rust's keywords that a raw identifier escapes (`r#type`): strict, reserved and weak, of
/// every edition; but `box` and `default`, which the loader refuses as operation names
/// (`Box`, `Default`: they would hide types the generated code uses).
const ESCAPABLE: &[&str] = &[
    "as",
    "break",
    "const",
    "continue",
    "else",
    "enum",
    "extern",
    "false",
    "fn",
    "for",
    "if",
    "impl",
    "in",
    "let",
    "loop",
    "match",
    "mod",
    "move",
    "mut",
    "pub",
    "ref",
    "return",
    "static",
    "struct",
    "trait",
    "true",
    "type",
    "unsafe",
    "use",
    "where",
    "while",
    "async",
    "await",
    "dyn",
    "abstract",
    "become",
    "do",
    "final",
    "macro",
    "override",
    "priv",
    "typeof",
    "unsized",
    "virtual",
    "yield",
    "try",
    "gen",
    "union",
    "raw",
    "safe",
    "macro_rules",
    "auto",
];

/// Words YAML reads as a boolean when unquoted: a spec writes them quoted to mean the name.
const YAML_WORDS: &[&str] = &["true", "false"];

/// `word` as a spec writes it: quoted where YAML would read it as something else.
fn yaml(word: &str) -> String {
    if YAML_WORDS.contains(&word) { format!("\"{word}\"") } else { word.to_owned() }
}

/// `name` as a whole word (no letter, digit or `_` on either side, nor a `/` before it, so
/// that no path segment changes) replaced by `to`, throughout the spec's text; as a key
/// only where it names an operation or a group (two spaces in), not a parameter or field
/// of the same name.
fn rename(text: &str, name: &str, to: &str) -> String {
    let word = |c: char| c.is_ascii_alphanumeric() || c == '_';
    let mut out = String::with_capacity(text.len() + 64);
    for line in text.split_inclusive('\n') {
        let mut from = 0;
        while let Some(found) = line[from..].find(name) {
            let at = from + found;
            let before = line[..at].chars().next_back();
            let after = line[at + name.len()..].chars().next();
            let section_key = at == 2 && line.starts_with("  ");
            let whole = !before.is_some_and(|c| word(c) || c == '/')
                && !after.is_some_and(word)
                && (after != Some(':') || section_key);
            out.push_str(&line[from..at]);
            out.push_str(if whole { to } else { name });
            from = at + name.len();
        }
        out.push_str(&line[from..]);
    }
    out
}

/// The names of a spec's operations, in file order.
fn operations(text: &str) -> Vec<String> {
    let spec = load_str("spec.yaml", text).unwrap_or_else(|e| panic!("{e}"));
    spec.operations.iter().map(|op| op.name.clone()).collect()
}

/// The spec generated as the build step writes it (formatted, so parsed as Rust) and as
/// the blocking client, each group behind its feature too.
fn generates(spec: &Spec, what: &str) {
    for options in [Options::new().formatted(), Options::new().blocking().formatted().per_group()] {
        if let Err(e) = generate(spec, &options) {
            panic!("{what}: checked, then did not generate: {e}");
        }
    }
}

fn refused(text: &str) -> Diagnostics {
    match load_str("spec.yaml", text) {
        Ok(_) => panic!("accepted:\n{text}"),
        Err(errors) => errors,
    }
}

/// Every error located inside the file, with a fix.
fn located(errors: &Diagnostics, text: &str) {
    let lines = text.lines().count();
    for e in errors.iter() {
        assert!(e.location.line >= 1 && e.location.line <= lines, "{e}");
        assert!(!e.hint.is_empty(), "no fix: {e}");
    }
}

#[test]
fn every_operation_renamed_to_each_rust_keyword_checks_and_generates() {
    let mut generated = 0;
    for (file, text) in [("paystack", PAYSTACK), ("keyed-service", KEYED), ("keyword-named", KEYWORD_NAMED)] {
        let ops = operations(text);
        // Round r renames operation i to keyword (i + r): after every round, each operation
        // has carried each keyword, in one spec with as many keywords as operations.
        for round in 0..ESCAPABLE.len() {
            let mut renamed = text.to_owned();
            let mut said = Vec::new();
            // Through a placeholder first, so that no keyword is taken for an operation name.
            for (i, op) in ops.iter().enumerate() {
                renamed = rename(&renamed, op, &format!("renamed_operation_{i}"));
            }
            for (i, op) in ops.iter().enumerate() {
                let word = ESCAPABLE[(i + round) % ESCAPABLE.len()];
                renamed = rename(&renamed, &format!("renamed_operation_{i}"), &yaml(word));
                said.push(format!("{op} -> {word}"));
            }
            let what = format!("{file} with {}", said.join(", "));
            let spec = load_str("spec.yaml", &renamed).unwrap_or_else(|e| panic!("{what}: refused:\n{e}"));
            let names: Vec<&str> = spec.operations.iter().map(|op| op.name.as_str()).collect();
            let words: Vec<&str> = (0..ops.len()).map(|i| ESCAPABLE[(i + round) % ESCAPABLE.len()]).collect();
            assert_eq!(names, words, "{what}");
            generates(&spec, &what);
            generated += 1;
        }
    }
    // The built-in spec: each of its operations renamed once (in turns of as many as there
    // are keywords).
    let ops = operations(BUILTIN);
    for turn in ops.chunks(ESCAPABLE.len()) {
        let mut renamed = BUILTIN.to_owned();
        for (op, word) in turn.iter().zip(ESCAPABLE) {
            renamed = rename(&renamed, op, &yaml(word));
        }
        let spec = load_str("payments.yaml", &renamed).unwrap_or_else(|e| panic!("refused:\n{e}"));
        for word in &ESCAPABLE[..turn.len()] {
            assert!(spec.operations.iter().any(|op| op.name == *word), "{word} not among the operations");
        }
        generates(&spec, &format!("the built-in spec with {turn:?} renamed"));
        generated += 1;
    }
    assert_eq!(generated, 3 * ESCAPABLE.len() + ops.len().div_ceil(ESCAPABLE.len()));
}

#[test]
fn words_rust_cannot_escape_and_names_the_client_already_uses_are_refused_where_they_stand() {
    let ops = operations(PAYSTACK);
    // Words no raw identifier escapes, words that would hide a type the generated code
    // uses (`result` -> `Result`), and a method every group has.
    let words = [
        "self",
        "super",
        "crate",
        "result",
        "option",
        "string",
        "vec",
        "default",
        "box",
        "into",
        "with_options",
    ];
    for op in &ops {
        for word in words {
            let text = rename(PAYSTACK, op, word);
            let errors = refused(&text);
            located(&errors, &text);
            assert!(
                errors.iter().any(|e| e.path == format!("operations.{word}")),
                "{op} -> {word}: {errors}"
            );
        }
    }
    // The methods the client adds beside an operation: another operation may not take them.
    for method in [
        "settle_initiate_transfer",
        "settle_initiate_transfer_by_reference",
        "list_transfers_pages",
        "list_transfers_items",
    ] {
        let text = rename(PAYSTACK, "create_transfer_recipient", method);
        let errors = refused(&text);
        located(&errors, &text);
        let error = errors.iter().find(|e| e.path == format!("operations.{method}"));
        assert!(error.is_some_and(|e| e.message.contains("is already the method")), "{method}: {errors}");
    }
    // YAML's own words, unquoted, are no names: said with the fix.
    for word in YAML_WORDS {
        let text = rename(PAYSTACK, "verify_transfer", word);
        let errors = refused(&text);
        located(&errors, &text);
        let said = errors.to_string();
        assert!(said.contains(&format!("YAML reads the unquoted `{word}` here as a boolean")), "{said}");
        assert!(said.contains(&format!("quote it to mean the word (`\"{word}\"`)")), "{said}");
    }
    // A group that would hide a type, as an operation would.
    let text = rename(PAYSTACK, "miscellaneous", "result");
    let errors = refused(&text);
    located(&errors, &text);
    assert!(errors.iter().any(|e| e.path == "groups.result" && e.message.contains("`Result`")), "{errors}");
}

#[test]
fn a_null_or_missing_auth_never_leaves_a_declared_credential_out() {
    // The fixture's operations take the credential from `service.auth`.
    let spec = load_str("keyword-named.yaml", KEYWORD_NAMED).unwrap_or_else(|e| panic!("{e}"));
    assert!(spec.operations.iter().all(|op| op.auth == Auth::Key(0)), "{:?}", spec.operations);

    // Without that default, an operation that says no `auth` is refused at its place.
    let text = KEYWORD_NAMED.replace("  auth: secret_key\n", "");
    let errors = refused(&text);
    located(&errors, &text);
    assert_eq!(errors.len(), 4, "one for each operation: {errors}");
    let first = errors.first().map(ToString::to_string).unwrap_or_default();
    assert!(first.contains("operations.move: this operation says no `auth`"), "{first}");
    assert!(first.contains("write `auth: secret_key`"), "{first}");

    // `auth: ~` on an operation, or on the service, names no way: refused, not read as none.
    let text = KEYWORD_NAMED.replace(
        "    group: type\n    summary: Reads the balance.",
        "    group: type\n    auth: ~\n    summary: Reads the balance.",
    );
    let errors = refused(&text);
    located(&errors, &text);
    assert_eq!(errors.len(), 1, "{errors}");
    assert!(errors.to_string().contains("operations.yield.auth: `auth` is empty"), "{errors}");
    let text = KEYWORD_NAMED.replace("  auth: secret_key\n", "  auth: ~\n");
    let errors = refused(&text);
    assert_eq!(errors.len(), 1, "said once, at the service: {errors}");
    assert!(errors.to_string().contains("service.auth: `auth` is empty"), "{errors}");

    // An operation's own `auth` still wins over the default, `none` included.
    let text = KEYWORD_NAMED.replace(
        "    group: type\n    summary: Reads the balance.",
        "    group: type\n    auth: none\n    summary: Reads the balance.",
    );
    let spec = load_str("spec.yaml", &text).unwrap_or_else(|e| panic!("{e}"));
    let auths: Vec<Auth> = spec.operations.iter().map(|op| op.auth).collect();
    assert_eq!(auths, [Auth::Key(0), Auth::Key(0), Auth::Key(0), Auth::None]);
}

const SECRET_KEY: &str = "sk_test_keyword_named_51c0";

#[tokio::test]
async fn a_client_named_with_keywords_compiles_and_pays_through_the_sandbox() -> TestResult {
    use keyword_named::requests::{Loop, Match, Move, Yield};

    let sandbox = Sandbox::builder().spec("keyword-named.yaml", KEYWORD_NAMED).start().await?;
    let client = keyword_named::Client::builder()
        .environment(keyword_named::Environment::Custom(sandbox.base_url().to_owned()))
        .key("secret_key", SECRET_KEY)
        .build()?;
    let balance = |outcome: Outcome<keyword_named::types::Balance>| outcome.data().and_then(|b| b.balance);
    let opening = balance(client.r#type().r#yield(Yield::new()).await?).ok_or("a balance")?;

    // `move`, its settle by `match`, as any money operation.
    let request = Move::new(2_500, "kw-ref-1");
    let sent = client.r#type().r#move(request.clone()).await?;
    let settled = client
        .r#type()
        .settle_move(
            &request,
            &sent,
            SettleOptions::within(Duration::from_secs(10)).first_wait(Duration::from_millis(20)),
        )
        .await?;
    assert!(matches!(settled, Settled::Final { state: FinalState::Succeeded, .. }), "{settled:?}");
    let found = client.r#type().r#match(Match::new("kw-ref-1")).await?;
    assert_eq!(found.data().and_then(|p| p.amount), Some(2_500));

    // A payout batch of `move`s (its `Payment` implementation names `settle_move`).
    let items: Vec<Move> = (2..=4).map(|n| Move::new(1_000, format!("kw-ref-{n}"))).collect();
    let report = PayoutBatch::new("keywords", MemoryBatchStore::new()).run(&client, items).await?;
    assert!(report.is_done(), "{report:?}");
    assert_eq!((report.sent, report.summary.paid), (3, 3));

    // The listing's items, followed by `loop_items`, and the balance less what was paid.
    let listed = client.r#type().loop_items(Loop::new().page_size(2)).all().await?;
    assert_eq!(listed.len(), 4, "{listed:?}");
    let closing = balance(client.r#type().r#yield(Yield::new()).await?).ok_or("a balance")?;
    assert_eq!(opening - closing, 5_500);

    // The spec names no event that settles a payment: nothing to make happen, said so.
    let refused = sandbox.trigger("payout.done").err().map(|e| e.to_string()).unwrap_or_default();
    assert!(refused.contains("the spec names no event the sandbox can make happen"), "{refused}");

    // Counted at the sandbox: each payout received once, each with the key.
    assert_eq!(sandbox.received("move"), 4);
    assert!(sandbox.received("match") >= 2);
    Ok(())
}
