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
//!
//! The building is in [`build`], the check of this machine's wheel (no
//! Rust, the system's Gloo hidden) in [`check`](mod@check), the aarch64
//! wheel's check under qemu in [`qemu`].

mod build;
mod check;
mod qemu;

use std::path::{Path, PathBuf};

use xshell::{Shell, cmd};

use crate::workspace::{LIB_PACKAGE, Result, SANITIZER_LIB, SANITIZER_PACKAGE, run};

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

/// Where the wheels are written.
pub fn out_dir() -> PathBuf {
    crate::workspace::target_dir().join("wheels")
}

/// The virtual environment of the build tools.
fn tools() -> PathBuf {
    crate::workspace::target_dir().join("wheel-tools")
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

/// Builds the wheels of `targets` (all of [`TARGETS`] when empty).
pub fn wheels(sh: &Shell, targets: &[String]) -> Result<Vec<PathBuf>> {
    let bin = build::ensure_tools(sh)?;
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
        built.push(build::build(sh, &bin, t)?);
    }
    Ok(built)
}

/// Checks each of the `built` wheels: this machine's with
/// [`check::check_without_rust`], the aarch64 one (on x86_64) with
/// [`qemu::check_under_qemu`].
pub fn check(sh: &Shell, built: &[PathBuf]) -> Result<()> {
    for wheel in built {
        let name = wheel.to_string_lossy();
        if name.ends_with(&format!("_{}.whl", arch(host_target()))) {
            check::check_without_rust(sh, wheel)?;
        } else if name.ends_with("_aarch64.whl") {
            qemu::check_under_qemu(sh, wheel)?;
        } else {
            return Err(format!("{name}: no check for this architecture here"));
        }
    }
    Ok(())
}
