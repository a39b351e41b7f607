//! The C ABI of the emulated library, driven by arbitrary call sequences
//! in one process: sizes, flags, enum values, indices of earlier results
//! and garbage pointers. The library must never crash, never panic (a
//! caught panic answers 500000, which fails the run), and after the
//! sequence's resources are torn down no device memory may be left in use.
#![no_main]

use std::ffi::{c_char, c_void};
use std::ptr;
use std::sync::Once;

use aclmem_emu_capi::*;
use aclmem_sys as sys;
use arbitrary::Arbitrary;
use libfuzzer_sys::fuzz_target;

const MIB: usize = 1 << 20;
const INTERNAL: [i32; 3] = [500000, 507000, 507899];

#[derive(Debug, Arbitrary)]
enum Which {
    Index(u8),
    Garbage(u64),
}

#[derive(Debug, Arbitrary)]
enum Ptr {
    Mapped(u8, u32),
    Host(u16),
    Garbage(u64),
    Null,
}

#[derive(Debug, Arbitrary)]
enum Op {
    Malloc {
        size: u8,
        attr: u8,
        loc: u8,
        id: u8,
        flags: u8,
        handle_type: u8,
    },
    Free(Which),
    Reserve {
        size: u8,
        expected: Option<u16>,
        align: u8,
        flags: u8,
    },
    Release(Which),
    Map {
        resv: Which,
        at: u8,
        handle: Which,
        size: u8,
        offset: u8,
        flags: u8,
    },
    Unmap(Which),
    Export {
        handle: Which,
        flags: u8,
        handle_type: u8,
    },
    SetPid {
        shareable: Which,
        pids: Vec<i32>,
        extra: u16,
        null: bool,
    },
    Import {
        shareable: Which,
        device: i8,
    },
    Memcpy {
        dst: Ptr,
        src: Ptr,
        count: u16,
        dest_max: u16,
        kind: u8,
    },
    Memset {
        dst: Ptr,
        max: u16,
        count: u16,
        value: i32,
    },
    MemInfo {
        attr: u8,
        null: bool,
    },
    Granularity {
        attr: u8,
        loc: u8,
        option: u32,
    },
    Attributes(Ptr),
    AddressRange(Ptr),
    Retain(Ptr),
    MallocDevice {
        size: u32,
        policy: u32,
    },
    FreeDevice(Which),
    IpcKey {
        which: Which,
        len: u8,
    },
    SetDevice(i8),
    Stream,
}

struct State {
    handles: Vec<sys::aclrtDrvMemHandle>,
    resvs: Vec<(usize, usize)>,
    maps: Vec<usize>,
    shareables: Vec<u64>,
    device: Vec<usize>,
    streams: Vec<sys::aclrtStream>,
    host: Vec<u8>,
}

fn pick<T: Copy>(v: &[T], w: &Which, garbage: impl Fn(u64) -> T) -> T {
    match w {
        Which::Index(i) if !v.is_empty() => v[*i as usize % v.len()],
        Which::Index(i) => garbage(u64::from(*i)),
        Which::Garbage(g) => garbage(*g),
    }
}

fn ptr_of(s: &mut State, p: &Ptr) -> *mut c_void {
    match p {
        Ptr::Mapped(i, off) if !s.maps.is_empty() => {
            (s.maps[*i as usize % s.maps.len()] + (*off as usize % (4 * MIB))) as *mut c_void
        }
        Ptr::Host(off) => s
            .host
            .as_mut_ptr()
            .wrapping_add(*off as usize % 4096)
            .cast(),
        Ptr::Garbage(g) => *g as usize as *mut c_void,
        _ => ptr::null_mut(),
    }
}

fn check(call: &str, code: i32) {
    assert!(
        !INTERNAL.contains(&code),
        "{call} answered the internal error {code}"
    );
}

fn prop(attr: u8, loc: u8, id: u8, handle_type: u8) -> sys::aclrtPhysicalMemProp {
    sys::aclrtPhysicalMemProp {
        handle_type: u32::from(handle_type % 3),
        allocation_type: 0,
        mem_attr: u32::from(attr % 20),
        location: sys::aclrtMemLocation {
            id: u32::from(id % 3),
            type_: u32::from(loc % 6),
        },
        reserve: 0,
    }
}

fn size_of_class(c: u8) -> usize {
    match c % 8 {
        0 => 0,
        1 => 512,
        2 => 3 * MIB,
        3 => 4 * MIB,
        4 => 1 << 30,
        _ => 2 * MIB,
    }
}

static INIT: Once = Once::new();

fuzz_target!(|ops: Vec<Op>| {
    // SAFETY: every call follows the C prototypes; out pointers are live
    // locals; the pointers that are not are exactly what the library must
    // answer with a code instead of touching.
    unsafe {
        INIT.call_once(|| {
            std::env::set_var("ACLMEM_EMU_MACHINE", format!("fuzz-{}", std::process::id()));
            std::env::set_var("ACLMEM_EMU_QUIET", "1");
            std::env::set_var("ACLMEM_EMU_DEVICES", "2");
            std::env::set_var("ACLMEM_EMU_HBM", "8GiB");
            assert_eq!(aclInit(ptr::null()), 0);
        });
        assert_eq!(aclrtSetDevice(0), 0);
        let mut s = State {
            handles: Vec::new(),
            resvs: Vec::new(),
            maps: Vec::new(),
            shareables: Vec::new(),
            device: Vec::new(),
            streams: Vec::new(),
            // Large enough for any offset + count the ops can name: a copy into
            // this buffer must never run past it (that would be our bug).
            host: vec![0u8; 4096 + 65536],
        };
        for op in ops.iter().take(64) {
            run(&mut s, op);
        }
        // Tear down what the sequence made, then nothing may be in use.
        for &m in &s.maps {
            let _ = aclrtUnmapMem(m as *mut c_void);
        }
        for &(r, _) in &s.resvs {
            let _ = aclrtReleaseMemAddress(r as *mut c_void);
        }
        for &h in &s.handles {
            let _ = aclrtFreePhysical(h);
        }
        for &p in &s.device {
            let _ = aclrtFree(p as *mut c_void);
        }
        for &st in &s.streams {
            let _ = aclrtDestroyStream(st);
        }
        for device in 0..2 {
            assert_eq!(aclrtSetDevice(device), 0);
            let (mut free, mut total) = (0, 0);
            assert_eq!(aclrtGetMemInfo(sys::ACL_HBM_MEM, &mut free, &mut total), 0);
            assert_eq!(free, total, "device {device} memory left in use: {ops:?}");
        }
    }
});

unsafe fn run(s: &mut State, op: &Op) {
    // SAFETY: see the fuzz target.
    unsafe {
        match op {
            Op::Malloc {
                size,
                attr,
                loc,
                id,
                flags,
                handle_type,
            } => {
                let p = prop(*attr, *loc, *id, *handle_type);
                let mut h = ptr::null_mut();
                let r =
                    aclrtMallocPhysical(&mut h, size_of_class(*size), &p, u64::from(*flags % 3));
                check("malloc", r);
                if r == 0 {
                    s.handles.push(h);
                }
            }
            Op::Free(w) => {
                let h = pick(&s.handles, w, |g| g as usize as sys::aclrtDrvMemHandle);
                let r = aclrtFreePhysical(h);
                check("free", r);
                if r == 0 {
                    s.handles.retain(|&x| x != h);
                }
            }
            Op::Reserve {
                size,
                expected,
                align,
                flags,
            } => {
                let mut va: *mut c_void = ptr::null_mut();
                let want = expected.map_or(ptr::null_mut(), |e| {
                    ((16usize << 40) + usize::from(e) * (1 << 30)) as *mut c_void
                });
                let sz = size_of_class(*size).max(2 * MIB) * 2;
                let r = aclrtReserveMemAddress(
                    &mut va,
                    sz,
                    if *align % 4 == 0 { 2 * MIB } else { 0 },
                    want,
                    u64::from(*flags % 3),
                );
                check("reserve", r);
                if r == 0 {
                    s.resvs.push((va as usize, sz));
                }
            }
            Op::Release(w) => {
                let (r0, _) = pick(&s.resvs, w, |g| (g as usize, 0));
                let r = aclrtReleaseMemAddress(r0 as *mut c_void);
                check("release", r);
                if r == 0 {
                    s.resvs.retain(|&(x, _)| x != r0);
                }
            }
            Op::Map {
                resv,
                at,
                handle,
                size,
                offset,
                flags,
            } => {
                let (base, len) = pick(&s.resvs, resv, |g| (g as usize, 0));
                let addr = base
                    .wrapping_add(usize::from(*at % 4) * 2 * MIB)
                    .min(base + len);
                let h = pick(&s.handles, handle, |g| g as usize as sys::aclrtDrvMemHandle);
                let r = aclrtMapMem(
                    addr as *mut c_void,
                    size_of_class(*size),
                    usize::from(*offset % 2) * 2 * MIB,
                    h,
                    u64::from(*flags % 2),
                );
                check("map", r);
                if r == 0 {
                    s.maps.push(addr);
                }
            }
            Op::Unmap(w) => {
                let m = pick(&s.maps, w, |g| g as usize);
                let r = aclrtUnmapMem(m as *mut c_void);
                check("unmap", r);
                if r == 0 {
                    s.maps.retain(|&x| x != m);
                }
            }
            Op::Export {
                handle,
                flags,
                handle_type,
            } => {
                let h = pick(&s.handles, handle, |g| g as usize as sys::aclrtDrvMemHandle);
                let mut out = 0u64;
                let r = aclrtMemExportToShareableHandle(
                    h,
                    u32::from(*handle_type % 3),
                    u64::from(*flags % 3),
                    &mut out,
                );
                check("export", r);
                if r == 0 {
                    s.shareables.push(out);
                }
            }
            Op::SetPid {
                shareable,
                pids,
                extra,
                null,
            } => {
                let sh = pick(&s.shareables, shareable, |g| g);
                // The array always holds `count` pids: what is under test
                // is the library, not reads past our own buffer.
                let count = pids.len() + usize::from(*extra % 4);
                let mut buf = pids.clone();
                buf.resize(count.max(1), 4242);
                let p = if *null {
                    ptr::null_mut()
                } else {
                    buf.as_mut_ptr()
                };
                check("setpid", aclrtMemSetPidToShareableHandle(sh, p, count));
            }
            Op::Import { shareable, device } => {
                let sh = pick(&s.shareables, shareable, |g| g);
                let mut h = ptr::null_mut();
                let r = aclrtMemImportFromShareableHandle(sh, i32::from(*device % 4), &mut h);
                check("import", r);
                if r == 0 {
                    s.handles.push(h);
                }
            }
            Op::Memcpy {
                dst,
                src,
                count,
                dest_max,
                kind,
            } => {
                let d = ptr_of(s, dst);
                let sr = ptr_of(s, src);
                check(
                    "memcpy",
                    aclrtMemcpy(
                        d,
                        usize::from(*dest_max),
                        sr,
                        usize::from(*count),
                        u32::from(*kind % 9),
                    ),
                );
            }
            Op::Memset {
                dst,
                max,
                count,
                value,
            } => {
                let d = ptr_of(s, dst);
                check(
                    "memset",
                    aclrtMemset(d, usize::from(*max), *value, usize::from(*count)),
                );
            }
            Op::MemInfo { attr, null } => {
                let (mut f, mut t) = (0usize, 0usize);
                let fp = if *null {
                    ptr::null_mut()
                } else {
                    &mut f as *mut usize
                };
                check(
                    "meminfo",
                    aclrtGetMemInfo(u32::from(*attr % 20), fp, &mut t),
                );
            }
            Op::Granularity { attr, loc, option } => {
                let mut p = prop(*attr, *loc, 0, 0);
                let mut g = 0usize;
                check(
                    "granularity",
                    aclrtMemGetAllocationGranularity(&mut p, *option % 3, &mut g),
                );
            }
            Op::Attributes(p) => {
                let at = ptr_of(s, p);
                let mut a = sys::aclrtPtrAttributes::default();
                check("attributes", aclrtPointerGetAttributes(at, &mut a));
            }
            Op::AddressRange(p) => {
                let at = ptr_of(s, p);
                let (mut base, mut size) = (ptr::null_mut(), 0usize);
                check("range", aclrtMemGetAddressRange(at, &mut base, &mut size));
            }
            Op::Retain(p) => {
                let at = ptr_of(s, p);
                let mut h = ptr::null_mut();
                let r = aclrtMemRetainAllocationHandle(at, &mut h);
                check("retain", r);
                if r == 0 {
                    s.handles.push(h);
                }
            }
            Op::MallocDevice { size, policy } => {
                let mut p: *mut c_void = ptr::null_mut();
                let r = aclrtMalloc(&mut p, (*size as usize) % (64 * MIB), *policy % 9);
                check("aclrtMalloc", r);
                if r == 0 {
                    s.device.push(p as usize);
                }
            }
            Op::FreeDevice(w) => {
                let p = pick(&s.device, w, |g| g as usize);
                let r = aclrtFree(p as *mut c_void);
                check("aclrtFree", r);
                if r == 0 {
                    s.device.retain(|&x| x != p);
                }
            }
            Op::IpcKey { which, len } => {
                let p = pick(&s.device, which, |g| g as usize);
                let mut key = [0 as c_char; 80];
                let r = aclrtIpcMemGetExportKey(
                    p as *mut c_void,
                    2 * MIB,
                    key.as_mut_ptr(),
                    usize::from(*len % 80),
                    0,
                );
                check("ipc key", r);
                if r == 0 {
                    check("ipc close", aclrtIpcMemClose(key.as_ptr()));
                }
            }
            Op::SetDevice(d) => {
                check("set device", aclrtSetDevice(i32::from(*d % 3)));
                let _ = aclrtSetDevice(0);
            }
            Op::Stream => {
                let mut st = ptr::null_mut();
                let r = aclrtCreateStream(&mut st);
                check("stream", r);
                if r == 0 {
                    s.streams.push(st);
                }
            }
        }
    }
}
