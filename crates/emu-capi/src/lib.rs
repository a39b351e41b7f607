//! `libascendcl.so`, emulated: every function of `aclmem_sys::FUNCTIONS`
//! with its documented C prototype, served by `aclmem-emu`, and the
//! framework functions of the catalogue ([`framework`]).
//!
//! This crate holds the functions; `crates/libascendcl` links them into the
//! shared object (so that the workspace can build with every feature, see
//! that crate's manifest). Point the dynamic loader (or `aclmem-driver`, or
//! `ctypes`) at the built library and programs written for ACL run on a
//! plain Linux machine, with real memory and real aliasing mappings, and
//! several such processes share one emulated machine.
//!
//! Configuration, read by `aclInit` (see `EmuConfig::from_env`):
//!
//! | variable | meaning | default |
//! |---|---|---|
//! | `ACLMEM_EMU_MACHINE` | the machine to join: processes with the same name share devices | `default` |
//! | `ACLMEM_EMU_SOC` | what `aclrtGetSocName` answers (decides the product) | `Ascend910B3` |
//! | `ACLMEM_EMU_DEVICES` | device count, 1 to 64 | `8` |
//! | `ACLMEM_EMU_HBM` | device memory per device (`64GiB`, `512MiB`, bytes) | `64GiB` |
//! | `ACLMEM_EMU_HOST` | host memory for `aclrtMallocPhysical` | `64GiB` |
//! | `ACLMEM_EMU_RUN_MODE` | `host` (EP, `ACL_HOST`) or `device` (RC, `ACL_DEVICE`) | `host` |
//! | `ACLMEM_EMU_CANN` | the CANN release emulated: rules, granularity, reservations, version queries | `9.0` |
//! | `ACLMEM_EMU_DIR` | where machine files live | `/dev/shm` |
//! | `ACLMEM_EMU_LEAK_REPORT` | print what the process still holds at `aclFinalize` and exit | off |
//! | `ACLMEM_EMU_QUIET` | no messages on stderr | off |
//! | `ACLMEM_EMU_UNSUPPORTED` | `warn`, `error` or `abort` at a call the emulator does not support ([`framework`]) | `warn` |
//! | `ACLMEM_EMU_FAULTS` | faults to inject: `aclrtMalloc@3=207001;device-lost@50` (`aclmem_emu::faults` has the grammar) | none |
//! | `ACLMEM_EMU_OPS` | `compute` (operators with a kernel computed, others 100024) or `plan` (every operator checked and accepted without computing, copies and sets move no device data: `docs/torch-npu.md`, "Plan mode") | `compute` |
//! | `ACLMEM_EMU_DRIVER` | the driver package's version (`aclsysGetCANNVersion(ACL_PKG_NAME_DRIVER)`, `aclsysGetVersionStr("driver")`), or `none` | `26.0.rc1` |
//!
//! A bad value makes `aclInit` fail with `ACL_ERROR_INVALID_PARAM` (100000)
//! and a message on stderr naming the variable; so does joining a machine
//! that runs another configuration (both are named).
//!
//! Conventions: the runtime's own argument checks come first, with their
//! documented codes; then a call that needs a device answers
//! `ACL_ERROR_RT_CONTEXT_NULL` (107002) on a thread without one (unless
//! `aclInit`'s configuration names a default device, which such a call
//! then sets on its thread); a call before `aclInit` answers
//! `ACL_ERROR_UNINITIALIZE` (100001), except `aclrtGetDevice`, which
//! answers 107002 as the runtime does. NULL, or an
//! address the process may not read or write, in any pointer parameter
//! answers `ACL_ERROR_INVALID_PARAM` (100000), never crashes. A panic inside
//! the library is caught and reported as `ACL_ERROR_INTERNAL_ERROR` (500000).

#![warn(missing_docs)]
// Every exported function is an `extern "C"` entry point whose contract is
// the C prototype; every dereference of a caller's pointer goes through
// `cptr`, which the kernel checks.
#![allow(clippy::missing_safety_doc)]

// The foundation: what every C function uses (see docs/architecture.md).
mod capture;
mod cptr;
mod entry;
mod faults;
mod fork;
pub mod record;
mod shared;
mod site;
mod state;

// The C functions, each module importing only the foundation (and its own
// directory's files).
pub mod atb;
pub mod device;
pub mod framework;
pub mod graphs;
pub mod hccl;
pub mod memory;
pub mod opapi;
pub mod ops;
pub mod sharing;
mod stand_ins;

pub use atb::{
    _ZN3atb5Utils13GetTensorSizeERKNS_6TensorE, _ZN3atb13CreateContextEPPNS_7ContextE,
    _ZN3atb14DestroyContextEPNS_7ContextE,
    _ZN3atb15CreateOperationINS_5infer19PagedAttentionParamEEEiRKT_PPNS_9OperationE,
    _ZN3atb16DestroyOperationEPNS_9OperationE,
};
pub use device::*;
pub use entry::AclErrorCode;
pub use framework::*;
pub use graphs::*;
pub use hccl::*;
pub use memory::*;
pub use opapi::attention::*;
pub use opapi::foreach::*;
pub use opapi::math::*;
pub use opapi::objects::*;
pub use opapi::ops::*;
pub use opapi::optim::*;
pub use ops::*;
pub use sharing::*;
pub use stand_ins::*;

/// Referenced by the `libascendcl` shell crate so that this crate, and with
/// it every exported function, is linked into the shared object.
pub const LINKED: () = ();

/// Every exported function has exactly the prototype of the one list, and
/// [`functions`] hands them all out.
macro_rules! prototypes {
    ($($name:ident: $ty:ident = $policy:ident, fn($($arg:ident: $t:ty),*) -> $ret:ty;)*) => {
        $( const _: aclmem_sys::$ty = $name; )*

        /// The emulated library's functions, for code that calls ACL
        /// through a table (the Python package, in process).
        pub fn functions() -> aclmem_sys::AclFunctions {
            aclmem_sys::AclFunctions {
                $($name: Some($name),)*
            }
        }
    };
}
aclmem_sys::with_acl_functions!(prototypes);

/// Every function the catalogue says is emulated is written out in one of
/// the modules above: naming it here makes a catalogue entry without its
/// function a compile error (the others are generated in `stand_ins`).
macro_rules! emulated_exist {
    ($($name:ident in $lib:ident $(since ($smaj:literal, $smin:literal))?: $answer:ident -> $ret:ident = $proto:literal;)*) => {
        $( emulated_exists!($answer, $name); )*
    };
}
macro_rules! emulated_exists {
    (Emulated, $name:ident) => {
        const _: () = {
            let _ = $name;
        };
    };
    ($answer:ident, $name:ident) => {};
}
aclmem_sys::with_framework_functions!(emulated_exist);
