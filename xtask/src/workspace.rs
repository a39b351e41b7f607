//! The workspace as every command drives it: its paths (the root, the
//! target directory), its packages and shared objects, cargo and its test
//! counts, running a command or a named step, and building the two
//! libraries.

use std::fmt;
use std::path::{Path, PathBuf};
use std::time::Instant;

use xshell::{Shell, cmd};

/// Test counts summed over cargo's `test result:` lines.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct TestCounts {
    pub(crate) passed: u64,
    pub(crate) failed: u64,
    ignored: u64,
    suites: u64,
}

impl TestCounts {
    pub(crate) fn add_line(&mut self, line: &str) {
        let Some(rest) = line.strip_prefix("test result: ") else {
            return;
        };
        self.suites += 1;
        for part in rest.split(';') {
            let mut words = part.split_whitespace().rev();
            let (Some(what), Some(n)) = (words.next(), words.next()) else {
                continue;
            };
            let Ok(n) = n.parse::<u64>() else { continue };
            match what {
                "passed" => self.passed += n,
                "failed" => self.failed += n,
                "ignored" => self.ignored += n,
                _ => {}
            }
        }
    }
}

impl fmt::Display for TestCounts {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{} passed, {} failed, {} ignored in {} suites",
            self.passed, self.failed, self.ignored, self.suites
        )
    }
}

pub(crate) type Result<T, E = String> = std::result::Result<T, E>;

pub(crate) fn workspace_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .expect("xtask lives one level below the workspace root")
        .to_path_buf()
}

pub(crate) fn cargo() -> String {
    std::env::var("CARGO").unwrap_or_else(|_| "cargo".into())
}

pub(crate) fn target_dir() -> PathBuf {
    std::env::var_os("CARGO_TARGET_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| workspace_root().join("target"))
}

/// Runs one named step, printing what it runs and how long it took.
pub(crate) fn step(name: &str, f: impl FnOnce() -> Result<()>) -> Result<()> {
    eprintln!("\n==> {name}");
    let start = Instant::now();
    f().map_err(|e| format!("step `{name}`: {e}"))?;
    eprintln!("<== {name}: ok ({:.1}s)", start.elapsed().as_secs_f64());
    Ok(())
}

/// Removes the directory `path` and everything in it, if it is there: a
/// scratch directory a step starts empty.
pub(crate) fn remove_dir_if_present(path: &Path) -> Result<()> {
    match std::fs::remove_dir_all(path) {
        Err(e) if e.kind() != std::io::ErrorKind::NotFound => {
            Err(format!("{}: {e}", path.display()))
        }
        _ => Ok(()),
    }
}

/// Runs a command, echoing it once.
pub(crate) fn run(c: xshell::Cmd<'_>) -> Result<()> {
    eprintln!("$ {c}");
    c.quiet().run().map_err(|e| e.to_string())
}

/// The package of the emulated C library's shared object.
pub(crate) const LIB_PACKAGE: &str = "aclmem-libascendcl";
/// The package of the sanitizer's shared object.
pub(crate) const SANITIZER_PACKAGE: &str = "aclmem-sanitizer";
/// The manifest of the Python package's native module (built by maturin,
/// outside the workspace: a Python extension cannot link a test binary).
pub(crate) const PYTHON_MANIFEST: &str = "python/Cargo.toml";
/// The sanitizer's shared object, built beside `libascendcl.so`.
pub(crate) const SANITIZER_LIB: &str = "libaclmem_sanitizer.so";
/// Crates outside the workspace.
pub(crate) const SHELL_MANIFESTS: &[&str] = &[PYTHON_MANIFEST, "fuzz/Cargo.toml"];

/// Builds the emulated `libascendcl.so` and `libaclmem_sanitizer.so`
/// (beside it); returns the path of the first.
pub(crate) fn build_lib(sh: &Shell, release: bool) -> Result<PathBuf> {
    let cargo = cargo();
    let profile = release.then_some("--release");
    run(cmd!(
        sh,
        "{cargo} build -p {LIB_PACKAGE} -p {SANITIZER_PACKAGE} {profile...}"
    ))?;
    Ok(target_dir()
        .join(if release { "release" } else { "debug" })
        .join("libascendcl.so"))
}
