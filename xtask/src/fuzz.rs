//! `cargo xtask fuzz`: coverage-guided fuzzing with libFuzzer on the
//! pinned stable toolchain.
//!
//! The targets (`fuzz/fuzz_targets`) link libFuzzer through
//! `libfuzzer-sys`; the instrumentation is rustc's own SanitizerCoverage
//! pass, switched on with stable `-C passes` / `-C llvm-args` flags (what
//! cargo-fuzz passes, minus its nightly-only AddressSanitizer). `--target`
//! keeps the flags off build scripts and proc macros. The corpus lives in
//! `fuzz/corpus/<target>`: a run reads it and writes what it finds into
//! `target/fuzz-scratch/<target>`; with `update` (`--update-corpus`) the
//! two are merged back into the committed corpus and minimised
//! (`-merge=1`).

use std::path::PathBuf;

use xshell::{Shell, cmd};

use crate::workspace::{Result, run, target_dir, workspace_root};

/// The fuzz targets.
pub const TARGETS: &[&str] = &["capi_sequence", "rules", "env_config"];

const FLAGS: &str = "-Cpasses=sancov-module \
    -Cllvm-args=-sanitizer-coverage-level=4 \
    -Cllvm-args=-sanitizer-coverage-inline-8bit-counters \
    -Cllvm-args=-sanitizer-coverage-pc-table \
    -Cllvm-args=-sanitizer-coverage-trace-compares \
    --cfg fuzzing -Cdebug-assertions -Coverflow-checks";

fn host() -> &'static str {
    if cfg!(target_arch = "aarch64") {
        "aarch64-unknown-linux-gnu"
    } else {
        "x86_64-unknown-linux-gnu"
    }
}

/// Builds the instrumented targets; returns their directory.
pub fn build(sh: &Shell) -> Result<PathBuf> {
    let cargo = crate::workspace::cargo();
    let dir = target_dir().join("fuzz");
    let _flags = sh.push_env("RUSTFLAGS", FLAGS);
    let _dir = sh.push_env("CARGO_TARGET_DIR", &dir);
    let host = host();
    // The fuzz crate is a workspace of its own with a committed lock file:
    // a build must not rewrite it (the tree stays as it was), so a lock
    // that no longer matches the crates' dependencies is an error here.
    run(cmd!(
        sh,
        "{cargo} metadata --locked --format-version 1 --manifest-path fuzz/Cargo.toml"
    )
    .ignore_stdout())
    .map_err(|e| {
        format!(
            "{e}\nfuzz/Cargo.lock is out of date: run `cargo update --workspace --manifest-path fuzz/Cargo.toml` and commit it"
        )
    })?;
    run(cmd!(
        sh,
        "{cargo} build --locked --release --bins --manifest-path fuzz/Cargo.toml --target {host}"
    ))?;
    Ok(dir.join(host).join("release"))
}

/// One target's result.
pub struct Outcome {
    pub target: &'static str,
    pub runs: u64,
    pub seconds: u64,
    pub corpus: usize,
}

/// Runs every target (or `only`) for `seconds` each, or for `runs`
/// executions when given; a crash, a panic or a leak fails the step.
/// `update` merges the new inputs into `fuzz/corpus` and minimises it;
/// otherwise the committed corpus is only read.
pub fn fuzz(
    sh: &Shell,
    seconds: u64,
    runs: Option<u64>,
    only: &[String],
    update: bool,
) -> Result<Vec<Outcome>> {
    let bin = build(sh)?;
    let mut out = Vec::new();
    for &t in TARGETS
        .iter()
        .filter(|t| only.is_empty() || only.iter().any(|o| o == *t))
    {
        let exe = bin.join(t);
        let corpus = workspace_root().join("fuzz").join("corpus").join(t);
        sh.create_dir(&corpus).map_err(|e| e.to_string())?;
        let artifacts = target_dir().join("fuzz-artifacts").join(t);
        sh.create_dir(&artifacts).map_err(|e| e.to_string())?;
        let limit = match runs {
            Some(n) => format!("-runs={n}"),
            None => format!("-max_total_time={seconds}"),
        };
        let prefix = format!("-artifact_prefix={}/", artifacts.display());
        // libFuzzer adds what it finds to its first corpus directory, and
        // may rewrite inputs there: that is always a scratch directory, and
        // the committed corpus is only read.
        let scratch = target_dir().join("fuzz-scratch").join(t);
        let _ = std::fs::remove_dir_all(&scratch);
        sh.create_dir(&scratch).map_err(|e| e.to_string())?;
        let dirs = [scratch.clone(), corpus.clone()];
        let c = cmd!(
            sh,
            "{exe} {dirs...} {limit} {prefix} -rss_limit_mb=4096 -print_final_stats=1"
        )
        .quiet()
        .ignore_status();
        eprintln!("$ {c}");
        let output = c.output().map_err(|e| e.to_string())?;
        let log = String::from_utf8_lossy(&output.stderr);
        if !output.status.success() {
            let tail: Vec<&str> = log.lines().rev().take(30).collect();
            return Err(format!(
                "{t}: the fuzzer found a failure (input in {}):\n{}",
                artifacts.display(),
                tail.into_iter().rev().collect::<Vec<_>>().join("\n")
            ));
        }
        let (runs, secs) = log
            .lines()
            .find_map(|l| {
                let rest = l.strip_prefix("Done ")?;
                let mut w = rest.split_whitespace();
                let runs = w.next()?.parse().ok()?;
                let secs = w.nth(2)?.parse().ok()?;
                Some((runs, secs))
            })
            .ok_or_else(|| format!("{t}: no `Done` line in libFuzzer's output"))?;
        let found = std::fs::read_dir(&scratch).map_or(0, |d| d.count());
        if update {
            let merged = target_dir().join("fuzz-merge").join(t);
            let _ = std::fs::remove_dir_all(&merged);
            sh.create_dir(&merged).map_err(|e| e.to_string())?;
            run(cmd!(sh, "{exe} -merge=1 {merged} {corpus} {scratch}").quiet())?;
            std::fs::remove_dir_all(&corpus).map_err(|e| e.to_string())?;
            std::fs::rename(&merged, &corpus).map_err(|e| e.to_string())?;
        }
        let corpus_len = std::fs::read_dir(&corpus).map_or(0, |d| d.count());
        let kept = if update {
            "merged into fuzz/corpus"
        } else {
            "in target/fuzz-scratch; --update-corpus merges them"
        };
        eprintln!(
            "{t}: {runs} executions in {secs} s, 0 failures, corpus {corpus_len} inputs, {found} new ({kept})"
        );
        out.push(Outcome {
            target: t,
            runs,
            seconds: secs,
            corpus: corpus_len,
        });
    }
    Ok(out)
}
