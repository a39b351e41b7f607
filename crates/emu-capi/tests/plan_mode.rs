//! Plan mode through the C ABI (`ACLMEM_EMU_OPS=plan`), in-process: large
//! device allocations, copies, sets and operators (with a kernel and
//! without) are accepted without computing, device reads give zeros, and
//! the device's pool files stay unbacked; descriptors are still checked.
//! Then compute mode again: an operator without a kernel is 100024. One
//! test, because the library's state is process-wide.

use std::ffi::{CStr, CString, c_void};
use std::ptr;

use aclmem_core::AclError;
use aclmem_emu_capi::ops::*;
use aclmem_emu_capi::*;

const F32: i32 = 0;
const ND: i32 = 2;
const H2D: u32 = 1;
const D2H: u32 = 2;
const D2D: u32 = 3;
const MIB: usize = 1 << 20;

fn set(k: &str, v: &str) {
    // SAFETY: this binary runs one test, which owns the environment.
    unsafe { std::env::set_var(k, v) };
}

/// Bytes backing this process's memfds (the emulator's pool files).
fn memfd_backing() -> u64 {
    use std::os::unix::fs::MetadataExt;
    let mut total = 0;
    for e in std::fs::read_dir("/proc/self/fd").unwrap().flatten() {
        let is_memfd =
            std::fs::read_link(e.path()).is_ok_and(|t| t.to_string_lossy().starts_with("/memfd:"));
        if is_memfd && let Ok(m) = std::fs::metadata(e.path()) {
            total += m.blocks() * 512;
        }
    }
    total
}

fn malloc(size: usize) -> *mut c_void {
    let mut p = ptr::null_mut();
    // SAFETY: a live local out parameter.
    assert_eq!(unsafe { aclrtMalloc(&mut p, size, 0) }, 0);
    p
}

fn memcpy(dst: *mut c_void, src: *const c_void, n: usize, kind: u32) -> i32 {
    // SAFETY: the C prototype; the test passes live buffers of `n` bytes
    // (host) or device memory, or deliberately bad ranges.
    unsafe { aclrtMemcpy(dst, n, src, n, kind) }
}

/// A descriptor and its buffer, as torch_npu makes them.
struct Operand {
    desc: *mut c_void,
    buf: *mut c_void,
}

fn operand(dtype: i32, dims: &[i64], data: *mut c_void, bytes: usize) -> Operand {
    let desc = aclCreateTensorDesc(dtype, dims.len() as i32, dims.as_ptr(), ND);
    assert!(!desc.is_null());
    Operand {
        desc,
        buf: aclCreateDataBuffer(data, bytes),
    }
}

fn run(op: &str, inputs: &[&Operand], outputs: &[&Operand]) -> i32 {
    let name = CString::new(op).unwrap();
    let in_desc: Vec<*const c_void> = inputs.iter().map(|o| o.desc as *const c_void).collect();
    let in_buf: Vec<*const c_void> = inputs.iter().map(|o| o.buf as *const c_void).collect();
    let out_desc: Vec<*const c_void> = outputs.iter().map(|o| o.desc as *const c_void).collect();
    let out_buf: Vec<*const c_void> = outputs.iter().map(|o| o.buf as *const c_void).collect();
    // SAFETY: arrays of live handles, as long as the counts say.
    unsafe {
        aclopCompileAndExecute(
            name.as_ptr(),
            inputs.len() as i32,
            in_desc.as_ptr(),
            in_buf.as_ptr(),
            outputs.len() as i32,
            out_desc.as_ptr(),
            out_buf.as_ptr(),
            ptr::null(),
            0,
            0,
            ptr::null(),
            ptr::null_mut(),
        )
    }
}

#[test]
fn plan_mode_through_the_c_abi() {
    set(
        "ACLMEM_EMU_MACHINE",
        &format!("capi-plan-{}", std::process::id()),
    );
    set("ACLMEM_EMU_QUIET", "1");
    set("ACLMEM_EMU_DEVICES", "1");
    set("ACLMEM_EMU_HBM", "64GiB");
    set("ACLMEM_EMU_OPS", "plan");
    assert_eq!(aclInit(ptr::null()), 0);
    assert_eq!(aclrtSetDevice(0), 0);
    // SAFETY: a static C string.
    let mode = unsafe { CStr::from_ptr(aclmem_emu_capi::record::aclmem_emu_ops_mode()) };
    assert_eq!(mode.to_str(), Ok("plan"));
    let before = memfd_backing();

    // 3 × 12 GiB of device memory, written, copied, set and computed on.
    let n: i64 = 56 * 1024; // 56Ki × 56Ki f32 = 12.25 GiB
    let bytes = (n * n * 4) as usize;
    let (a, b, c) = (malloc(bytes), malloc(bytes), malloc(bytes));
    let mut host = vec![0xabu8; 64 * MIB];
    for off in (0..bytes).step_by(host.len()) {
        let len = host.len().min(bytes - off);
        // SAFETY: inside `a`'s allocation.
        let dst = unsafe { a.cast::<u8>().add(off) }.cast();
        assert_eq!(memcpy(dst, host.as_ptr().cast(), len, H2D), 0);
    }
    assert_eq!(memcpy(b, a, bytes, D2D), 0);
    // SAFETY: the C prototype; `c` is `bytes` of device memory.
    assert_eq!(unsafe { aclrtMemset(c, bytes, 0x7f, bytes) }, 0);
    // SAFETY: as above, on the default stream.
    let filled = unsafe { aclrtMemsetAsync(b, bytes, 0x11, bytes, ptr::null_mut()) };
    assert_eq!(filled, 0);
    // A matrix product (a kernel exists) and an operator with none: both
    // accepted without computing.
    let x1 = operand(F32, &[n, n], a, bytes);
    let x2 = operand(F32, &[n, n], b, bytes);
    let y = operand(F32, &[n, n], c, bytes);
    assert_eq!(run("MatMul", &[&x1, &x2], &[&y]), 0);
    assert_eq!(run("FlashAttentionScore", &[&x1, &x2], &[&y]), 0);
    assert_eq!(run("MatMul", &[&x1, &x2], &[&y]), 0);
    // Device reads give zeros.
    assert_eq!(memcpy(host.as_mut_ptr().cast(), c, host.len(), D2H), 0);
    assert!(host.iter().all(|&x| x == 0));
    let grown = memfd_backing().saturating_sub(before);
    assert!(
        grown < (16 * MIB) as u64,
        "{grown} bytes backed after 36 GiB of device memory was written and computed on"
    );

    // Descriptors are still checked, with the operator path's codes.
    let small = operand(F32, &[n, n], c, bytes - 4);
    assert_eq!(
        run("MatMul", &[&x1, &x2], &[&small]),
        100_000,
        "buffer too small"
    );
    let negative = operand(F32, &[-1, 4], c, 64);
    assert_eq!(run("Relu", &[&negative], &[&y]), 100_000, "negative dim");
    let unknown = operand(999, &[4], c, 64);
    assert_eq!(
        run("Relu", &[&unknown], &[&y]),
        AclError::UNSUPPORTED_DATA_TYPE.code()
    );
    let on_host = operand(F32, &[4], host.as_mut_ptr().cast(), 64);
    assert_eq!(aclSetTensorPlaceMent(on_host.desc, 1), 0);
    assert_eq!(run("Relu", &[&x1], &[&on_host]), 100_000, "output on host");
    let unmapped = operand(F32, &[4], 0x1000 as *mut c_void, 64);
    assert_eq!(
        run("Relu", &[&unmapped], &[&y]),
        100_000,
        "not device memory"
    );

    // The exit report names the mode and the operators accepted.
    let report = aclmem_emu_capi::record::report().unwrap();
    assert!(
        report.contains("plan mode (ACLMEM_EMU_OPS=plan)"),
        "{report}"
    );
    assert!(report.contains("operator MatMul (plan mode)"), "{report}");
    assert!(
        report.contains("operator FlashAttentionScore (plan mode)"),
        "{report}"
    );
    for p in [a, b, c] {
        assert_eq!(aclrtFree(p), 0);
    }
    assert_eq!(aclFinalize(), 0);

    // Compute mode again: an operator without a kernel is 100024.
    set("ACLMEM_EMU_OPS", "compute");
    set(
        "ACLMEM_EMU_MACHINE",
        &format!("capi-compute-{}", std::process::id()),
    );
    set("ACLMEM_EMU_HBM", "256MiB");
    assert_eq!(aclInit(ptr::null()), 0);
    assert_eq!(aclrtSetDevice(0), 0);
    let p = malloc(64);
    let t = operand(F32, &[4], p, 64);
    assert_eq!(
        run("FlashAttentionScore", &[&t], &[&t]),
        AclError::OP_NOT_FOUND.code()
    );
    assert_eq!(run("Abs", &[&t], &[&t]), 0);
    assert_eq!(aclFinalize(), 0);
}
