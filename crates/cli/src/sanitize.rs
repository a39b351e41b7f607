//! `aclmem sanitize -- program [args]`: runs a program with
//! `libaclmem_sanitizer.so` preloaded and prints what it found.

use std::path::{Path, PathBuf};
use std::process::{Command, ExitCode};

use aclmem_formats::LeakCheck;
use aclmem_formats::finding;

/// Options of `aclmem sanitize`.
#[derive(clap::Args)]
pub struct Options {
    /// The sanitizer library (default: $ACLMEM_SANITIZER_LIB, or
    /// beside this executable).
    #[arg(long)]
    pub lib: Option<PathBuf>,
    /// Other products, run modes and releases the program must run
    /// on: `a2,a3@8.3,Ascend910B3@8.0,200i-a2:rc` (what an entry
    /// leaves out is the running machine's). A misspelt entry is an
    /// error (exit 2).
    #[arg(long)]
    pub targets: Option<String>,
    /// The exit code when the program exits 0 but there are findings
    /// (a program that fails keeps its own code).
    #[arg(long, default_value_t = 1)]
    pub error_exitcode: u8,
    /// Keep the findings as JSON lines in this file.
    #[arg(long)]
    pub log: Option<PathBuf>,
    /// Write the memory timeline (JSON lines) to this file.
    #[arg(long)]
    pub trace: Option<PathBuf>,
    /// Stop the program at the first finding.
    #[arg(long)]
    pub halt_on_error: bool,
    /// Report every call the library refused (class `api-error`), with its
    /// code and where it was made.
    #[arg(long)]
    pub report_api_errors: bool,
    /// Frames of native stack kept with every allocation, export, import
    /// and finding (0: the call site only; at most 32).
    #[arg(long, default_value_t = 8, value_parser = clap::value_parser!(u8).range(0..=32))]
    pub stacks: u8,
    /// What is reported as leaked at `aclFinalize` and exit: `program`
    /// (what the program's code made; memory a framework's caching
    /// allocator, torch_npu's, still caches is summed up in one line),
    /// `full` (everything), `none`.
    #[arg(
        long,
        default_value = "program",
        value_parser = leak_check_parser()
    )]
    pub leak_check: LeakCheck,
    /// The program and its arguments (after `--`).
    #[arg(last = true, required = true)]
    pub program: Vec<String>,
}

/// `--leak-check`: one of the settings' names, each with its help.
fn leak_check_parser() -> impl clap::builder::TypedValueParser<Value = LeakCheck> {
    use clap::builder::{PossibleValue, PossibleValuesParser, TypedValueParser};
    let help = |l: LeakCheck| match l {
        LeakCheck::Program => "What the program's own code made and still holds",
        LeakCheck::Full => "Everything still held, a framework's cache included",
        LeakCheck::None => "Nothing",
    };
    PossibleValuesParser::new(LeakCheck::ALL.map(|l| PossibleValue::new(l.name()).help(help(l))))
        .map(|name| LeakCheck::from_name(&name).unwrap_or_default())
}

const LIB: &str = "libaclmem_sanitizer.so";

/// The sanitizer library: `--lib`, `$ACLMEM_SANITIZER_LIB`, or beside this
/// executable (where `cargo xtask lib` puts both).
fn find_lib(explicit: Option<&Path>) -> Result<PathBuf, String> {
    if let Some(p) = explicit {
        return Ok(p.to_path_buf());
    }
    if let Some(p) = std::env::var_os("ACLMEM_SANITIZER_LIB").filter(|v| !v.is_empty()) {
        return Ok(PathBuf::from(p));
    }
    let exe = std::env::current_exe().map_err(|e| e.to_string())?;
    let dir = exe.parent().ok_or("no directory")?;
    for d in [dir, dir.parent().unwrap_or(dir)] {
        let p = d.join(LIB);
        if p.exists() {
            return Ok(p);
        }
    }
    Err(format!(
        "{LIB} not found beside {} (build it with `cargo build`, or name it with --lib or $ACLMEM_SANITIZER_LIB)",
        exe.display()
    ))
}

/// Checks every entry of `--targets` with the parser the sanitizer uses,
/// so that a misspelt one is refused here instead of skipped there.
fn check_targets(targets: &str) -> Result<(), String> {
    for item in targets.split(',').map(str::trim).filter(|s| !s.is_empty()) {
        item.parse::<aclmem_core::Target>()
            .map_err(|e| format!("--targets: `{item}`: {e}"))?;
    }
    Ok(())
}

pub fn run(o: Options) -> ExitCode {
    if let Some(Err(e)) = o.targets.as_deref().map(check_targets) {
        eprintln!(
            "error: {e}\n(an entry is product[:ep|rc][@release], e.g. a2, a3@8.3, 200i-a2:rc@8.3)"
        );
        return ExitCode::from(2);
    }
    let lib = match find_lib(o.lib.as_deref()) {
        Ok(l) => l,
        Err(e) => {
            eprintln!("error: {e}");
            return ExitCode::from(2);
        }
    };
    let Some((program, args)) = o.program.split_first() else {
        eprintln!("error: name the program to run after --");
        return ExitCode::from(2);
    };
    let lib = std::fs::canonicalize(&lib).unwrap_or(lib);
    // The program's processes open these files from their own working
    // directories, which the program may change: they get absolute paths.
    let log = match o.log.as_deref().map(std::path::absolute).transpose() {
        Ok(l) => l.unwrap_or_else(|| {
            std::env::temp_dir().join(format!("aclmem-sanitize-{}.jsonl", std::process::id()))
        }),
        Err(e) => {
            eprintln!("error: --log: {e}");
            return ExitCode::from(2);
        }
    };
    let trace = match o.trace.as_deref().map(std::path::absolute).transpose() {
        Ok(t) => t,
        Err(e) => {
            eprintln!("error: --trace: {e}");
            return ExitCode::from(2);
        }
    };
    // The log starts empty, and exists however the program ends: one that
    // cannot be written is an error before the program runs, not findings
    // lost after it.
    if let Err(e) = std::fs::File::create(&log) {
        eprintln!("error: --log {}: {e}", log.display());
        return ExitCode::from(2);
    }
    // The sharing events of every process, joined after the run.
    let sharing = std::env::temp_dir().join(format!(
        "aclmem-sanitize-{}.sharing.jsonl",
        std::process::id()
    ));
    let _ = std::fs::remove_file(&sharing);
    let preload = match std::env::var("LD_PRELOAD") {
        Ok(p) if !p.is_empty() => format!("{}:{p}", lib.display()),
        _ => lib.display().to_string(),
    };
    // The same library audits the program's bindings (`LD_AUDIT`): calls a
    // framework binds past the preloaded copy (`dlsym` on its own handle of
    // libascendcl.so, libraries loaded `RTLD_LOCAL`) reach the checks too.
    let audit = match std::env::var("LD_AUDIT") {
        Ok(a) if !a.is_empty() => format!("{}:{a}", lib.display()),
        _ => lib.display().to_string(),
    };
    let mut cmd = Command::new(program);
    cmd.args(args)
        .env("LD_PRELOAD", preload)
        .env("LD_AUDIT", audit)
        .env("ACLMEM_SANITIZER_LOG", &log)
        .env("ACLMEM_SANITIZER_SHARING", &sharing);
    // Programs that load the library themselves (Python, dlopen) reach it
    // through the sanitizer, which opens $ACLMEM_ASCENDCL: without a CANN
    // environment (set_env.sh sets ASCEND_HOME_PATH), default to the
    // emulated library beside the sanitizer; with one, the sanitizer finds
    // the installed library by name.
    let cann = ["ASCEND_HOME_PATH", "ASCEND_TOOLKIT_HOME"]
        .iter()
        .any(|v| std::env::var_os(v).is_some_and(|p| !p.is_empty()));
    if std::env::var_os("ACLMEM_ASCENDCL").is_none_or(|v| v.is_empty()) && !cann {
        let emulated = lib.with_file_name("libascendcl.so");
        if emulated.exists() {
            // Frameworks link CANN's other libraries too: the emulated
            // library under their names first on the loader's path.
            if let Ok(dir) = crate::run::framework_dir(&emulated) {
                cmd.env(
                    "LD_LIBRARY_PATH",
                    crate::run::prepended("LD_LIBRARY_PATH", &dir),
                );
            }
            cmd.env("ACLMEM_ASCENDCL", emulated);
        }
    }
    if let Some(t) = &o.targets {
        cmd.env("ACLMEM_SANITIZER_TARGETS", t);
    }
    if let Some(t) = &trace {
        // The processes of the run append to it: it starts empty.
        if let Err(e) = std::fs::File::create(t) {
            eprintln!("error: --trace {}: {e}", t.display());
            if o.log.is_none() {
                let _ = std::fs::remove_file(&log);
            }
            return ExitCode::from(2);
        }
        cmd.env("ACLMEM_SANITIZER_TRACE", t);
    }
    if o.halt_on_error {
        cmd.env("ACLMEM_SANITIZER_HALT_ON_ERROR", "1");
    }
    cmd.env("ACLMEM_SANITIZER_STACKS", o.stacks.to_string());
    cmd.env("ACLMEM_SANITIZER_LEAK_CHECK", o.leak_check.name());
    if o.report_api_errors {
        cmd.env("ACLMEM_SANITIZER_REPORT_API_ERRORS", "1");
    }
    // Processes that end without exit handlers get their exit event from
    // the watcher while the program runs.
    let watcher = crate::sharing::Watcher::start(sharing.clone());
    let status = match cmd.status() {
        Ok(s) => s,
        Err(e) => {
            watcher.finish();
            eprintln!("error: cannot run {program}: {e}");
            return ExitCode::from(2);
        }
    };
    watcher.finish();
    // What only the processes' events together show: printed as the
    // processes print theirs, and kept in the same log.
    let events = std::fs::read_to_string(&sharing).unwrap_or_default();
    let across = aclmem_formats::across::check(&events, o.leak_check);
    let _ = std::fs::remove_file(&sharing);
    // An importer's own findings about a handle another process exported
    // name that export too, now that every process's events are in.
    if let Ok(text) = std::fs::read_to_string(&log) {
        let (joined, changed) = aclmem_formats::across::with_exporters(&text, &events);
        if !changed.is_empty() {
            for f in &changed {
                eprintln!("{}", aclmem_formats::across::describe(f));
            }
            if let Err(e) = std::fs::write(&log, joined) {
                eprintln!("aclmem sanitize: cannot rewrite {}: {e}", log.display());
            }
        }
    }
    if !across.is_empty() {
        let mut records = String::new();
        for f in &across {
            eprintln!("{}", aclmem_formats::across::describe(f));
            records.push_str(&serde_json::to_string(f).unwrap_or_default());
            records.push('\n');
        }
        let appended = std::fs::File::options()
            .create(true)
            .append(true)
            .open(&log)
            .and_then(|mut l| std::io::Write::write_all(&mut l, records.as_bytes()));
        if let Err(e) = appended {
            eprintln!("aclmem sanitize: cannot add to {}: {e}", log.display());
        }
    }
    // Every record counts, one this build cannot read too (by the class
    // it names, or `?`).
    let findings: Vec<String> = std::fs::read_to_string(&log)
        .unwrap_or_default()
        .lines()
        .filter_map(|l| {
            let v: serde_json::Value = serde_json::from_str(l).ok()?;
            Some(match serde_json::from_value::<finding::Record>(v.clone()) {
                Ok(f) => f.class.name().to_owned(),
                Err(_) => v["class"].as_str().unwrap_or("?").to_owned(),
            })
        })
        .collect();
    if o.log.is_none() {
        let _ = std::fs::remove_file(&log);
    }
    let mut classes = std::collections::BTreeMap::<&str, usize>::new();
    for class in &findings {
        *classes.entry(class).or_default() += 1;
    }
    if findings.is_empty() && matches!(status.code(), Some(126 | 127)) {
        // The shell's codes for a command it could not find or execute: the
        // program never ran, so nothing was checked.
        eprintln!(
            "aclmem sanitize: {program}: did not run (exit {}: not found or not executable); nothing was checked",
            status.code().unwrap_or_default()
        );
    } else if findings.is_empty() {
        eprintln!("aclmem sanitize: {program}: no findings");
    } else {
        let parts: Vec<String> = classes.iter().map(|(k, v)| format!("{v} {k}")).collect();
        eprintln!(
            "aclmem sanitize: {program}: {} finding(s): {}",
            findings.len(),
            parts.join(", ")
        );
    }
    match status.code() {
        Some(0) if !findings.is_empty() => ExitCode::from(o.error_exitcode),
        Some(c) => ExitCode::from(c.clamp(0, 255) as u8),
        // Killed by a signal: 128 + its number, as the shell answers.
        None => ExitCode::from(
            std::os::unix::process::ExitStatusExt::signal(&status)
                .map_or(128, |s| 128 + s.clamp(0, 127) as u8),
        ),
    }
}
