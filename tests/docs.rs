//! The README and the guides under `docs/`, read as a newcomer reads them: every relative
//! link leads to a file that exists and, with an anchor, to a heading it has; the README's
//! contents reach every guide; every Rust example runs as a doctest (the documents are
//! listed in `payspec-sandbox`'s doctests), and one that cannot says where CI runs it.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("..")
}

/// The README and every guide, with their text.
fn documents() -> Vec<(String, String)> {
    let mut found = vec!["README.md".to_owned()];
    let mut guides: Vec<String> = std::fs::read_dir(root().join("docs"))
        .unwrap_or_else(|e| panic!("docs/: {e}"))
        .filter_map(|entry| entry.ok())
        .map(|entry| format!("docs/{}", entry.file_name().to_string_lossy()))
        .filter(|name| name.ends_with(".md"))
        .collect();
    guides.sort();
    found.extend(guides);
    found
        .into_iter()
        .map(|name| {
            let text = std::fs::read_to_string(root().join(&name)).unwrap_or_else(|e| panic!("{name}: {e}"));
            (name, text)
        })
        .collect()
}

/// The text outside fenced code blocks, line by line, with each line's number.
fn prose(text: &str) -> Vec<(usize, &str)> {
    let mut fenced = false;
    let mut lines = Vec::new();
    for (n, line) in text.lines().enumerate() {
        if line.trim_start().starts_with("```") {
            fenced = !fenced;
            continue;
        }
        if !fenced {
            lines.push((n + 1, line));
        }
    }
    lines
}

/// A heading's anchor as GitHub makes it: lower case, punctuation dropped, spaces as `-`.
fn slug(heading: &str) -> String {
    heading
        .trim()
        .to_lowercase()
        .chars()
        .filter(|c| c.is_alphanumeric() || *c == ' ' || *c == '-' || *c == '_')
        .map(|c| if c == ' ' { '-' } else { c })
        .collect()
}

fn anchors(text: &str) -> BTreeSet<String> {
    prose(text)
        .into_iter()
        .filter_map(|(_, line)| line.strip_prefix('#').map(|rest| rest.trim_start_matches('#')))
        .map(slug)
        .collect()
}

/// Every `[text](target)` of the prose, with its line.
fn links(text: &str) -> Vec<(usize, String)> {
    let mut found = Vec::new();
    for (n, line) in prose(text) {
        let mut rest = line;
        while let Some(at) = rest.find("](") {
            let after = &rest[at + 2..];
            let Some(end) = after.find(')') else { break };
            found.push((n, after[..end].to_owned()));
            rest = &after[end..];
        }
    }
    found
}

/// The fenced blocks: their info string and text.
fn blocks(text: &str) -> Vec<(String, String)> {
    let mut found = Vec::new();
    let mut open: Option<(String, String)> = None;
    for line in text.lines() {
        let trimmed = line.trim_start();
        if let Some(info) = trimmed.strip_prefix("```") {
            match open.take() {
                Some(block) => found.push(block),
                None => open = Some((info.trim().to_owned(), String::new())),
            }
        } else if let Some((_, body)) = open.as_mut() {
            body.push_str(line);
            body.push('\n');
        }
    }
    found
}

#[test]
fn every_link_leads_to_a_file_and_a_heading_that_exist() {
    let documents = documents();
    let mut broken = Vec::new();
    for (name, text) in &documents {
        let dir = root().join(name).parent().map(Path::to_path_buf).unwrap_or_else(root);
        for (line, target) in links(text) {
            if target.starts_with("http://")
                || target.starts_with("https://")
                || target.starts_with("mailto:")
            {
                continue;
            }
            let (file, anchor) = match target.split_once('#') {
                Some((file, anchor)) => (file, Some(anchor)),
                None => (target.as_str(), None),
            };
            let path = if file.is_empty() { root().join(name) } else { dir.join(file) };
            if !path.exists() {
                broken.push(format!("{name}:{line}: `{target}`: no such file"));
                continue;
            }
            if let Some(anchor) = anchor {
                let target_text = std::fs::read_to_string(&path).unwrap_or_default();
                if !anchors(&target_text).contains(anchor) {
                    broken.push(format!("{name}:{line}: `{target}`: no heading makes `#{anchor}`"));
                }
            }
        }
    }
    assert!(broken.is_empty(), "broken links:\n{}", broken.join("\n"));
}

#[test]
fn the_readme_opens_on_the_task_and_its_contents_reach_every_guide() {
    let documents = documents();
    let readme = &documents[0].1;
    // Install, the two commands and one call come first, before any other section.
    let headings: Vec<&str> =
        prose(readme).into_iter().filter_map(|(_, line)| line.strip_prefix("## ")).collect();
    assert_eq!(&headings[..4], ["Install", "The two commands", "One call", "Contents"], "{headings:?}");
    let contents =
        readme.split("## Contents").nth(1).and_then(|rest| rest.split("\n## ").next()).unwrap_or("");
    let linked: BTreeSet<String> = links(contents).into_iter().map(|(_, target)| target).collect();
    for (name, _) in &documents[1..] {
        assert!(
            linked.iter().any(|target| target.split('#').next() == Some(name.as_str())),
            "the README's contents do not link {name}"
        );
    }
    // Every heading the contents name by anchor is there.
    for target in linked.iter().filter_map(|t| t.strip_prefix('#')) {
        assert!(anchors(readme).contains(target), "the contents name `#{target}`, which no heading makes");
    }
    // The first call's example comes within the first 60 lines.
    let first_rust = readme.lines().position(|line| line.starts_with("```rust")).unwrap_or(usize::MAX);
    assert!(first_rust < 60, "the first example is at line {}", first_rust + 1);
}

#[test]
fn every_rust_example_runs_as_a_doctest_or_says_where_ci_runs_it() {
    let lib = std::fs::read_to_string(root().join("sandbox/src/lib.rs")).unwrap_or_default();
    let (mut run, mut elsewhere) = (0, 0);
    for (name, text) in documents() {
        for (info, body) in blocks(&text) {
            if !info.starts_with("rust") {
                continue;
            }
            if info.contains("ignore") {
                // It names a file of the repository that CI builds, which exists.
                let named = body
                    .split(|c: char| c.is_whitespace() || c == '(' || c == ')' || c == ',')
                    .filter(|word| word.starts_with("tests/"))
                    .any(|path| root().join(path.trim_end_matches('.')).exists());
                assert!(named, "{name}: an example that is not run names no file CI runs it as:\n{body}");
                elsewhere += 1;
            } else {
                assert!(
                    lib.contains(&format!("include_str!(\"../../{name}\")")),
                    "{name} has Rust examples but is not among payspec-sandbox's doctests"
                );
                run += 1;
            }
        }
    }
    eprintln!("{run} Rust examples run as doctests, {elsewhere} run by CI as a crate of their own");
    assert!(run > 0);
}

#[test]
fn every_guide_renders_in_the_client_crates_docs() {
    let lib = std::fs::read_to_string(root().join("generated-client/src/lib.rs")).unwrap_or_default();
    for (name, _) in documents().iter().skip(1) {
        // The project's own workings are not a user's guide.
        if name.ends_with("development.md")
            || name.ends_with("measurements.md")
            || name.ends_with("architecture.md")
        {
            continue;
        }
        let file = name.trim_start_matches("docs/");
        let copy = root().join("generated-client/guides").join(file);
        let same = std::fs::read_to_string(&copy).ok() == std::fs::read_to_string(root().join(name)).ok();
        assert!(same, "generated-client/guides/{file} is not the guide {name}");
        assert!(
            lib.contains(&format!("include_str!(\"../guides/{file}\")")),
            "payspec_client::guides lacks {file}"
        );
    }
}

/// Every Rust file of the workspace's crates (sources, tests, build scripts, benches,
/// examples), outside `target/`.
fn rust_files(dir: &Path, found: &mut Vec<PathBuf>) {
    let Ok(entries) = std::fs::read_dir(dir) else { return };
    for entry in entries.filter_map(Result::ok) {
        let path = entry.path();
        let name = entry.file_name().to_string_lossy().into_owned();
        if path.is_dir() {
            if name != "target" && !name.starts_with('.') {
                rust_files(&path, found);
            }
        } else if name.ends_with(".rs") {
            found.push(path);
        }
    }
}

#[test]
fn no_test_or_build_reads_outside_the_repository() {
    // A user's clone has nothing beside it: what the tests compare against is in
    // `spec/facts/`. A path that climbs out of the repository from a crate's folder
    // (`CARGO_MANIFEST_DIR` + `/../../`) or names the documents' folder beside it is refused.
    let mut files = Vec::new();
    rust_files(&root(), &mut files);
    assert!(files.len() > 50, "the walk found {} Rust files", files.len());
    // Spelled in pieces, so that this file does not hold them whole.
    let patterns = [["\"/..", "/../"].concat(), ["../", "shared/"].concat(), ["\"../../", "shared"].concat()];
    let mut offending = Vec::new();
    for file in &files {
        let text = std::fs::read_to_string(file).unwrap_or_else(|e| panic!("{}: {e}", file.display()));
        for (n, line) in text.lines().enumerate() {
            let code = line.split("//").next().unwrap_or_default();
            if patterns.iter().any(|pattern| code.contains(pattern.as_str())) {
                offending.push(format!("{}:{}: {}", file.display(), n + 1, line.trim()));
            }
        }
    }
    assert!(offending.is_empty(), "paths outside the repository:\n{}", offending.join("\n"));
}

/// The paths `docs/architecture.md` names (in backticks, a file with an extension or a
/// folder ending in `/`), resolved from the crate or folder each is named under.
fn architecture_paths(text: &str) -> Vec<String> {
    let mut named = Vec::new();
    for part in text.split('`').skip(1).step_by(2) {
        let path = part.trim();
        let looks_like_a_path = (path.ends_with('/')
            || path.rsplit('/').next().is_some_and(|f| f.contains(".rs")))
            && !path.contains(' ')
            && !path.contains("::");
        if looks_like_a_path {
            named.push(path.to_owned());
        }
    }
    named
}

#[test]
fn the_architecture_names_only_files_and_folders_that_exist() {
    let root = root();
    let text = std::fs::read_to_string(root.join("docs/architecture.md")).unwrap_or_else(|e| panic!("{e}"));
    // A path is read from the root, or under one of the places the page describes.
    let places = [
        "",
        "runtime/src/",
        "codegen/src/",
        "codegen/src/load/",
        "codegen/src/load/validate/",
        "codegen/src/load/raw/",
        "codegen/src/emit/",
        "sandbox/src/",
        "vocabulary/src/",
        "runtime/src/transport/",
        "runtime/src/transport/own_sender/",
        "runtime/src/settle/",
        "runtime/src/auth/",
        "runtime/src/answer/",
        "runtime/src/client/",
        "runtime/src/orchestrate/",
        "store/src/",
        "runtime/src/webhook/",
        "sandbox/src/webhooks/",
        "tests/",
    ];
    let paths = architecture_paths(&text);
    assert!(paths.len() > 40, "the page names its rooms: {paths:?}");
    let missing: Vec<&String> = paths
        .iter()
        .filter(|path| !places.iter().any(|place| root.join(format!("{place}{path}")).exists()))
        .collect();
    assert!(missing.is_empty(), "docs/architecture.md names what does not exist: {missing:?}");
}
