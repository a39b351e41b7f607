//! The C and C++ examples of `crates/emu-capi/examples`, built against the
//! project's headers and the emulated `libascendcl.so` with `-Werror`, and
//! run: natively, and for aarch64 under qemu-user.

use std::path::{Path, PathBuf};

use xshell::{Shell, cmd};

use crate::workspace::{Result, run, target_dir};

/// A compiler pair and how to run what they build.
pub struct Toolchain {
    /// Name for the output directory.
    pub name: &'static str,
    /// C compiler.
    pub cc: String,
    /// C++ compiler.
    pub cxx: String,
    /// Command that runs the built programs (`None`: run them directly).
    pub runner: Option<String>,
}

impl Toolchain {
    /// The host's compilers (`$CC`, `$CXX`, default `cc`, `c++`).
    pub fn native() -> Toolchain {
        let var = |k: &str, d: &str| std::env::var(k).unwrap_or_else(|_| d.into());
        Toolchain {
            name: "native",
            cc: var("CC", "cc"),
            cxx: var("CXX", "c++"),
            runner: None,
        }
    }

    /// Debian's aarch64 cross compilers, run under `runner`.
    pub fn aarch64(runner: String) -> Toolchain {
        Toolchain {
            name: "aarch64",
            cc: "aarch64-linux-gnu-gcc".into(),
            cxx: "aarch64-linux-gnu-g++".into(),
            runner: Some(runner),
        }
    }
}

const DIR: &str = "crates/emu-capi/examples";
const INCLUDE: &str = "crates/emu-capi/include";

/// One example program: its source, and whether it runs with the preload
/// wrapper.
struct Example {
    name: &'static str,
    source: &'static str,
    cpp: bool,
    preload: bool,
}

const EXAMPLES: &[Example] = &[
    Example {
        name: "vmm_demo",
        source: "c/vmm_demo.c",
        cpp: false,
        preload: false,
    },
    Example {
        name: "sleep_wake",
        source: "c/sleep_wake.c",
        cpp: false,
        preload: false,
    },
    Example {
        name: "sleep_wake_cpp",
        source: "cpp/sleep_wake.cpp",
        cpp: true,
        preload: false,
    },
    Example {
        name: "ipc_key",
        source: "c/ipc_key.c",
        cpp: false,
        preload: false,
    },
    Example {
        name: "vmm_share",
        source: "c/vmm_share.c",
        cpp: false,
        preload: false,
    },
    Example {
        name: "preload_target",
        source: "c/preload_target.c",
        cpp: false,
        preload: true,
    },
];

/// Builds every example with `tc` against `lib` and runs it.
pub fn run_all(sh: &Shell, lib: &Path, tc: &Toolchain) -> Result<()> {
    let out = target_dir().join("c-examples").join(tc.name);
    sh.create_dir(&out).map_err(|e| e.to_string())?;
    let lib_dir = lib.parent().ok_or("library path has no directory")?;
    let libdir = format!("-L{}", lib_dir.display());
    let rpath = format!("-Wl,-rpath,{}", lib_dir.display());
    let warnings = ["-Wall", "-Wextra", "-Werror"];

    let preload = out.join("libpreload_counter.so");
    let cc = &tc.cc;
    let src = format!("{DIR}/c/preload_counter.c");
    run(cmd!(
        sh,
        "{cc} -std=c11 {warnings...} -fPIC -shared -I {INCLUDE} {src} -o {preload} -ldl"
    ))?;

    for ex in EXAMPLES {
        let exe: PathBuf = out.join(ex.name);
        let src = format!("{DIR}/{}", ex.source);
        let (compiler, std) = if ex.cpp {
            (&tc.cxx, "-std=c++17")
        } else {
            (&tc.cc, "-std=c11")
        };
        run(cmd!(
            sh,
            "{compiler} {std} {warnings...} -I {INCLUDE} {src} -o {exe} {libdir} -lascendcl {rpath} -ldl"
        ))?;
        let machine = format!("xtask-{}-{}-{}", tc.name, ex.name, std::process::id());
        let _m = sh.push_env("ACLMEM_EMU_MACHINE", &machine);
        let _q = sh.push_env("ACLMEM_EMU_QUIET", "1");
        let mut words: Vec<String> = tc
            .runner
            .as_deref()
            .map(|r| r.split_whitespace().map(str::to_owned).collect())
            .unwrap_or_default();
        let _r = tc
            .runner
            .as_deref()
            .map(|r| sh.push_env("ACLMEM_EXAMPLE_RUNNER", r));
        let _p;
        if ex.preload {
            match &tc.runner {
                Some(_) => words.extend(["-E".into(), format!("LD_PRELOAD={}", preload.display())]),
                None => _p = sh.push_env("LD_PRELOAD", &preload),
            }
        }
        words.push(exe.display().to_string());
        let program = words.remove(0);
        eprintln!("$ {program} {}", words.join(" "));
        let output = cmd!(sh, "{program} {words...}")
            .quiet()
            .ignore_status()
            .output()
            .map_err(|e| e.to_string())?;
        let stdout = String::from_utf8_lossy(&output.stdout);
        let last = stdout.lines().last().unwrap_or_default();
        eprintln!("{}: {last}", ex.name);
        if !output.status.success() {
            return Err(format!(
                "{} ({}) failed:\n{stdout}{}",
                ex.name,
                tc.name,
                String::from_utf8_lossy(&output.stderr)
            ));
        }
    }
    Ok(())
}
