//! The sanitizer as an `LD_AUDIT` library: it sees the calls `LD_PRELOAD`
//! cannot.
//!
//! A preloaded library interposes the calls a program binds through the
//! global scope. A framework that opens `libascendcl.so` itself and looks
//! functions up with `dlsym` on that handle (torch_npu does, for most of
//! its calls), or a library loaded with `RTLD_LOCAL` that links it, binds
//! past the preloaded library. The dynamic loader tells an audit library
//! about every such binding (`la_symbind64`), and lets it answer another
//! address: for every function the sanitizer checks, bound to a CANN
//! library from anywhere but the sanitizer itself, the answer is the
//! sanitizer's own definition, which checks the call and forwards it.
//!
//! `aclmem sanitize` loads this same file twice: preloaded (the checks,
//! in the program's namespace) and as the auditor (a second copy in a
//! namespace of its own, which only runs the `la_*` functions below and
//! looks the checks up in the preloaded copy). Bindings made with
//! `BIND_NOW` (every torch_npu library) reach `la_symbind64` from glibc 2.35
//! on; lazy bindings and `dlsym` lookups on every glibc with `LD_AUDIT`.
//! The crate's README says which calls are seen how.

use std::ffi::{CStr, c_char, c_uint, c_void};
use std::sync::atomic::{AtomicUsize, Ordering};

use aclmem_sys::catalogue::Library;

/// `LAV_CURRENT` of the glibc this is built for: the interface below.
const LAV_CURRENT: c_uint = 2;
/// `la_objopen`: audit bindings to this object.
const LA_FLG_BINDTO: c_uint = 0x01;
/// `la_objopen`: audit bindings from this object.
const LA_FLG_BINDFROM: c_uint = 0x02;
/// `LM_ID_BASE`: the program's namespace.
const LM_ID_BASE: isize = 0;

/// The public head of glibc's `struct link_map` (`<link.h>`).
#[repr(C)]
pub struct LinkMap {
    l_addr: usize,
    l_name: *const c_char,
    l_ld: *mut c_void,
    l_next: *mut LinkMap,
    l_prev: *mut LinkMap,
}

/// `Elf64_Sym` (`<elf.h>`).
#[repr(C)]
pub struct Elf64Sym {
    st_name: u32,
    st_info: u8,
    st_other: u8,
    st_shndx: u16,
    st_value: u64,
    st_size: u64,
}

/// The preloaded sanitizer's link map (0: not loaded yet).
static SANITIZER: AtomicUsize = AtomicUsize::new(0);
/// The program's own link map, the first of its namespace: a handle
/// whose scope is the program's global scope, in which the preloaded
/// sanitizer comes first. (The sanitizer's own link map is no handle
/// `dlsym` can search: a preloaded object has no search list.)
static PROGRAM: AtomicUsize = AtomicUsize::new(0);

/// The file name of the sanitizer's own library.
const OWN_FILE: &str = "libaclmem_sanitizer.so";

fn file_name(map: *const LinkMap) -> Option<&'static [u8]> {
    if map.is_null() {
        return None;
    }
    // SAFETY: the loader passes a live link map whose `l_name` is NULL or a
    // NUL-terminated string it owns for the object's lifetime.
    let name = unsafe { (*map).l_name };
    if name.is_null() {
        return None;
    }
    // SAFETY: as above.
    let path = unsafe { CStr::from_ptr(name) }.to_bytes();
    Some(path.rsplit(|&b| b == b'/').next().unwrap_or(path))
}

/// Whether a file is one of CANN's libraries: a name of the catalogue's,
/// or `$ACLMEM_ASCENDCL`'s.
fn is_cann(file: &[u8]) -> bool {
    if Library::ALL.iter().any(|l| l.soname().as_bytes() == file) {
        return true;
    }
    std::env::var_os("ACLMEM_ASCENDCL").is_some_and(|p| {
        use std::os::unix::ffi::OsStrExt;
        let p = p.as_bytes();
        p.rsplit(|&b| b == b'/').next() == Some(file)
    })
}

/// `unsigned int la_version(unsigned int version)`: the loader's interface
/// up to `LAV_CURRENT` (the functions below are the same in versions 1 and
/// 2; version 2 adds the `BIND_NOW` bindings).
#[unsafe(no_mangle)]
pub extern "C" fn la_version(version: c_uint) -> c_uint {
    version.min(LAV_CURRENT)
}

/// `unsigned int la_objopen(struct link_map *map, Lmid_t lmid, uintptr_t
/// *cookie)`: bindings from every object of the program are audited,
/// bindings to CANN's libraries (and the sanitizer) only.
///
/// # Safety
/// Called by the dynamic loader with a live link map and cookie.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn la_objopen(map: *mut LinkMap, lmid: isize, cookie: *mut usize) -> c_uint {
    if !cookie.is_null() {
        // SAFETY: the loader's cookie slot for this object.
        unsafe { *cookie = map as usize };
    }
    let Some(file) = file_name(map) else {
        if lmid == LM_ID_BASE {
            let _ = PROGRAM.compare_exchange(0, map as usize, Ordering::AcqRel, Ordering::Acquire);
        }
        return LA_FLG_BINDFROM;
    };
    if lmid == LM_ID_BASE {
        let _ = PROGRAM.compare_exchange(0, map as usize, Ordering::AcqRel, Ordering::Acquire);
        if file == OWN_FILE.as_bytes() {
            SANITIZER.store(map as usize, Ordering::Release);
        }
    }
    if is_cann(file) {
        LA_FLG_BINDTO | LA_FLG_BINDFROM
    } else {
        LA_FLG_BINDFROM
    }
}

/// `uintptr_t la_symbind64(Elf64_Sym *sym, unsigned int ndx, uintptr_t
/// *refcook, uintptr_t *defcook, unsigned int *flags, const char
/// *symname)`: a checked function bound to a CANN library from anywhere
/// but the sanitizer binds to the sanitizer's definition instead.
///
/// # Safety
/// Called by the dynamic loader with live pointers.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn la_symbind64(
    sym: *mut Elf64Sym,
    _ndx: c_uint,
    refcook: *mut usize,
    defcook: *mut usize,
    _flags: *mut c_uint,
    symname: *const c_char,
) -> usize {
    // SAFETY: the loader's symbol, resolved: `st_value` is its address.
    let value = unsafe { (*sym).st_value } as usize;
    let sanitizer = SANITIZER.load(Ordering::Acquire);
    if sanitizer == 0 || symname.is_null() || refcook.is_null() || defcook.is_null() {
        return value;
    }
    // SAFETY: the cookies `la_objopen` set: link-map addresses.
    let (from, to) = unsafe { (*refcook, *defcook) };
    if from == sanitizer || to == sanitizer {
        return value;
    }
    // SAFETY: a NUL-terminated name the loader owns.
    let name = unsafe { CStr::from_ptr(symname) };
    let Ok(text) = name.to_str() else {
        return value;
    };
    if !aclmem_sys::FUNCTIONS.iter().any(|(n, _)| *n == text)
        && !crate::mstx::NAMES.contains(&text)
        && !crate::hccl::NAMES.contains(&text)
        && !crate::graphs::NAMES.contains(&text)
        && !crate::pools::NAMES.contains(&text)
    {
        return value;
    }
    let program = PROGRAM.load(Ordering::Acquire);
    if program == 0 {
        return value;
    }
    // SAFETY: the program's link map is a handle `dlsym` accepts (its
    // search list is the global scope); the name is NUL-terminated.
    let own = unsafe { libc::dlsym(program as *mut c_void, name.as_ptr()) };
    if !own.is_null() && in_sanitizer(own) {
        own as usize
    } else {
        value
    }
}

/// Whether `addr` lies in a file named as the sanitizer's library (the
/// program's scope holds the preloaded copy only).
fn in_sanitizer(addr: *mut c_void) -> bool {
    // SAFETY: `Dl_info` is plain data that dladdr fills.
    let mut info: libc::Dl_info = unsafe { std::mem::zeroed() };
    // SAFETY: dladdr only reads the loader's tables.
    if unsafe { libc::dladdr(addr, &mut info) } == 0 || info.dli_fname.is_null() {
        return false;
    }
    // SAFETY: a NUL-terminated name the loader owns.
    let path = unsafe { CStr::from_ptr(info.dli_fname) }.to_bytes();
    path.rsplit(|&b| b == b'/').next() == Some(OWN_FILE.as_bytes())
}
