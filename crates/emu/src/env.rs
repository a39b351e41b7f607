//! The process-level `ACLMEM_EMU_*` settings (which machine, where its
//! files are, whether to speak on stderr) and the emulator's messages. The
//! machine's configuration (`ACLMEM_EMU_SOC`, `_DEVICES`, `_HBM`, `_HOST`,
//! `_RUN_MODE`, `_CANN`) is read by [`EmuConfig::from_env`](crate::EmuConfig::from_env).

use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, Ordering};

use aclmem_core::AclError;

use crate::errors::Situation;

/// The machine name a process joins when `ACLMEM_EMU_MACHINE` is not set.
pub const DEFAULT_MACHINE: &str = "default";

/// `ACLMEM_EMU_MACHINE`: the machine the process joins.
pub fn machine_name() -> String {
    std::env::var("ACLMEM_EMU_MACHINE")
        .ok()
        .filter(|v| !v.is_empty())
        .unwrap_or_else(|| DEFAULT_MACHINE.to_owned())
}

/// `ACLMEM_EMU_DIR`: where machine files are (`/dev/shm` by default).
pub fn machine_dir() -> PathBuf {
    std::env::var_os("ACLMEM_EMU_DIR")
        .filter(|v| !v.is_empty())
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from("/dev/shm"))
}

/// `ACLMEM_EMU_QUIET`: set, non-empty and not `0`, no message goes to
/// stderr (the engine's and the C library's alike).
pub fn quiet() -> bool {
    std::env::var_os("ACLMEM_EMU_QUIET").is_some_and(|v| !v.is_empty() && v != "0")
}

/// `ACLMEM_EMU_UNSUPPORTED`: what a call the emulator does not support
/// does besides answering its "not supported" code (every such call is
/// also counted and reported at exit).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum Unsupported {
    /// Answer the code, silently (the report at exit still lists it).
    Error,
    /// Answer the code and say so on stderr at the first call of each
    /// function, with its call site (the default).
    #[default]
    Warn,
    /// Say so on stderr and abort the process at the first such call: for
    /// a test that must not reach one.
    Abort,
}

/// Reads `ACLMEM_EMU_UNSUPPORTED` (`error`, `warn` or `abort`; unset or
/// empty is `warn`). Another value is an error naming what is accepted;
/// `aclInit` answers it with 100000.
pub fn unsupported() -> Result<Unsupported, String> {
    let Some(v) = std::env::var_os("ACLMEM_EMU_UNSUPPORTED").filter(|v| !v.is_empty()) else {
        return Ok(Unsupported::default());
    };
    match v.to_string_lossy().trim().to_ascii_lowercase().as_str() {
        "error" => Ok(Unsupported::Error),
        "warn" => Ok(Unsupported::Warn),
        "abort" => Ok(Unsupported::Abort),
        other => Err(format!(
            "ACLMEM_EMU_UNSUPPORTED={other:?}: expected error, warn or abort"
        )),
    }
}

/// The driver package's version when `ACLMEM_EMU_DRIVER` is not set: the
/// first release torch_npu 2.14 accepts for its driver-gated paths (IPC
/// tensor reductions), `docs/torch-npu.md`.
pub const DEFAULT_DRIVER: &str = "25.3.rc1";

/// `ACLMEM_EMU_DRIVER`: the version of the emulated machine's driver
/// package, as its `version.info` would give it (`25.3.rc1`,
/// `25.0.0`): dot-separated, at least two parts, none empty, at most 63
/// bytes, letters, digits and `.`/`-` only. Unset or empty is
/// [`DEFAULT_DRIVER`]; `none` means no driver package is installed (the
/// version queries answer 100003, as the runtime does without one).
/// Another value is an error naming the form; `aclInit` answers it with
/// 100000.
pub fn driver() -> Result<Option<String>, String> {
    let Some(v) = std::env::var_os("ACLMEM_EMU_DRIVER").filter(|v| !v.is_empty()) else {
        return Ok(Some(DEFAULT_DRIVER.to_owned()));
    };
    parse_driver(&v.to_string_lossy())
}

/// A driver version as `ACLMEM_EMU_DRIVER` takes it (see [`driver`]).
pub fn parse_driver(v: &str) -> Result<Option<String>, String> {
    let v = v.trim().to_owned();
    if v == "none" {
        return Ok(None);
    }
    let well_formed = v.len() < 64
        && v.split('.').count() >= 2
        && v.split('.').all(|p| !p.is_empty())
        && v.bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'.' || b == b'-');
    if well_formed {
        Ok(Some(v))
    } else {
        Err(format!(
            "ACLMEM_EMU_DRIVER={v:?}: expected a version such as 25.3.rc1 (two or more dot-separated parts), or none"
        ))
    }
}

/// Once per process (per `flag`): a message on stderr naming a kernel
/// limit.
pub(crate) fn warn_once(flag: &AtomicBool, message: &str) {
    if !flag.swap(true, Ordering::AcqRel) && !quiet() {
        eprintln!("aclmem-emu: {message}");
    }
}

static WARNED_FDS: AtomicBool = AtomicBool::new(false);

/// The code for a failed `memfd_create`: 207005 with the limit named once
/// when the process is out of descriptors.
pub(crate) fn fd_error(e: rustix::io::Errno) -> AclError {
    if crate::os::sys::out_of_descriptors(e) {
        warn_once(
            &WARNED_FDS,
            "out of file descriptors (RLIMIT_NOFILE); the emulator needs one per device and pool in use",
        );
        Situation::FdLimit.code()
    } else {
        AclError::RT_MEMORY_ALLOCATION
    }
}

/// The code for a failed socket: 207005 when out of descriptors, else an
/// IPC error.
pub(crate) fn socket_error(e: rustix::io::Errno) -> AclError {
    if crate::os::sys::out_of_descriptors(e) {
        Situation::FdLimit.code()
    } else {
        AclError::RT_IPC_ERROR
    }
}
