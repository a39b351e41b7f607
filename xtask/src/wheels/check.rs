//! Checking the host's wheel: installed into a fresh venv and used with no
//! Rust toolchain on `PATH` (pyACL and a C extension under `aclmem run`,
//! `aclmem sanitize`), and a two-rank `torchrun` all_reduce over the
//! wheel's Gloo engine with the system's `libgloo` hidden.

use std::path::{Path, PathBuf};

use xshell::{Shell, cmd};

use super::ENGINE;
use crate::workspace::{Result, run};

/// A directory of links to the few tools the wheel check needs besides
/// the venv's Python: a C compiler and what it runs. Nothing of Rust.
fn tools_without_rust(sh: &Shell) -> Result<PathBuf> {
    let dir = crate::workspace::target_dir().join("wheel-check-tools");
    crate::workspace::remove_dir_if_present(&dir)?;
    sh.create_dir(&dir).map_err(|e| e.to_string())?;
    let path = std::env::var("PATH").unwrap_or_default();
    for tool in ["cc", "gcc", "as", "ld", "sh", "env"] {
        let found =
            on_path(tool, &path).ok_or_else(|| format!("`{tool}` is needed to check the wheel"))?;
        std::os::unix::fs::symlink(found, dir.join(tool)).map_err(|e| e.to_string())?;
    }
    Ok(dir)
}

/// The file `tool` names in the directories of `path`, if any.
fn on_path(tool: &str, path: &str) -> Option<PathBuf> {
    use std::os::unix::fs::PermissionsExt;
    path.split(':').map(|d| Path::new(d).join(tool)).find(|p| {
        std::fs::metadata(p).is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
    })
}

/// Installs `wheel` into a fresh venv and uses the kit from it with no
/// Rust toolchain on `PATH`: a pyACL script and a C extension built
/// against `aclmem.include_dir()` share one emulator under `aclmem run`,
/// `aclmem sanitize` reports a seeded leak at the script's line, and a
/// two-rank `torchrun` all_reduce runs over the wheel's Gloo engine with
/// the system's Gloo out of reach ([`collectives`]).
pub(super) fn check_without_rust(sh: &Shell, wheel: &Path) -> Result<()> {
    let root = crate::workspace::target_dir().join("wheel-check");
    crate::workspace::remove_dir_if_present(&root)?;
    let venv = root.join("venv");
    let python = std::env::var("PYTHON").unwrap_or_else(|_| "python3".into());
    run(cmd!(sh, "{python} -m venv {venv}"))?;
    let bin = venv.join("bin");
    let pip = bin.join("pip");
    run(cmd!(sh, "{pip} install --quiet --no-deps {wheel}"))?;
    // torch and torch_npu for the collectives, from the torch_npu tests'
    // environment (no second download), and what hides the system's Gloo.
    let torch = crate::torch_npu::ensure_venv(sh)?;
    lend_site_packages(sh, &torch, &venv)?;
    let hide = HideGloo::new(sh)?;
    let tools = tools_without_rust(sh)?;
    let path = format!("{}:{}", bin.display(), tools.display());
    let _path = sh.push_env("PATH", &path);
    for rust in ["cargo", "rustc", "rustup", "maturin"] {
        if let Some(found) = on_path(rust, &path) {
            return Err(format!(
                "`{}` is on the check's PATH ({path})",
                found.display()
            ));
        }
    }
    // Nothing of the workspace may help: the kit comes from the wheel.
    let _no_lib = sh.push_env("ACLMEM_ASCENDCL", "");
    let _no_cli = sh.push_env("ACLMEM_CLI", "");
    let _machine = sh.push_env(
        "ACLMEM_EMU_MACHINE",
        format!("wheel-check-{}", std::process::id()),
    );
    let kit = crate::workspace::workspace_root().join("python/tests/kit");
    let py = bin.join("python");
    let aclmem = bin.join("aclmem");
    // A C extension built against the wheel's headers and library.
    let include = cmd!(sh, "{py} -c 'import aclmem; print(aclmem.include_dir())'")
        .read()
        .map_err(|e| e.to_string())?;
    let lib = cmd!(sh, "{py} -c 'import aclmem; print(aclmem.lib_dir())'")
        .read()
        .map_err(|e| e.to_string())?;
    let camem = root.join("camem.so");
    let src = kit.join("camem.c");
    run(cmd!(
        sh,
        "cc -shared -fPIC -std=c11 -Wall -Werror -I{include} {src} -o {camem} -L{lib} -lascendcl"
    ))?;
    let script = kit.join("sleep_wake.py");
    for order in ["python-first", "c-first"] {
        let out = cmd!(sh, "{aclmem} run -- python {script} {camem} {order}")
            .read_stderr()
            .map_err(|e| format!("aclmem run ({order}): {e}"))?;
        if !out.contains("aclmem run: emulated machine") {
            return Err(format!("aclmem run did not say it is emulated: {out}"));
        }
    }
    let leak = kit.join("leak.py");
    let report = cmd!(sh, "{aclmem} sanitize -- python {leak}")
        .ignore_status()
        .output()
        .map_err(|e| e.to_string())?;
    let stderr = String::from_utf8_lossy(&report.stderr);
    let line = leak_line(&leak)?;
    if report.status.code() != Some(1) || !stderr.contains(&format!("(leak.py:{line})")) {
        return Err(format!(
            "aclmem sanitize did not report the leak at leak.py:{line} (exit {:?}):\n{stderr}",
            report.status.code()
        ));
    }
    let _no_engine = sh.push_env("ACLMEM_GLOO_ENGINE", "");
    collectives(sh, &hide, &aclmem, &py, &kit.join("allreduce.py"))?;
    eprintln!(
        "the wheel works without Rust: pyACL + C extension under `aclmem run`, the leak at leak.py:{line}, \
         and a two-rank torchrun all_reduce over the wheel's Gloo engine with the system's Gloo out of reach"
    );
    Ok(())
}

/// The site directory (purelib) of the venv whose Python is `python`.
fn site_packages(sh: &Shell, python: &Path) -> Result<PathBuf> {
    cmd!(
        sh,
        "{python} -c 'import sysconfig; print(sysconfig.get_paths()[\"purelib\"])'"
    )
    .read()
    .map(PathBuf::from)
    .map_err(|e| e.to_string())
}

/// Makes the packages of the venv `from` (torch, torch_npu) importable in
/// the venv `to` through a `.pth` file: `to`'s own packages (the wheel's
/// aclmem) come first on `sys.path`. Both must be of one Python version.
fn lend_site_packages(sh: &Shell, from: &Path, to: &Path) -> Result<()> {
    let (lender, borrower) = (
        site_packages(sh, &from.join("bin").join("python"))?,
        site_packages(sh, &to.join("bin").join("python"))?,
    );
    let version = |p: &Path| {
        p.ancestors()
            .filter_map(|a| a.file_name())
            .find(|n| n.to_string_lossy().starts_with("python"))
            .map(|n| n.to_owned())
    };
    if version(&lender) != version(&borrower) {
        return Err(format!(
            "{} and {} are of different Pythons",
            lender.display(),
            borrower.display()
        ));
    }
    std::fs::write(
        borrower.join("aclmem-wheel-check-torch.pth"),
        format!("{}\n", lender.display()),
    )
    .map_err(|e| e.to_string())
}

/// Directories where a system's `libgloo.so*` would be (Debian's is in
/// `/usr/lib`).
const LIBRARY_DIRS: &[&str] = &[
    "/usr/lib",
    "/usr/lib64",
    "/usr/local/lib",
    "/usr/lib/x86_64-linux-gnu",
    "/usr/lib/aarch64-linux-gnu",
    "/lib",
    "/lib64",
];

/// How the collectives check runs on "a machine without Gloo": when the
/// system has a `libgloo.so*` (`libgloo-dev`, which CI installs for its
/// other tests), the job runs in a mount namespace of its own where each
/// such file is `/dev/null` (`unshare --mount`, as root), so neither the
/// engine nor anything else can load it.
struct HideGloo {
    /// The real files to cover (empty: the machine has no Gloo).
    files: Vec<PathBuf>,
    /// `unshare` and `mount`, found before the check narrows `PATH`.
    tools: Option<(PathBuf, PathBuf)>,
}

impl HideGloo {
    fn new(sh: &Shell) -> Result<HideGloo> {
        let mut files: Vec<PathBuf> = LIBRARY_DIRS
            .iter()
            .filter_map(|d| std::fs::read_dir(d).ok())
            .flat_map(|d| d.flatten())
            .filter(|e| e.file_name().to_string_lossy().starts_with("libgloo.so"))
            .filter_map(|e| std::fs::canonicalize(e.path()).ok())
            .filter(|p| p.is_file())
            .collect();
        files.sort();
        files.dedup();
        if files.is_empty() {
            eprintln!("this machine has no libgloo: the collectives check runs as it is");
            return Ok(HideGloo { files, tools: None });
        }
        let root = cmd!(sh, "id -u").read().is_ok_and(|uid| uid.trim() == "0");
        let path = std::env::var("PATH").unwrap_or_default();
        let tools = on_path("unshare", &path).zip(on_path("mount", &path));
        if !root || tools.is_none() {
            return Err(format!(
                "the system's Gloo ({}) is installed, and the check cannot hide it here \
                 (it needs root and util-linux's unshare and mount): the wheel's collectives \
                 would not be checked on a machine without Gloo",
                files
                    .iter()
                    .map(|f| f.display().to_string())
                    .collect::<Vec<_>>()
                    .join(", ")
            ));
        }
        eprintln!(
            "the collectives check hides the system's Gloo: {}",
            files
                .iter()
                .map(|f| f.display().to_string())
                .collect::<Vec<_>>()
                .join(", ")
        );
        Ok(HideGloo { files, tools })
    }

    /// `command` with the system's Gloo hidden from it.
    fn wrap(&self, command: Vec<String>) -> Vec<String> {
        let Some((unshare, mount)) = &self.tools else {
            return command;
        };
        let mounts: Vec<String> = self
            .files
            .iter()
            .map(|f| format!("{} --bind /dev/null {} && ", mount.display(), f.display()))
            .collect();
        let mut wrapped = vec![
            unshare.display().to_string(),
            "--mount".into(),
            "--propagation".into(),
            "private".into(),
            "sh".into(),
            "-c".into(),
            format!("{}exec \"$@\"", mounts.concat()),
            "hide-gloo".into(),
        ];
        wrapped.extend(command);
        wrapped
    }
}

/// `torchrun --nproc-per-node 2` of `script` under the wheel's `aclmem
/// run --devices 2`, with the system's Gloo out of reach: each rank's
/// all_reduce must sum right, the process must have mapped the wheel's
/// engine (under the venv) and no `libgloo`, and `libgloo.so.0` must not
/// load there.
fn collectives(sh: &Shell, hide: &HideGloo, aclmem: &Path, py: &Path, script: &Path) -> Result<()> {
    let _timeouts = (
        sh.push_env("HCCL_CONNECT_TIMEOUT", "120"),
        sh.push_env("HCCL_EXEC_TIMEOUT", "120"),
    );
    let job = hide.wrap(
        [
            aclmem.display().to_string(),
            "run".into(),
            "--devices".into(),
            "2".into(),
            "--".into(),
            py.display().to_string(),
            "-m".into(),
            "torch.distributed.run".into(),
            "--standalone".into(),
            "--nproc-per-node".into(),
            "2".into(),
            script.display().to_string(),
        ]
        .into(),
    );
    let (program, args) = job.split_first().ok_or("no command")?;
    let c = cmd!(sh, "{program} {args...}");
    eprintln!("$ {c}");
    let out = c.ignore_status().output().map_err(|e| e.to_string())?;
    let stdout = String::from_utf8_lossy(&out.stdout);
    let failed = |why: &str| {
        let stderr = String::from_utf8_lossy(&out.stderr);
        let tail = &stderr[stderr.len().saturating_sub(6000)..];
        Err(format!(
            "the two-rank all_reduce from the wheel: {why} (exit {:?})\n{stdout}\n{tail}",
            out.status.code()
        ))
    };
    if !out.status.success() {
        return failed("torchrun failed");
    }
    // Each rank writes its report as one line; a line holding several
    // (ranks that wrote at once) is read as a stream of values.
    let reports: Vec<serde_json::Value> = stdout
        .lines()
        .filter(|l| l.starts_with('{'))
        .flat_map(|l| serde_json::Deserializer::from_str(l).into_iter::<serde_json::Value>())
        .filter_map(Result::ok)
        .collect();
    let mut ranks: Vec<i64> = reports.iter().filter_map(|r| r["rank"].as_i64()).collect();
    ranks.sort_unstable();
    if ranks != [0, 1] {
        return failed("not one report from each of ranks 0 and 1");
    }
    let wheel_lib = site_packages(sh, py)?
        .join("aclmem")
        .join("_lib")
        .join(ENGINE);
    let wheel_lib =
        std::fs::canonicalize(&wheel_lib).map_err(|e| format!("{}: {e}", wheel_lib.display()))?;
    for r in &reports {
        let rank = &r["rank"];
        if r["summed"] != true {
            return failed(&format!("rank {rank}'s all_reduce summed wrong"));
        }
        if r["engine"] != serde_json::json!([wheel_lib.display().to_string()]) {
            return failed(&format!(
                "rank {rank} did not map the wheel's engine only ({})",
                r["engine"]
            ));
        }
        if r["libgloo"] != serde_json::json!([]) {
            return failed(&format!("rank {rank} mapped a libgloo ({})", r["libgloo"]));
        }
        if r["system_gloo"] != false {
            return failed(&format!("rank {rank} could load the system's libgloo.so.0"));
        }
    }
    eprintln!(
        "two ranks summed over the wheel's engine ({}), no libgloo loadable",
        wheel_lib.display()
    );
    Ok(())
}

/// The line of `leak.py` marked `# the leak`.
fn leak_line(script: &Path) -> Result<usize> {
    let text = std::fs::read_to_string(script).map_err(|e| e.to_string())?;
    text.lines()
        .position(|l| l.contains("# the leak"))
        .map(|i| i + 1)
        .ok_or_else(|| format!("{} marks no line `# the leak`", script.display()))
}
