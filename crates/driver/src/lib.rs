//! The real Ascend backend: `libascendcl.so` loaded at run time.
//!
//! * [`sys`]: the C declarations (types, constants, function-pointer types),
//!   with layout tests.
//! * [`AscendCl::load`]: finds the library (explicit path, the
//!   `libascendcl.so` the process already loaded, `$ACLMEM_ASCENDCL`, `$ASCEND_HOME_PATH/lib64`,
//!   `$ASCEND_TOOLKIT_HOME/lib64`,
//!   `/usr/local/Ascend/ascend-toolkit/latest/lib64`, then the dynamic
//!   loader's own search). A missing library is a [`LoadError`] naming every
//!   place tried; nothing on this path panics.
//! * Symbols resolve lazily, each with a policy: *required* symbols are
//!   checked when the library is loaded (a missing one is a `LoadError`);
//!   *optional* ones, absent from older CANN releases, make only their own
//!   call answer `ACL_ERROR_RT_FEATURE_NOT_SUPPORT` (207000).
//! * [`Runtime`] owns `aclInit` / `aclFinalize`; [`Driver`] is one device
//!   and implements every `aclmem-hal` trait.
//! * [`AscendCl::file`] is the file the dynamic loader opened, and
//!   [`AscendCl::emulated`] tells aclmem's emulated library from CANN's, so
//!   that tools can say when no NPU is involved.
//!
//! ## Devices and threads
//!
//! `aclrtSetDevice` binds a device to the *calling thread*. A [`Driver`] is
//! bound to one device and may be used from any thread: before each call it
//! makes sure the calling thread has that device set (one `aclrtSetDevice`
//! per thread and device switch, remembered in a thread-local), so calls
//! from another thread behave exactly like calls from the creating one.
//! Devices set this way are released by `aclFinalize`. The thread-local
//! remembers what the driver set; code that calls `aclrtSetDevice` itself
//! on a thread a [`Driver`] also uses must call [`Driver::release_thread`]
//! afterwards, so the driver sets its device again on its next call.
//!
//! ```no_run
//! use aclmem_driver::AscendCl;
//! let runtime = AscendCl::load(None)?.init()?;
//! let (product, run_mode) = runtime.platform()?;
//! println!("{} in {run_mode} form, {} devices", product, runtime.device_count()?);
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

#![warn(missing_docs)]

mod driver;
mod hal;
mod library;
mod loader;
mod runtime;
mod version;

pub use aclmem_sys as sys;
pub use aclmem_sys::{FUNCTIONS as SYMBOLS, Policy};
pub use driver::Driver;
pub use library::{AscendCl, EMULATOR_MARKER, Emulated};
pub use loader::{
    Attempt, DEFAULT_TOOLKIT_LIB64, ENV_OVERRIDE, LIBRARY_NAME, LoadError, SearchPath,
};
pub use runtime::Runtime;
pub use version::{CANN_OVERRIDE, CannSource, DetectedCann};

// The README (this crate's page on crates.io) is compiled and run as doctests.
#[doc = include_str!("../README.md")]
#[cfg(doctest)]
pub struct ReadmeDoctests;
