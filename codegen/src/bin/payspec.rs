//! `payspec`: check, list, audit and generate from the payments spec.

use clap::{Parser, Subcommand};
use payspec_codegen::load::BUILTIN_SPEC_NAME;
use payspec_codegen::{Spec, audit, load, load_str, report};

/// The spec built into this program, checked when it runs outside a repository.
const BUILTIN_SPEC: &str = include_str!("../../../spec/payments.yaml");
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
    /// Writes the generated client code (the same code the build step and the macro produce).
    Generate {
        /// The file to write; standard output when absent.
        #[arg(long, value_name = "FILE")]
        out: Option<PathBuf>,
    },
}

fn main() -> ExitCode {
    let cli = Cli::parse();
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
            let source = match payspec_codegen::generate_source(spec) {
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
