//! One run of the program under `aclmem sanitize`, on a machine of its
//! own: its exit code or its hang (probed for where its processes wait,
//! then killed), its findings and where its processes crashed or waited.

use aclmem_formats::finding;
use aclmem_formats::postmortem::{self, Where};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use super::stopping;

/// A run's result.
pub(super) struct Ran {
    /// `None`: killed at the timeout.
    pub(super) code: Option<i32>,
    pub(super) findings: Vec<Found>,
    /// Where the program's processes were when it crashed or was found
    /// hung (`aclmem_formats::postmortem`).
    pub(super) places: Vec<Where>,
}

/// A finding of a run, as far as exploring judges it: its class (by name:
/// a record this build cannot type still counts, as a misuse) and site.
#[derive(Debug, Clone)]
pub(super) struct Found {
    pub(super) class: String,
    pub(super) site: String,
    /// What a run left held, rather than a misuse.
    pub(super) leak: bool,
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

pub(super) struct Runner {
    pub(super) exe: PathBuf,
    pub(super) program: Vec<String>,
    pub(super) timeout: Duration,
    pub(super) dir: PathBuf,
}

impl Runner {
    /// Runs the program under `aclmem sanitize` with `env`, on machine
    /// `name` (its stderr kept in `stderr`, when given).
    pub(super) fn run(
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
