//! The backend conformance suite: one set of behavioural scenarios, run
//! against every backend.
//!
//! A scenario drives a backend through the raw `aclmem-hal` traits and
//! records a [`Transcript`]: the outcome (success, or the ACL code) of every
//! step, and the facts it observed (data read back, granularities, free
//! memory). Addresses and handle values are never recorded, so two faithful
//! backends produce identical transcripts; the tests compare them. A
//! scenario's first call is a platform query, so a backend that supports
//! nothing (the RC stub) fails every scenario at once, with its code.

#![warn(missing_docs)]

use std::num::{NonZeroU64, NonZeroUsize};
use std::path::{Path, PathBuf};

use aclmem_core::{
    AclError, CannVersion, GIB, GranularityOption, Location, MIB, MemAttr, RawMemLocation,
    RawPhysicalMemProp, RunMode,
};
use aclmem_hal::{
    DeviceInfo, EXPORT_FLAG_DEFAULT, ManagedAdvice, ManagedLocation, ManagedMemoryApi, MemPools,
    PhysicalAllocator, PoolAttr, RawHandle, ShareHandleType, ShareableHandle, ShareableHandleV2,
    ShareableMemory, Streams, VirtAddr, VirtualMemory,
};

/// Where `cargo build` puts the emulated `libascendcl.so` for the profile
/// of the running test or bench binary (`target/<profile>/deps/<binary>` →
/// `target/<profile>/libascendcl.so`), built or not.
pub fn emulated_library_path() -> PathBuf {
    let exe = std::env::current_exe().expect("the running binary's path");
    exe.parent()
        .and_then(|deps| deps.parent())
        .expect("test binaries live in target/<profile>/deps")
        .join("libascendcl.so")
}

/// Where `cargo build` puts `libaclmem_sanitizer.so` for the profile of
/// the running test or bench binary (beside [`emulated_library_path`]),
/// built or not.
pub fn sanitizer_path() -> PathBuf {
    emulated_library_path().with_file_name("libaclmem_sanitizer.so")
}

/// [`sanitizer_path`], which must have been built: a test that needs it
/// fails with the command that builds it.
pub fn sanitizer_in_target_dir() -> PathBuf {
    built(sanitizer_path(), "the sanitizer")
}

/// [`emulated_library_path`], which must have been built: a test that needs
/// it fails with the command that builds it.
pub fn emulated_library_in_target_dir() -> PathBuf {
    built(emulated_library_path(), "the emulated library")
}

/// `path`, a library of the workspace (`what`), which must have been built.
fn built(path: PathBuf, what: &str) -> PathBuf {
    assert!(
        path.exists(),
        "{} is missing: run `cargo build` first (the workspace builds {what} there; `cargo xtask ci` does)",
        path.display()
    );
    path
}

/// Whether the tests run through `$ACLMEM_TEST_RUNNER` (`cargo xtask
/// cross` sets it to its qemu-user command).
pub fn under_test_runner() -> bool {
    std::env::var("ACLMEM_TEST_RUNNER").is_ok_and(|r| !r.trim().is_empty())
}

/// The `libascendcl.so` a C test program links and runs on:
/// `$ACLMEM_ASCENDCL` when set, else [`emulated_library_in_target_dir`].
pub fn library_for_c() -> PathBuf {
    std::env::var_os("ACLMEM_ASCENDCL")
        .map(PathBuf::from)
        .unwrap_or_else(emulated_library_in_target_dir)
}

/// Compiles the C program `src` (`-g -O0 -std=c11 -Wall`, plus `flags`)
/// against the shipped headers and [`library_for_c`], with that library's
/// directory as its run path, into `target/<profile>/c-programs/<name>`.
pub fn compile_c(src: &Path, name: &str, flags: &[&str]) -> PathBuf {
    compile_with(("CC", "cc", "-std=c11"), src, name, flags)
}

/// [`compile_c`] for a C++ program (`$CXX`, default `c++`, `-std=c++17`).
pub fn compile_cxx(src: &Path, name: &str, flags: &[&str]) -> PathBuf {
    compile_with(("CXX", "c++", "-std=c++17"), src, name, flags)
}

fn compile_with(
    (variable, default, standard): (&str, &str, &str),
    src: &Path,
    name: &str,
    flags: &[&str],
) -> PathBuf {
    let lib = library_for_c();
    let dir = lib.parent().expect("the library's directory");
    let include = Path::new(env!("CARGO_MANIFEST_DIR")).join("../crates/emu-capi/include");
    // Built under a temporary name and renamed over `name`: a test running
    // the program meanwhile runs the previous build of the same source.
    let programs = emulated_library_path().with_file_name("c-programs");
    std::fs::create_dir_all(&programs).expect("the target directory is writable");
    static BUILDS: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);
    let build = BUILDS.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    let out = programs.join(name);
    let tmp = programs.join(format!(".{name}.{}.{build}", std::process::id()));
    let status =
        // `$ACLMEM_TEST_CC` / `$ACLMEM_TEST_CXX` first: `cargo xtask cross`
        // names its cross compilers there for the run under qemu (not in
        // `CC`, which build scripts would read too).
        std::process::Command::new(
            std::env::var(format!("ACLMEM_TEST_{variable}"))
                .or_else(|_| std::env::var(variable))
                .unwrap_or_else(|_| default.into()),
        )
            .args(["-g", "-O0", standard, "-Wall"])
            .args(flags)
            .arg(format!("-I{}", include.display()))
            .arg(src)
            .arg("-o")
            .arg(&tmp)
            .arg(format!("-L{}", dir.display()))
            .arg("-lascendcl")
            .arg(format!("-Wl,-rpath,{}", dir.display()))
            .status()
            .expect("the compiler runs");
    assert!(status.success(), "{} compiles", src.display());
    std::fs::rename(&tmp, &out).expect("the program is moved into place");
    out
}

/// A command running `exe`, through `$ACLMEM_TEST_RUNNER` when it is set:
/// `cargo xtask cross` sets it to its qemu command when the tests run on
/// another architecture, where no binfmt_misc starts foreign binaries.
pub fn through_test_runner(exe: &str) -> std::process::Command {
    match std::env::var("ACLMEM_TEST_RUNNER") {
        Ok(runner) if !runner.trim().is_empty() => {
            let mut words = runner.split_whitespace();
            let mut cmd = std::process::Command::new(words.next().unwrap_or_default());
            cmd.args(words).arg(exe);
            cmd
        }
        _ => std::process::Command::new(exe),
    }
}

/// Compiles `tests/programs/<file>` (C or C++, by its extension) and runs
/// it under the test runner on an emulated machine of its own, the
/// emulator quiet; panics with its output unless it exits 0 and prints
/// `ok` last, which such a program does when every check in it held.
pub fn run_checked_program(file: &str) {
    let src = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("programs")
        .join(file);
    let name = file.rsplit_once('.').map_or(file, |(stem, _)| stem);
    let exe = if file.ends_with(".cpp") {
        compile_cxx(&src, name, &[])
    } else {
        compile_c(&src, name, &[])
    };
    let out = through_test_runner(exe.to_str().expect("a UTF-8 path"))
        .env(
            "ACLMEM_EMU_MACHINE",
            format!("{name}-{}", std::process::id()),
        )
        .env("ACLMEM_EMU_QUIET", "1")
        .output()
        .expect("the program runs");
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success() && stdout.lines().last() == Some("ok"),
        "{name}: {:?}\n{stdout}\n{}",
        out.status,
        String::from_utf8_lossy(&out.stderr)
    );
}

/// Everything a conformant backend implements.
pub trait Backend:
    DeviceInfo<Error = AclError>
    + PhysicalAllocator<Error = AclError>
    + VirtualMemory<Error = AclError>
    + ShareableMemory<Error = AclError>
    + Streams<Error = AclError>
    + MemPools<Error = AclError>
    + ManagedMemoryApi<Error = AclError>
{
}
impl<T> Backend for T where
    T: DeviceInfo<Error = AclError>
        + PhysicalAllocator<Error = AclError>
        + VirtualMemory<Error = AclError>
        + ShareableMemory<Error = AclError>
        + Streams<Error = AclError>
        + MemPools<Error = AclError>
        + ManagedMemoryApi<Error = AclError>
{
}

/// Host access to mapped memory, which the emulating backends provide (the
/// real device's memory is not host-addressable).
pub trait HostAccess {
    /// Writes bytes at a mapped address.
    fn poke(&self, addr: usize, data: &[u8]) -> Result<(), AclError>;
    /// Reads bytes at a mapped address.
    fn peek(&self, addr: usize, buf: &mut [u8]) -> Result<(), AclError>;
    /// `aclrtGetMemInfo(attr)` for device 0: (free, total).
    fn mem_info(&self, attr: MemAttr) -> Result<(usize, usize), AclError>;
}

/// The machine a scenario needs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Machine {
    /// SoC name.
    pub soc: &'static str,
    /// Device count.
    pub devices: u32,
    /// Device memory per device.
    pub hbm: usize,
    /// Run mode.
    pub run_mode: RunMode,
    /// The CANN release the machine runs.
    pub cann: CannVersion,
}

impl Machine {
    /// An Atlas A2 box: 8 devices of 64 GiB, EP form.
    pub const A2: Machine = Machine {
        soc: "Ascend910B3",
        devices: 8,
        hbm: 64 * GIB,
        run_mode: RunMode::Ep,
        cann: CannVersion::DEFAULT,
    };
}

/// What a scenario observed, step by step.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Transcript(pub Vec<String>);

impl Transcript {
    /// Records the outcome of a step and passes the result on.
    pub fn step<T>(&mut self, label: &str, r: Result<T, AclError>) -> Result<T, AclError> {
        match &r {
            Ok(_) => self.0.push(format!("{label}: ok")),
            Err(e) => self.0.push(format!("{label}: {}", e.code())),
        }
        r
    }

    /// Records a step that is expected to fail, and what it returned.
    pub fn expect_err<T>(&mut self, label: &str, r: Result<T, AclError>) {
        let _ = self.step(label, r);
    }

    /// Records an observed fact.
    pub fn fact(&mut self, label: &str, value: impl std::fmt::Debug) {
        self.0.push(format!("{label} = {value:?}"));
    }
}

/// A scenario's steps, over a backend and its host access.
pub type Run<B> = fn(&B, &dyn HostAccess, &mut Transcript) -> Result<(), AclError>;

/// A scenario: a name, the machine it needs, and the steps.
pub struct Scenario<B: ?Sized> {
    /// Name, for messages.
    pub name: &'static str,
    /// The machine to build.
    pub machine: Machine,
    /// The steps; `Err` means the scenario could not proceed.
    pub run: Run<B>,
}

mod scenarios;

pub use scenarios::scenarios;
