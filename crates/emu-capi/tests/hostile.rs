//! Regression tests for what a sweep of hostile inputs found, through the
//! C ABI in-process. One test, because the library's state (and the fd
//! limit this test lowers) is process-wide; each finding is a function.

use std::ffi::c_void;
use std::ptr;

use aclmem_core::{AclError, GIB, MIB, RawMemLocation, RawPhysicalMemProp};
use aclmem_emu::errors::Situation;
use aclmem_emu_capi::*;
use aclmem_sys as sys;

fn set(k: &str, v: &str) {
    // SAFETY: this binary runs one test, which owns the environment.
    unsafe { std::env::set_var(k, v) };
}

fn hbm(device: u32) -> RawPhysicalMemProp {
    RawPhysicalMemProp {
        mem_attr: sys::ACL_HBM_MEM_HUGE,
        location: RawMemLocation {
            id: device,
            type_: sys::ACL_MEM_LOCATION_TYPE_DEVICE,
        },
        ..RawPhysicalMemProp::default()
    }
}

fn code(s: Situation) -> i32 {
    s.code().code()
}

/// `aclrtMallocPhysical` of 2 MiB on `device`.
unsafe fn malloc(device: u32) -> sys::aclrtDrvMemHandle {
    let mut h = ptr::null_mut();
    // SAFETY: C prototype, live locals.
    let r = unsafe { aclrtMallocPhysical(&mut h, 2 * MIB, &hbm(device), 0) };
    assert_eq!(r, 0);
    h
}

#[test]
fn hostile_inputs() {
    set(
        "ACLMEM_EMU_MACHINE",
        &format!("hostile-{}", std::process::id()),
    );
    set("ACLMEM_EMU_QUIET", "1");
    set("ACLMEM_EMU_DEVICES", "2");
    // SAFETY: C prototypes throughout, with live locals or deliberately
    // bad pointers and counts, which the library must answer with codes.
    unsafe {
        assert_eq!(aclInit(ptr::null()), 0);
        assert_eq!(aclrtSetDevice(0), 0);
        set_pid_counts_and_duplicates();
        pids_must_be_positive();
        documented_codes_that_look_inconsistent();
        expected_address_must_end_inside_the_window();
        handles_do_not_survive_finalize();
        the_map_count_limit_is_an_error_and_nothing_gets_stuck();
        large_copies_of_bad_host_memory_are_errors();
        running_out_of_descriptors_is_named();
        assert_eq!(aclFinalize(), 0);
    }
}

/// A huge `pidNum` is refused before the array is read; duplicates are
/// ignored, so a whitelist never grows past its distinct pids.
unsafe fn set_pid_counts_and_duplicates() {
    // SAFETY: see `hostile_inputs`.
    unsafe {
        let h = malloc(0);
        let mut s = 0u64;
        assert_eq!(aclrtMemExportToShareableHandle(h, 0, 0, &mut s), 0);
        // Pids above the kernel's largest (2^22), so that no process has
        // them: a whitelist records who a live pid is, and a pid of this
        // busy machine could be taken by a new process between calls.
        const NO_PROCESS: i32 = 1 << 23;
        let mut pids: Vec<i32> = (NO_PROCESS..NO_PROCESS + 16).collect();
        let full = code(Situation::WhitelistFull);
        // The array has 16 entries; the count claims far more.
        assert_eq!(
            aclrtMemSetPidToShareableHandle(s, pids.as_mut_ptr(), usize::MAX),
            full
        );
        assert_eq!(
            aclrtMemSetPidToShareableHandle(s, pids.as_mut_ptr(), 1 << 40),
            full
        );
        assert_eq!(
            aclrtMemSetPidToShareableHandle(s, ptr::null_mut(), 1 << 20),
            100000
        );
        // The same 16 pids many times: the list stays at 16 ...
        for _ in 0..10_000 {
            assert_eq!(aclrtMemSetPidToShareableHandle(s, pids.as_mut_ptr(), 16), 0);
        }
        // ... so 112 more distinct pids still fit (128 in all), and then
        // the list is full.
        let mut more: Vec<i32> = (NO_PROCESS + 1000..NO_PROCESS + 1112).collect();
        assert_eq!(
            aclrtMemSetPidToShareableHandle(s, more.as_mut_ptr(), 112),
            0
        );
        let mut one = [3000];
        assert_eq!(
            aclrtMemSetPidToShareableHandle(s, one.as_mut_ptr(), 1),
            full
        );
        // Garbage pointers with small counts are codes, never crashes.
        assert_eq!(
            aclrtMemSetPidToShareableHandle(s, 16 as *mut i32, 4),
            100000
        );
        assert_eq!(aclrtFreePhysical(h), 0);
    }
}

/// Pid 0 and negative pids are not processes.
unsafe fn pids_must_be_positive() {
    // SAFETY: see `hostile_inputs`.
    unsafe {
        let h = malloc(0);
        let mut s = 0u64;
        assert_eq!(aclrtMemExportToShareableHandle(h, 0, 0, &mut s), 0);
        for bad in [0, -1, i32::MIN] {
            let mut p = [bad];
            assert_eq!(
                aclrtMemSetPidToShareableHandle(s, p.as_mut_ptr(), 1),
                code(Situation::BadPid),
                "pid {bad}"
            );
        }
        assert_eq!(aclrtFreePhysical(h), 0);
    }
}

/// Two codes that look inconsistent are CANN's own and kept: export flags
/// above 1 are refused by the runtime layer (107000, not the ACL layer's
/// 100000), and an occupied expected address is 207001 (the runtime's code
/// for it since 8.5).
unsafe fn documented_codes_that_look_inconsistent() {
    // SAFETY: see `hostile_inputs`.
    unsafe {
        let h = malloc(0);
        let mut s = 0u64;
        assert_eq!(
            aclrtMemExportToShareableHandle(h, 0, 2, &mut s),
            AclError::RT_PARAM_INVALID.code()
        );
        let want = (17usize << 40) as *mut c_void;
        let mut va: *mut c_void = ptr::null_mut();
        assert_eq!(aclrtReserveMemAddress(&mut va, 2 * MIB, 0, want, 0), 0);
        let mut again: *mut c_void = ptr::null_mut();
        assert_eq!(
            aclrtReserveMemAddress(&mut again, 2 * MIB, 0, want, 0),
            AclError::RT_MEMORY_ALLOCATION.code()
        );
        assert_eq!(aclrtReleaseMemAddress(va), 0);
        assert_eq!(aclrtFreePhysical(h), 0);
    }
}

/// An expected address must put the whole range inside 16-24 TiB.
unsafe fn expected_address_must_end_inside_the_window() {
    // SAFETY: see `hostile_inputs`.
    unsafe {
        let mut va: *mut c_void = ptr::null_mut();
        let near_end = ((24usize << 40) - GIB) as *mut c_void;
        assert_eq!(
            aclrtReserveMemAddress(&mut va, 2 * GIB, 0, near_end, 0),
            code(Situation::ExpectedAddress)
        );
        assert_eq!(aclrtReserveMemAddress(&mut va, GIB, 0, near_end, 0), 0);
        assert_eq!(va, near_end);
        assert_eq!(aclrtReleaseMemAddress(va), 0);
    }
}

/// A handle from before `aclFinalize` is dead after the next `aclInit`,
/// and new handles do not repeat old values.
unsafe fn handles_do_not_survive_finalize() {
    // SAFETY: see `hostile_inputs`.
    unsafe {
        let old = malloc(0);
        assert_eq!(aclFinalize(), 0);
        assert_eq!(aclInit(ptr::null()), 0);
        assert_eq!(aclrtSetDevice(0), 0);
        let new = malloc(0);
        assert_ne!(old, new);
        assert_eq!(aclrtFreePhysical(old), AclError::RT_INVALID_HANDLE.code());
        assert_eq!(aclrtFreePhysical(new), 0);
        assert_eq!(aclrtFreePhysical(new), AclError::RT_INVALID_HANDLE.code());
    }
}

/// At the process's share of `vm.max_map_count`, map answers 207012 and
/// every unmap and release still works.
unsafe fn the_map_count_limit_is_an_error_and_nothing_gets_stuck() {
    // SAFETY: see `hostile_inputs`.
    unsafe {
        let h = malloc(0);
        let limit = std::fs::read_to_string("/proc/sys/vm/max_map_count")
            .ok()
            .and_then(|s| s.trim().parse::<usize>().ok())
            .unwrap_or(65530);
        // Room for more mappings than the process may have.
        let slots = limit / 2 + 16;
        let mut va: *mut c_void = ptr::null_mut();
        assert_eq!(
            aclrtReserveMemAddress(&mut va, slots * 2 * MIB, 0, ptr::null_mut(), 0),
            0
        );
        let mut mapped = 0;
        let refused = loop {
            let at = va.cast::<u8>().add(mapped * 2 * MIB).cast();
            match aclrtMapMem(at, 2 * MIB, 0, h, 0) {
                0 => mapped += 1,
                e => break e,
            }
            assert!(mapped < slots, "never refused");
        };
        assert_eq!(refused, code(Situation::MapCountLimit));
        assert!(mapped > 1000, "refused after {mapped} mappings");
        for i in 0..mapped {
            assert_eq!(
                aclrtUnmapMem(va.cast::<u8>().add(i * 2 * MIB).cast()),
                0,
                "unmap #{i}"
            );
        }
        assert_eq!(aclrtReleaseMemAddress(va), 0);
        assert_eq!(aclrtFreePhysical(h), 0);
    }
}

/// Out of file descriptors is 207005 (the limit is named on stderr unless
/// quiet), not 207001; the next call after descriptors free up works.
unsafe fn running_out_of_descriptors_is_named() {
    // SAFETY: see `hostile_inputs`; the descriptors opened here are closed
    // here.
    unsafe {
        let mut held = Vec::new();
        loop {
            let fd = libc::open(c"/dev/null".as_ptr(), libc::O_RDONLY | libc::O_CLOEXEC);
            if fd < 0 {
                break;
            }
            held.push(fd);
            assert!(held.len() < 1 << 20, "no descriptor limit");
        }
        // Device 1's pool file does not exist yet: it needs a descriptor.
        let mut h = ptr::null_mut();
        assert_eq!(
            aclrtMallocPhysical(&mut h, 2 * MIB, &hbm(1), 0),
            code(Situation::FdLimit)
        );
        for fd in held {
            libc::close(fd);
        }
        assert_eq!(aclrtMallocPhysical(&mut h, 2 * MIB, &hbm(1), 0), 0);
        assert_eq!(aclrtFreePhysical(h), 0);
    }
}

/// Large copies take a plain `memcpy` when the kernel says the host range
/// is private anonymous memory with the permission and no guard page; any
/// other host range (unmapped, `PROT_NONE`, read-only as a destination, a
/// file mapped past its end, a guard page) is still an error code, never a
/// crash, and good memory round-trips intact.
unsafe fn large_copies_of_bad_host_memory_are_errors() {
    const N: usize = MIB;
    let bad = code(Situation::BadCopyAddress);
    let map = |prot: i32, flags: i32, fd: i32| {
        // SAFETY: a fresh mapping the kernel places.
        let p = unsafe { libc::mmap(ptr::null_mut(), N, prot, flags, fd, 0) };
        assert_ne!(p, libc::MAP_FAILED);
        p
    };
    let anon = libc::MAP_PRIVATE | libc::MAP_ANONYMOUS;
    // SAFETY: see `hostile_inputs`; every mapping below is this function's.
    unsafe {
        let mut dev = ptr::null_mut();
        assert_eq!(aclrtMalloc(&mut dev, 2 * MIB, 0), 0);
        let h2d = |src: *const c_void| aclrtMemcpy(dev, N, src, N, sys::ACL_MEMCPY_HOST_TO_DEVICE);
        let d2h = |dst: *mut c_void| aclrtMemcpy(dst, N, dev, N, sys::ACL_MEMCPY_DEVICE_TO_HOST);

        // Good memory, both ways.
        let src: Vec<u8> = (0..N).map(|i| (i * 7 + 3) as u8).collect();
        let mut back = vec![0u8; N];
        assert_eq!(h2d(src.as_ptr().cast()), 0);
        assert_eq!(d2h(back.as_mut_ptr().cast()), 0);
        assert!(src == back, "a large copy round-trips");

        let gone = map(libc::PROT_READ | libc::PROT_WRITE, anon, -1);
        assert_eq!(libc::munmap(gone, N), 0);
        assert_eq!((h2d(gone), d2h(gone)), (bad, bad), "unmapped");

        let none = map(libc::PROT_NONE, anon, -1);
        assert_eq!((h2d(none), d2h(none)), (bad, bad), "PROT_NONE");

        let read_only = map(libc::PROT_READ, anon, -1);
        assert_eq!(h2d(read_only), 0, "a read-only source is fine");
        assert_eq!(d2h(read_only), bad, "a read-only destination");

        let fd = libc::memfd_create(c"aclmem-hostile-eof".as_ptr(), libc::MFD_CLOEXEC);
        assert!(fd >= 0);
        assert_eq!(libc::ftruncate(fd, 4096), 0);
        let past_eof = map(libc::PROT_READ | libc::PROT_WRITE, libc::MAP_SHARED, fd);
        assert_eq!(
            (h2d(past_eof), d2h(past_eof)),
            (bad, bad),
            "a file past its end"
        );

        // Guard pages exist from Linux 6.13; elsewhere this part is moot.
        // qemu-user (`cargo xtask cross` runs the tests through it) answers
        // advice it does not know with success and does nothing, so there
        // a guard page cannot be made at all.
        const MADV_GUARD_INSTALL: i32 = 102;
        let guarded = map(libc::PROT_READ | libc::PROT_WRITE, anon, -1);
        let page = guarded.cast::<u8>().add(N / 2).cast();
        let emulated_cpu = std::env::var_os("ACLMEM_TEST_RUNNER").is_some();
        if emulated_cpu {
            eprintln!("under ACLMEM_TEST_RUNNER (qemu-user): the guard-page case is moot");
        } else if libc::madvise(page, 4096, MADV_GUARD_INSTALL) == 0 {
            assert_eq!((h2d(guarded), d2h(guarded)), (bad, bad), "a guard page");
        } else {
            eprintln!("no MADV_GUARD_INSTALL on this kernel: the guard-page case is moot");
        }

        for p in [none, read_only, past_eof, guarded] {
            assert_eq!(libc::munmap(p, N), 0);
        }
        libc::close(fd);
        assert_eq!(aclrtFree(dev), 0);
    }
}
