//! `payspec`: check, list, audit and generate from the payments spec.

use clap::{Parser, Subcommand};
use payspec_codegen::load::BUILTIN_SPEC_NAME;
use payspec_codegen::{Spec, audit, load, load_str, report};

/// The spec built into this program, checked when it runs outside a repository.
const BUILTIN_SPEC: &str = include_str!("../../spec/payments.yaml");
use std::io::{self, Write};
use std::path::{Path, PathBuf};
use std::process::ExitCode;

/// The payspec generator: one spec of the payments API, checked, audited and turned into Rust.
#[derive(Parser)]
#[command(name = "payspec", version, about)]
struct Cli {
    /// The spec file to read (`-`: standard input). Without it: `spec/payments.yaml` in the
    /// current directory when there is one, else the copy of it built into payspec.
    #[arg(long, global = true, value_name = "PATH")]
    spec: Option<PathBuf>,
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Validates the spec and prints a one-line summary.
    Check,
    /// Lists every operation with its routes.
    Routes {
        /// One JSON object per operation per line.
        #[arg(long)]
        json: bool,
    },
    /// Reports identical, alternative, ambiguous, doubly listed and shadowing routes.
    Audit {
        /// One JSON finding per line.
        #[arg(long)]
        json: bool,
    },
    /// Writes the spec as an OpenAPI 3.1 document (JSON).
    Openapi {
        /// The file to write; standard output when absent.
        #[arg(long, value_name = "FILE")]
        out: Option<PathBuf>,
    },
    /// Compares the spec with an OpenAPI 3.x document (JSON or YAML) and prints every
    /// difference, recorded (a disagreement in the spec accounts for it) or new. Exits 1
    /// when a difference is new or a recorded disagreement matches nothing.
    Diff {
        /// The OpenAPI document to compare with.
        #[arg(long, value_name = "FILE")]
        openapi: PathBuf,
        /// One JSON object per line: differences, then stale disagreements, then quirks.
        #[arg(long)]
        json: bool,
    },
    /// Drafts a spec from a vendor's OpenAPI 3.0 or 3.1 document (JSON or YAML): every
    /// operation, its parameters, body and answer, the schemas as shapes, the security
    /// schemes as credentials, the servers as environments. What the spec needs and the
    /// document does not say is drafted where the document shows it, else left as a
    /// `# CHOICE` comment; what cannot be imported is listed with its place. The draft is
    /// checked as `payspec check` would, and the command fails when it would not pass.
    Import {
        /// The OpenAPI document to draft from.
        #[arg(value_name = "DOCUMENT")]
        document: PathBuf,
        /// The spec file to write; standard output when absent.
        #[arg(long, value_name = "FILE")]
        out: Option<PathBuf>,
    },
    /// Writes the generated client code (the same code the build step and the macro produce).
    Generate {
        /// The file to write; standard output when absent.
        #[arg(long, value_name = "FILE")]
        out: Option<PathBuf>,
    },
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    // A draft needs no spec: it makes one.
    if let Command::Import { document, out } = &cli.command {
        return import(document, out.as_deref());
    }
    // Without `--spec`, the repository's own spec when run from its root (so an edit on
    // disk is what gets checked), else the copy built into this program.
    let on_disk = Path::new(BUILTIN_SPEC_NAME);
    let (loaded, source) = match &cli.spec {
        Some(path) if path.as_os_str() == "-" => (read_stdin(), "standard input"),
        Some(path) => (load(path), "the file on disk"),
        None if on_disk.is_file() => (load(on_disk), "the file on disk"),
        None => (load_str(BUILTIN_SPEC_NAME, BUILTIN_SPEC), "the copy built into payspec"),
    };
    let spec = match loaded {
        Ok(spec) => spec,
        Err(errors) => {
            eprintln!("{errors}");
            return ExitCode::FAILURE;
        }
    };
    run(&cli.command, &spec, source)
}

/// The spec on standard input, named `<stdin>` in errors, read up to the size limit.
fn read_stdin() -> Result<Spec, payspec_codegen::Diagnostics> {
    use std::io::Read as _;
    let mut bytes = Vec::new();
    let limit = payspec_codegen::load::MAX_SPEC_BYTES as u64 + 1;
    if let Err(error) = io::stdin().lock().take(limit).read_to_end(&mut bytes) {
        eprintln!("payspec: cannot read standard input: {error}");
    }
    payspec_codegen::load::load_bytes("<stdin>", bytes)
}

fn run(command: &Command, spec: &Spec, source: &str) -> ExitCode {
    match write_output(command, spec, source) {
        Ok(code) => code,
        // A reader that stops early (`payspec routes --json | head`) is not an error.
        Err(error) if error.kind() == io::ErrorKind::BrokenPipe => ExitCode::SUCCESS,
        Err(error) => {
            eprintln!("payspec: cannot write the output: {error}");
            ExitCode::FAILURE
        }
    }
}

/// `source` says where the spec came from, for `check`'s summary.
fn write_output(command: &Command, spec: &Spec, source: &str) -> io::Result<ExitCode> {
    let stdout = io::stdout();
    let mut out = io::BufWriter::new(stdout.lock());
    match command {
        Command::Check => writeln!(out, "{} ({source})", report::summary(spec))?,
        Command::Generate { out: file } => {
            let source = match payspec_codegen::generate(spec, &payspec_codegen::Options::new().formatted()) {
                Ok(source) => source,
                Err(error) => {
                    eprintln!("payspec: {error}");
                    return Ok(ExitCode::FAILURE);
                }
            };
            match file {
                None => out.write_all(source.as_bytes())?,
                Some(path) => {
                    if let Err(error) = std::fs::write(path, &source) {
                        eprintln!("payspec: cannot write {}: {error}", path.display());
                        return Ok(ExitCode::FAILURE);
                    }
                    eprintln!("payspec: wrote {} ({} operations)", path.display(), spec.operations.len());
                }
            }
        }
        Command::Openapi { out: file } => {
            let document = payspec_codegen::openapi::export_json(spec);
            match file {
                None => out.write_all(document.as_bytes())?,
                Some(path) => {
                    if let Err(error) = std::fs::write(path, &document) {
                        eprintln!("payspec: cannot write {}: {error}", path.display());
                        return Ok(ExitCode::FAILURE);
                    }
                    eprintln!(
                        "payspec: wrote {} (OpenAPI {})",
                        path.display(),
                        payspec_codegen::openapi::OPENAPI_VERSION
                    );
                }
            }
        }
        Command::Diff { openapi, json } => return diff(spec, openapi, *json, &mut out),
        Command::Import { .. } => {}
        Command::Routes { json: true } => {
            for op in &spec.operations {
                writeln!(out, "{}", report::operation_json(op))?;
            }
        }
        Command::Routes { json: false } => out.write_all(report::routes_table(spec).as_bytes())?,
        Command::Audit { json } => {
            let findings = audit::audit(spec);
            if *json {
                for finding in &findings {
                    serde_json::to_writer(&mut out, finding)?;
                    out.write_all(b"\n")?;
                }
            } else {
                out.write_all(report::audit_text(&findings).as_bytes())?;
            }
            out.flush()?;
            if audit::has_undeclared_identical_route(&findings) {
                eprintln!(
                    "payspec: an identical route is not declared; declare it with `same_route_as` on the alias"
                );
                return Ok(ExitCode::FAILURE);
            }
        }
    }
    out.flush()?;
    Ok(ExitCode::SUCCESS)
}

/// `payspec diff`: every difference, stale disagreement and quirk, then a summary line on
/// standard error.
fn diff(spec: &Spec, file: &Path, json: bool, out: &mut impl Write) -> io::Result<ExitCode> {
    use payspec_codegen::openapi;
    let name = file.display().to_string();
    let text = match read_limited(file, openapi::MAX_DOCUMENT_BYTES) {
        Ok(text) => text,
        Err(error) => {
            eprintln!("payspec: cannot read {name}: {error}");
            return Ok(ExitCode::FAILURE);
        }
    };
    let document = match openapi::read_document(&name, &text) {
        Ok(document) => document,
        Err(error) => {
            eprintln!("{error}");
            return Ok(ExitCode::FAILURE);
        }
    };
    let report = openapi::diff(spec, &document);
    for difference in &report.differences {
        if json {
            serde_json::to_writer(&mut *out, difference)?;
            out.write_all(b"\n")?;
        } else {
            writeln!(out, "{difference}")?;
        }
    }
    for stale in &report.stale {
        if json {
            let mut value = serde_json::to_value(stale).unwrap_or_default();
            value["status"] = "stale".into();
            serde_json::to_writer(&mut *out, &value)?;
            out.write_all(b"\n")?;
        } else {
            writeln!(out, "{stale}")?;
        }
    }
    for quirk in &report.quirks {
        let line = quirk.location.map(|l| format!("{}:{}", l.line, l.column));
        if json {
            let value = serde_json::json!({
                "status": "quirk",
                "method": quirk.method.map(|m| m.as_str()),
                "path": quirk.path,
                "at": line,
                "message": quirk.message,
            });
            serde_json::to_writer(&mut *out, &value)?;
            out.write_all(b"\n")?;
        } else {
            let method = quirk.method.map_or(String::new(), |m| format!("{m} "));
            let at = line.map_or(String::new(), |l| format!(" ({name}:{l})"));
            writeln!(out, "quirk    {method}{}{at}: {}", quirk.path, quirk.message)?;
        }
    }
    out.flush()?;
    let new = report.new_differences().count();
    eprintln!(
        "payspec: {} differences ({} recorded, {new} new), {} stale disagreements, {} quirks of the document{}",
        report.differences.len(),
        report.differences.len() - new,
        report.stale.len(),
        report.quirks.len(),
        if report.disagreements_checked {
            ""
        } else {
            "; disagreements not checked (the document is payspec's own export)"
        },
    );
    Ok(if report.is_clean() { ExitCode::SUCCESS } else { ExitCode::FAILURE })
}

/// `payspec import`: the draft written, what was inferred and what was not imported said
/// on standard error, and the draft checked as `payspec check` reads it.
fn import(file: &Path, out: Option<&Path>) -> ExitCode {
    use payspec_codegen::openapi;
    let name = file.display().to_string();
    let text = match read_limited(file, openapi::MAX_DOCUMENT_BYTES) {
        Ok(text) => text,
        Err(error) => {
            eprintln!("payspec: cannot read {name}: {error}");
            return ExitCode::FAILURE;
        }
    };
    let draft = match openapi::import(&name, &text) {
        Ok(draft) => draft,
        Err(error) => {
            eprintln!("{error}");
            return ExitCode::FAILURE;
        }
    };
    let written = match out {
        Some(path) => {
            std::fs::write(path, &draft.yaml).map_err(|e| format!("cannot write {}: {e}", path.display()))
        }
        None => {
            let mut stdout = io::stdout().lock();
            match stdout.write_all(draft.yaml.as_bytes()).and_then(|()| stdout.flush()) {
                Err(error) if error.kind() != io::ErrorKind::BrokenPipe => {
                    Err(format!("cannot write the output: {error}"))
                }
                _ => Ok(()),
            }
        }
    };
    if let Err(error) = written {
        eprintln!("payspec: {error}");
        return ExitCode::FAILURE;
    }
    for line in &draft.inferred {
        eprintln!("inferred: {line}");
    }
    for unimported in &draft.unimported {
        eprintln!("{unimported}");
    }
    let spec_name = out.map_or_else(|| "<draft>".to_owned(), |p| p.display().to_string());
    let checked = load_str(&spec_name, &draft.yaml);
    eprintln!(
        "payspec: drafted {} operations and {} shapes from {name}; {} conventions inferred, {} constructs not imported",
        draft.operations,
        draft.shapes,
        draft.inferred.len(),
        draft.unimported.len(),
    );
    match checked {
        Ok(_) => {
            eprintln!(
                "payspec: the draft passes `payspec check`; its `# CHOICE` comments are yours to settle"
            );
            ExitCode::SUCCESS
        }
        Err(errors) => {
            eprintln!("{errors}");
            eprintln!(
                "payspec: the draft does not pass `payspec check` (a fault of the importer's: please report it)"
            );
            ExitCode::FAILURE
        }
    }
}

/// A file's text, refused past `limit` bytes or when it is not UTF-8.
fn read_limited(path: &Path, limit: usize) -> io::Result<String> {
    use std::io::Read as _;
    let mut bytes = Vec::new();
    std::fs::File::open(path)?.take(limit as u64 + 1).read_to_end(&mut bytes)?;
    if bytes.len() > limit {
        return Err(io::Error::new(io::ErrorKind::InvalidData, format!("larger than {limit} bytes")));
    }
    String::from_utf8(bytes).map_err(|_| io::Error::new(io::ErrorKind::InvalidData, "not UTF-8 text"))
}
