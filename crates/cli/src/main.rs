//! `aclmem`: the Ascend physical-memory support matrix, run-time checks and
//! backend probes.

use std::process::ExitCode;

use aclmem_core::{CannVersion, Location, MemAttr, Product, RunMode, SOC_NAMES, check};
use clap::{Parser, Subcommand, ValueEnum};

mod errors;
mod matrix;
mod sanitize;
mod timeline;

#[derive(Parser)]
#[command(
    name = "aclmem",
    version,
    about = "Ascend physical-memory rules, checked"
)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Print the support matrix (product x run mode x location x attribute)
    /// of one CANN release.
    Matrix {
        #[arg(long, value_parser = parse::<Product>, help = product_help())]
        product: Option<Product>,
        #[arg(long, value_parser = parse::<CannVersion>, default_value = CannVersion::DEFAULT.id(), help = cann_help())]
        cann: CannVersion,
        /// Output format.
        #[arg(long, value_enum, default_value_t = Format::Table)]
        format: Format,
    },
    /// List what changed between two CANN releases, one line per
    /// combination, for planning an upgrade.
    Diff {
        /// The release you have.
        #[arg(value_parser = parse::<CannVersion>)]
        from: CannVersion,
        /// The release you are moving to.
        #[arg(value_parser = parse::<CannVersion>)]
        to: CannVersion,
        #[arg(long, value_parser = parse::<Product>, help = product_help())]
        product: Option<Product>,
    },
    /// Check one combination, as code that learns its product at run time does.
    Check {
        /// The SoC name `aclrtGetSocName` returns (e.g. Ascend910B3; any case).
        #[arg(long, value_parser = parse_soc)]
        soc: Product,
        /// Run mode: ep (ACL_HOST) or rc (ACL_DEVICE).
        #[arg(long, value_parser = parse::<RunMode>, default_value = RunMode::Ep.id())]
        run_mode: RunMode,
        #[arg(long, value_parser = parse::<CannVersion>, default_value = CannVersion::DEFAULT.id(), help = cann_help())]
        cann: CannVersion,
        /// Location: device, host or host-numa (or the C name).
        #[arg(long, value_parser = parse::<Location>)]
        location: Location,
        /// Attribute: C name (ACL_HBM_MEM_HUGE), marker name (HbmHuge) or raw value (4).
        #[arg(long, value_parser = parse::<MemAttr>)]
        attr: MemAttr,
    },
    /// Print the emulator's error table: the code it answers in each
    /// situation a real driver decides, and whether that code is documented
    /// or chosen.
    Errors {
        /// Output format (table, json, markdown).
        #[arg(long, value_enum, default_value = "table")]
        format: Format,
    },
    /// Run a program with libaclmem_sanitizer.so preloaded: its ACL memory
    /// calls are checked against the rules (for its product and CANN
    /// release, and for --targets), for lifetime errors and for leaks.
    Sanitize {
        /// The sanitizer library (default: $ACLMEM_SANITIZER_LIB, or
        /// beside this executable).
        #[arg(long)]
        lib: Option<std::path::PathBuf>,
        /// Other products and releases the program must run on:
        /// `a2,a3@8.3,Ascend910B3@8.0`.
        #[arg(long)]
        targets: Option<String>,
        /// Keep the findings as JSON lines in this file.
        #[arg(long)]
        log: Option<std::path::PathBuf>,
        /// Write the memory timeline (JSON lines) to this file.
        #[arg(long)]
        trace: Option<std::path::PathBuf>,
        /// Stop the program at the first finding.
        #[arg(long)]
        halt_on_error: bool,
        /// The program and its arguments (after `--`).
        #[arg(last = true, required = true)]
        program: Vec<String>,
    },
    /// Turn a sanitizer trace (JSON lines) into a Perfetto/Chrome trace
    /// (OUT.json) and an HTML page with each device's memory over time
    /// (OUT.html).
    Timeline {
        /// The trace written with `aclmem sanitize --trace`.
        trace: std::path::PathBuf,
        /// Output path without extension (default: beside the trace).
        #[arg(short, long)]
        out: Option<std::path::PathBuf>,
    },
    /// Load libascendcl.so, initialise ACL and report what it runs on.
    Probe {
        /// The library (a file or a directory). Without it: $ACLMEM_ASCENDCL,
        /// then $ASCEND_HOME_PATH/lib64, $ASCEND_TOOLKIT_HOME/lib64,
        /// /usr/local/Ascend/ascend-toolkit/latest/lib64, then the dynamic
        /// loader. A library named here or in $ACLMEM_ASCENDCL that does not
        /// load is an error; nothing else is tried.
        #[arg(long)]
        lib: Option<std::path::PathBuf>,
    },
}

#[derive(Clone, Copy, ValueEnum)]
enum Format {
    Table,
    Json,
    Markdown,
}

/// "unknown X `given`; did you mean `a` or `b`?\nexpected one of: ...":
/// the closest names by edit distance (ASCII case ignored), if any is close.
fn unknown(what: &str, given: &str, names: &[&str]) -> String {
    let lower = given.to_ascii_lowercase();
    let distance = |n: &str| strsim::levenshtein(&lower, &n.to_ascii_lowercase());
    let best = names
        .iter()
        .map(|n| distance(n))
        .min()
        .unwrap_or(usize::MAX);
    let close_enough = best <= (given.len() / 3).max(2);
    let hint = if close_enough {
        let closest: Vec<String> = names
            .iter()
            .filter(|n| distance(n) == best)
            .map(|n| format!("`{n}`"))
            .collect();
        format!("; did you mean {}?", closest.join(" or "))
    } else {
        String::new()
    };
    format!(
        "unknown {what} `{given}`{hint}\nexpected one of: {}",
        names.join(", ")
    )
}

/// Any of the core parsers (`FromStr` of the value types), with their
/// messages: one parser per name, shared with the sanitizer, Python and the
/// emulator's environment.
fn parse<T: std::str::FromStr>(s: &str) -> Result<T, String>
where
    T::Err: std::fmt::Display,
{
    s.parse().map_err(|e: T::Err| e.to_string())
}

/// The help of `--cann`, from the table of releases.
pub(crate) fn cann_help() -> String {
    format!(
        "The CANN release ({}; 8.3.RC1 style accepted)",
        CannVersion::LIST
    )
}

/// The help of `--product`, from the list of products.
pub(crate) fn product_help() -> String {
    let ids: Vec<&str> = Product::ALL.iter().map(|p| p.id()).collect();
    format!("Only this product ({})", ids.join(", "))
}

fn parse_soc(s: &str) -> Result<Product, String> {
    Product::from_soc_name(s).map_err(|e| {
        let names: Vec<_> = SOC_NAMES.iter().map(|(n, _)| *n).collect();
        let code = e.code();
        format!(
            "{}, and Atlas 350 names Ascend950PR_xxxx / Ascend950DT_xxxx\n\
             (aclmem reports an unknown SoC name as {} = {})",
            unknown("SoC name", s, &names),
            code.name().unwrap_or("ACL_ERROR_INVALID_PARAM"),
            code.code()
        )
    })
}

fn probe(lib: Option<&std::path::Path>) -> Result<(), String> {
    use aclmem_driver::{AscendCl, Policy, SYMBOLS};
    let cl = AscendCl::load(lib).map_err(|e| e.to_string())?;
    println!("library:  {}", cl.path());
    let runtime = cl.init().map_err(|e| format!("aclInit failed: {e}"))?;
    let soc = runtime
        .soc_name()
        .map_err(|e| format!("aclrtGetSocName failed: {e}"))?;
    let run_mode = runtime
        .run_mode()
        .map_err(|e| format!("aclrtGetRunMode failed: {e}"))?;
    match Product::from_soc_name(&soc) {
        Ok(product) => println!("SoC:      {soc} ({product}, {run_mode} form)"),
        Err(_) => println!("SoC:      {soc} (unknown to aclmem, {run_mode} form)"),
    }
    match runtime.cann() {
        Ok(c) => match c.rules {
            Some(rules) if rules.release() == c.release || rules.id() == c.release => {
                println!("CANN:     {} (from {})", c.release, c.source)
            }
            Some(rules) => println!(
                "CANN:     {} (from {}; aclmem applies the {} rules)",
                c.release, c.source, rules
            ),
            None => println!(
                "CANN:     {} (from {}; older than any release aclmem models)",
                c.release, c.source
            ),
        },
        Err(e) => println!("CANN:     not found ({e})"),
    }
    if let Ok((major, minor, patch)) = runtime.acl_version() {
        println!("ACL:      interface {major}.{minor}.{patch}");
    }
    let devices = runtime
        .device_count()
        .map_err(|e| format!("aclrtGetDeviceCount failed: {e}"))?;
    println!("devices:  {devices}");
    if devices > 0 {
        let device = runtime
            .device(0)
            .map_err(|e| format!("aclrtSetDevice(0) failed: {e}"))?;
        match device.mem_info(MemAttr::HbmMem) {
            Ok((free, total)) => println!("device 0: {free} of {total} bytes free (ACL_HBM_MEM)"),
            Err(e) => println!("device 0: aclrtGetMemInfo failed: {e}"),
        }
    }
    let optional: Vec<&str> = SYMBOLS
        .iter()
        .filter(|(_, policy)| *policy == Policy::Optional)
        .map(|(name, _)| *name)
        .collect();
    let absent: Vec<&str> = optional
        .iter()
        .copied()
        .filter(|name| !cl.has_symbol(name))
        .collect();
    println!(
        "calls:    {} of {} optional calls present",
        optional.len() - absent.len(),
        optional.len()
    );
    if !absent.is_empty() {
        println!(
            "          not in this release (they answer 207000): {}",
            absent.join(", ")
        );
    }
    Ok(())
}

fn main() -> ExitCode {
    // Like other Unix tools, end quietly when the reader of stdout goes
    // away (`aclmem matrix | head`) instead of failing a write.
    // SAFETY: restores the default action of one signal, before any
    // thread starts.
    unsafe { libc::signal(libc::SIGPIPE, libc::SIG_DFL) };
    match Cli::parse().command {
        Command::Probe { lib } => match probe(lib.as_deref()) {
            Ok(()) => ExitCode::SUCCESS,
            Err(e) => {
                eprintln!("error: {e}");
                ExitCode::FAILURE
            }
        },
        Command::Matrix {
            product,
            cann,
            format,
        } => {
            let text = match format {
                Format::Table => matrix::table(product, cann),
                Format::Json => matrix::json(&matrix::rows(product, cann)),
                Format::Markdown if product.is_none() && cann == CannVersion::DEFAULT => {
                    matrix::markdown()
                }
                Format::Markdown => {
                    eprintln!(
                        "error: the markdown document covers every product and release; drop --product and --cann"
                    );
                    return ExitCode::from(2);
                }
            };
            print!("{text}");
            ExitCode::SUCCESS
        }
        Command::Sanitize {
            lib,
            targets,
            log,
            trace,
            halt_on_error,
            program,
        } => sanitize::run(sanitize::Options {
            lib,
            targets,
            log,
            trace,
            halt_on_error,
            program,
        }),
        Command::Timeline { trace, out } => {
            let out = out.unwrap_or_else(|| trace.with_extension(""));
            match timeline::run(&trace, &out) {
                Ok((lines, devices)) => {
                    println!(
                        "{lines} events, {} ({}): wrote {} and {}",
                        devices.len(),
                        devices.join(", "),
                        out.with_extension("json").display(),
                        out.with_extension("html").display()
                    );
                    ExitCode::SUCCESS
                }
                Err(e) => {
                    eprintln!("error: {e}");
                    ExitCode::FAILURE
                }
            }
        }
        Command::Errors { format } => {
            print!("{}", errors::render(format));
            ExitCode::SUCCESS
        }
        Command::Diff { from, to, product } => {
            let lines = matrix::diff(from, to, product);
            println!("{} combination(s) change from {from} to {to}:", lines.len());
            for line in lines {
                println!("  {line}");
            }
            ExitCode::SUCCESS
        }
        Command::Check {
            soc,
            run_mode,
            cann,
            location,
            attr,
        } => {
            let product = soc;
            let what = format!("{product} ({run_mode} form, {cann}): {attr} at {location}");
            match check(product, run_mode, cann, location, attr) {
                Ok(verdict) => {
                    println!("{what}: {verdict}");
                    ExitCode::SUCCESS
                }
                Err(denial) => {
                    println!("{what}: refused: {denial}");
                    ExitCode::FAILURE
                }
            }
        }
    }
}
