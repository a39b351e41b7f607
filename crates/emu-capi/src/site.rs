//! Where a call into the library comes from: the first frame of the stack
//! outside this shared object, as the loader and the debug information
//! name it. Used by the record of calls the emulator does not carry out
//! and by faults filtered by call site.

use std::ffi::c_void;

use aclmem_fork::KeptMutex;

/// The start of the shared object that holds `addr`, and its file path.
fn object_of(addr: *const c_void) -> Option<(usize, String)> {
    // SAFETY: `Dl_info` is plain data; dladdr only reads the loader's
    // tables and fills `info` for the duration of the call.
    let mut info: libc::Dl_info = unsafe { std::mem::zeroed() };
    // SAFETY: as above; `addr` is only compared against mappings.
    if unsafe { libc::dladdr(addr, &mut info) } == 0 || info.dli_fname.is_null() {
        return None;
    }
    // SAFETY: dladdr set a NUL-terminated name the loader owns.
    let path = unsafe { std::ffi::CStr::from_ptr(info.dli_fname) }
        .to_string_lossy()
        .into_owned();
    Some((info.dli_fbase as usize, path))
}

/// The file name of aclmem's sanitizer, which forwards the program's calls
/// to this library: its frames are not the program's.
const SANITIZER: &str = "libaclmem_sanitizer.so";

/// The return address of the call into this library: the frame after
/// `entry` (the exported function) when the unwinder names it, else the
/// first frame outside the object that holds this code and outside the
/// sanitizer that forwards calls to it.
pub(crate) fn caller(entry: Option<usize>) -> Option<*mut c_void> {
    let mut site = None;
    if let Some(entry) = entry {
        let mut next = false;
        trace(|frame| {
            if next {
                site = Some(frame.ip());
                return false;
            }
            next = frame.symbol_address() as usize == entry;
            true
        });
    }
    if site.is_none() {
        let own = object_of(caller as *const c_void).map(|(base, _)| base);
        trace(|frame| {
            let ip = frame.ip();
            match object_of(ip) {
                Some((base, _)) if Some(base) == own => true,
                Some((_, path)) if path.ends_with(SANITIZER) => true,
                _ => {
                    site = Some(ip);
                    false
                }
            }
        });
    }
    site
}

/// Serialises this library's unwinding and symbol lookups, and is held
/// across `fork` by the forking thread (`crate::fork`): the backtrace
/// crate's own lock is a plain static a child would copy held by a thread
/// of its parent.
static UNWIND: KeptMutex<()> = KeptMutex::new(());

/// `backtrace::trace`, under [`UNWIND`].
fn trace(f: impl FnMut(&backtrace::Frame) -> bool) {
    let _held = UNWIND.lock();
    // SAFETY: every unwinding and lookup of this library holds `UNWIND`, so
    // none runs at the same time as another.
    unsafe { backtrace::trace_unsynchronized(f) }
}

/// `backtrace::resolve`, under [`UNWIND`].
fn resolve(addr: *mut c_void, f: impl FnMut(&backtrace::Symbol)) {
    let _held = UNWIND.lock();
    // SAFETY: as in `trace`.
    unsafe { backtrace::resolve_unsynchronized(addr, f) }
}

/// Before `fork`: the forking thread holds [`UNWIND`] (let go by
/// `aclmem_fork::release_held` in both processes).
pub(crate) fn hold_for_fork() {
    aclmem_fork::hold(UNWIND.lock());
}

/// A call site, named.
#[derive(Debug, Clone, Default)]
pub(crate) struct Site {
    /// The object's path (`/usr/lib/libfoo.so`, the program).
    pub(crate) object: Option<String>,
    /// The call's offset in it (the return address minus one, which is
    /// what `addr2line -e OBJECT` takes).
    pub(crate) offset: u64,
    /// The function that made the call.
    pub(crate) symbol: Option<String>,
    /// Its source file and line, from the debug information (or the
    /// Python script's, when `python`).
    pub(crate) line: Option<(String, u32)>,
    /// Whether `line` is a Python script's.
    pub(crate) python: bool,
}

impl Site {
    /// Names the call whose return address is `ip`.
    pub(crate) fn of(ip: *mut c_void) -> Site {
        // The return address is one past the call: resolve the call.
        let call = (ip as usize).saturating_sub(1);
        let mut site = Site::default();
        resolve(call as *mut c_void, |symbol| {
            if site.symbol.is_none() {
                site.symbol = symbol.name().map(|n| format!("{n:#}"));
            }
            if site.line.is_none()
                && let (Some(file), Some(line)) = (symbol.filename(), symbol.lineno())
            {
                site.line = Some((file.to_string_lossy().into_owned(), line));
            }
        });
        if let Some((base, path)) = object_of(ip) {
            site.offset = call.wrapping_sub(base) as u64;
            site.object = Some(path);
        } else {
            site.offset = call as u64;
        }
        site
    }

    /// `object+0xoffset` (the object's file name), or the address.
    pub(crate) fn place(&self) -> String {
        match &self.object {
            Some(path) => format!(
                "{}+{:#x}",
                path.rsplit('/').next().unwrap_or(path),
                self.offset
            ),
            None => format!("{:#x}", self.offset),
        }
    }
}
