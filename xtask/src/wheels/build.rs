//! Building the wheels: the build tools' venv, the kit compiled with zig
//! against glibc [`GLIBC`] (Gloo's static library inside the engine) and
//! staged, `maturin build`, and `auditwheel show` agreeing with the
//! `manylinux` tag.

use std::path::{Path, PathBuf};

use xshell::{Shell, cmd};

use super::{ENGINE, GLIBC, KIT, arch, host_target, out_dir, package_dir, stage_kit, tools};
use crate::workspace::{PYTHON_MANIFEST, Result, SANITIZER_LIB, run};

/// The only libraries the wheels' engine may need: glibc's.
const ENGINE_NEEDS: &[&str] = &[
    "libc.so.6",
    "libm.so.6",
    "libpthread.so.0",
    "libdl.so.2",
    "ld-linux-x86-64.so.2",
    "ld-linux-aarch64.so.1",
];

pub(super) fn ensure_tools(sh: &Shell) -> Result<PathBuf> {
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

/// Builds the wheel for `target` into [`out_dir`]; its path.
pub(super) fn build(sh: &Shell, bin: &Path, target: &str) -> Result<PathBuf> {
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
