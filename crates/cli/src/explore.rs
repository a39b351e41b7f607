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

use aclmem_formats::finding::{self, Class};
use aclmem_formats::postmortem::{self, Where};
use std::collections::{BTreeMap, BTreeSet, VecDeque};
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, ExitCode, Stdio};
use std::time::{Duration, Instant};

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

/// One call site of the program, as the learning run saw it.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
struct Point {
    function: String,
    object: String,
    offset: String,
    /// `file:line`, or `object+offset` without debug information.
    site: String,
    /// Whether `site` is a Python script's line (the fault is filtered by
    /// it, not by the native offset, which every line of the script shares).
    python: bool,
    count: u64,
}

impl Point {
    /// The site filter of a fault at this point.
    fn filter(&self) -> String {
        if self.python {
            self.site.clone()
        } else {
            format!("{}+{}", self.object, self.offset)
        }
    }
}

/// What one run did.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
enum Outcome {
    Hang,
    Crash,
    Misuse,
    Leak,
    Handled,
}

impl Outcome {
    fn name(self) -> &'static str {
        match self {
            Outcome::Hang => "hang",
            Outcome::Crash => "crash",
            Outcome::Misuse => "misuse",
            Outcome::Leak => "leak",
            Outcome::Handled => "handled",
        }
    }
}

/// A run's result.
struct Ran {
    /// `None`: killed at the timeout.
    code: Option<i32>,
    findings: Vec<Found>,
    /// Where the program's processes were when it crashed or was found
    /// hung (`aclmem_formats::postmortem`).
    places: Vec<Where>,
}

/// One fault tried, and what came of it.
struct Tried {
    /// Its place in the order faults were planned.
    index: usize,
    point: Point,
    nth: u64,
    code: i32,
    /// The fault as given to the library: what reproduces the run.
    spec: String,
    outcome: Outcome,
    findings: Vec<Found>,
    exit: Option<i32>,
    /// Where the run crashed or waits, for those outcomes.
    place: Option<Where>,
}

/// A finding of a run, as far as exploring judges it: its class (by name:
/// a record this build cannot type still counts, as a misuse) and site.
#[derive(Debug, Clone)]
struct Found {
    class: String,
    site: String,
    /// What a run left held, rather than a misuse.
    leak: bool,
}

impl Found {
    /// The findings of a log's text.
    fn parse_all(text: &str) -> Vec<Found> {
        text.lines()
            .filter_map(|l| serde_json::from_str::<serde_json::Value>(l).ok())
            .map(
                |v| match serde_json::from_value::<finding::Record>(v.clone()) {
                    Ok(f) => Found {
                        class: f.class.name().to_owned(),
                        site: f.site,
                        leak: f.class.is_leak(),
                    },
                    Err(_) => Found {
                        class: v["class"].as_str().unwrap_or("?").to_owned(),
                        site: v["site"].as_str().unwrap_or("?").to_owned(),
                        leak: false,
                    },
                },
            )
            .collect()
    }
}

/// The code a fault answers for `function`.
fn fault_code(function: &str) -> i32 {
    if function.contains("Malloc") || function.contains("Reserve") {
        aclmem_core::AclError::RT_MEMORY_ALLOCATION.code()
    } else {
        aclmem_core::AclError::RT_PARAM_INVALID.code()
    }
}

struct Runner {
    exe: PathBuf,
    program: Vec<String>,
    timeout: Duration,
    dir: PathBuf,
}

impl Runner {
    /// Runs the program under `aclmem sanitize` with `env`, on machine
    /// `name` (its stderr kept in `stderr`, when given).
    fn run(
        &self,
        name: &str,
        env: &[(&str, String)],
        stderr: Option<&Path>,
    ) -> Result<Ran, String> {
        let log = self.dir.join(format!("{name}.findings.jsonl"));
        let places = self.dir.join(format!("{name}.where.jsonl"));
        let read_places = || {
            let text = std::fs::read_to_string(&places).unwrap_or_default();
            let _ = std::fs::remove_file(&places);
            text.lines()
                .filter_map(|l| serde_json::from_str::<Where>(l).ok())
                .collect::<Vec<_>>()
        };
        let mut cmd = Command::new(&self.exe);
        cmd.arg("sanitize")
            .arg("--log")
            .arg(&log)
            .arg("--stacks")
            .arg("2")
            // The program's own exit code, findings or not (they are read
            // from the log).
            .arg("--error-exitcode")
            .arg("0")
            .arg("--")
            .args(&self.program)
            .env(
                "ACLMEM_EMU_MACHINE",
                format!("explore-{}-{name}", std::process::id()),
            )
            .env("ACLMEM_EMU_QUIET", "1")
            .env(postmortem::ENV, &places)
            .env_remove("ACLMEM_EMU_FAULTS")
            // What the run leaves in the temporary directory (the
            // sanitizer's files, which a run killed at the timeout cannot
            // remove) is removed with this one.
            .env("TMPDIR", &self.dir)
            .stdin(Stdio::null())
            .stdout(Stdio::null());
        match stderr {
            Some(path) => {
                let file =
                    std::fs::File::create(path).map_err(|e| format!("{}: {e}", path.display()))?;
                cmd.stderr(file);
            }
            None => {
                cmd.stderr(Stdio::null());
            }
        }
        for (k, v) in env {
            cmd.env(k, v);
        }
        // Its own process group: a hang is killed whole.
        std::os::unix::process::CommandExt::process_group(&mut cmd, 0);
        // The run starts with no signal blocked: explore's threads block
        // the ones its stopping thread waits for, and a child inherits the
        // mask.
        // SAFETY: the closure runs in the child between fork and exec, and
        // makes only async-signal-safe calls (`sigemptyset`,
        // `pthread_sigmask`) on a set of its own.
        unsafe {
            std::os::unix::process::CommandExt::pre_exec(&mut cmd, || {
                let mut set = std::mem::MaybeUninit::<libc::sigset_t>::uninit();
                libc::sigemptyset(set.as_mut_ptr());
                libc::pthread_sigmask(libc::SIG_SETMASK, set.as_ptr(), std::ptr::null_mut());
                Ok(())
            });
        }
        let mut child = cmd
            .spawn()
            .map_err(|e| format!("cannot run {}: {e}", self.exe.display()))?;
        // Killed whole if explore is stopped meanwhile.
        let _running = stopping::Running::new(child.id());
        let start = Instant::now();
        let code = loop {
            match child.try_wait() {
                Ok(Some(status)) => break status.code(),
                Ok(None) if start.elapsed() >= self.timeout => {
                    let group = -(child.id() as i32);
                    // Where each process waits: asked of the sanitizer in
                    // them (a process without it ignores the probe), and
                    // given a second to answer.
                    // SAFETY: signals the process group this call made.
                    unsafe { libc::kill(group, postmortem::PROBE_SIGNAL) };
                    let asked = Instant::now();
                    while asked.elapsed() < Duration::from_secs(1)
                        && std::fs::metadata(&places).map_or(true, |m| m.len() == 0)
                    {
                        std::thread::sleep(Duration::from_millis(20));
                    }
                    // A moment more for the other processes of the run.
                    std::thread::sleep(Duration::from_millis(100));
                    // SAFETY: as above.
                    unsafe { libc::kill(group, libc::SIGKILL) };
                    let _ = child.wait();
                    return Ok(Ran {
                        code: None,
                        findings: Vec::new(),
                        places: read_places(),
                    });
                }
                Ok(None) => std::thread::sleep(Duration::from_millis(20)),
                Err(e) => return Err(e.to_string()),
            }
        };
        let findings = Found::parse_all(&std::fs::read_to_string(&log).unwrap_or_default());
        let _ = std::fs::remove_file(&log);
        Ok(Ran {
            code: Some(code.unwrap_or(128)),
            findings,
            places: read_places(),
        })
    }
}

/// Where a run that crashed or hung was: for a crash, the record of the
/// signal that ended it (the first crash signal recorded); for a hang, the
/// first process that answered the probe. `None` for other outcomes, or
/// when no process could say (a handler of the program's own, or a program
/// without the sanitizer's `aclInit`).
fn place_of(ran: &Ran, outcome: Outcome) -> Option<Where> {
    let wanted = |w: &&Where| match outcome {
        Outcome::Hang => w.signal == postmortem::PROBE_SIGNAL,
        Outcome::Crash => {
            w.signal != postmortem::PROBE_SIGNAL && ran.code.is_some_and(|c| c - 128 == w.signal)
        }
        _ => false,
    };
    ran.places.iter().find(wanted).cloned().or_else(|| {
        // Another process of the program crashed (a forked child).
        (outcome == Outcome::Crash)
            .then(|| crashes(ran).next().cloned())
            .flatten()
    })
}

/// The crash records of a run's processes (a hang's probe is not one).
fn crashes(ran: &Ran) -> impl Iterator<Item = &Where> {
    ran.places
        .iter()
        .filter(|w| w.signal != postmortem::PROBE_SIGNAL)
}

/// A finding's identity across runs: its class and site.
fn key(f: &Found) -> (String, String) {
    (f.class.clone(), f.site.clone())
}

/// The outcome of a run, against the clean run's findings.
/// `baseline`: the clean run's findings; `crashed`: whether a process of
/// the clean run crashed (then a crash of another process is not new).
fn judge(ran: &Ran, baseline: &BTreeSet<(String, String)>, crashed: bool) -> (Outcome, Vec<Found>) {
    let Some(code) = ran.code else {
        return (Outcome::Hang, Vec::new());
    };
    let new: Vec<Found> = ran
        .findings
        .iter()
        .filter(|f| f.class != Class::OutOfMemory.name() && !baseline.contains(&key(f)))
        .cloned()
        .collect();
    // `aclmem sanitize` answers 128 + the signal for a program killed by
    // one (the shell's convention).
    // A process of the program (a forked child too) that died of a crash
    // signal left a record of it.
    let child_crashed = !crashed && crashes(ran).next().is_some();
    let outcome = if (129..=128 + 64).contains(&code) || child_crashed {
        Outcome::Crash
    } else if new.iter().any(|f| !f.leak) {
        Outcome::Misuse
    } else if !new.is_empty() {
        Outcome::Leak
    } else {
        Outcome::Handled
    };
    (outcome, new)
}

/// Reads the learning run's call log.
fn points(path: &Path, only: &[String]) -> Vec<Point> {
    let mut by_site: BTreeMap<(String, String, String, Option<String>), Point> = BTreeMap::new();
    for line in std::fs::read_to_string(path).unwrap_or_default().lines() {
        let Ok(v) = serde_json::from_str::<serde_json::Value>(line) else {
            continue;
        };
        let function = v["function"].as_str().unwrap_or_default().to_owned();
        let object = v["object"].as_str().unwrap_or_default().to_owned();
        let offset = v["offset"].as_str().unwrap_or_default().to_owned();
        if function.is_empty() || object.is_empty() {
            continue;
        }
        if !only.is_empty() && !only.contains(&function) {
            continue;
        }
        let site = match (v["file"].as_str(), v["line"].as_u64()) {
            (Some(f), Some(l)) => format!("{}:{l}", f.rsplit('/').next().unwrap_or(f)),
            _ => format!("{object}+{offset}"),
        };
        let python = v["python"].as_bool() == Some(true) && v["line"].is_u64();
        let count = v["count"].as_u64().unwrap_or(1);
        by_site
            .entry((
                function.clone(),
                object.clone(),
                offset.clone(),
                python.then(|| site.clone()),
            ))
            .and_modify(|p| p.count = p.count.max(count))
            .or_insert(Point {
                function,
                object,
                offset,
                site,
                python,
                count,
            });
    }
    by_site.into_values().collect()
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
    mut log: Option<std::fs::File>,
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
    // Sites that two points share (two calls of one function on one line):
    // the table adds the library offset that tells them apart.
    let mut per_site: BTreeMap<(&str, &str), usize> = BTreeMap::new();
    for p in &points {
        *per_site.entry((&p.function, &p.site)).or_default() += 1;
    }
    let mut counts: BTreeMap<Outcome, usize> = BTreeMap::new();
    let mut last = None;
    for Tried {
        point: p,
        nth,
        code,
        spec,
        outcome,
        findings,
        exit,
        place,
        ..
    } in &results
    {
        *counts.entry(*outcome).or_default() += 1;
        if last != Some(*outcome) {
            eprintln!("{}:", outcome.name());
            last = Some(*outcome);
        }
        let at = place
            .as_ref()
            .map(|w| format!(", at {}", w.site))
            .unwrap_or_default();
        let what = match outcome {
            Outcome::Hang => format!(
                "no end within {} s{}",
                runner.timeout.as_secs(),
                place
                    .as_ref()
                    .map(|w| format!(", waiting at {}", w.site))
                    .unwrap_or_default()
            ),
            Outcome::Crash => {
                let signal = place
                    .as_ref()
                    .map_or(exit.unwrap_or(128) - 128, |w| w.signal);
                format!("killed by signal {signal}{at}")
            }
            Outcome::Handled => format!("exit {}", exit.unwrap_or_default()),
            _ => findings
                .iter()
                .map(|f| format!("{} at {}", f.class, f.site))
                .collect::<Vec<_>>()
                .join("; "),
        };
        let shared = per_site
            .get(&(p.function.as_str(), p.site.as_str()))
            .is_some_and(|n| *n > 1);
        let site = if shared {
            format!("{} ({}+{})", p.site, p.object, p.offset)
        } else {
            p.site.clone()
        };
        eprintln!("  {}@{nth} at {site} = {code}: {what}", p.function);
        if let Some(f) = &mut log {
            let record = serde_json::json!({
                "function": p.function,
                "nth": nth,
                "code": code,
                "site": p.site,
                "fault": spec,
                "outcome": outcome.name(),
                "exit": exit,
                "findings": findings.iter().map(|f| serde_json::json!({
                    "class": f.class,
                    "site": f.site,
                })).collect::<Vec<_>>(),
                "where": place.as_ref().map(|w| serde_json::json!({
                    "site": w.site,
                    "stack": w.stack,
                    "signal": w.signal,
                    "pid": w.pid,
                })),
            });
            writeln!(f, "{record}").map_err(|e| e.to_string())?;
        }
    }
    let summary: Vec<String> = counts
        .iter()
        .map(|(o, n)| format!("{n} {}", o.name()))
        .collect();
    eprintln!(
        "aclmem explore: {} fault(s): {}",
        results.len(),
        summary.join(", ")
    );
    Ok(counts.keys().all(|o| *o == Outcome::Handled))
}

/// Stopping explore: the runs under way (each in a process group of its
/// own, which a terminal's Ctrl-C does not reach) are killed with it, and
/// its directory removed.
mod stopping {
    use std::collections::BTreeSet;
    use std::path::PathBuf;
    use std::sync::Mutex;

    /// The process groups of the runs under way; `None` once stopped.
    static GROUPS: Mutex<Option<BTreeSet<i32>>> = Mutex::new(Some(BTreeSet::new()));

    fn kill(group: i32) {
        // SAFETY: kills a process group a run of explore made.
        unsafe { libc::kill(-group, libc::SIGKILL) };
    }

    /// A run's process group, registered while it lives.
    pub(super) struct Running(i32);

    impl Running {
        pub(super) fn new(pid: u32) -> Running {
            let group = pid as i32;
            match GROUPS.lock().unwrap_or_else(|e| e.into_inner()).as_mut() {
                Some(groups) => {
                    groups.insert(group);
                }
                // Started as explore was being stopped.
                None => kill(group),
            }
            Running(group)
        }
    }

    impl Drop for Running {
        fn drop(&mut self) {
            if let Some(groups) = GROUPS.lock().unwrap_or_else(|e| e.into_inner()).as_mut() {
                groups.remove(&self.0);
            }
        }
    }

    /// SIGINT, SIGTERM and SIGHUP are taken by a thread of their own (the
    /// others block them; each run unblocks them before it starts the
    /// program, `Runner::run`): it kills the runs' groups, removes `dir`
    /// and exits with 128 + the signal, as a shell reports it.
    pub(super) fn watch(dir: PathBuf) {
        // SAFETY: a signal set initialised by `sigemptyset` before use.
        let set = unsafe {
            let mut set = std::mem::MaybeUninit::<libc::sigset_t>::uninit();
            libc::sigemptyset(set.as_mut_ptr());
            for s in [libc::SIGINT, libc::SIGTERM, libc::SIGHUP] {
                libc::sigaddset(set.as_mut_ptr(), s);
            }
            set.assume_init()
        };
        // SAFETY: blocks the signals in this thread, before any other
        // thread of explore exists (they inherit the mask).
        if unsafe { libc::pthread_sigmask(libc::SIG_BLOCK, &set, std::ptr::null_mut()) } != 0 {
            return;
        }
        std::thread::spawn(move || {
            let mut signal = 0;
            // SAFETY: waits for one of the blocked signals of `set`.
            if unsafe { libc::sigwait(&set, &mut signal) } != 0 {
                return;
            }
            let running = GROUPS.lock().unwrap_or_else(|e| e.into_inner()).take();
            running.into_iter().flatten().for_each(kill);
            let _ = std::fs::remove_dir_all(&dir);
            eprintln!("aclmem explore: stopped by signal {signal}; the runs under way were killed");
            std::process::exit(128 + signal);
        });
    }
}
