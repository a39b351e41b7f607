//! `aclmem`: the Ascend physical-memory support matrix, run-time checks and
//! backend probes.

use std::process::ExitCode;

use aclmem_core::{
    CannVersion, Location, MemAttr, Product, RunMode, SOC_NAMES, UnknownName, check,
};
use clap::{Parser, Subcommand, ValueEnum};

mod blocks;
mod catalogue;
mod errors;
mod explore;
mod matrix;
mod memory_viz;
mod memscope;
mod replay;
mod run;
mod sanitize;
mod sharing;
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
        #[arg(long, value_parser = parse_product, help = product_help())]
        product: Option<Product>,
        #[arg(long, value_parser = parse_cann, help = matrix_cann_help())]
        cann: Option<CannVersion>,
        /// Output format. `markdown` without --cann and --product is the
        /// whole document of docs/rules.md (every release); with either,
        /// the markdown table of one release.
        #[arg(long, value_enum, default_value_t = Format::Table)]
        format: Format,
    },
    /// List what changed between two CANN releases, one line per
    /// combination, for planning an upgrade.
    Diff {
        /// The release you have.
        #[arg(value_parser = parse_cann)]
        from: CannVersion,
        /// The release you are moving to.
        #[arg(value_parser = parse_cann)]
        to: CannVersion,
        #[arg(long, value_parser = parse_product, help = product_help())]
        product: Option<Product>,
    },
    /// Check one combination, as code that learns its product at run time does.
    Check {
        /// The SoC name `aclrtGetSocName` returns (e.g. Ascend910B3; any case).
        #[arg(long, value_parser = parse_soc)]
        soc: Product,
        /// Run mode: ep (ACL_HOST) or rc (ACL_DEVICE).
        #[arg(long, value_parser = parse_run_mode, default_value = RunMode::Ep.id())]
        run_mode: RunMode,
        #[arg(long, value_parser = parse_cann, default_value = CannVersion::DEFAULT.id(), help = cann_help())]
        cann: CannVersion,
        /// Location: device, host or host-numa (or the C name).
        #[arg(long, value_parser = parse_location)]
        location: Location,
        /// Attribute: C name (ACL_HBM_MEM_HUGE), marker name (HbmHuge) or raw value (4).
        #[arg(long, value_parser = parse_attr)]
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
    /// Print the function catalogue: every function aclmem's CANN
    /// libraries export, the library CANN ships it in, and how the
    /// emulator answers it (emulated, accepted only, not supported).
    Catalogue {
        /// Output format (table, json, markdown).
        #[arg(long, value_enum, default_value = "table")]
        format: Format,
        /// Answer as the library of this release does: a function it
        /// lacks is "absent" (the emulated library answers it 207000).
        #[arg(long, value_parser = parse_cann, help = cann_help())]
        cann: Option<CannVersion>,
    },
    /// Replay a trace (`aclmem sanitize --trace`) on other products,
    /// releases and capacities: the first call that would fail on each,
    /// with its code and rule (exit 1 when any target fails).
    Replay(replay::Options),
    /// Run a program with libaclmem_sanitizer.so preloaded: its ACL memory
    /// calls are checked against the rules (for its product and CANN
    /// release, and for --targets), for lifetime errors and for leaks.
    Sanitize(sanitize::Options),
    /// Fail each call site of a program in turn (first its clean run
    /// learns them), each run under the sanitizer; one outcome per fault:
    /// handled, leak, misuse, crash or hang. Exit 1 unless all are handled.
    Explore(explore::Options),
    /// Run any program on the emulated machine: the emulated
    /// libascendcl.so first on its library path (and $ACLMEM_ASCENDCL),
    /// pyACL's `acl` module for Python children (from the wheel), and the
    /// machine's settings; each option defaults to its ACLMEM_EMU_*
    /// variable. Says once, on stderr, that the machine is emulated.
    Run(Box<run::Options>),
    /// Turn a sanitizer trace (JSON lines) into a Perfetto/Chrome trace
    /// (OUT.json) and an HTML page with each device's memory over time
    /// (OUT.html).
    Timeline {
        /// The trace written with `aclmem sanitize --trace`.
        trace: std::path::PathBuf,
        /// Output path without extension (default: beside the trace).
        #[arg(short, long)]
        out: Option<std::path::PathBuf>,
        /// `html` (a Perfetto trace and a page, the default),
        /// `memory-viz` (PyTorch's memory snapshot pickle, one per process)
        /// or `msmemscope` (msMemScope's CSV of events).
        #[arg(long, value_enum, default_value = "html")]
        format: TimelineFormat,
        /// torch's memory snapshot of the same run
        /// (`torch.npu.memory._dump_snapshot`): also write OUT.blocks.html
        /// and OUT.blocks.json, the allocator's blocks (tensors) inside
        /// the mappings of physical handles that held them, and the sleep
        /// that released each.
        #[arg(long, value_name = "SNAPSHOT.pickle")]
        snapshot: Option<std::path::PathBuf>,
    },
    /// Load libascendcl.so, initialise ACL and report what it runs on,
    /// and whether it is aclmem's emulated library ("backend: emulated
    /// (aclmem, …)") or CANN's.
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
enum TimelineFormat {
    Html,
    MemoryViz,
    /// msMemScope's event file (`memscope_dump_*.csv` columns): OUT.csv.
    Msmemscope,
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

/// "unknown X `given`; did you mean `s`?\nexpected one of: ...": one
/// suggestion at most, then every name.
fn unknown_one(what: &str, given: &str, suggestion: Option<&str>, names: &[&str]) -> String {
    let hint = suggestion.map_or(String::new(), |s| format!("; did you mean `{s}`?"));
    format!(
        "unknown {what} `{given}`{hint}\nexpected one of: {}",
        names.join(", ")
    )
}

/// A name of one of the core's kinds (`FromStr` with its suggestion: one
/// parser per name, shared with the sanitizer, Python and the emulator's
/// environment), reported as the other errors of this command are.
fn parse_name<T>(
    s: &str,
    names: &[&str],
    better: impl FnOnce(&str) -> Option<&'static str>,
) -> Result<T, String>
where
    T: std::str::FromStr<Err = UnknownName>,
{
    s.parse().map_err(|e: UnknownName| {
        // The core suggests a name within two edits even of a one-letter
        // input (`x` -> `a3`); a suggestion must keep part of what was typed.
        let plausible = |n: &&str| {
            strsim::levenshtein(&s.to_ascii_lowercase(), &n.to_ascii_lowercase()) < s.len()
        };
        let suggestion = better(s).or(e.suggestion().filter(plausible));
        unknown_one(e.kind().noun(), s, suggestion, names)
    })
}

fn parse_product(s: &str) -> Result<Product, String> {
    let ids: Vec<&str> = Product::ALL.iter().map(|p| p.id()).collect();
    parse_name(s, &ids, |_| None)
}

fn parse_location(s: &str) -> Result<Location, String> {
    let ids: Vec<&str> = Location::ALL.iter().map(|l| l.id()).collect();
    parse_name(s, &ids, |_| None)
}

fn parse_run_mode(s: &str) -> Result<RunMode, String> {
    let ids: Vec<&str> = RunMode::ALL.iter().map(|m| m.id()).collect();
    parse_name(s, &ids, |_| None)
}

/// An attribute; a C name without its `ACL_` prefix (`MEM_HUGE`) suggests
/// the C name (`ACL_MEM_HUGE`) rather than the nearest marker name.
fn parse_attr(s: &str) -> Result<MemAttr, String> {
    let mut names: Vec<&str> = MemAttr::ALL.iter().map(|a| a.c_name()).collect();
    names.push("a marker name such as HbmHuge, or the value");
    parse_name(s, &names, |given| {
        format!("ACL_{given}")
            .parse::<MemAttr>()
            .ok()
            .map(MemAttr::c_name)
    })
}

/// A CANN release. One suggestion for one that aclmem does not model: for
/// a release line (`8.4`, `9.1.RC1`), the modelled release whose rules
/// apply to it (newer than every modelled one: the newest) or else the
/// closest modelled one before it (the oldest, below them all); for other
/// text, an id one edit away (`8,3`).
fn parse_cann(s: &str) -> Result<CannVersion, String> {
    s.parse().map_err(|_| {
        let suggestion = CannVersion::for_installed(s)
            .or_else(|| {
                let line = release_line(s)?;
                let before = CannVersion::ALL
                    .into_iter()
                    .rev()
                    .find(|v| v.major_minor() <= line);
                Some(before.unwrap_or(CannVersion::ALL[0]))
            })
            .or_else(|| {
                CannVersion::ALL
                    .into_iter()
                    .find(|v| strsim::levenshtein(s.trim(), v.id()) == 1)
            });
        let hint = suggestion.map_or(String::new(), |v| format!("; did you mean `{}`?", v.id()));
        format!(
            "`{s}` is not a CANN release aclmem models{hint}\nexpected one of: {}",
            CannVersion::LIST
        )
    })
}

/// The major and minor number at the start of `s` (`8.4`, `8.4.RC1`).
fn release_line(s: &str) -> Option<(u32, u32)> {
    let mut parts = s.trim().split('.');
    let major = parts.next()?.parse().ok()?;
    let minor = parts.next()?.parse().ok()?;
    Some((major, minor))
}

/// The help of `--cann` of `matrix`.
fn matrix_cann_help() -> String {
    format!("{} [default: {}]", cann_help(), CannVersion::DEFAULT.id())
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
    match cl.file() {
        Some(file) if file.as_os_str() != cl.path() => {
            println!("library:  {} (loaded as {})", file.display(), cl.path())
        }
        _ => println!("library:  {}", cl.path()),
    }
    match cl.emulated() {
        Some(emulated) => println!(
            "backend:  emulated (aclmem, machine \"{}\"; ACLMEM_EMU_* configure it)",
            emulated.machine
        ),
        None => println!("backend:  CANN's libascendcl.so (not aclmem's emulator)"),
    }
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

/// The width to fit the matrix into: the terminal's when stdout is one,
/// else `$COLUMNS` when set; `None` (no limit) for a pipe or a file.
fn terminal_width() -> Option<usize> {
    // SAFETY: `isatty` and `ioctl(TIOCGWINSZ)` only read the descriptor's
    // state; `size` is a live local of the type the request writes.
    let tty = unsafe {
        let mut size: libc::winsize = std::mem::zeroed();
        (libc::isatty(libc::STDOUT_FILENO) == 1
            && libc::ioctl(libc::STDOUT_FILENO, libc::TIOCGWINSZ, &mut size) == 0
            && size.ws_col > 0)
            .then_some(usize::from(size.ws_col))
    };
    tty.or_else(|| std::env::var("COLUMNS").ok()?.trim().parse().ok())
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
            let release = cann.unwrap_or(CannVersion::DEFAULT);
            let text = match format {
                Format::Table => matrix::table(product, release, terminal_width()),
                Format::Json => matrix::json(&matrix::rows(product, release)),
                Format::Markdown if product.is_none() && cann.is_none() => matrix::markdown(),
                Format::Markdown => matrix::markdown_release(product, release),
            };
            print!("{text}");
            ExitCode::SUCCESS
        }
        Command::Run(options) => run::run(*options),
        Command::Sanitize(options) => sanitize::run(options),
        Command::Explore(options) => explore::run(options),
        Command::Timeline {
            trace,
            out,
            format,
            snapshot,
        } => timeline_command(&trace, out, format, snapshot.as_deref()),
        Command::Errors { format } => {
            print!("{}", errors::render(format));
            ExitCode::SUCCESS
        }
        Command::Replay(o) => replay::run(o),
        Command::Catalogue { format, cann } => {
            print!("{}", catalogue::render(format, cann));
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

/// `aclmem timeline`: the page and the Perfetto file, or PyTorch's
/// snapshots; then, given torch's snapshot, the join of its blocks with
/// the trace's mappings.
fn timeline_command(
    trace: &std::path::Path,
    out: Option<std::path::PathBuf>,
    format: TimelineFormat,
    snapshot: Option<&std::path::Path>,
) -> ExitCode {
    let out = out.unwrap_or_else(|| trace.with_extension(""));
    let written = match format {
        TimelineFormat::MemoryViz => memory_viz::write(trace, &out).map(|files| {
            for f in &files {
                println!("wrote {}", f.display());
            }
            println!(
                "{} snapshots{}",
                files.len(),
                timeline::peak_memory().map_or_else(String::new, |kib| format!(
                    " (peak memory {} MiB)",
                    kib / 1024
                ))
            );
        }),
        TimelineFormat::Msmemscope => memscope::write(trace, &out).map(|(path, rows)| {
            println!("{rows} events: wrote {}", path.display());
        }),
        TimelineFormat::Html => timeline::run(trace, &out).map(|(lines, devices)| {
            println!(
                "{lines} events, {} ({}): wrote {} and {}{}",
                devices.len(),
                devices.join(", "),
                out.with_extension("json").display(),
                out.with_extension("html").display(),
                timeline::peak_memory().map_or_else(String::new, |kib| format!(
                    " (peak memory {} MiB)",
                    kib / 1024
                )),
            );
        }),
    };
    let joined = written.and_then(|()| match snapshot {
        Some(snapshot) => blocks::write(trace, snapshot, &out).map(|files| {
            for f in files {
                println!("wrote {}", f.display());
            }
        }),
        None => Ok(()),
    });
    match joined {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("error: {e}");
            ExitCode::FAILURE
        }
    }
}
