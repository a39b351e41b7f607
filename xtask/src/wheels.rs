//! `cargo xtask wheels`: the Python wheels, one per architecture, each
//! carrying the whole kit: the native module, the emulated
//! `libascendcl.so`, `libaclmem_sanitizer.so`, the `aclmem` CLI and the C
//! headers.
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
const GLIBC: &str = "2.28";

/// The targets wheels are built for.
pub const TARGETS: &[&str] = &["x86_64-unknown-linux-gnu", "aarch64-unknown-linux-gnu"];

/// What the wheel's `aclmem/_lib` holds, built by cargo: (package, file).
const KIT: &[(&str, &str)] = &[
    (LIB_PACKAGE, "libascendcl.so"),
    (SANITIZER_PACKAGE, SANITIZER_LIB),
    ("aclmem-cli", "aclmem"),
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
    let _dir = sh.push_env("CARGO_TARGET_DIR", &build_dir);
    let _debian = (target != host_target()).then(|| crate::cross::debian_compiler(sh));
    run(cmd!(
        sh,
        "{zigbuild} zigbuild --release --target {versioned} {packages...}"
    ))?;
    stage_kit(sh, &build_dir.join(target).join("release"))
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
    let bundled = ["libascendcl.so", SANITIZER_LIB, "aclmem/_lib/aclmem"];
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
/// and `aclmem sanitize` reports a seeded leak at the script's line.
pub fn check_without_rust(sh: &Shell, wheel: &Path) -> Result<()> {
    let root = crate::workspace::target_dir().join("wheel-check");
    crate::workspace::remove_dir_if_present(&root)?;
    let venv = root.join("venv");
    let python = std::env::var("PYTHON").unwrap_or_else(|_| "python3".into());
    run(cmd!(sh, "{python} -m venv {venv}"))?;
    let bin = venv.join("bin");
    let pip = bin.join("pip");
    run(cmd!(sh, "{pip} install --quiet --no-deps {wheel}"))?;
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
    eprintln!(
        "the wheel works without Rust: pyACL + C extension under `aclmem run`, the leak at leak.py:{line}"
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
    eprintln!(
        "the aarch64 wheel works under qemu (Python {version}): pyACL + C extension, one emulator"
    );
    Ok(())
}
