//! `cargo xtask cross`: aarch64 artifacts from any Linux host.
//!
//! The Rust toolchain here is pinned and `rustup target add` cannot download,
//! so the cross standard library comes from Debian: `rustc-web` (Rust 1.96)
//! with `libstd-rust-web-dev:arm64`, and `rust-web-src` for
//! `-Zbuild-std=core` on bare-metal targets. Everything is built with that
//! compiler in its own target directory (`target/cross`) so its artifacts
//! never mix with the pinned toolchain's.

use std::collections::BTreeMap;
use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::Instant;

use object::read::archive::ArchiveFile;
use object::{Architecture, Object, ObjectSection};
use xshell::{Shell, cmd};

use crate::workspace::{
    LIB_PACKAGE, Result, SANITIZER_PACKAGE, TestCounts, cargo, run, step, workspace_root,
};

/// Debian packages CI needs beyond the Rust toolchain: compilers and
/// binutils for the C/C++ examples and header tests, Python's venv for the
/// Python package, the cross toolchain, and valgrind.
const PACKAGES: &[&str] = &[
    "gcc",
    "g++",
    "binutils",
    "python3",
    "python3-venv",
    "chromium",
    "gcc-aarch64-linux-gnu",
    "g++-aarch64-linux-gnu",
    "libc6-dev-arm64-cross",
    "qemu-user",
    "rustc-web",
    "libstd-rust-web-dev:arm64",
    "rust-web-src",
    // Gloo, which carries the emulated HCCL's collectives (the engine
    // crates/libascendcl builds links it), and the network namespaces the
    // two-host test makes.
    "libgloo-dev",
    "iproute2",
    // The emulated library checked under memcheck (tests/tests/valgrind.rs).
    "valgrind",
    // oneDNN 2.x, which the emulated bfloat16 products load at run time
    // where it is present (crates/ops/src/onednn.rs; its tests require it
    // on x86-64 under `cargo xtask ci`).
    "libdnnl2",
];

const DEBIAN_RUSTC: &str = "/usr/bin/rustc";
const DEBIAN_RUSTDOC: &str = "/usr/bin/rustdoc";
const AARCH64_SYSROOT: &str = "/usr/aarch64-linux-gnu";

/// What the xtask does for each kind of target.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Kind {
    /// Linux with std: build the workspace, run every test under qemu.
    LinuxQemu,
    /// No OS: build the no_std crates with `-Zbuild-std=core`.
    BareMetal,
}

/// The targets `cross` knows, with their properties.
const TARGETS: &[(&str, Kind)] = &[
    ("aarch64-unknown-linux-gnu", Kind::LinuxQemu),
    ("aarch64-unknown-none", Kind::BareMetal),
    ("thumbv7em-none-eabihf", Kind::BareMetal),
];

/// The no_std crates and their rlib names.
const NO_STD: &[(&str, &str)] = &[
    ("aclmem-core", "libaclmem_core.rlib"),
    ("aclmem-hal", "libaclmem_hal.rlib"),
    ("aclmem-rc-stub", "libaclmem_rc_stub.rlib"),
];

/// Options of `cargo xtask cross`.
pub struct Options {
    pub targets: Vec<String>,
    pub no_run: bool,
    pub release: bool,
}

pub fn cross_dir() -> PathBuf {
    workspace_root().join("target").join("cross")
}

fn installed(pkg: &str) -> bool {
    Command::new("dpkg-query")
        .args(["-W", "-f=${db:Status-Status}", pkg])
        .output()
        .is_ok_and(|o| o.status.success() && o.stdout == b"installed")
}

fn install_commands(missing: &[&str]) -> Vec<String> {
    vec![
        "dpkg --add-architecture arm64".into(),
        "apt-get update".into(),
        format!(
            "DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends {}",
            missing.join(" ")
        ),
    ]
}

/// Installs what is missing (Debian/Ubuntu, as root), or says exactly what
/// to run and fails. Never skips silently.
pub fn provision(sh: &Shell) -> Result<()> {
    let missing: Vec<&str> = PACKAGES.iter().copied().filter(|p| !installed(p)).collect();
    if missing.is_empty() {
        eprintln!(
            "tools present ({}); installing nothing",
            PACKAGES.join(", ")
        );
        return Ok(());
    }
    let debian = Path::new("/etc/debian_version").exists();
    let root = cmd!(sh, "id -u").read().is_ok_and(|uid| uid.trim() == "0");
    if !(debian && root) {
        let why = if debian {
            "not root"
        } else {
            "not a Debian/Ubuntu system"
        };
        return Err(format!(
            "missing {}; cannot install them here ({why}). Run as root on Debian/Ubuntu:\n  {}",
            missing.join(", "),
            install_commands(&missing).join("\n  ")
        ));
    }
    eprintln!("installing {}", missing.join(", "));
    let foreign = cmd!(sh, "dpkg --print-foreign-architectures")
        .read()
        .unwrap_or_default();
    if !foreign.lines().any(|a| a.trim() == "arm64") {
        run(cmd!(sh, "dpkg --add-architecture arm64"))?;
    }
    run(cmd!(sh, "apt-get update -qq"))?;
    let _env = sh.push_env("DEBIAN_FRONTEND", "noninteractive");
    run(cmd!(
        sh,
        "apt-get install -y -qq --no-install-recommends {missing...}"
    ))
}

/// The environment every cross cargo call gets.
fn cross_env(cmd: &mut Command) {
    cmd.env("RUSTC", DEBIAN_RUSTC)
        .env("RUSTDOC", DEBIAN_RUSTDOC)
        .env("CARGO_TARGET_DIR", cross_dir())
        .env(
            "CARGO_TARGET_AARCH64_UNKNOWN_LINUX_GNU_LINKER",
            "aarch64-linux-gnu-gcc",
        )
        .env(
            "CARGO_TARGET_AARCH64_UNKNOWN_LINUX_GNU_RUNNER",
            qemu_runner(),
        )
        // Keep the host's build scripts and proc-macros away from `CC`
        // settings meant for the target.
        .env_remove("RUSTFLAGS");
}

/// Debian's compiler (`rustc-web`), whose standard library serves
/// aarch64, for what `sh` runs while the guards live.
pub fn debian_compiler(sh: &Shell) -> (xshell::PushEnv<'_>, xshell::PushEnv<'_>) {
    (
        sh.push_env("RUSTC", DEBIAN_RUSTC),
        sh.push_env("RUSTDOC", DEBIAN_RUSTDOC),
    )
}

/// qemu with the arm64 sysroot. `-E LD_LIBRARY_PATH=...` keeps qemu from
/// mixing the host's and the target's glibc (without it, tests that spawn a
/// thread spin forever once libc6:arm64 is installed).
pub fn qemu_runner() -> String {
    format!("qemu-aarch64 -L {AARCH64_SYSROOT} -E LD_LIBRARY_PATH={AARCH64_SYSROOT}/lib")
}

fn profile_flag(release: bool) -> Option<&'static str> {
    release.then_some("--release")
}

fn profile_dir(release: bool) -> &'static str {
    if release { "release" } else { "debug" }
}

/// Runs a cargo command, echoing it.
fn cargo_cross(args: &[&str]) -> Result<()> {
    cargo_cross_with(args, &[])
}

/// Runs a cargo command with the cross environment plus `env`, echoing it.
fn cargo_cross_with(args: &[&str], env: &[(&str, &str)]) -> Result<()> {
    let mut c = Command::new(cargo());
    c.args(args).current_dir(workspace_root());
    cross_env(&mut c);
    c.envs(env.iter().copied());
    let shown: String = env.iter().map(|(k, v)| format!("{k}={v} ")).collect();
    eprintln!("$ {shown}RUSTC={DEBIAN_RUSTC} cargo {}", args.join(" "));
    let status = c.status().map_err(|e| e.to_string())?;
    if !status.success() {
        return Err(format!("cargo {} failed: {status}", args.join(" ")));
    }
    Ok(())
}

/// The test command shared with the host run of `cargo xtask ci`, so the
/// counts can be compared.
pub const TEST_ARGS: &[&str] = &[
    "test",
    "--workspace",
    "--exclude",
    "aclmem-ui-tests",
    "--exclude",
    "xtask",
];

/// Runs `cargo test`, streaming its output and summing the result lines.
pub fn cargo_test(args: &[&str], env: &[(&str, String)], cross: bool) -> Result<TestCounts> {
    let mut c = Command::new(cargo());
    c.args(args)
        .current_dir(workspace_root())
        .stdout(Stdio::piped());
    if cross {
        cross_env(&mut c);
    }
    for (k, v) in env {
        c.env(k, v);
    }
    eprintln!("$ cargo {}", args.join(" "));
    let mut child = c.spawn().map_err(|e| e.to_string())?;
    let stdout = child.stdout.take().ok_or("no stdout")?;
    let mut counts = TestCounts::default();
    for line in BufReader::new(stdout).lines() {
        let line = line.map_err(|e| e.to_string())?;
        println!("{line}");
        counts.add_line(&line);
    }
    let status = child.wait().map_err(|e| e.to_string())?;
    if !status.success() || counts.failed > 0 {
        return Err(format!("cargo test failed ({status}; {counts})"));
    }
    Ok(counts)
}

/// The test executables cargo built for `target`, from its JSON messages.
fn test_executables(args: &[&str]) -> Result<Vec<PathBuf>> {
    let mut c = Command::new(cargo());
    c.args(args)
        .args(["--no-run", "--message-format=json"])
        .current_dir(workspace_root());
    cross_env(&mut c);
    let out = c.output().map_err(|e| e.to_string())?;
    if !out.status.success() {
        return Err("cargo test --no-run failed".into());
    }
    let text = String::from_utf8_lossy(&out.stdout);
    let mut exes: Vec<PathBuf> = text
        .lines()
        .filter(|l| l.contains("\"reason\":\"compiler-artifact\"") && l.contains("\"test\":true"))
        .filter_map(|l| {
            let key = "\"executable\":\"";
            let start = l.find(key)? + key.len();
            let end = l[start..].find('"')? + start;
            Some(PathBuf::from(&l[start..end]))
        })
        .collect();
    exes.sort();
    exes.dedup();
    Ok(exes)
}

fn architecture(path: &Path) -> Result<Architecture> {
    let data = std::fs::read(path).map_err(|e| format!("{}: {e}", path.display()))?;
    let file = object::File::parse(&*data).map_err(|e| format!("{}: {e}", path.display()))?;
    Ok(file.architecture())
}

fn linux_target(target: &str, options: &Options) -> Result<Option<TestCounts>> {
    let profile = profile_flag(options.release);
    // The libraries the tests load: the emulated libascendcl.so, and the
    // sanitizer (its exports are checked in-process under qemu too).
    let mut build = vec![
        "build",
        "-p",
        LIB_PACKAGE,
        "-p",
        SANITIZER_PACKAGE,
        "--target",
        target,
    ];
    build.extend(profile);
    step(
        &format!("{target}: the emulated libascendcl.so and the sanitizer"),
        || cargo_cross(&build),
    )?;
    let lib = cross_dir()
        .join(target)
        .join(profile_dir(options.release))
        .join("libascendcl.so");

    let mut test: Vec<&str> = TEST_ARGS.to_vec();
    test.extend(["--target", target]);
    test.extend(profile);
    step(
        &format!("{target}: build the workspace and its tests"),
        || {
            let mut args = test.clone();
            args.push("--no-run");
            cargo_cross(&args)
        },
    )?;
    let exes = test_executables(&test)?;
    for exe in &exes {
        let arch = architecture(exe)?;
        if arch != Architecture::Aarch64 {
            return Err(format!("{} is {arch:?}, not AArch64", exe.display()));
        }
    }
    eprintln!("{} test executables, all ELF 64-bit AArch64:", exes.len());
    for exe in &exes {
        eprintln!("  {}", exe.display());
    }
    eprintln!(
        "emulated library: {} ({:?})",
        lib.display(),
        architecture(&lib)?
    );
    if options.no_run {
        return Ok(None);
    }
    let env = [
        ("ACLMEM_ASCENDCL", lib.display().to_string()),
        ("ACLMEM_TEST_RUNNER", qemu_runner()),
        // The tests that build a C program build it for the target.
        ("ACLMEM_TEST_CC", "aarch64-linux-gnu-gcc".to_owned()),
        ("ACLMEM_TEST_CXX", "aarch64-linux-gnu-g++".to_owned()),
    ];
    let mut counts = None;
    step(
        &format!("{target}: run every test under qemu-aarch64"),
        || {
            counts = Some(cargo_test(&test, &env, true)?);
            Ok(())
        },
    )?;
    step(
        &format!("{target}: C and C++ examples under qemu-aarch64"),
        || {
            let sh = Shell::new().map_err(|e| e.to_string())?;
            sh.change_dir(workspace_root());
            crate::examples::run_all(
                &sh,
                &lib,
                &crate::examples::Toolchain::aarch64(qemu_runner()),
            )
        },
    )?;
    Ok(counts)
}

/// `cargo xtask examples --aarch64`: the aarch64 library, and the C and C++
/// examples against it under qemu-user.
pub fn examples(sh: &Shell) -> Result<()> {
    provision(sh)?;
    let target = "aarch64-unknown-linux-gnu";
    cargo_cross(&["build", "-p", LIB_PACKAGE, "--target", target])?;
    let lib = cross_dir()
        .join(target)
        .join("debug")
        .join("libascendcl.so");
    crate::examples::run_all(
        sh,
        &lib,
        &crate::examples::Toolchain::aarch64(qemu_runner()),
    )
}

/// `.text` bytes of the object files in an rlib.
fn text_size(rlib: &Path) -> Result<u64> {
    let data = std::fs::read(rlib).map_err(|e| format!("{}: {e}", rlib.display()))?;
    let archive = ArchiveFile::parse(&*data).map_err(|e| format!("{}: {e}", rlib.display()))?;
    let mut total = 0;
    for member in archive.members() {
        let member = member.map_err(|e| e.to_string())?;
        let name = String::from_utf8_lossy(member.name()).into_owned();
        if !name.ends_with(".o") {
            continue;
        }
        let bytes = member.data(&*data).map_err(|e| e.to_string())?;
        let obj = object::File::parse(bytes).map_err(|e| format!("{name}: {e}"))?;
        total += obj
            .sections()
            .filter(|s| s.name().is_ok_and(|n| n.starts_with(".text")))
            .map(|s| s.size())
            .sum::<u64>();
    }
    Ok(total)
}

fn bare_metal_target(
    target: &str,
    options: &Options,
    sizes: &mut BTreeMap<(String, String, String), u64>,
) -> Result<()> {
    for defmt in [false, true] {
        let features = if defmt { "defmt-1" } else { "none" };
        let mut args = vec!["build", "--target", target, "-Zbuild-std=core"];
        for (krate, _) in NO_STD {
            args.extend(["-p", krate]);
        }
        let feature_list = NO_STD
            .iter()
            .map(|(k, _)| format!("{k}/defmt-1"))
            .collect::<Vec<_>>()
            .join(",");
        if defmt {
            args.extend(["--features", &feature_list]);
        }
        args.extend(profile_flag(options.release));
        step(
            &format!("{target}: no_std crates, features: {features}"),
            || {
                // `RUSTC_BOOTSTRAP=1` lets the stable Debian compiler (and
                // cargo) accept `-Zbuild-std`.
                cargo_cross_with(&args, &[("RUSTC_BOOTSTRAP", "1")])
            },
        )?;
        for (krate, rlib) in NO_STD {
            let path = cross_dir()
                .join(target)
                .join(profile_dir(options.release))
                .join(rlib);
            sizes.insert(
                (target.into(), (*krate).into(), features.into()),
                text_size(&path)?,
            );
        }
    }
    Ok(())
}

/// Runs `cargo xtask cross`. Returns the aarch64 test counts when tests ran.
pub fn cross(sh: &Shell, options: &Options) -> Result<Option<TestCounts>> {
    let start = Instant::now();
    let targets: Vec<(String, Kind)> = if options.targets.is_empty() {
        TARGETS.iter().map(|(t, k)| ((*t).to_owned(), *k)).collect()
    } else {
        options
            .targets
            .iter()
            .map(|t| {
                TARGETS
                    .iter()
                    .find(|(name, _)| name == t)
                    .map(|(_, k)| (t.clone(), *k))
                    .ok_or_else(|| {
                        let known: Vec<_> = TARGETS.iter().map(|(t, _)| *t).collect();
                        format!("unknown target `{t}`; known: {}", known.join(", "))
                    })
            })
            .collect::<Result<_>>()?
    };
    step("tools (apt, when missing)", || provision(sh))?;
    let mut counts = None;
    let mut sizes = BTreeMap::new();
    for (target, kind) in &targets {
        match kind {
            Kind::LinuxQemu => counts = linux_target(target, options)?.or(counts),
            Kind::BareMetal => bare_metal_target(target, options, &mut sizes)?,
        }
    }
    eprintln!("\nartifacts: {}", cross_dir().display());
    for (target, _) in &targets {
        eprintln!(
            "  {}",
            cross_dir()
                .join(target)
                .join(profile_dir(options.release))
                .display()
        );
    }
    if !sizes.is_empty() {
        eprintln!(
            "\n.text bytes of the no_std rlibs ({} profile):",
            profile_dir(options.release)
        );
        eprintln!(
            "  {:<26} {:<16} {:>10} {:>10}",
            "target", "crate", "no feature", "defmt-1"
        );
        let mut rows: Vec<(&String, &String)> = sizes.keys().map(|(t, k, _)| (t, k)).collect();
        rows.dedup();
        for (t, k) in rows {
            let get = |f: &str| {
                sizes
                    .get(&(t.clone(), k.clone(), f.into()))
                    .copied()
                    .unwrap_or(0)
            };
            eprintln!(
                "  {:<26} {:<16} {:>10} {:>10}",
                t,
                k,
                get("none"),
                get("defmt-1")
            );
        }
    }
    if let Some(c) = &counts {
        eprintln!("\naarch64 tests under qemu: {c}");
    }
    eprintln!("cross: done in {:.0}s", start.elapsed().as_secs_f64());
    Ok(counts)
}
