//! `cargo xtask wheels`: the Python wheels, one per architecture, each
//! carrying the whole kit: the native module, the emulated
//! `libascendcl.so`, `libaclmem_sanitizer.so`, HCCL's Gloo engine
//! `libaclmem_gloo.so` (Gloo and the C++ runtime inside it, `crate::gloo`),
//! the `aclmem` CLI and the C headers.
//!
//! Everything is linked with zig against glibc 2.28 (`cargo zigbuild`,
//! `maturin --zig`), so the wheels are `manylinux_2_28` (RHEL/openEuler 8
//! and later, Ubuntu 20.04 and later, Debian 10 and later), and
//! `auditwheel show` must agree with that tag for every ELF file in the
//! wheel. The aarch64 wheel is built with Debian's compiler, whose
//! standard library serves that target (as in `cargo xtask cross`). The
//! tools come from the package registry into `target/wheel-tools`.

use std::path::{Path, PathBuf};

use xshell::{Shell, cmd};

use crate::workspace::{
    LIB_PACKAGE, PYTHON_MANIFEST, Result, SANITIZER_LIB, SANITIZER_PACKAGE, run,
};

/// The glibc the wheels need at most, and their manylinux tag's version.
pub const GLIBC: &str = "2.28";

/// The targets wheels are built for.
pub const TARGETS: &[&str] = &["x86_64-unknown-linux-gnu", "aarch64-unknown-linux-gnu"];

/// What the wheel's `aclmem/_lib` holds, built by cargo: (package, file).
const KIT: &[(&str, &str)] = &[
    (LIB_PACKAGE, "libascendcl.so"),
    (SANITIZER_PACKAGE, SANITIZER_LIB),
    ("aclmem-cli", "aclmem"),
];

/// The HCCL engine, built by [`LIB_PACKAGE`] beside the library: in the
/// wheels with Gloo and the C++ runtime inside it (`crate::gloo`).
const ENGINE: &str = "libaclmem_gloo.so";

/// The only libraries the wheels' engine may need: glibc's.
const ENGINE_NEEDS: &[&str] = &[
    "libc.so.6",
    "libm.so.6",
    "libpthread.so.0",
    "libdl.so.2",
    "ld-linux-x86-64.so.2",
    "ld-linux-aarch64.so.1",
];

/// Where the wheels are written.
pub fn out_dir() -> PathBuf {
    crate::workspace::target_dir().join("wheels")
}

/// The virtual environment of the build tools.
fn tools() -> PathBuf {
    crate::workspace::target_dir().join("wheel-tools")
}

fn ensure_tools(sh: &Shell) -> Result<PathBuf> {
    let venv = tools();
    let pip = venv.join("bin").join("pip");
    if !pip.exists() {
        let python = std::env::var("PYTHON").unwrap_or_else(|_| "python3".into());
        run(cmd!(sh, "{python} -m venv {venv}"))?;
    }
    run(cmd!(
        sh,
        "{pip} install --quiet maturin ziglang cargo-zigbuild auditwheel"
    ))?;
    Ok(venv.join("bin"))
}

/// The Python package's directory the kit is staged into (git-ignored).
fn package_dir() -> PathBuf {
    crate::workspace::workspace_root()
        .join("python")
        .join("aclmem")
}

/// The target this xtask runs on.
fn host_target() -> &'static str {
    if cfg!(target_arch = "aarch64") {
        "aarch64-unknown-linux-gnu"
    } else {
        "x86_64-unknown-linux-gnu"
    }
}

fn arch(target: &str) -> &str {
    target.split('-').next().unwrap_or(target)
}

/// Builds the kit for `target` (release, linked against glibc
/// [`GLIBC`]) and stages it.
fn stage(sh: &Shell, bin: &Path, target: &str) -> Result<()> {
    let zigbuild = bin.join("cargo-zigbuild");
    let versioned = format!("{target}.{GLIBC}");
    // One target directory per target: the aarch64 build uses another
    // compiler, whose host artifacts must not replace the host build's.
    let build_dir = crate::workspace::target_dir()
        .join("wheel-build")
        .join(target);
    let packages: Vec<String> = KIT
        .iter()
        .flat_map(|(p, _)| ["-p".into(), p.to_string()])
        .collect();
    // Gloo, static, for this target and glibc: the engine carries it.
    let tree = crate::gloo::source(sh, &bin.join("pip"))?;
    let zig = [
        bin.join("python").display().to_string(),
        "-m".into(),
        "ziglang".into(),
    ];
    let gloo = crate::gloo::static_lib(
        sh,
        &tree,
        &zig,
        &format!("{}-linux-gnu.{GLIBC}", arch(target)),
    )?;
    let _gloo = sh.push_env("ACLMEM_GLOO_STATIC", &gloo);
    let _dir = sh.push_env("CARGO_TARGET_DIR", &build_dir);
    let _debian = (target != host_target()).then(|| crate::cross::debian_compiler(sh));
    run(cmd!(
        sh,
        "{zigbuild} zigbuild --release --target {versioned} {packages...}"
    ))?;
    let built = build_dir.join(target).join("release");
    stage_kit(sh, &built)?;
    engine_needs_only_glibc(sh, &package_dir().join("_lib").join(ENGINE))
}

/// The engine the wheel carries needs glibc's libraries and nothing else
/// (no `libgloo`, no C++ runtime), as `readelf -d` lists them.
fn engine_needs_only_glibc(sh: &Shell, engine: &Path) -> Result<()> {
    let dynamic = cmd!(sh, "readelf -d {engine}")
        .read()
        .map_err(|e| format!("{}: {e}", engine.display()))?;
    let needed: Vec<&str> = dynamic
        .lines()
        .filter(|l| l.contains("(NEEDED)"))
        .filter_map(|l| l.split('[').nth(1)?.split(']').next())
        .collect();
    let other: Vec<&&str> = needed
        .iter()
        .filter(|n| !ENGINE_NEEDS.contains(n))
        .collect();
    if needed.is_empty() || !other.is_empty() {
        return Err(format!(
            "{} needs {needed:?}; only glibc's libraries may be needed",
            engine.display()
        ));
    }
    eprintln!("{ENGINE} needs {}", needed.join(", "));
    Ok(())
}

/// Copies the kit built into `built` (the library, the sanitizer, the CLI)
/// into the Python package's `aclmem/_lib`, and the C headers into
/// `aclmem/include` (both git-ignored), as a wheel carries them.
pub fn stage_kit(sh: &Shell, built: &Path) -> Result<()> {
    let lib = package_dir().join("_lib");
    let include = package_dir().join("include");
    for d in [&lib, &include] {
        crate::workspace::remove_dir_if_present(d)?;
    }
    sh.create_dir(&lib).map_err(|e| e.to_string())?;
    for (_, file) in KIT {
        let from = built.join(file);
        sh.copy_file(&from, lib.join(file))
            .map_err(|e| format!("{}: {e}", from.display()))?;
    }
    // The engine when it was built (the wheels always build it; a
    // development build without Gloo has none).
    let engine = built.join(ENGINE);
    if engine.exists() {
        sh.copy_file(&engine, lib.join(ENGINE))
            .map_err(|e| format!("{}: {e}", engine.display()))?;
        // Gloo's license, which its binary form must carry.
        let license = crate::workspace::workspace_root().join("python/third-party/gloo/LICENSE");
        sh.copy_file(&license, lib.join("LICENSE.gloo"))
            .map_err(|e| format!("{}: {e}", license.display()))?;
    }
    let headers = crate::workspace::workspace_root().join("crates/emu-capi/include");
    run(cmd!(sh, "cp -r {headers} {include}"))
}

/// The packages [`stage_kit`] needs built.
pub fn kit_packages() -> impl Iterator<Item = &'static str> {
    KIT.iter().map(|(p, _)| *p)
}

/// Builds the wheel for `target` into [`out_dir`]; its path.
fn build(sh: &Shell, bin: &Path, target: &str) -> Result<PathBuf> {
    stage(sh, bin, target)?;
    let out = out_dir();
    let tag = format!("manylinux_{}", GLIBC.replace('.', "_"));
    let maturin = bin.join("maturin");
    let _debian = (target != host_target()).then(|| crate::cross::debian_compiler(sh));
    for old in wheels_of(target) {
        std::fs::remove_file(&old).map_err(|e| format!("{}: {e}", old.display()))?;
    }
    run(cmd!(
        sh,
        "{maturin} build --release --zig --target {target} --compatibility {tag} --out {out} -m {PYTHON_MANIFEST}"
    ))?;
    let wheel = match wheels_of(target).as_slice() {
        [one] => one.clone(),
        other => {
            return Err(format!(
                "maturin wrote {} {target} wheels into {}, expected one",
                other.len(),
                out.display()
            ));
        }
    };
    audit(sh, bin, &wheel, target)?;
    Ok(wheel)
}

/// The wheels of `target`'s architecture in [`out_dir`].
fn wheels_of(target: &str) -> Vec<PathBuf> {
    let suffix = format!("_{}.whl", arch(target));
    std::fs::read_dir(out_dir())
        .map(|d| {
            d.flatten()
                .map(|e| e.path())
                .filter(|p| p.to_string_lossy().ends_with(&suffix))
                .collect()
        })
        .unwrap_or_default()
}

/// `auditwheel show`: every ELF file in the wheel (the module, the
/// libraries, the CLI) needs at most glibc [`GLIBC`] and only the
/// libraries manylinux allows, so the tag is right.
fn audit(sh: &Shell, bin: &Path, wheel: &Path, target: &str) -> Result<()> {
    let auditwheel = bin.join("auditwheel");
    let report = cmd!(sh, "{auditwheel} show {wheel}")
        .read()
        .map_err(|e| e.to_string())?;
    let report = report.split_whitespace().collect::<Vec<_>>().join(" ");
    eprintln!("{report}");
    let tag = format!("manylinux_{}_{}", GLIBC.replace('.', "_"), arch(target));
    let consistent = format!("consistent with the following platform tag: \"{tag}\"");
    let name = wheel.file_name().unwrap_or_default().to_string_lossy();
    if !report.contains(&consistent) || !name.contains(&tag) {
        return Err(format!(
            "{name}: auditwheel does not find it consistent with {tag}"
        ));
    }
    let bundled = [
        "libascendcl.so",
        SANITIZER_LIB,
        ENGINE,
        "aclmem/_lib/aclmem",
    ];
    let listing = cmd!(sh, "python3 -m zipfile -l {wheel}")
        .read()
        .map_err(|e| e.to_string())?;
    for needed in bundled
        .iter()
        .chain(&["aclmem/include/acl/acl.h", "aclmem/_native"])
    {
        if !listing.contains(needed) {
            return Err(format!("{name} lacks {needed}"));
        }
    }
    Ok(())
}

/// Builds the wheels of `targets` (all of [`TARGETS`] when empty).
pub fn wheels(sh: &Shell, targets: &[String]) -> Result<Vec<PathBuf>> {
    let bin = ensure_tools(sh)?;
    // The tools find zig as `python3 -m ziglang`, with this venv's Python.
    let _path = sh.push_env(
        "PATH",
        format!(
            "{}:{}",
            bin.display(),
            std::env::var("PATH").unwrap_or_default()
        ),
    );
    let chosen: Vec<&str> = if targets.is_empty() {
        TARGETS.to_vec()
    } else {
        targets.iter().map(String::as_str).collect()
    };
    let mut built = Vec::new();
    for t in chosen {
        if !TARGETS.contains(&t) {
            return Err(format!(
                "no wheel for {t}; expected one of {}",
                TARGETS.join(", ")
            ));
        }
        if t != host_target() {
            crate::cross::provision(sh)?;
        }
        built.push(build(sh, &bin, t)?);
    }
    Ok(built)
}

/// Checks each of the `built` wheels: this machine's with
/// [`check_without_rust`], the aarch64 one (on x86_64) with
/// [`check_under_qemu`].
pub fn check(sh: &Shell, built: &[PathBuf]) -> Result<()> {
    for wheel in built {
        let name = wheel.to_string_lossy();
        if name.ends_with(&format!("_{}.whl", arch(host_target()))) {
            check_without_rust(sh, wheel)?;
        } else if name.ends_with("_aarch64.whl") {
            check_under_qemu(sh, wheel)?;
        } else {
            return Err(format!("{name}: no check for this architecture here"));
        }
    }
    Ok(())
}

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
pub fn check_without_rust(sh: &Shell, wheel: &Path) -> Result<()> {
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
    let reports: Vec<serde_json::Value> = stdout
        .lines()
        .filter(|l| l.starts_with('{'))
        .filter_map(|l| serde_json::from_str(l).ok())
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

/// Debian's packages of an aarch64 Python with what `ctypes` and the
/// standard library need, for the interpreter's version.
fn python_packages(version: &str) -> Vec<String> {
    [
        format!("python{version}-minimal:arm64"),
        format!("libpython{version}-minimal:arm64"),
        format!("libpython{version}-stdlib:arm64"),
        "libffi8:arm64".into(),
        "zlib1g:arm64".into(),
        "libexpat1:arm64".into(),
    ]
    .into()
}

/// Installs the aarch64 `wheel` for Debian's aarch64 Python (unpacked from
/// its packages, not installed) and uses it under qemu: the module imports
/// and binds to the wheel's library, and a C extension built with the
/// cross compiler against the wheel's headers shares one emulator with
/// pyACL through three sleep/wake cycles.
pub fn check_under_qemu(sh: &Shell, wheel: &Path) -> Result<()> {
    let root = crate::workspace::target_dir().join("wheel-qemu");
    // Debian's aarch64 Python of the same release as the host's.
    let version = std::process::Command::new("python3")
        .args(["-c", "import sys; print('%d.%d' % sys.version_info[:2])"])
        .output()
        .map_err(|e| e.to_string())
        .map(|o| String::from_utf8_lossy(&o.stdout).trim().to_owned())?;
    let sysroot = root.join(format!("python{version}"));
    let python = sysroot.join("usr/bin").join(format!("python{version}"));
    if !python.exists() {
        let debs = root.join("debs");
        sh.create_dir(&debs).map_err(|e| e.to_string())?;
        {
            let _in = sh.push_dir(&debs);
            let packages = python_packages(&version);
            run(cmd!(sh, "apt-get download -q {packages...}"))?;
        }
        for deb in std::fs::read_dir(&debs)
            .map_err(|e| e.to_string())?
            .flatten()
        {
            let deb = deb.path();
            run(cmd!(sh, "dpkg -x {deb} {sysroot}"))?;
        }
    }
    let site = root.join("site");
    crate::workspace::remove_dir_if_present(&site)?;
    let pip = tools().join("bin").join("pip");
    let tag = format!("manylinux_{}_aarch64", GLIBC.replace('.', "_"));
    run(cmd!(
        sh,
        "{pip} install --quiet --target {site} --platform {tag} --python-version {version} --implementation cp --only-binary=:all: --no-deps {wheel}"
    ))?;
    let kit = crate::workspace::workspace_root().join("python/tests/kit");
    let package = site.join("aclmem");
    let camem = root.join("camem.so");
    let (src, include, lib) = (
        kit.join("camem.c"),
        package.join("include"),
        package.join("_lib"),
    );
    run(cmd!(
        sh,
        "aarch64-linux-gnu-gcc -shared -fPIC -std=c11 -Wall -Werror -I{include} {src} -o {camem} -L{lib} -lascendcl"
    ))?;
    let libs = [
        "/usr/aarch64-linux-gnu/lib".to_owned(),
        sysroot
            .join("usr/lib/aarch64-linux-gnu")
            .display()
            .to_string(),
        sysroot.join("lib/aarch64-linux-gnu").display().to_string(),
        lib.display().to_string(),
    ]
    .join(":");
    let script = kit.join("sleep_wake.py");
    let _home = sh.push_env("PYTHONHOME", sysroot.join("usr"));
    let _path = sh.push_env("PYTHONPATH", &site);
    let _lib = sh.push_env("ACLMEM_ASCENDCL", "");
    let _machine = sh.push_env(
        "ACLMEM_EMU_MACHINE",
        format!("wheel-qemu-{}", std::process::id()),
    );
    for order in ["python-first", "c-first"] {
        let out = cmd!(
            sh,
            "qemu-aarch64 -L /usr/aarch64-linux-gnu -E LD_LIBRARY_PATH={libs} {python} {script} {camem} {order}"
        )
        .read()
        .map_err(|e| format!("the aarch64 wheel under qemu ({order}): {e}"))?;
        let bound = format!(
            "backend: emulator ({})",
            lib.join("libascendcl.so").display()
        );
        if !out.contains(&bound) || !out.contains("3 cycles, weights intact") {
            return Err(format!("the aarch64 wheel under qemu ({order}):\n{out}"));
        }
    }
    hccl_under_qemu(sh, &root, &include, &lib, &libs)?;
    eprintln!(
        "the aarch64 wheel works under qemu (Python {version}): pyACL + C extension, one emulator, \
         and HCCL over the wheel's Gloo engine on two ranks"
    );
    Ok(())
}

/// Two ranks of `tests/programs/hccl.c` (every collective and data type,
/// checked on the host), each an aarch64 process under qemu bound to the
/// wheel's library in `lib` (`libs` is their `LD_LIBRARY_PATH`): the
/// wheel's aarch64 engine loads and carries them. The aarch64 sysroot has
/// no Gloo, so nothing else could.
fn hccl_under_qemu(sh: &Shell, root: &Path, include: &Path, lib: &Path, libs: &str) -> Result<()> {
    let program = root.join("hccl");
    let src = crate::workspace::workspace_root().join("tests/programs/hccl.c");
    run(cmd!(
        sh,
        "aarch64-linux-gnu-gcc -std=c11 -O1 -Wall -Werror -I{include} {src} -o {program} -L{lib} -lascendcl"
    ))?;
    let root_info = root.join("hccl-root-info");
    let _ = std::fs::remove_file(&root_info);
    let machine = format!("wheel-qemu-hccl-{}", std::process::id());
    let ranks: Vec<_> = (0..2)
        .map(|rank| {
            std::process::Command::new("qemu-aarch64")
                .args(["-L", "/usr/aarch64-linux-gnu", "-E"])
                .arg(format!("LD_LIBRARY_PATH={libs}"))
                .arg(&program)
                .args([rank.to_string().as_str(), "2"])
                .arg(&root_info)
                .arg("all")
                .env("ACLMEM_EMU_MACHINE", &machine)
                .env("ACLMEM_EMU_DEVICES", "2")
                .env("ACLMEM_EMU_HBM", "1GiB")
                .env("ACLMEM_ASCENDCL", "")
                .env_remove("ACLMEM_GLOO_ENGINE")
                // A defect fails the check instead of hanging it.
                .env("HCCL_CONNECT_TIMEOUT", "120")
                .env("HCCL_EXEC_TIMEOUT", "120")
                .stdout(std::process::Stdio::piped())
                .stderr(std::process::Stdio::piped())
                .spawn()
                .map_err(|e| format!("qemu-aarch64: {e}"))
        })
        .collect::<Result<_>>()?;
    for (rank, child) in ranks.into_iter().enumerate() {
        let out = child.wait_with_output().map_err(|e| e.to_string())?;
        if !out.status.success() || out.stdout != b"ok\n" {
            return Err(format!(
                "HCCL from the aarch64 wheel under qemu, rank {rank} ({:?}):\n{}{}",
                out.status.code(),
                String::from_utf8_lossy(&out.stdout),
                String::from_utf8_lossy(&out.stderr)
            ));
        }
    }
    let _ = std::fs::remove_file(&root_info);
    Ok(())
}
