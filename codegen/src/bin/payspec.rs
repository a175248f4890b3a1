//! `payspec`: check, list, audit and generate from the payments spec.

use clap::{Parser, Subcommand};
use payspec_codegen::{Spec, audit, load, load_builtin, report};
use std::path::PathBuf;
use std::process::ExitCode;

/// The payspec generator: one spec of the payments API, checked, audited and turned into Rust.
#[derive(Parser)]
#[command(name = "payspec", version, about)]
struct Cli {
    /// The spec file to read; the built-in spec of the payments API when absent.
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
    let loaded = match &cli.spec {
        Some(path) => load(path),
        None => load_builtin(),
    };
    let spec = match loaded {
        Ok(spec) => spec,
        Err(errors) => {
            eprintln!("{errors}");
            return ExitCode::FAILURE;
        }
    };
    run(&cli.command, &spec)
}

fn run(command: &Command, spec: &Spec) -> ExitCode {
    match command {
        Command::Check => println!("{}", report::summary(spec)),
        Command::Generate { out } => return generate(spec, out.as_ref()),
        Command::Routes { json: true } => {
            for op in &spec.operations {
                println!("{}", report::operation_json(op));
            }
        }
        Command::Routes { json: false } => print!("{}", report::routes_table(spec)),
        Command::Audit { json } => {
            let findings = audit::audit(spec);
            if *json {
                for finding in &findings {
                    match serde_json::to_string(finding) {
                        Ok(line) => println!("{line}"),
                        Err(error) => {
                            eprintln!("payspec: cannot write a finding as JSON: {error}");
                            return ExitCode::FAILURE;
                        }
                    }
                }
            } else {
                print!("{}", report::audit_text(&findings));
            }
            if audit::has_undeclared_identical_route(&findings) {
                eprintln!(
                    "payspec: an identical route is not declared; declare it with `same_route_as` on the alias"
                );
                return ExitCode::FAILURE;
            }
        }
    }
    ExitCode::SUCCESS
}

fn generate(spec: &Spec, out: Option<&PathBuf>) -> ExitCode {
    let source = match payspec_codegen::generate_source(spec) {
        Ok(source) => source,
        Err(error) => {
            eprintln!("payspec: {error}");
            return ExitCode::FAILURE;
        }
    };
    match out {
        None => print!("{source}"),
        Some(path) => {
            if let Err(error) = std::fs::write(path, &source) {
                eprintln!("payspec: cannot write {}: {error}", path.display());
                return ExitCode::FAILURE;
            }
            eprintln!("payspec: wrote {} ({} operations)", path.display(), spec.operations.len());
        }
    }
    ExitCode::SUCCESS
}
