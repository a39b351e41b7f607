//! `aclmem explore -- PROGRAM ARGS`: every failure point of a program,
//! tried in turn.
//!
//! A first run, under the sanitizer, learns the program's calls: each
//! function and call site, and how often (the emulated library's
//! `ACLMEM_EMU_CALL_LOG`). Then one run per fault, each under the
//! sanitizer on a machine of its own: the first call of each distinct
//! function and call site fails (with `--depth K`, the Kth too, for sites
//! called that often), through the library's fault injection
//! (`FUNCTION@N:OBJECT+0xOFFSET=CODE`; for a Python program's call,
//! `FUNCTION@N:script.py:LINE=CODE`, the script's line), in every process
//! of the program.
//! Each run has one outcome:
//!
//! * `hang`: no end within `--timeout` (the run's processes are asked
//!   where they wait, with `SIGURG`, then killed);
//! * `crash`: the program, or one of its processes, died of a crash
//!   signal (the sanitizer records where, as it dies:
//!   `aclmem_formats::postmortem`);
//! * `misuse`: a sanitizer finding the clean run did not have (double
//!   free, free while mapped, use of a freed handle, ...);
//! * `leak`: what the run left held (leaks, imports held at exit, exporters
//!   that exited while mapped);
//! * `handled`: the program ended by itself (any exit code) with nothing
//!   of the above.
//!
//! Findings the clean run had too, and the `out-of-memory` report the
//! injected failure itself causes, are not counted. The code a fault
//! answers: 207001 (out of memory) for a function that allocates or
//! reserves, 107000 (invalid value) for any other.

use std::collections::{BTreeSet, VecDeque};
use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Duration;

mod judge;
mod learn;
mod report;
mod runner;
mod stopping;

use judge::{Tried, crashes, judge, key, place_of};
use learn::{Point, points};
use runner::Runner;

/// Options of `aclmem explore`.
#[derive(clap::Args)]
pub struct Options {
    /// Seconds a run may take before it is a `hang`.
    #[arg(long, default_value_t = 60)]
    pub timeout: u64,
    /// Runs at once (default: the machine's cores).
    #[arg(long)]
    pub jobs: Option<usize>,
    /// One JSON line per fault: function, nth, code, site, outcome,
    /// findings.
    #[arg(long)]
    pub log: Option<PathBuf>,
    /// Only these functions (comma-separated).
    #[arg(long, value_delimiter = ',')]
    pub only: Vec<String>,
    /// Also fail the 2nd ... Kth call of a site called that often.
    #[arg(long, default_value_t = 1)]
    pub depth: u64,
    /// The program and its arguments (after `--`).
    #[arg(last = true, required = true)]
    pub program: Vec<String>,
}

/// The code a fault answers for `function`.
fn fault_code(function: &str) -> i32 {
    if function.contains("Malloc") || function.contains("Reserve") {
        aclmem_core::AclError::RT_MEMORY_ALLOCATION.code()
    } else {
        aclmem_core::AclError::RT_PARAM_INVALID.code()
    }
}

pub fn run(o: Options) -> ExitCode {
    let fail = |e: String| {
        eprintln!("error: {e}");
        ExitCode::from(2)
    };
    let exe = match std::env::current_exe() {
        Ok(e) => e,
        Err(e) => return fail(e.to_string()),
    };
    let only = match only(&o.only) {
        Ok(names) => names,
        Err(e) => return fail(e),
    };
    // The log is opened first: one that cannot be written is an error
    // before the runs, not after them.
    let log = match &o.log {
        Some(path) => match std::fs::File::create(path) {
            Ok(f) => Some(f),
            Err(e) => return fail(format!("--log {}: {e}", path.display())),
        },
        None => None,
    };
    let dir = std::env::temp_dir().join(format!("aclmem-explore-{}", std::process::id()));
    if let Err(e) = std::fs::create_dir_all(&dir) {
        return fail(format!("{}: {e}", dir.display()));
    }
    // Stopped (Ctrl-C, SIGTERM, SIGHUP): the runs under way are killed and
    // the directory removed, never left running.
    stopping::watch(dir.clone());
    let runner = Runner {
        exe,
        program: o.program.clone(),
        timeout: Duration::from_secs(o.timeout.max(1)),
        dir: dir.clone(),
    };
    let result = explore(&o, &only, log, &runner);
    let _ = std::fs::remove_dir_all(&dir);
    match result {
        Ok(all_handled) => ExitCode::from(u8::from(!all_handled)),
        Err(e) => fail(e),
    }
}

/// The functions of `--only` (each name trimmed), each checked against
/// the catalogue.
fn only(names: &[String]) -> Result<Vec<String>, String> {
    let catalogue: Vec<&str> = aclmem_sys::catalogue::entries().map(|e| e.name).collect();
    if !names.is_empty() && names.iter().all(|n| n.trim().is_empty()) {
        return Err("--only names no function".into());
    }
    names
        .iter()
        .map(|n| n.trim())
        .filter(|n| !n.is_empty())
        .map(|n| match aclmem_sys::catalogue::find(n) {
            Some(e) => Ok(e.name.to_owned()),
            // The suggestion, not the whole catalogue's names.
            None => Err(format!(
                "--only: {} (`aclmem catalogue` lists them)",
                crate::unknown("function", n, &catalogue)
                    .lines()
                    .next()
                    .unwrap_or_default()
            )),
        })
        .collect()
}

fn explore(
    o: &Options,
    only: &[String],
    log: Option<std::fs::File>,
    runner: &Runner,
) -> Result<bool, String> {
    let calls = runner.dir.join("calls.jsonl");
    let said = runner.dir.join("learn.stderr");
    let clean = runner.run(
        "learn",
        &[("ACLMEM_EMU_CALL_LOG", calls.display().to_string())],
        Some(&said),
    )?;
    let Some(code) = clean.code else {
        return Err(format!(
            "the program did not end within {} s without faults (--timeout)",
            runner.timeout.as_secs()
        ));
    };
    let baseline: BTreeSet<_> = clean.findings.iter().map(key).collect();
    let crashed = crashes(&clean).next().is_some();
    let called = points(&calls, &[]);
    let points = points(&calls, only);
    if points.is_empty() {
        // What the run said last (a program that could not be started says
        // why there).
        let text = std::fs::read_to_string(&said).unwrap_or_default();
        let last: Vec<&str> = text.lines().rev().take(3).collect();
        let said = last.into_iter().rev().collect::<Vec<_>>().join("\n  ");
        let why = if called.is_empty() {
            "the program made no call a fault can take (is it an ACL program?)".to_owned()
        } else {
            let mut names: Vec<&str> = called.iter().map(|p| p.function.as_str()).collect();
            names.dedup();
            format!(
                "the program called none of --only's functions (it called {})",
                names.join(", ")
            )
        };
        return Err(format!(
            "{why}; its run without faults exited {code}{}",
            if said.is_empty() {
                String::new()
            } else {
                format!(":\n  {said}")
            }
        ));
    }
    let mut faults: VecDeque<(Point, u64)> = VecDeque::new();
    for p in &points {
        for nth in 1..=o.depth.max(1).min(p.count) {
            faults.push_back((p.clone(), nth));
        }
    }
    eprintln!(
        "aclmem explore: the clean run exited {code} with {} finding(s); {} call site(s), {} fault(s) to try",
        clean.findings.len(),
        points.len(),
        faults.len()
    );
    let jobs = o
        .jobs
        .unwrap_or_else(|| std::thread::available_parallelism().map_or(1, usize::from))
        .max(1);
    let queue = std::sync::Mutex::new(faults.into_iter().enumerate().collect::<VecDeque<_>>());
    let results = std::sync::Mutex::new(Vec::new());
    let error = std::sync::Mutex::new(None);
    std::thread::scope(|s| {
        for _ in 0..jobs {
            s.spawn(|| {
                loop {
                    // Taken in a statement of its own: the queue's lock is not
                    // held while the fault runs.
                    let next = queue.lock().unwrap_or_else(|e| e.into_inner()).pop_front();
                    let Some((i, (p, nth))) = next else {
                        break;
                    };
                    let code = fault_code(&p.function);
                    let spec = format!("{}@{nth}:{}={code}", p.function, p.filter());
                    if let Err(e) = aclmem_emu::faults::parse(&spec) {
                        error
                            .lock()
                            .unwrap_or_else(|e| e.into_inner())
                            .get_or_insert(e.to_string());
                        continue;
                    }
                    let env = [("ACLMEM_EMU_FAULTS", spec.clone())];
                    match runner.run(&format!("fault{i}"), &env, None) {
                        Ok(ran) => {
                            let (outcome, findings) = judge(&ran, &baseline, crashed);
                            let place = place_of(&ran, outcome);
                            results
                                .lock()
                                .unwrap_or_else(|e| e.into_inner())
                                .push(Tried {
                                    index: i,
                                    point: p,
                                    nth,
                                    code,
                                    spec,
                                    outcome,
                                    findings,
                                    exit: ran.code,
                                    place,
                                });
                        }
                        Err(e) => {
                            error
                                .lock()
                                .unwrap_or_else(|e| e.into_inner())
                                .get_or_insert(e);
                        }
                    }
                }
            });
        }
    });
    if let Some(e) = error.into_inner().unwrap_or_else(|e| e.into_inner()) {
        return Err(e);
    }
    let mut results = results.into_inner().unwrap_or_else(|e| e.into_inner());
    results.sort_by_key(|r| (r.outcome, r.index));
    report::report(&results, &points, runner.timeout, log)
}
