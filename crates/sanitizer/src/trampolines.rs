//! The entry points that hand over their call site, and the check that every hook has the catalogue's prototype.

use super::*;

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

trampoline!(aclrtMallocPhysical => aclmem_san_aclrtMallocPhysical,
    (handle: *mut sys::aclrtDrvMemHandle, size: usize, prop: *const sys::aclrtPhysicalMemProp, flags: u64));
trampoline!(aclrtFreePhysical => aclmem_san_aclrtFreePhysical, (handle: sys::aclrtDrvMemHandle));
trampoline!(aclrtReserveMemAddress => aclmem_san_aclrtReserveMemAddress,
    (vir_ptr: *mut *mut c_void, size: usize, alignment: usize, expect_ptr: *mut c_void, flags: u64));
trampoline!(aclrtReleaseMemAddress => aclmem_san_aclrtReleaseMemAddress, (vir_ptr: *mut c_void));
trampoline!(aclrtMapMem => aclmem_san_aclrtMapMem,
    (vir_ptr: *mut c_void, size: usize, offset: usize, handle: sys::aclrtDrvMemHandle, flags: u64));
trampoline!(aclrtUnmapMem => aclmem_san_aclrtUnmapMem, (vir_ptr: *mut c_void));
trampoline!(aclrtMemExportToShareableHandle => aclmem_san_aclrtMemExportToShareableHandle,
    (handle: sys::aclrtDrvMemHandle, handle_type: sys::aclrtMemHandleType, flags: u64, shareable: *mut u64));
trampoline!(aclrtMemExportToShareableHandleV2 => aclmem_san_aclrtMemExportToShareableHandleV2,
    (handle: sys::aclrtDrvMemHandle, flags: u64, share_type: sys::aclrtMemSharedHandleType, shareable: *mut c_void));
trampoline!(aclrtMemImportFromShareableHandle => aclmem_san_aclrtMemImportFromShareableHandle,
    (shareable: u64, device_id: i32, handle: *mut sys::aclrtDrvMemHandle));
trampoline!(aclrtMemImportFromShareableHandleV2 => aclmem_san_aclrtMemImportFromShareableHandleV2,
    (shareable: *mut c_void, share_type: sys::aclrtMemSharedHandleType, flags: u64, handle: *mut sys::aclrtDrvMemHandle));
trampoline!(aclrtMemRetainAllocationHandle => aclmem_san_aclrtMemRetainAllocationHandle,
    (vir_ptr: *mut c_void, handle: *mut sys::aclrtDrvMemHandle));
trampoline!(aclrtMalloc => aclmem_san_aclrtMalloc, (dev_ptr: *mut *mut c_void, size: usize, policy: u32));
trampoline!(aclrtMallocAlign32 => aclmem_san_aclrtMallocAlign32, (dev_ptr: *mut *mut c_void, size: usize, policy: u32));
trampoline!(aclrtMallocHost => aclmem_san_aclrtMallocHost, (host_ptr: *mut *mut c_void, size: usize));
trampoline!(aclrtMemcpy => aclmem_san_aclrtMemcpy,
    (dst: *mut c_void, dest_max: usize, src: *const c_void, count: usize, kind: sys::aclrtMemcpyKind));
trampoline!(aclrtMemset => aclmem_san_aclrtMemset, (dev_ptr: *mut c_void, max_count: usize, value: i32, count: usize));

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
    ($($name:ident: $ty:ident = $policy:ident;)*) => {
        $( const _: aclmem_sys::$ty = $name; )*
    };
}
aclmem_sys::with_acl_functions!(prototypes);
