//! The loaded `libascendcl.so`: finding and opening it, its symbols
//! (resolved lazily, each with its policy), the file the dynamic loader
//! opened, and whether it is aclmem's emulator.

use std::ffi::{CStr, c_void};
use std::fmt;
use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};
use std::ptr;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, OnceLock};

use aclmem_core::AclError;
use libloading::Library;

use crate::runtime::RuntimeInner;
use crate::{LoadError, Policy, Runtime, SYMBOLS, SearchPath, sys};

macro_rules! symbols {
    ($($name:ident: $ty:ident = $policy:ident, fn($($arg:ident: $t:ty),*) -> $ret:ty;)*) => {
        #[allow(non_snake_case)]
        struct Symbols {
            $($name: OnceLock<Option<sys::$ty>>,)*
        }

        impl Symbols {
            fn new() -> Symbols {
                Symbols { $($name: OnceLock::new(),)* }
            }
        }

        impl AscendCl {
            /// Every ACL function of the one list, resolved (`None` where
            /// this library lacks it). The pointers are valid while this
            /// `AscendCl` lives: keep its `Arc` as long as you call them.
            pub fn functions(&self) -> aclmem_sys::AclFunctions {
                aclmem_sys::AclFunctions {
                    $($name: self.$name().ok(),)*
                }
            }

            $(
                /// The resolved function, or 207000 if the library lacks it.
                /// The pointer is valid only while this `AscendCl` lives:
                /// every caller calls it through a `Runtime` or `Driver`,
                /// which hold the `Arc<AscendCl>` for as long as they exist,
                /// and never keeps it beyond the call.
                #[allow(non_snake_case)]
                pub(crate) fn $name(&self) -> Result<sys::$ty, AclError> {
                    let f = self.symbols.$name.get_or_init(|| {
                        // SAFETY: `sys::$ty` is the documented C prototype of
                        // this symbol, so reading the symbol as that type is
                        // sound. The copied pointer points into the
                        // library's code, which stays mapped while `self`
                        // (the owner of the `Library`) lives; the callers
                        // hold the `Arc<AscendCl>` across every call through
                        // it (see above), so it is never called after the
                        // library is closed.
                        unsafe {
                            self.library
                                .get::<sys::$ty>(concat!(stringify!($name), "\0").as_bytes())
                                .ok()
                                .map(|s| *s)
                        }
                    });
                    f.ok_or(AclError::RT_FEATURE_NOT_SUPPORT)
                }
            )*
        }
    };
}

/// The loaded `libascendcl.so`.
pub struct AscendCl {
    library: Library,
    pub(crate) path: String,
    symbols: Symbols,
}

aclmem_sys::with_acl_functions!(symbols);

impl fmt::Debug for AscendCl {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("AscendCl")
            .field("path", &self.path)
            .finish_non_exhaustive()
    }
}

impl AscendCl {
    /// Loads the library from `explicit` (a file or a directory) or, when
    /// `None`, from the documented search path.
    pub fn load(explicit: Option<&Path>) -> Result<Arc<AscendCl>, LoadError> {
        AscendCl::load_from(&SearchPath {
            explicit: explicit.map(Path::to_path_buf),
        })
    }

    /// Loads the library from a search path.
    pub fn load_from(search: &SearchPath) -> Result<Arc<AscendCl>, LoadError> {
        let (library, path) = search.open()?;
        for (symbol, policy) in SYMBOLS {
            if *policy == Policy::Required {
                let name = format!("{symbol}\0");
                // SAFETY: only checks that the symbol exists; the pointer is
                // not kept or called here.
                if unsafe { library.get::<*const c_void>(name.as_bytes()) }.is_err() {
                    return Err(LoadError::MissingSymbol {
                        symbol,
                        library: path,
                    });
                }
            }
        }
        Ok(Arc::new(AscendCl {
            library,
            path,
            symbols: Symbols::new(),
        }))
    }

    /// Where the library was loaded from.
    pub fn path(&self) -> &str {
        &self.path
    }

    /// The file the library was loaded from, as the dynamic loader resolved
    /// it (`dladdr` of `aclInit`): an absolute path also when the library
    /// was found by the loader's own search, where [`AscendCl::path`] is
    /// only `libascendcl.so`. `None` if the loader cannot say.
    pub fn file(&self) -> Option<PathBuf> {
        // SAFETY: only the symbol's address is read; it is not called.
        let symbol = unsafe { self.library.get::<*const c_void>(b"aclInit\0") }.ok()?;
        let address: *const c_void = *symbol;
        // SAFETY: `Dl_info` is plain C data (pointers and integers), for
        // which all zeroes is a valid value.
        let mut info: libc::Dl_info = unsafe { std::mem::zeroed() };
        // SAFETY: `dladdr` only reads the loader's tables for an address
        // inside a library that stays loaded while `self` lives; `info` is
        // a live local it fills in.
        let found = unsafe { libc::dladdr(address, &mut info) };
        if found == 0 || info.dli_fname.is_null() {
            return None;
        }
        // SAFETY: a non-NULL `dli_fname` is a NUL-terminated string owned by
        // the loader, valid while the library is loaded; copied at once.
        let name = unsafe { CStr::from_ptr(info.dli_fname) };
        let path = PathBuf::from(std::ffi::OsStr::from_bytes(name.to_bytes()));
        Some(std::fs::canonicalize(&path).unwrap_or(path))
    }

    /// Whether this is aclmem's emulated `libascendcl.so` rather than
    /// CANN's: `Some` with what the emulator is configured by, `None` for
    /// any other library (or if its file cannot be read).
    ///
    /// The emulated library exports exactly CANN's functions and nothing
    /// else, so it is told by its file: it holds the names of the
    /// environment variables it reads at `aclInit`, documented in
    /// `crates/emu-capi/README.md`, among them [`EMULATOR_MARKER`]; a CANN
    /// library has no reason to contain aclmem's variable names. This holds
    /// however the library was found (path, `$ACLMEM_ASCENDCL`, the
    /// loader's search) and under any file name.
    pub fn emulated(&self) -> Option<Emulated> {
        let file = self.file()?;
        contains_marker(&file).ok()?.then(|| Emulated {
            machine: std::env::var(EMULATOR_MACHINE_VAR)
                .ok()
                .filter(|m| !m.is_empty())
                .unwrap_or_else(|| "default".into()),
        })
    }

    /// A function outside the one list (the stream-ordered pools of
    /// `aclmem_sys::pools`), resolved by name at each call; 207000 where
    /// the library lacks it (a release before the calls, or a product
    /// without them). `name` ends with a NUL.
    ///
    /// # Safety
    ///
    /// `T` must be the function pointer type of `name`'s documented C
    /// prototype, and the pointer must not be called after this
    /// `AscendCl` is dropped.
    pub(crate) unsafe fn by_name<T: Copy>(&self, name: &'static [u8]) -> Result<T, AclError> {
        // SAFETY: the caller guarantees that `T` is the symbol's prototype
        // and that the copied pointer is used only while `self` lives.
        unsafe { self.library.get::<T>(name) }
            .map(|s| *s)
            .map_err(|_| AclError::RT_FEATURE_NOT_SUPPORT)
    }

    /// The address of `symbol` in this library, if it has it (not
    /// called here): for code that resolves a function outside the one
    /// list by name and knows its prototype (`aclmem_sys::pools`).
    pub fn symbol_address(&self, symbol: &str) -> Option<usize> {
        let name = format!("{symbol}\0");
        // SAFETY: only the address is read; nothing is called.
        unsafe { self.library.get::<*const c_void>(name.as_bytes()) }
            .ok()
            .map(|s| *s as usize)
            .filter(|&a| a != 0)
    }

    /// Whether an optional symbol is present.
    pub fn has_symbol(&self, symbol: &str) -> bool {
        let name = format!("{symbol}\0");
        // SAFETY: existence check only; the pointer is not kept or called.
        unsafe { self.library.get::<*const c_void>(name.as_bytes()) }.is_ok()
    }

    /// Calls `aclInit(NULL)` and returns the handle that finalizes. If ACL
    /// was already initialised by someone else (100002), the runtime is used
    /// as it is and not finalized by this handle.
    pub fn init(self: &Arc<Self>) -> Result<Runtime, AclError> {
        let init = self.aclInit()?;
        // SAFETY: a NULL config path is documented as valid.
        let code = unsafe { init(ptr::null()) };
        let owns_init = match AclError::check(code) {
            Ok(()) => true,
            Err(AclError::REPEAT_INITIALIZE) => false,
            Err(e) => return Err(e),
        };
        static NEXT_ID: AtomicUsize = AtomicUsize::new(1);
        Ok(Runtime {
            inner: Arc::new(RuntimeInner {
                cl: Arc::clone(self),
                owns_init,
                id: NEXT_ID.fetch_add(1, Ordering::Relaxed),
                cann: OnceLock::new(),
            }),
        })
    }
}

/// Found in the file of aclmem's emulated `libascendcl.so` (see
/// [`AscendCl::emulated`]): the name of the variable that chooses the
/// emulated machine a process joins.
pub const EMULATOR_MARKER: &[u8] = EMULATOR_MACHINE_VAR.as_bytes();

/// The emulator's variable naming the machine to join.
const EMULATOR_MACHINE_VAR: &str = "ACLMEM_EMU_MACHINE";

/// Whether the file at `path` contains [`EMULATOR_MARKER`].
fn contains_marker(path: &Path) -> std::io::Result<bool> {
    let bytes = std::fs::read(path)?;
    Ok(memchr::memmem::find(&bytes, EMULATOR_MARKER).is_some())
}

/// The loaded library is aclmem's emulator ([`AscendCl::emulated`]).
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct Emulated {
    /// The emulated machine this process joins at `aclInit`:
    /// `$ACLMEM_EMU_MACHINE`, or `default`. Its other settings
    /// (`ACLMEM_EMU_SOC`, `_DEVICES`, `_HBM`, …) are the library's to
    /// report, through the ordinary ACL queries.
    pub machine: String,
}

#[cfg(test)]
mod tests;
