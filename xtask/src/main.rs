//! `cargo xtask`: everything CI runs, runnable locally with one command.
//!
//! * `cargo xtask ci`: fmt check, clippy `-D warnings`, tests, the trybuild UI
//!   suite, rustdoc `-D warnings`, and a check that `docs/rules.md` matches
//!   the rules table.
//! * `cargo xtask lib`: build the emulated `libascendcl.so` and
//!   `libaclmem_sanitizer.so`, print both paths.
//! * `cargo xtask docs`: regenerate `docs/rules.md`, `docs/errors.md` and
//!   `docs/catalogue.md`.
//! * `cargo xtask bench`: the benchmarks behind `docs/benchmarks.md`
//!   (`--record` writes the goals table there).
//! * `cargo xtask fuzz`: libFuzzer on every target (`--update-corpus`
//!   merges what it found into `fuzz/corpus`).
//!
//! Commands that only measure or check leave the tree as it was: their
//! output goes under the target directory, and writing into the tree is
//! always an explicit flag (`bench --record`, `fuzz --update-corpus`) or
//! the purpose of the command (`docs`).
//! * `cargo xtask cross`: aarch64 builds, the test suite under qemu, and the
//!   no_std crates on bare-metal targets (see `cross.rs`).
//! * `cargo xtask publish-check`: the crates meant for crates.io have their
//!   metadata and pass `cargo publish --dry-run` (see `publish.rs` and
//!   docs/releasing.md).

use std::path::PathBuf;
use std::process::ExitCode;

use clap::{Parser, Subcommand};
use xshell::{Shell, cmd};

mod ci;
mod cross;
mod examples;
mod fuzz;
mod gloo;
mod publish;
mod python;
mod timeline;
mod torch_npu;
mod wheels;
mod workspace;

use workspace::{Result, SANITIZER_LIB, build_lib, cargo, run, step, workspace_root};

#[derive(Parser)]
#[command(name = "cargo xtask", about = "aclmem build automation")]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Run every check CI runs, stopping at the first failure.
    Ci,
    /// Build the emulated libascendcl.so and libaclmem_sanitizer.so
    /// (`target/<profile>/`).
    Lib {
        /// Build with the release profile.
        #[arg(long)]
        release: bool,
    },
    /// Install the Python package into target/py-venv and run its tests.
    Python,
    /// Coverage-guided fuzzing (libFuzzer) of the C ABI, the rules and the
    /// environment parser. Reads the committed corpus (fuzz/corpus) and
    /// writes new inputs under target/fuzz-scratch; the tree is left as it
    /// was unless --update-corpus is given.
    Fuzz {
        /// Seconds per target.
        #[arg(long, default_value_t = 60)]
        time: u64,
        /// Only these targets (capi_sequence, rules, env_config).
        #[arg(long = "target")]
        targets: Vec<String>,
        /// Merge what the run found into fuzz/corpus and minimise it
        /// (`-merge=1`): the corpus files change, for a commit.
        #[arg(long)]
        update_corpus: bool,
    },
    /// Build and run the C and C++ examples against the emulated library.
    Examples {
        /// Cross-compile for aarch64 and run under qemu-user instead.
        #[arg(long)]
        aarch64: bool,
    },
    /// Regenerate docs/rules.md, docs/errors.md and docs/catalogue.md from
    /// their tables.
    Docs,
    /// Run the benchmarks and print their tables.
    Bench {
        /// Also write the goals table into docs/benchmarks.md.
        #[arg(long)]
        record: bool,
    },
    /// Build the Python wheels (manylinux_2_28, abi3, x86_64 and aarch64)
    /// into target/wheels, each with the emulated libascendcl.so, the
    /// sanitizer, the CLI and the C headers, and check them with
    /// auditwheel.
    Wheels {
        /// Only these targets (x86_64-unknown-linux-gnu,
        /// aarch64-unknown-linux-gnu); both by default.
        #[arg(long = "target")]
        targets: Vec<String>,
        /// Then use each wheel: the host's installed into a fresh venv with
        /// no Rust toolchain on PATH, the aarch64 one with Debian's aarch64
        /// Python under qemu (what CI checks).
        #[arg(long)]
        check: bool,
    },
    /// Build for aarch64 (and bare metal), run the tests under qemu.
    Cross {
        /// Only these targets (aarch64-unknown-linux-gnu, aarch64-unknown-none,
        /// thumbv7em-none-eabihf); all by default.
        #[arg(long = "target")]
        targets: Vec<String>,
        /// Build, but do not run the tests.
        #[arg(long)]
        no_run: bool,
        /// Build with the release profile.
        #[arg(long)]
        release: bool,
    },
    /// Real torch_npu on the emulated CANN libraries: a venv with torch and
    /// torch_npu from the package registry (target/torch-venv, cached),
    /// then the scenarios of tests/torch_npu under `aclmem run`.
    TorchNpu,
    /// Check that the crates meant for crates.io can be published: their
    /// metadata and publishing order, then `cargo publish --dry-run
    /// --workspace`, which builds each from its package.
    PublishCheck {
        /// Package without building (`--no-verify`): metadata and file
        /// lists only, in seconds.
        #[arg(long)]
        no_verify: bool,
    },
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    let result = (|| -> Result<()> {
        let sh = Shell::new().map_err(|e| e.to_string())?;
        sh.change_dir(workspace_root());
        // One plain log for people and CI: no colour codes anywhere.
        // SAFETY: single-threaded at this point; the xtask sets its own
        // environment once, before any child process starts.
        unsafe {
            std::env::set_var("CARGO_TERM_COLOR", "never");
            std::env::set_var("NO_COLOR", "1");
        }
        match cli.command {
            Command::Ci => ci::ci(&sh),
            Command::Lib { release } => build_lib(&sh, release).map(|lib| {
                println!("{}", lib.display());
                println!("{}", lib.with_file_name(SANITIZER_LIB).display());
            }),
            Command::Examples { aarch64: false } => {
                let lib = build_lib(&sh, false)?;
                examples::run_all(&sh, &lib, &examples::Toolchain::native())
            }
            Command::Examples { aarch64: true } => cross::examples(&sh),
            Command::Python => {
                let lib = build_lib(&sh, false)?;
                python::test(&sh, &lib).map(drop)
            }
            Command::Fuzz {
                time,
                targets,
                update_corpus,
            } => {
                for o in fuzz::fuzz(&sh, time, None, &targets, update_corpus)? {
                    println!(
                        "| {} | {} | {} s | {} | 0 |",
                        o.target, o.runs, o.seconds, o.corpus
                    );
                }
                Ok(())
            }
            Command::Docs => docs(&sh),
            Command::Wheels { targets, check } => {
                let built = wheels::wheels(&sh, &targets)?;
                for w in &built {
                    println!("{}", w.display());
                }
                if check {
                    wheels::check(&sh, &built)?;
                }
                Ok(())
            }
            Command::Bench { record } => bench(&sh, record),
            Command::Cross {
                targets,
                no_run,
                release,
            } => cross::cross(
                &sh,
                &cross::Options {
                    targets,
                    no_run,
                    release,
                },
            )
            .map(drop),
            Command::PublishCheck { no_verify } => publish::check(&sh, no_verify),
            Command::TorchNpu => {
                let lib = build_lib(&sh, false)?;
                let pyacl = python::install(&sh, &lib)?;
                torch_npu::test(&sh, &lib, &pyacl)
            }
        }
    })();
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("\nxtask: FAILED: {e}");
            ExitCode::FAILURE
        }
    }
}

fn bench(sh: &Shell, record: bool) -> Result<()> {
    let cargo = cargo();
    let mut lib = PathBuf::new();
    step("build the emulated libascendcl.so (release)", || {
        lib = build_lib(sh, true)?;
        Ok(())
    })?;
    let _env = sh.push_env("ACLMEM_ASCENDCL", &lib);
    step("build the aclmem command (release, for goal 11)", || {
        run(cmd!(sh, "{cargo} build --release -p aclmem-cli"))
    })?;
    let _cli = sh.push_env("ACLMEM_CLI", lib.with_file_name("aclmem"));
    let mut table = String::new();
    step("the goals, as ratios (tests/benches/goals.rs)", || {
        let c = cmd!(sh, "{cargo} bench -p aclmem-tests --bench goals");
        eprintln!("$ {c}");
        let out = c.read().map_err(|e| e.to_string())?;
        table = out
            .lines()
            .filter(|l| l.starts_with('|'))
            .collect::<Vec<_>>()
            .join("\n");
        println!("{table}");
        Ok(())
    })?;
    if record {
        step("docs/benchmarks.md: the goals table", || {
            record_goals(sh, &table)
        })?;
    }
    step("per-call costs (criterion, tests/benches/ops.rs)", || {
        run(cmd!(sh, "{cargo} bench -p aclmem-tests --bench ops"))
    })?;
    let missed: Vec<&str> = table.lines().filter(|l| l.ends_with("| ✗ |")).collect();
    if missed.is_empty() {
        Ok(())
    } else {
        Err(format!("goals not met:\n{}", missed.join("\n")))
    }
}

/// Replaces the goals table of docs/benchmarks.md (between its markers)
/// with `table`, headed by the date and the machine.
fn record_goals(sh: &Shell, table: &str) -> Result<()> {
    const START: &str = "<!-- goals:start -->";
    const END: &str = "<!-- goals:end -->";
    let doc = sh
        .read_file("docs/benchmarks.md")
        .map_err(|e| e.to_string())?;
    let (Some(a), Some(b)) = (doc.find(START), doc.find(END)) else {
        return Err(format!(
            "docs/benchmarks.md lacks the {START} / {END} markers"
        ));
    };
    let cpu = std::fs::read_to_string("/proc/cpuinfo")
        .ok()
        .and_then(|c| {
            c.lines()
                .find(|l| l.starts_with("model name"))
                .and_then(|l| l.split(':').nth(1))
                .map(|m| m.trim().to_owned())
        })
        .unwrap_or_else(|| "unknown CPU".into());
    let cores = std::thread::available_parallelism().map_or(0, |n| n.get());
    let kernel = std::fs::read_to_string("/proc/sys/kernel/osrelease").unwrap_or_default();
    let date = cmd!(sh, "date -u +%Y-%m-%d").read().unwrap_or_default();
    let text = format!(
        "{START}\nMeasured {date} on {cpu}, {cores} cores, Linux {}, with `cargo xtask bench`:\n\n{table}\n{END}",
        kernel.trim()
    );
    let new = format!("{}{text}{}", &doc[..a], &doc[b + END.len()..]);
    sh.write_file("docs/benchmarks.md", new)
        .map_err(|e| e.to_string())?;
    eprintln!("docs/benchmarks.md updated");
    Ok(())
}

fn docs(sh: &Shell) -> Result<()> {
    for (path, args) in ci::GENERATED_DOCS {
        let text = ci::generated_doc(sh, args)?;
        sh.write_file(path, text).map_err(|e| e.to_string())?;
        eprintln!("wrote {path}");
    }
    Ok(())
}
