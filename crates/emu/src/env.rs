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

/// `ACLMEM_EMU_OPS`: what the emulated device does with the work it is
/// given (operators, and the data of copies and sets).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash)]
pub enum OpsMode {
    /// Operators with a kernel are computed, copies and sets move their
    /// data; an operator without a kernel answers 100024 (the default).
    #[default]
    Compute,
    /// Every operator, with a kernel or not, is checked and accepted
    /// without computing; copies and sets move no data (device memory
    /// reads as zeros, writes leave it untouched, so device pages never
    /// written stay unbacked). Everything else (allocations, VMM,
    /// streams, events, IPC, HCCL's agreements) runs for real: the memory
    /// of a step that does not fit, without its values.
    Plan,
}

impl OpsMode {
    /// The mode's name, as `ACLMEM_EMU_OPS` takes it.
    pub const fn name(self) -> &'static str {
        match self {
            OpsMode::Compute => "compute",
            OpsMode::Plan => "plan",
        }
    }

    /// Whether nothing is computed and no data moves.
    pub const fn is_plan(self) -> bool {
        matches!(self, OpsMode::Plan)
    }

    /// Reads a mode (`compute` or `plan`, any case; empty is `compute`).
    pub fn parse(v: &str) -> Result<OpsMode, String> {
        match v.trim().to_ascii_lowercase().as_str() {
            "" | "compute" => Ok(OpsMode::Compute),
            "plan" => Ok(OpsMode::Plan),
            other => Err(format!(
                "ACLMEM_EMU_OPS={other:?}: expected compute or plan"
            )),
        }
    }

    /// The line every report of a plan-mode run carries, so that no one
    /// takes its values for results (`None` in compute mode).
    pub const fn warning(self) -> Option<&'static str> {
        match self {
            OpsMode::Compute => None,
            OpsMode::Plan => Some(
                "plan mode (ACLMEM_EMU_OPS=plan): operators were checked, not computed, and copies moved no data; memory is the real step's, values are not results",
            ),
        }
    }
}

/// Reads `ACLMEM_EMU_OPS` (`compute` or `plan`; unset or empty is
/// `compute`). Another value is an error naming what is accepted;
/// `aclInit` answers it with 100000.
pub fn ops() -> Result<OpsMode, String> {
    match std::env::var_os("ACLMEM_EMU_OPS") {
        None => Ok(OpsMode::Compute),
        Some(v) => OpsMode::parse(&v.to_string_lossy()),
    }
}

/// The driver package's version when `ACLMEM_EMU_DRIVER` is not set: the
/// Ascend HDK paired with the default CANN release, 9.0.0 (HDK 26.0.RC1,
/// `docs/facts.md` "Installed CANN versions"). It passes every driver gate
/// of torch_npu (IPC tensor reductions from 25.3.rc1,
/// `pin_memory_expandable_segments` from 25.5.0, `pinned_mem_register` from
/// 26.0.rc1); older drivers stay selectable.
pub const DEFAULT_DRIVER: &str = "26.0.rc1";

/// `ACLMEM_EMU_DRIVER`: the version of the emulated machine's driver
/// package, as its `version.info` would give it (`26.0.rc1`,
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
            "ACLMEM_EMU_DRIVER={v:?}: expected a version such as 26.0.rc1 (two or more dot-separated parts), or none"
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
        warn_once(
            &WARNED_FDS,
            "out of file descriptors (RLIMIT_NOFILE); sharing memory between processes needs a socket per import",
        );
        Situation::FdLimit.code()
    } else {
        AclError::RT_IPC_ERROR
    }
}

/// What `ASCEND_RT_VISIBLE_DEVICES` leaves a process.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum VisibleDevices {
    /// Unset: every device, under its own id.
    All,
    /// User id `i` is physical device `ids[i]`.
    Some(Vec<u32>),
    /// Set, but no id survives (empty, not a number first, out of order,
    /// repeated, or out of range first): the runtime then has no device
    /// (`aclrtGetDeviceCount` answers 207004, `aclrtSetDevice` 107001).
    Invalid,
}

impl VisibleDevices {
    /// How many devices a process sees on a machine of `devices`:
    /// `aclrtGetDeviceCount`'s answer (207004 when none is left).
    pub fn count(&self, devices: u32) -> Result<u32, aclmem_core::AclError> {
        match self {
            VisibleDevices::All => Ok(devices),
            VisibleDevices::Some(ids) => Ok(ids.len() as u32),
            VisibleDevices::Invalid => Err(aclmem_core::AclError::RT_NO_DEVICE),
        }
    }
}

/// The runtime's reading of `ASCEND_RT_VISIBLE_DEVICES` on a machine of
/// `devices` devices (`docs/facts.md`, "Visible devices"): at most the
/// first 128 bytes; no id unless the first byte is a digit; digit runs
/// separated by single commas, reading stops at any other byte or at a
/// second comma in a row; an id past the last device stops reading and
/// keeps the ids before it; an id not above the one before (out of order,
/// or repeated) makes the whole setting invalid; reading stops once every
/// device is named.
pub fn parse_visible_devices(spec: Option<&str>, devices: u32) -> VisibleDevices {
    let Some(spec) = spec else {
        return VisibleDevices::All;
    };
    let spec = &spec.as_bytes()[..spec.len().min(128)];
    let mut ids: Vec<u32> = Vec::new();
    let mut rest = spec;
    while rest.first().is_some_and(u8::is_ascii_digit) && ids.len() < devices as usize {
        let digits = rest.iter().take_while(|b| b.is_ascii_digit()).count();
        let id = std::str::from_utf8(&rest[..digits])
            .ok()
            .and_then(|d| d.parse::<u32>().ok());
        match id {
            Some(id) if id < devices => {
                if ids.last().is_some_and(|&last| id <= last) {
                    return VisibleDevices::Invalid;
                }
                ids.push(id);
            }
            // Past the last device (or too large to read): stop.
            _ => break,
        }
        rest = &rest[digits..];
        match rest.first() {
            Some(b',') => rest = &rest[1..],
            _ => break,
        }
    }
    if ids.is_empty() {
        VisibleDevices::Invalid
    } else {
        VisibleDevices::Some(ids)
    }
}

/// `ASCEND_RT_VISIBLE_DEVICES` of this process, read as the runtime reads
/// it ([`parse_visible_devices`]).
pub fn visible_devices(devices: u32) -> VisibleDevices {
    let v = std::env::var_os("ASCEND_RT_VISIBLE_DEVICES");
    parse_visible_devices(v.as_ref().map(|v| v.to_string_lossy()).as_deref(), devices)
}

#[cfg(test)]
mod tests {
    use super::{OpsMode, VisibleDevices, parse_visible_devices};

    #[test]
    fn the_ops_mode_is_compute_or_plan() {
        assert_eq!(OpsMode::parse(""), Ok(OpsMode::Compute));
        assert_eq!(OpsMode::parse("compute"), Ok(OpsMode::Compute));
        assert_eq!(OpsMode::parse(" Plan "), Ok(OpsMode::Plan));
        let e = OpsMode::parse("dry").unwrap_err();
        assert!(e.contains("compute or plan"), "{e}");
        assert!(
            OpsMode::Plan
                .warning()
                .is_some_and(|w| w.contains("plan mode"))
        );
        assert_eq!(OpsMode::Compute.warning(), None);
    }

    fn ids(v: &[u32]) -> VisibleDevices {
        VisibleDevices::Some(v.to_vec())
    }

    #[test]
    fn visible_devices_are_read_as_the_runtime_reads_them() {
        let on8 = |s| parse_visible_devices(Some(s), 8);
        assert_eq!(parse_visible_devices(None, 8), VisibleDevices::All);
        assert_eq!(on8("0"), ids(&[0]));
        assert_eq!(on8("1,3,5"), ids(&[1, 3, 5]));
        assert_eq!(on8("1,3,"), ids(&[1, 3]), "a trailing comma");
        assert_eq!(on8("1, 2,3"), ids(&[1]), "a space stops reading");
        assert_eq!(on8("0,,1"), ids(&[0]), "two commas stop reading");
        assert_eq!(on8("1,3,8"), ids(&[1, 3]), "past the last device stops");
        assert_eq!(on8("2,x"), ids(&[2]));
        for invalid in ["", " 1", "abc", "8", "1,0", "0,0", "99999999999"] {
            assert_eq!(on8(invalid), VisibleDevices::Invalid, "{invalid:?}");
        }
        assert_eq!(
            parse_visible_devices(Some("0,1,2"), 2),
            ids(&[0, 1]),
            "reading stops once every device is named"
        );
        let long = format!("{}7", "0".repeat(128));
        assert_eq!(on8(&long), ids(&[0]), "only 128 bytes are read");
    }
}
