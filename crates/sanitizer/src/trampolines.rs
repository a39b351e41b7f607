//! What the sanitizer defines for each function of the catalogue: the entry points that hand over their call site to a hook, the functions forwarded unchanged, and the check that every definition has the catalogue's prototype.

// The prototypes of the catalogue name these (a function added to it is
// forwarded without a line here, whatever it takes).
#[allow(unused_imports)]
use std::ffi::{c_char, c_void};

use aclmem_sys::{self as sys, *};

// The hooks, written out and behind trampolines: every one of their
// rooms is imported whole, so that a hook added to a room needs only its
// arm in `role!` (and `prototypes!` sees every definition).
use crate::device_memory::*;
use crate::ipc::*;
use crate::passthrough::passthrough;
use crate::pools::{
    aclrtSynchronizeDevice, aclrtSynchronizeDeviceWithTimeout, aclrtSynchronizeStream,
    aclrtSynchronizeStreamWithTimeout,
};
use crate::report::Caller;
use crate::runtime::*;
use crate::vmm::*;

/// Defines the exported `$name` as a naked trampoline that inserts its
/// return address (the program's call site) before its arguments and
/// jumps to `$imp`, which returns straight to the caller. The shift is
/// chosen by the prototype's arguments (the `prototypes!` check below holds
/// the prototype to the list's), never counted by hand. Without frame
/// pointers or unwinding, this is the one exact way to know the call site.
/// On other architectures the call site is unknown (reports say so).
macro_rules! trampoline {
    ($name:ident => $imp:ident, ($($arg:ident: $t:ty),*)) => {
        /// Checked, then forwarded unchanged.
        ///
        /// # Safety
        /// The C prototype's contract.
        #[cfg(any(target_arch = "x86_64", target_arch = "aarch64"))]
        #[unsafe(naked)]
        #[unsafe(no_mangle)]
        pub unsafe extern "C" fn $name($($arg: $t),*) -> sys::aclError {
            shift!(($($arg),*), $imp)
        }

        /// Checked, then forwarded unchanged.
        ///
        /// # Safety
        /// The C prototype's contract.
        #[cfg(not(any(target_arch = "x86_64", target_arch = "aarch64")))]
        #[unsafe(no_mangle)]
        pub unsafe extern "C" fn $name($($arg: $t),*) -> sys::aclError {
            // SAFETY: the caller's contract, passed on.
            unsafe { $imp(Caller::UNKNOWN, $($arg),*) }
        }
    };
}

/// The argument shift and jump of a trampoline, by its arguments (one to
/// five, all in integer registers: pointers, sizes, 32- and 64-bit
/// integers; more would put the inserted one on the stack, and do not
/// match). On x86_64
/// the inserted argument is the stack pointer at entry, the address of the
/// slot that holds the return address ([`Caller`]: the slot also keys the
/// stack cache); on aarch64 the return address itself (`x30`).
#[cfg(target_arch = "x86_64")]
macro_rules! shift {
    (($a0:ident), $f:ident) => { core::arch::naked_asm!("mov rsi, rdi", "mov rdi, rsp", "jmp {f}", f = sym $f) };
    (($a0:ident, $a1:ident), $f:ident) => { core::arch::naked_asm!("mov rdx, rsi", "mov rsi, rdi", "mov rdi, rsp", "jmp {f}", f = sym $f) };
    (($a0:ident, $a1:ident, $a2:ident), $f:ident) => { core::arch::naked_asm!("mov rcx, rdx", "mov rdx, rsi", "mov rsi, rdi", "mov rdi, rsp", "jmp {f}", f = sym $f) };
    (($a0:ident, $a1:ident, $a2:ident, $a3:ident), $f:ident) => { core::arch::naked_asm!("mov r8, rcx", "mov rcx, rdx", "mov rdx, rsi", "mov rsi, rdi", "mov rdi, rsp", "jmp {f}", f = sym $f) };
    (($a0:ident, $a1:ident, $a2:ident, $a3:ident, $a4:ident), $f:ident) => { core::arch::naked_asm!("mov r9, r8", "mov r8, rcx", "mov rcx, rdx", "mov rdx, rsi", "mov rsi, rdi", "mov rdi, rsp", "jmp {f}", f = sym $f) };
}

#[cfg(target_arch = "aarch64")]
macro_rules! shift {
    (($a0:ident), $f:ident) => { core::arch::naked_asm!("mov x1, x0", "mov x0, x30", "b {f}", f = sym $f) };
    (($a0:ident, $a1:ident), $f:ident) => { core::arch::naked_asm!("mov x2, x1", "mov x1, x0", "mov x0, x30", "b {f}", f = sym $f) };
    (($a0:ident, $a1:ident, $a2:ident), $f:ident) => { core::arch::naked_asm!("mov x3, x2", "mov x2, x1", "mov x1, x0", "mov x0, x30", "b {f}", f = sym $f) };
    (($a0:ident, $a1:ident, $a2:ident, $a3:ident), $f:ident) => { core::arch::naked_asm!("mov x4, x3", "mov x3, x2", "mov x2, x1", "mov x1, x0", "mov x0, x30", "b {f}", f = sym $f) };
    (($a0:ident, $a1:ident, $a2:ident, $a3:ident, $a4:ident), $f:ident) => { core::arch::naked_asm!("mov x5, x4", "mov x4, x3", "mov x3, x2", "mov x2, x1", "mov x1, x0", "mov x0, x30", "b {f}", f = sym $f) };
}

/// What the sanitizer defines for each function of the catalogue, from its
/// row of `with_acl_functions!` (whose prototype gives the arguments): a
/// hook behind a trampoline, which hands over the call site (the arms name
/// the hook); a hook written out in its room (the arms that expand to
/// nothing); or, for every other function, forwarding unchanged
/// (`passthrough!`). A function added to the catalogue is forwarded
/// without a line here; the `prototypes!` check below holds every
/// definition, written or generated, to the catalogue's type.
macro_rules! defined {
    ($($name:ident: $ty:ident = $policy:ident, fn $args:tt -> $ret:ty;)*) => {
        $( role!($name $args); )*
    };
}

/// The role of one function (see [`defined!`]).
macro_rules! role {
    // Hooks behind a trampoline: the call site is handed over.
    (aclrtMallocPhysical $args:tt) => { trampoline!(aclrtMallocPhysical => aclmem_san_aclrtMallocPhysical, $args); };
    (aclrtFreePhysical $args:tt) => { trampoline!(aclrtFreePhysical => aclmem_san_aclrtFreePhysical, $args); };
    (aclrtReserveMemAddress $args:tt) => { trampoline!(aclrtReserveMemAddress => aclmem_san_aclrtReserveMemAddress, $args); };
    (aclrtReleaseMemAddress $args:tt) => { trampoline!(aclrtReleaseMemAddress => aclmem_san_aclrtReleaseMemAddress, $args); };
    (aclrtMapMem $args:tt) => { trampoline!(aclrtMapMem => aclmem_san_aclrtMapMem, $args); };
    (aclrtUnmapMem $args:tt) => { trampoline!(aclrtUnmapMem => aclmem_san_aclrtUnmapMem, $args); };
    (aclrtMemExportToShareableHandle $args:tt) => { trampoline!(aclrtMemExportToShareableHandle => aclmem_san_aclrtMemExportToShareableHandle, $args); };
    (aclrtMemExportToShareableHandleV2 $args:tt) => { trampoline!(aclrtMemExportToShareableHandleV2 => aclmem_san_aclrtMemExportToShareableHandleV2, $args); };
    (aclrtMemImportFromShareableHandle $args:tt) => { trampoline!(aclrtMemImportFromShareableHandle => aclmem_san_aclrtMemImportFromShareableHandle, $args); };
    (aclrtMemImportFromShareableHandleV2 $args:tt) => { trampoline!(aclrtMemImportFromShareableHandleV2 => aclmem_san_aclrtMemImportFromShareableHandleV2, $args); };
    (aclrtMemRetainAllocationHandle $args:tt) => { trampoline!(aclrtMemRetainAllocationHandle => aclmem_san_aclrtMemRetainAllocationHandle, $args); };
    (aclrtMalloc $args:tt) => { trampoline!(aclrtMalloc => aclmem_san_aclrtMalloc, $args); };
    (aclrtMallocAlign32 $args:tt) => { trampoline!(aclrtMallocAlign32 => aclmem_san_aclrtMallocAlign32, $args); };
    (aclrtMallocHost $args:tt) => { trampoline!(aclrtMallocHost => aclmem_san_aclrtMallocHost, $args); };
    (aclrtMemcpy $args:tt) => { trampoline!(aclrtMemcpy => aclmem_san_aclrtMemcpy, $args); };
    (aclrtMemset $args:tt) => { trampoline!(aclrtMemset => aclmem_san_aclrtMemset, $args); };
    // Written out in `runtime`.
    (aclInit $args:tt) => {};
    (aclFinalize $args:tt) => {};
    (aclrtSetDevice $args:tt) => {};
    (aclrtCreateContext $args:tt) => {};
    (aclrtSetCurrentContext $args:tt) => {};
    // Written out in `device_memory`.
    (aclrtFree $args:tt) => {};
    (aclrtFreeHost $args:tt) => {};
    (aclrtGetSocName $args:tt) => {};
    (aclrtIpcMemImportByKey $args:tt) => {};
    // Written out in `ipc`.
    (aclrtMemSetPidToShareableHandle $args:tt) => {};
    (aclrtMemSetPidToShareableHandleV2 $args:tt) => {};
    (aclrtIpcMemGetExportKey $args:tt) => {};
    (aclrtIpcMemSetImportPid $args:tt) => {};
    (aclrtIpcMemClose $args:tt) => {};
    // Written out in `pools` (the stream order of pool memory).
    (aclrtSynchronizeStream $args:tt) => {};
    (aclrtSynchronizeStreamWithTimeout $args:tt) => {};
    (aclrtSynchronizeDevice $args:tt) => {};
    (aclrtSynchronizeDeviceWithTimeout $args:tt) => {};
    // Written out in `trampolines (below: six arguments)`.
    (aclrtMemcpyAsync $args:tt) => {};
    // Every other function: forwarded unchanged.
    ($name:ident $args:tt) => { passthrough!($name $args); };
}

aclmem_sys::with_acl_functions!(defined);

/// `aclrtMemcpyAsync` has six arguments: with the call site there would be
/// seven, one on the stack; its reports name no call site.
///
/// # Safety
/// The C prototype's contract.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn aclrtMemcpyAsync(
    dst: *mut c_void,
    dest_max: usize,
    src: *const c_void,
    count: usize,
    kind: sys::aclrtMemcpyKind,
    stream: sys::aclrtStream,
) -> sys::aclError {
    // SAFETY: the caller's contract, passed on.
    unsafe { aclmem_san_aclrtMemcpyAsync(Caller::UNKNOWN, dst, dest_max, src, count, kind, stream) }
}

/// Every function of the list is defined here with its prototype.
macro_rules! prototypes {
    ($($name:ident: $ty:ident = $policy:ident, fn($($arg:ident: $t:ty),*) -> $ret:ty;)*) => {
        $( const _: aclmem_sys::$ty = $name; )*
    };
}
aclmem_sys::with_acl_functions!(prototypes);
