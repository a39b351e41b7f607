//! Where a Python program made an ACL call: the innermost Python frame
//! outside aclmem's own package (`function (script.py:LINE)`), read through
//! CPython's C API when the process runs an interpreter. The API is looked
//! up by name at run time, so nothing links Python, and it is used only by
//! a thread that holds the GIL: a call from Python code (pyACL over aclmem,
//! a framework called with the GIL held), or a call through `ctypes`, whose
//! thread released the GIL for the foreign call and takes it back here the
//! way a `ctypes` callback does (`PyGILState_Ensure`; only when the call
//! comes straight from libffi, which holds no lock of the program's). Other
//! threads without the GIL (a framework's own threads, C code that released
//! it) keep their native site: taking the GIL there could deadlock against
//! a thread that holds it and waits for them.
//!
//! Sites are interned: a [`Site`](crate::report::Site) keeps a number, so
//! it stays a plain copyable value however often a line calls.

use std::cell::Cell;
use std::collections::HashMap;
use std::ffi::{CStr, c_char, c_int, c_void};
use std::path::Path;
use std::sync::OnceLock;

use aclmem_fork::ForkMutex;

type Object = *mut c_void;

type Flag = unsafe extern "C" fn() -> c_int;
type Current = unsafe extern "C" fn() -> Object;
type Related = unsafe extern "C" fn(Object) -> Object;
type Line = unsafe extern "C" fn(Object) -> c_int;
type Attr = unsafe extern "C" fn(Object, *const c_char) -> Object;
type Utf8 = unsafe extern "C" fn(Object, *mut isize) -> *const c_char;
type Release = unsafe extern "C" fn(Object);
type Clear = unsafe extern "C" fn();
type Ensure = unsafe extern "C" fn() -> c_int;
type Restore = unsafe extern "C" fn(c_int);

/// The functions of CPython's stable ABI that locate a call.
struct Api {
    initialized: Flag,
    gil_held: Flag,
    frame: Current,
    back: Related,
    code: Related,
    line: Line,
    attr: Attr,
    utf8: Utf8,
    decref: Release,
    clear: Clear,
    ensure: Ensure,
    restore: Restore,
}

pub(crate) fn symbol(name: &CStr) -> Option<*mut c_void> {
    // SAFETY: dlsym with a NUL-terminated name in the global scope.
    let p = unsafe { libc::dlsym(libc::RTLD_DEFAULT, name.as_ptr()) };
    (!p.is_null()).then_some(p)
}

fn api() -> Option<&'static Api> {
    static API: OnceLock<Option<Api>> = OnceLock::new();
    API.get_or_init(|| {
        // SAFETY: each symbol, when present, is CPython's function of that
        // name, whose prototype in the stable ABI is the one given.
        unsafe {
            Some(Api {
                initialized: std::mem::transmute::<*mut c_void, Flag>(symbol(c"Py_IsInitialized")?),
                gil_held: std::mem::transmute::<*mut c_void, Flag>(symbol(c"PyGILState_Check")?),
                frame: std::mem::transmute::<*mut c_void, Current>(symbol(c"PyEval_GetFrame")?),
                back: std::mem::transmute::<*mut c_void, Related>(symbol(c"PyFrame_GetBack")?),
                code: std::mem::transmute::<*mut c_void, Related>(symbol(c"PyFrame_GetCode")?),
                line: std::mem::transmute::<*mut c_void, Line>(symbol(c"PyFrame_GetLineNumber")?),
                attr: std::mem::transmute::<*mut c_void, Attr>(symbol(c"PyObject_GetAttrString")?),
                utf8: std::mem::transmute::<*mut c_void, Utf8>(symbol(c"PyUnicode_AsUTF8AndSize")?),
                decref: std::mem::transmute::<*mut c_void, Release>(symbol(c"Py_DecRef")?),
                clear: std::mem::transmute::<*mut c_void, Clear>(symbol(c"PyErr_Clear")?),
                ensure: std::mem::transmute::<*mut c_void, Ensure>(symbol(c"PyGILState_Ensure")?),
                restore: std::mem::transmute::<*mut c_void, Restore>(symbol(
                    c"PyGILState_Release",
                )?),
            })
        }
    })
    .as_ref()
}

/// Interned call sites (`function (file:line)`), numbered from 1.
#[derive(Default)]
struct Sites {
    names: Vec<String>,
    numbers: HashMap<String, u32>,
    /// Whether a file is part of aclmem's own package.
    internal: HashMap<String, bool>,
}

static SITES: ForkMutex<Option<Sites>> = ForkMutex::new(|| None);

/// A file of aclmem's package (`.../aclmem/**.py` beside `_native.pyi`):
/// its frames are the binding, not the program.
pub(crate) fn is_internal(file: &str) -> bool {
    Path::new(file)
        .ancestors()
        .skip(1)
        .any(|d| d.file_name().is_some_and(|n| n == "aclmem") && d.join("_native.pyi").exists())
}

/// An attribute of `object` that is a string, as Rust text.
///
/// # Safety
/// The GIL is held and `object` is a live Python object.
unsafe fn text(api: &Api, object: Object, name: &CStr) -> Option<String> {
    // SAFETY: the caller holds the GIL; `object` is live; the attribute
    // is a new reference, released below.
    unsafe {
        let value = (api.attr)(object, name.as_ptr());
        if value.is_null() {
            (api.clear)();
            return None;
        }
        let mut len = 0isize;
        let bytes = (api.utf8)(value, &mut len);
        let out = if bytes.is_null() {
            (api.clear)();
            None
        } else {
            let s = std::slice::from_raw_parts(bytes.cast::<u8>(), len.max(0) as usize);
            Some(String::from_utf8_lossy(s).into_owned())
        };
        (api.decref)(value);
        out
    }
}

/// The Python call site of the ACL call being made on this thread: its
/// number (0 when no Python code made it).
fn call_site(api: &Api) -> u32 {
    // SAFETY: both may be called from any thread at any time.
    if unsafe { (api.initialized)() != 1 || (api.gil_held)() != 1 } {
        return 0;
    }
    // SAFETY: the GIL is held (checked above).
    unsafe { call_site_held(api) }
}

/// [`call_site`] with the GIL held.
///
/// # Safety
/// This thread holds the GIL.
unsafe fn call_site_held(api: &Api) -> u32 {
    let mut sites = SITES.lock();
    let sites = sites.get_or_insert_with(Sites::default);
    // SAFETY: this thread holds the GIL (checked above), so the frames
    // stay alive while used. The first frame is borrowed; each previous
    // frame is a new reference, released once the next one is taken.
    unsafe {
        let mut frame = (api.frame)();
        let mut owned = false;
        let mut found = 0;
        while !frame.is_null() && found == 0 {
            found = site_of(api, sites, frame);
            let back = if found == 0 {
                (api.back)(frame)
            } else {
                std::ptr::null_mut()
            };
            if owned {
                (api.decref)(frame);
            }
            frame = back;
            owned = true;
        }
        found
    }
}

/// The Python stack of the ACL call being made on this thread: up to
/// `depth` frames of the program (aclmem's own left out), innermost first,
/// as the number of their text (one frame per line); 0 when fewer than two
/// frames are found (the call site alone says it all) or no Python code
/// made the call.
pub fn call_stack(depth: usize) -> u32 {
    let Some(api) = api() else { return 0 };
    // SAFETY: both may be called from any thread at any time.
    if unsafe { (api.initialized)() != 1 || (api.gil_held)() != 1 } {
        return 0;
    }
    // SAFETY: the GIL is held (checked above).
    unsafe { call_stack_held(api, depth) }
}

/// Whether a return address lies in libffi (or a `_ctypes` module that
/// holds it): the call comes straight from `ctypes`. Remembered per
/// address.
fn from_ctypes(ra: usize) -> bool {
    static SEEN: ForkMutex<Option<HashMap<usize, bool>>> = ForkMutex::new(|| None);
    if let Some(&known) = SEEN.lock().as_ref().and_then(|m| m.get(&ra)) {
        return known;
    }
    let yes = crate::report::module_of(ra).is_some_and(|m| {
        let file = m.rsplit('/').next().unwrap_or(&m);
        file.starts_with("libffi") || file.starts_with("_ctypes")
    });
    SEEN.lock().get_or_insert_with(HashMap::new).insert(ra, yes);
    yes
}

/// The Python site of the call whose return address is `ra`, and its
/// stack (up to `depth` frames; 0 for none): from Python code holding the
/// GIL (no stack taken here: [`call_stack`] takes it when asked), or through
/// `ctypes` ([`foreign_call`]). `(0, 0)` for a call that is not Python's.
/// Asked at every call: whether there is an interpreter is decided inline.
#[inline]
pub fn site_of_call(ra: usize, depth: usize) -> (u32, u32) {
    // No interpreter in the process: no Python call.
    match api() {
        Some(api) => python_site_of_call(api, ra, depth),
        None => (0, 0),
    }
}

#[inline(never)]
fn python_site_of_call(api: &Api, ra: usize, depth: usize) -> (u32, u32) {
    match call_site(api) {
        0 if ra != 0 => foreign_call(api, ra, depth).unwrap_or((0, 0)),
        n => (n, 0),
    }
}

/// The call of the library that the calling thread is making with shards
/// of the model held ([`under_way`]): whether there is one, the call's
/// return address and its Python site. Several threads make such calls at
/// once (each holding other shards), so each has its own; kept only in a
/// process with an interpreter.
#[derive(Clone, Copy)]
struct UnderWay {
    held: bool,
    ra: usize,
    python: u32,
}

thread_local! {
    static UNDER_WAY: Cell<UnderWay> = const {
        Cell::new(UnderWay {
            held: false,
            ra: 0,
            python: 0,
        })
    };
}

/// Makes the call `call` of the library, which the caller makes with the
/// model's shards held, with `ra` and `python` (its return address and Python
/// site, found before the lock was taken) as the call under way, for
/// [`site_for_library`].
#[inline]
pub(crate) fn under_way<R>(ra: usize, python: u32, call: impl FnOnce() -> R) -> R {
    // Without an interpreter the library's question has no Python answer,
    // and `site_for_library` gives none without looking here: nothing to
    // keep.
    if api().is_none() {
        return call();
    }
    UNDER_WAY.with(|u| {
        u.set(UnderWay {
            held: true,
            ra,
            python,
        })
    });
    let r = call();
    UNDER_WAY.with(|u| {
        u.set(UnderWay {
            held: false,
            ra: 0,
            python: 0,
        })
    });
    r
}

/// The Python site the library underneath asks for the call whose return
/// address is `ra` (`aclmem_sanitizer_python_site`: the emulated library
/// names its faults' and explore's sites with it). During a call the
/// sanitizer makes with shards of its model held, the interpreter is not
/// asked to take the GIL (a `ctypes` call's site): a thread holding the
/// GIL may be waiting for those shards. The call under way's own site was
/// found before the lock; any other frame gets only what a thread holding
/// the GIL can say.
pub fn site_for_library(ra: usize) -> u32 {
    let u = UNDER_WAY.with(Cell::get);
    if !u.held {
        return site_of_call(ra, 0).0;
    }
    if u.ra == ra {
        return u.python;
    }
    api().map_or(0, call_site)
}

/// The Python call site and stack (up to `depth` frames; 0 for none) of a
/// call made through `ctypes` (`ra`, its return address, in libffi) by a
/// thread that released the GIL for it: the GIL is taken back for the
/// look, as a `ctypes` callback takes it, and released. `None` for any
/// other call. Called before the sanitizer takes any lock of its own.
fn foreign_call(api: &Api, ra: usize, depth: usize) -> Option<(u32, u32)> {
    // SAFETY: both may be called from any thread at any time.
    if unsafe { (api.initialized)() != 1 || (api.gil_held)() == 1 } || !from_ctypes(ra) {
        return None;
    }
    // SAFETY: a thread inside a `ctypes` call has its thread state (it
    // released the GIL with it saved): `PyGILState_Ensure` restores it and
    // takes the GIL, `PyGILState_Release` gives it back, as for a callback.
    unsafe {
        let state = (api.ensure)();
        let site = call_site_held(api);
        let stack = if depth >= 2 {
            call_stack_held(api, depth)
        } else {
            0
        };
        (api.restore)(state);
        Some((site, stack))
    }
}

/// [`call_stack`] with the GIL held.
///
/// # Safety
/// This thread holds the GIL.
unsafe fn call_stack_held(api: &Api, depth: usize) -> u32 {
    let mut found = Vec::new();
    {
        let mut sites = SITES.lock();
        let sites = sites.get_or_insert_with(Sites::default);
        // SAFETY: as in `call_site`: this thread holds the GIL; each
        // previous frame is a new reference, released once the next one
        // is taken.
        unsafe {
            let mut frame = (api.frame)();
            let mut owned = false;
            while !frame.is_null() && found.len() < depth {
                let n = site_of(api, sites, frame);
                if n != 0 {
                    found.push(n);
                }
                let back = (api.back)(frame);
                if owned {
                    (api.decref)(frame);
                }
                frame = back;
                owned = true;
            }
            if owned && !frame.is_null() {
                (api.decref)(frame);
            }
        }
    }
    if found.len() < 2 {
        return 0;
    }
    let text: Vec<String> = found.into_iter().filter_map(describe).collect();
    intern_text(text.join("\n"))
}

/// The number of `frame`'s site, 0 if it is aclmem's own.
///
/// # Safety
/// The GIL is held and `frame` is a live frame object.
unsafe fn site_of(api: &Api, sites: &mut Sites, frame: Object) -> u32 {
    // SAFETY: as the caller promises; the code object is a new reference,
    // released before returning.
    unsafe {
        let code = (api.code)(frame);
        if code.is_null() {
            return 0;
        }
        let mut found = 0;
        if let Some(file) = text(api, code, c"co_filename") {
            let internal = *sites
                .internal
                .entry(file.clone())
                .or_insert_with(|| is_internal(&file));
            if !internal {
                let function = text(api, code, c"co_name").unwrap_or_default();
                let base = Path::new(&file)
                    .file_name()
                    .map_or(file.clone(), |n| n.to_string_lossy().into_owned());
                let name = format!("{function} ({base}:{})", (api.line)(frame));
                found = match sites.numbers.get(&name) {
                    Some(&n) => n,
                    None => {
                        sites.names.push(name.clone());
                        let n = sites.names.len() as u32;
                        sites.numbers.insert(name, n);
                        n
                    }
                };
            }
        }
        (api.decref)(code);
        found
    }
}

/// A call site known only as text (from another library's report): its
/// number, described as the text itself.
pub fn intern_text(name: String) -> u32 {
    let mut sites = SITES.lock();
    let sites = sites.get_or_insert_with(Sites::default);
    if let Some(&n) = sites.numbers.get(&name) {
        return n;
    }
    sites.names.push(name.clone());
    let n = sites.names.len() as u32;
    sites.numbers.insert(name, n);
    n
}

/// The script file (its base name) and line of call site `n` (from
/// [`call_site`]): the end of its text, `function (file:line)`.
pub fn place(n: u32) -> Option<(String, u32)> {
    let text = describe(n)?;
    let p = aclmem_formats::site::parse(&text)?;
    Some((p.file.to_owned(), p.line))
}

/// The text of call site `n` (from [`call_site`]).
pub fn describe(n: u32) -> Option<String> {
    let sites = SITES.lock();
    sites
        .as_ref()?
        .names
        .get(n.checked_sub(1)? as usize)
        .cloned()
}
