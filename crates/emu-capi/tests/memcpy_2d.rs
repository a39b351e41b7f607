//! Two-dimensional copies, copies through base pointers held in device
//! memory, and copies described in device memory, called in-process:
//! bytes compared, every documented refusal with its code, and the
//! answers of releases and products without them. One test, because the
//! library's state is process-wide.

mod common;

use std::ffi::c_void;
use std::ptr;

use aclmem_emu_capi::*;

use common::*;

const D2D: u32 = 3;
const DEFAULT: u32 = 4;
const INNER_D2D: u32 = 6;
const SUM: u32 = 10;
const MAX: u32 = 11;
const MIN: u32 = 12;
const EQUAL: u32 = 13;

#[test]
fn memcpy_2d_offset_and_descriptors() {
    set("ACLMEM_EMU_QUIET", "1");
    set("ACLMEM_EMU_HBM", "256MiB");
    init("a2", "Ascend910B3", "9.0");
    two_dimensional();
    with_offset();
    descriptors();
    reduce();
    let d = device(64);
    // CANN 9.1's 32-bit sets: absent from every release the emulator knows.
    assert_eq!(aclrtMemsetD32(d, 64, 7, 16), NOT_SUPPORTED);
    assert_eq!(
        aclrtMemsetD32Async(ptr::null_mut(), 0, 7, 0, ptr::null_mut()),
        NOT_SUPPORTED
    );
    assert_eq!(aclrtFree(d), 0);
    finalize();
    init("cann83", "Ascend910B3", "8.3");
    let d = device(64);
    let mut size = 0usize;
    // SAFETY: C prototypes with live locals.
    unsafe {
        assert_eq!(aclrtGetMemcpyDescSize(INNER_D2D, &mut size), NOT_SUPPORTED);
        // The other 8.5 functions: absent from 8.3, whatever the arguments.
        let nul = ptr::null_mut();
        assert_eq!(
            aclrtSetMemcpyDesc(d, INNER_D2D, d, d, 8, nul),
            NOT_SUPPORTED
        );
        assert_eq!(aclrtMemcpyAsyncWithDesc(d, INNER_D2D, nul), NOT_SUPPORTED);
        let base = d.cast::<*mut c_void>();
        assert_eq!(
            aclrtMemcpyAsyncWithOffset(base, 8, 0, base.cast(), 8, 0, INNER_D2D, nul),
            NOT_SUPPORTED
        );
        assert_eq!(aclrtReduceAsync(d, d, 8, SUM, 0, nul, nul), NOT_SUPPORTED);
        // Older than every release the emulator knows: there.
        let rows = pattern(16, 1);
        assert_eq!(aclrtMemcpy2d(d, 8, rows.as_ptr().cast(), 8, 8, 2, H2D), 0);
        assert_eq!(from_device(d, 16), rows);
    }
    assert_eq!(aclrtFree(d), 0);
    finalize();
    init("310p", "Ascend310P3", "9.0");
    let d = device(64);
    // SAFETY: C prototypes with live locals.
    unsafe {
        let mut s = ptr::null_mut();
        assert_eq!(aclrtCreateStream(&mut s), 0);
        assert_eq!(
            aclrtMemcpy2dAsync(d, 16, d.byte_add(32), 16, 8, 2, D2D, s),
            NOT_SUPPORTED
        );
        assert_eq!(aclrtGetMemcpyDescSize(INNER_D2D, &mut 0), NOT_SUPPORTED);
        // Atlas inference reduces fp32 with SUM only.
        assert_eq!(
            aclrtReduceAsync(d, d.byte_add(32), 16, SUM, 0, s, ptr::null_mut()),
            0
        );
        assert_eq!(
            aclrtReduceAsync(d, d.byte_add(32), 16, MAX, 0, s, ptr::null_mut()),
            NOT_SUPPORTED
        );
        assert_eq!(
            aclrtReduceAsync(d, d.byte_add(32), 16, SUM, 2, s, ptr::null_mut()),
            NOT_SUPPORTED,
            "int8"
        );
        assert_eq!(aclrtDestroyStream(s), 0);
    }
    assert_eq!(aclrtFree(d), 0);
    finalize();
}

fn two_dimensional() {
    // A 4 x 6 block out of a host matrix of pitch 10 into device rows of
    // pitch 8, and back out into a host matrix of pitch 12.
    let src = pattern(40, 5);
    let d = device(64);
    to_device(d, &[0xee; 64]);
    let mut out = vec![0u8; 48];
    // SAFETY: C prototypes; every range lies inside its buffer.
    unsafe {
        assert_eq!(aclrtMemcpy2d(d, 8, src.as_ptr().cast(), 10, 6, 4, H2D), 0);
        let dev = from_device(d, 32);
        for r in 0..4 {
            assert_eq!(dev[r * 8..r * 8 + 6], src[r * 10..r * 10 + 6], "row {r}");
            assert_eq!(dev[r * 8 + 6..r * 8 + 8], [0xee, 0xee], "row {r}'s gap");
        }
        assert_eq!(
            aclrtMemcpy2d(out.as_mut_ptr().cast(), 12, d, 8, 6, 4, DEFAULT),
            0
        );
        for r in 0..4 {
            assert_eq!(out[r * 12..r * 12 + 6], src[r * 10..r * 10 + 6], "row {r}");
            assert_eq!(out[r * 12 + 6..r * 12 + 12], [0; 6], "row {r}'s gap");
        }
        // Device to device: the asynchronous form only.
        let mut s = ptr::null_mut();
        assert_eq!(aclrtCreateStream(&mut s), 0);
        let e = d.byte_add(32);
        assert_eq!(aclrtMemcpy2dAsync(e, 8, d, 8, 6, 4, D2D, s), 0);
        assert_eq!(from_device(e, 32), from_device(d, 32));
        assert_eq!(aclrtMemcpy2d(e, 8, d, 8, 6, 4, D2D), NOT_SUPPORTED);
        assert_eq!(aclrtMemcpy2d(e, 8, d, 8, 6, 4, DEFAULT), NOT_SUPPORTED);
        // Width or height 0: nothing, whatever the rest says.
        assert_eq!(
            aclrtMemcpy2d(ptr::null_mut(), 0, ptr::null(), 0, 0, 4, 99),
            0
        );
        assert_eq!(
            aclrtMemcpy2dAsync(ptr::null_mut(), 0, ptr::null(), 0, 6, 0, 99, s),
            0
        );
        // The ACL layer, then the runtime.
        let h = src.as_ptr().cast::<c_void>();
        assert_eq!(aclrtMemcpy2d(ptr::null_mut(), 8, h, 10, 6, 4, H2D), INVALID);
        assert_eq!(aclrtMemcpy2d(d, 8, ptr::null(), 10, 6, 4, H2D), INVALID);
        assert_eq!(
            aclrtMemcpy2d(d, 5, h, 10, 6, 4, H2D),
            INVALID,
            "width > dpitch"
        );
        assert_eq!(
            aclrtMemcpy2d(d, 8, h, 5, 6, 4, H2D),
            INVALID,
            "width > spitch"
        );
        assert_eq!(aclrtMemcpy2d(d, 8, h, 10, 6, 4, 0), INVALID, "host to host");
        assert_eq!(
            aclrtMemcpy2d(d, 8, h, 10, 6, 4, 5),
            INVALID,
            "a staged kind"
        );
        let wide = 5_000_001;
        assert_eq!(aclrtMemcpy2d(d, wide, h, wide, wide, 1, H2D), RT_INVALID);
        assert_eq!(aclrtMemcpy2d(d, 8, h, 10, 6, 5_242_881, H2D), RT_INVALID);
        assert_eq!(
            aclrtMemcpy2d(d, 8, h, 10, 6, 4, D2H),
            RT_INVALID,
            "kind against addresses"
        );
        assert_eq!(aclrtDestroyStream(s), 0);
    }
    assert_eq!(aclrtFree(d), 0);
}

fn with_offset() {
    let data = device(256);
    let bases = device(64);
    let src_bytes = pattern(128, 11);
    to_device(data, &src_bytes);
    // The base pointers, in device memory: source at data, destination at
    // data + 128.
    let mut table = Vec::new();
    table.extend_from_slice(&(data as u64).to_le_bytes());
    table.extend_from_slice(&(data as u64 + 128).to_le_bytes());
    to_device(bases, &table);
    let src_base = bases.cast::<*const c_void>().cast_const();
    // SAFETY: C prototypes; the offsets stay inside the allocation.
    unsafe {
        let dst_base = bases.byte_add(8).cast::<*mut c_void>();
        let mut s = ptr::null_mut();
        assert_eq!(aclrtCreateStream(&mut s), 0);
        assert_eq!(
            aclrtMemcpyAsyncWithOffset(dst_base, 100, 4, src_base, 32, 16, INNER_D2D, s),
            0
        );
        let now = from_device(data, 256);
        assert_eq!(now[132..164], src_bytes[16..48]);
        assert_eq!(now[128..132], [0; 4], "before the destination offset");
        assert_eq!(
            aclrtMemcpyAsyncWithOffset(dst_base, 100, 4, src_base, 0, 16, 99, s),
            0,
            "count 0: nothing"
        );
        assert_eq!(
            aclrtMemcpyAsyncWithOffset(dst_base, 100, 4, src_base, 32, 16, D2D, s),
            RT_INVALID,
            "only ACL_MEMCPY_INNER_DEVICE_TO_DEVICE"
        );
        assert_eq!(
            aclrtMemcpyAsyncWithOffset(dst_base, 16, 4, src_base, 32, 16, INNER_D2D, s),
            RT_INVALID,
            "count above destMax"
        );
        let mut host_base = data;
        assert_eq!(
            aclrtMemcpyAsyncWithOffset(&mut host_base, 100, 4, src_base, 32, 16, INNER_D2D, s),
            RT_INVALID,
            "the base pointer must be held in device memory"
        );
        assert_eq!(aclrtDestroyStream(s), 0);
    }
    assert_eq!(aclrtFree(data), 0);
    assert_eq!(aclrtFree(bases), 0);
}

fn descriptors() {
    let data = device(256);
    let src_bytes = pattern(64, 21);
    to_device(data, &src_bytes);
    // SAFETY: C prototypes with live locals; NULL where a refusal is
    // wanted.
    unsafe {
        let mut size = 0usize;
        assert_eq!(aclrtGetMemcpyDescSize(INNER_D2D, &mut size), 0);
        assert_eq!(size, 32, "A2's descriptor");
        assert_eq!(aclrtGetMemcpyDescSize(INNER_D2D, ptr::null_mut()), INVALID);
        assert_eq!(aclrtGetMemcpyDescSize(8, &mut size), INVALID);
        assert_eq!(aclrtGetMemcpyDescSize(D2D, &mut size), NOT_SUPPORTED);
        let desc = device(size);
        let dst = data.byte_add(128);
        assert_eq!(
            aclrtSetMemcpyDesc(desc, INNER_D2D, data, dst, 48, ptr::null_mut()),
            0
        );
        let mut s = ptr::null_mut();
        assert_eq!(aclrtCreateStream(&mut s), 0);
        assert_eq!(aclrtMemcpyAsyncWithDesc(desc, INNER_D2D, s), 0);
        assert_eq!(from_device(dst, 48), src_bytes[..48]);
        // Refusals.
        let nul = ptr::null_mut();
        assert_eq!(
            aclrtSetMemcpyDesc(nul, INNER_D2D, data, dst, 48, nul),
            INVALID
        );
        assert_eq!(
            aclrtSetMemcpyDesc(desc, INNER_D2D, nul, dst, 48, nul),
            INVALID
        );
        assert_eq!(
            aclrtSetMemcpyDesc(desc, INNER_D2D, data, nul, 48, nul),
            INVALID
        );
        assert_eq!(aclrtSetMemcpyDesc(desc, 8, data, dst, 48, nul), INVALID);
        assert_eq!(
            aclrtSetMemcpyDesc(desc, INNER_D2D, data, dst, 0, nul),
            INVALID
        );
        assert_eq!(
            aclrtSetMemcpyDesc(desc, INNER_D2D, data, dst, 48, desc),
            INVALID
        );
        assert_eq!(aclrtMemcpyAsyncWithDesc(nul, INNER_D2D, s), INVALID);
        assert_eq!(aclrtMemcpyAsyncWithDesc(desc, 8, s), INVALID);
        assert_eq!(
            aclrtMemcpyAsyncWithDesc(desc, INNER_D2D, nul),
            INVALID,
            "stream NULL"
        );
        let blank = device(32);
        assert_eq!(
            aclrtMemcpyAsyncWithDesc(blank, INNER_D2D, s),
            RT_INVALID,
            "a descriptor never set"
        );
        assert_eq!(aclrtDestroyStream(s), 0);
        assert_eq!(aclrtFree(blank), 0);
        assert_eq!(aclrtFree(desc), 0);
    }
    assert_eq!(aclrtFree(data), 0);
}

/// `count` bytes of `values` into fresh device memory.
fn on_device<T: Copy>(values: &[T]) -> *mut c_void {
    let len = std::mem::size_of_val(values);
    let d = device(len);
    // SAFETY: plain numbers, viewed as their bytes.
    let bytes = unsafe { std::slice::from_raw_parts(values.as_ptr().cast::<u8>(), len) };
    to_device(d, bytes);
    d
}

fn reduce() {
    let nul = ptr::null_mut();
    // SAFETY: C prototypes; every buffer holds `count` bytes.
    unsafe {
        // fp32 SUM, MAX, MIN.
        let a = [1.5f32, -2.0, 8.0, 0.25];
        let b = [2.0f32, 4.0, -1.0, 0.25];
        for (kind, want) in [
            (SUM, [3.5f32, 2.0, 7.0, 0.5]),
            (MAX, [2.0, 4.0, 8.0, 0.25]),
            (MIN, [1.5, -2.0, -1.0, 0.25]),
        ] {
            let (dst, src) = (on_device(&a), on_device(&b));
            assert_eq!(aclrtReduceAsync(dst, src, 16, kind, 0, nul, nul), 0);
            let got: Vec<f32> = from_device(dst, 16)
                .chunks(4)
                .map(|c| f32::from_ne_bytes(c.try_into().unwrap()))
                .collect();
            assert_eq!(got, want, "kind {kind}");
            assert_eq!(from_device(src, 16).len(), 16);
            assert_eq!(aclrtFree(dst), 0);
            assert_eq!(aclrtFree(src), 0);
        }
        // int32 SUM wraps; int8; fp16 (1.0 + 0.5 = 1.5: 0x3c00 + 0x3800 = 0x3e00).
        let (dst, src) = (on_device(&[i32::MAX, -5]), on_device(&[1i32, 7]));
        assert_eq!(aclrtReduceAsync(dst, src, 8, SUM, 3, nul, nul), 0);
        assert_eq!(
            from_device(dst, 8),
            [i32::MIN.to_ne_bytes(), 2i32.to_ne_bytes()].concat()
        );
        let (h, g) = (
            on_device(&[0x3c00u16, 0xc000]),
            on_device(&[0x3800u16, 0x4000]),
        );
        assert_eq!(aclrtReduceAsync(h, g, 4, SUM, 1, nul, nul), 0);
        assert_eq!(
            from_device(h, 4),
            [0x3e00u16.to_ne_bytes(), 0u16.to_ne_bytes()].concat()
        );
        // Refusals: the ACL layer, then the runtime.
        assert_eq!(aclrtReduceAsync(nul, g, 4, SUM, 1, nul, nul), INVALID);
        assert_eq!(
            aclrtReduceAsync(h, ptr::null(), 4, SUM, 1, nul, nul),
            INVALID
        );
        assert_eq!(
            aclrtReduceAsync(h, g, 4, SUM, 1, nul, h),
            INVALID,
            "reserve"
        );
        assert_eq!(
            aclrtReduceAsync(h, g, 4, SUM, 9, nul, nul),
            INVALID,
            "int64"
        );
        assert_eq!(
            aclrtReduceAsync(h, g, 4, 14, 1, nul, nul),
            RT_INVALID,
            "kind"
        );
        assert_eq!(aclrtReduceAsync(h, g, 4, EQUAL, 1, nul, nul), NOT_SUPPORTED);
        assert_eq!(
            aclrtReduceAsync(h, g, 4, SUM, 8, nul, nul),
            NOT_SUPPORTED,
            "uint32 on A2"
        );
        assert_eq!(
            aclrtReduceAsync(h, g, 4, SUM, 29, nul, nul),
            NOT_SUPPORTED,
            "int4"
        );
        assert_eq!(
            aclrtReduceAsync(h.byte_add(1), g, 2, SUM, 1, nul, nul),
            RT_INVALID
        );
        assert_eq!(
            aclrtReduceAsync(h, g, 3, SUM, 1, nul, nul),
            RT_INVALID,
            "half an element"
        );
        let host_values = [0u16; 2];
        let hv = host_values.as_ptr().cast::<c_void>();
        assert_eq!(
            aclrtReduceAsync(h, hv, 4, SUM, 1, nul, nul),
            RT_INVALID,
            "host memory"
        );
        assert_eq!(
            aclrtReduceAsync(h, g, 4, SUM, 1, 0xdead_0000 as *mut c_void, nul),
            RT_INVALID,
            "a stream that is not live"
        );
        assert_eq!(
            from_device(h, 4),
            [0x3e00u16.to_ne_bytes(), 0u16.to_ne_bytes()].concat()
        );
        for p in [dst, src, h, g] {
            assert_eq!(aclrtFree(p), 0);
        }
    }
}
