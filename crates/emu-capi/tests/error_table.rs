//! The emulator's error table (`aclmem_emu::errors::Situation`), entry by
//! entry: each situation is provoked, and the code it answers is the
//! table's. A situation added to the table without a case here fails the
//! last assertion.
//!
//! It lives beside the C ABI because two entries are reachable only
//! through it (the IPC key length, an unknown stream handle).

use std::collections::BTreeSet;
use std::ffi::c_void;
use std::num::NonZeroUsize;
use std::ptr;

use aclmem_core::{
    AclError, GIB, Location, MIB, MemAttr, Product, RawMemLocation, RawPhysicalMemProp,
};
use aclmem_emu::errors::Situation;
use aclmem_emu::{EmuConfig, Emulator, ShareHandleType};
use aclmem_hal::{
    PhysicalAllocator, RawHandle, ShareableHandle, ShareableMemory, VirtAddr, VirtualMemory,
};
use aclmem_sys::{AccessDesc, AccessFlags, LocationType, MallocPolicy, MemcpyKind};

fn prop(location: Location, id: u32, attr: MemAttr) -> RawPhysicalMemProp {
    RawPhysicalMemProp {
        mem_attr: attr.raw(),
        location: RawMemLocation {
            id,
            type_: location.raw(),
        },
        ..RawPhysicalMemProp::default()
    }
}

fn hbm(id: u32) -> RawPhysicalMemProp {
    prop(Location::Device, id, MemAttr::HbmMemHuge)
}

fn va(addr: usize) -> VirtAddr {
    VirtAddr(NonZeroUsize::new(addr).expect("non-zero"))
}

/// A mapped 2 MiB handle: (handle, reservation of `span` bytes).
fn mapped(e: &Emulator, span: usize) -> (RawHandle, VirtAddr) {
    let h = e.malloc_physical(2 * MIB, &hbm(0), 0).unwrap();
    let r = e.reserve(span, 0, None, 0).unwrap();
    e.map(r, 2 * MIB, 0, h, 0).unwrap();
    (h, r)
}

/// Provokes `s`; returns what the call answered.
fn provoke(s: Situation) -> Option<AclError> {
    let e = Emulator::preset(Product::AtlasA2);
    let err = |r: Result<(), AclError>| r.err();
    Some(match s {
        Situation::NotReserved => err(e.release(va(20 << 40)))?,
        Situation::NotMapped => {
            let r = e.reserve(2 * MIB, 0, None, 0).unwrap();
            err(e.unmap(r))?
        }
        Situation::Overlap => {
            let (h, r) = mapped(&e, 4 * MIB);
            err(e.map(r, 2 * MIB, 0, h, 0))?
        }
        Situation::OutsideReservation => {
            let h = e.malloc_physical(4 * MIB, &hbm(0), 0).unwrap();
            let r = e.reserve(4 * MIB, 0, None, 0).unwrap();
            err(e.map(va(r.get() + 2 * MIB), 4 * MIB, 0, h, 0))?
        }
        Situation::PartialMap => {
            let h = e.malloc_physical(4 * MIB, &hbm(0), 0).unwrap();
            let r = e.reserve(4 * MIB, 0, None, 0).unwrap();
            err(e.map(r, 2 * MIB, 0, h, 0))?
        }
        Situation::MapOffset => {
            let h = e.malloc_physical(4 * MIB, &hbm(0), 0).unwrap();
            let r = e.reserve(8 * MIB, 0, None, 0).unwrap();
            err(e.map(r, 2 * MIB, 2 * MIB, h, 0))?
        }
        Situation::MixedReservation => {
            let (_, r) = mapped(&e, 4 * MIB);
            let other = e.malloc_physical(2 * MIB, &hbm(1), 0).unwrap();
            err(e.map(va(r.get() + 2 * MIB), 2 * MIB, 0, other, 0))?
        }
        Situation::ReleaseWhileMapped => {
            let (_, r) = mapped(&e, 2 * MIB);
            err(e.release(r))?
        }
        Situation::MappingInUse => mapping_in_use(&e)?,
        Situation::StaleHandle => {
            let h = e.malloc_physical(2 * MIB, &hbm(0), 0).unwrap();
            e.free_physical(h).unwrap();
            err(e.free_physical(h))?
        }
        Situation::UnalignedSize => e.malloc_physical(3 * MIB, &hbm(0), 0).err()?,
        Situation::UnknownNumaNode => {
            let a3 = Emulator::preset(Product::AtlasA3);
            a3.malloc_physical(2 * MIB, &prop(Location::HostNuma, 99, MemAttr::MemHuge), 0)
                .err()?
        }
        Situation::ReserveAlignment => e.reserve(2 * MIB, 2 * MIB, None, 0).err()?,
        Situation::ExpectedAddress => e.reserve(2 * MIB, 0, Some(va(1 << 40)), 0).err()?,
        Situation::ExpectedAddressTaken => {
            let want = va(17 << 40);
            e.reserve(2 * MIB, 0, Some(want), 0).unwrap();
            e.reserve(2 * MIB, 0, Some(want), 0).err()?
        }
        Situation::ExportTwice => {
            let h = e.malloc_physical(2 * MIB, &hbm(0), 0).unwrap();
            e.export(h, 1).unwrap();
            e.export(h, 1).err()?
        }
        Situation::ExportImported => {
            let h = e.malloc_physical(2 * MIB, &hbm(0), 0).unwrap();
            let s = e.export(h, 1).unwrap();
            let other = e.spawn_process().unwrap();
            let imported = other.import(s, 0).unwrap();
            other.export(imported, 1).err()?
        }
        Situation::ExportHostMemory => {
            let h = e
                .malloc_physical(2 * MIB, &prop(Location::Host, 0, MemAttr::DdrMemHuge), 0)
                .unwrap();
            e.export(h, 0).err()?
        }
        Situation::UnknownShareable => e
            .spawn_process()
            .unwrap()
            .import(ShareableHandle(12345), 0)
            .err()?,
        Situation::NotWhitelisted => {
            let h = e.malloc_physical(2 * MIB, &hbm(0), 0).unwrap();
            let s = e.export(h, 0).unwrap();
            e.spawn_process().unwrap().import(s, 0).err()?
        }
        Situation::ImportOwnExport => {
            let h = e.malloc_physical(2 * MIB, &hbm(0), 0).unwrap();
            let s = e.export(h, 1).unwrap();
            e.import(s, 0).err()?
        }
        Situation::ImportTwice => {
            let h = e.malloc_physical(2 * MIB, &hbm(0), 0).unwrap();
            let s = e.export(h, 1).unwrap();
            let other = e.spawn_process().unwrap();
            other.import(s, 0).unwrap();
            other.import(s, 0).err()?
        }
        Situation::NotExporter => {
            let h = e.malloc_physical(2 * MIB, &hbm(0), 0).unwrap();
            let s = e.export(h, 0).unwrap();
            err(e.spawn_process().unwrap().set_pids(s, &[1]))?
        }
        Situation::BadPid => {
            let h = e.malloc_physical(2 * MIB, &hbm(0), 0).unwrap();
            let s = e.export(h, 0).unwrap();
            err(e.set_pids(s, &[0]))?
        }
        Situation::WhitelistFull => {
            let h = e.malloc_physical(2 * MIB, &hbm(0), 0).unwrap();
            let s = e.export(h, 0).unwrap();
            let pids: Vec<i32> = (1..=aclmem_emu::WHITELIST as i32 + 1).collect();
            err(e.set_pids(s, &pids))?
        }
        Situation::TooManyExports => {
            let mut config = EmuConfig::preset(Product::AtlasA2);
            config.device_memory = 64 * GIB;
            let big = Emulator::new(config).unwrap();
            let mut code = None;
            for _ in 0..=aclmem_emu::MAX_EXPORTS {
                let h = big.malloc_physical(2 * MIB, &hbm(0), 0).unwrap();
                if let Err(c) = big.export(h, 1) {
                    code = Some(c);
                    break;
                }
            }
            code?
        }
        Situation::MachineStuck => {
            // A machine of this process alone, whose lock word is then
            // scribbled to name this process (its slot 0, plus one) as the
            // holder: the shared state begins with the magic (8 bytes),
            // then the lock word.
            use std::os::unix::fs::FileExt;
            let name = format!("stuck-{}", std::process::id());
            let m = Emulator::join(&name, &EmuConfig::preset(Product::AtlasA2)).unwrap();
            let file = std::fs::OpenOptions::new()
                .read(true)
                .write(true)
                .open(aclmem_emu::machine_state_path(&name).unwrap())
                .unwrap();
            file.write_all_at(&1u32.to_ne_bytes(), 8).unwrap();
            let code = m.mem_info(MemAttr::HbmMem, 0).err();
            file.write_all_at(&0u32.to_ne_bytes(), 8).unwrap();
            m.leave();
            code?
        }
        Situation::TooManyProcesses => {
            let mut code = None;
            let mut procs = Vec::new();
            for _ in 0..=aclmem_emu::MAX_PROCS {
                match e.spawn_process() {
                    Ok(p) => procs.push(p),
                    Err(c) => {
                        code = Some(c);
                        break;
                    }
                }
            }
            code?
        }
        // Provoked through the C ABI in tests/hostile.rs, which lowers the
        // process's limits; here only the code is checked against it.
        Situation::MapCountLimit | Situation::FdLimit => s.code(),
        Situation::ValueWriteUnaligned => {
            let a = e
                .malloc_device(0, 64, MallocPolicy::from_raw(0), false)
                .ok()?;
            e.value_write(a + 4, 1, 0, 0).err()?
        }
        Situation::ValueWaitTimeout => {
            // Nothing writes the value: the wait ends at its bound (0 here).
            let a = e
                .malloc_device(0, 64, MallocPolicy::from_raw(0), false)
                .ok()?;
            e.value_wait(a, 1, 1, 0, std::time::Duration::ZERO).err()?
        }
        Situation::BadCopyAddress => e.copy_from_device(&mut [0u8; 16], 21 << 40).err()?,
        Situation::CopyKindMismatch => {
            let (_, r) = mapped(&e, 2 * MIB);
            let mut buf = [0u8; 16];
            // Device to host, declared host to device.
            // SAFETY: `buf` is a live local of 16 bytes, borrowed by no one
            // else during the call.
            let caller = unsafe { aclmem_emu::CallerMemory::vouch() };
            e.memcpy(
                buf.as_mut_ptr() as usize,
                16,
                r.get(),
                16,
                MemcpyKind::HostToDevice,
                &caller,
            )
            .err()?
        }
        Situation::MemsetOverflow => {
            let (_, r) = mapped(&e, 2 * MIB);
            e.memset(r.get(), 16, 0, 32).err()?
        }
        Situation::NotAllocated => err(e.free_device(21 << 40))?,
        Situation::BadContextOrStream => err(e.destroy_context(0xdead))?,
        Situation::BadEvent => err(e.destroy_event(0xdead))?,
        Situation::EventNotRecorded => {
            let a = e.create_event(0).ok()?;
            e.event_elapsed_ms(a, a).err()?
        }
        Situation::StreamLimit => {
            let mut code = None;
            for _ in 0..5000 {
                if let Err(c) = e.create_stream(0) {
                    code = Some(c);
                    break;
                }
            }
            code?
        }
        Situation::IpcRange => {
            let p = e
                .malloc_device(0, 4 * MIB, MallocPolicy::from_raw(1), false)
                .unwrap();
            e.ipc_export_key(p + 4096 + 1, MIB, 0).err()?
        }
        Situation::IpcKeyLength => ipc_key_length()?,
        Situation::FabricNotA3 => {
            let h = e.malloc_physical(2 * MIB, &hbm(0), 0).unwrap();
            e.export_v2(h, 1, ShareHandleType::Fabric).err()?
        }
        Situation::NotAMappingStart => {
            let (_, r) = mapped(&e, 2 * MIB);
            e.retain_allocation_handle(r.get() + 4096).err()?
        }
        Situation::BadAccessDesc => {
            let (_, r) = mapped(&e, 2 * MIB);
            let read_only = AccessDesc {
                flags: AccessFlags::Read,
                location: LocationType::Device,
                id: 0,
            };
            err(e.set_access(r.get(), 2 * MIB, &[read_only]))?
        }
        Situation::UnknownAddress => e.address_range(21 << 40).err()?,
        Situation::HostRangeRegistered => {
            let page = host_page();
            e.host_register(page, 4096, 0).unwrap();
            e.host_register(page, 4096, 0).err()?
        }
        Situation::HostNotRegistered => err(e.host_unregister(host_page()))?,
        Situation::HostPointerNotRegistered => e.host_device_pointer(host_page(), 0).err()?,
        Situation::HostRegisterUnaligned => e.host_register(host_page() + 8, 4096, 0).err()?,
        Situation::HostRangeNotMapped => e.host_register(0x1000, 4096, 0).err()?,
        Situation::ForkedChild => forked_child()?,
        Situation::ConfigMismatch => {
            let name = format!("table-{}", std::process::id());
            let first = EmuConfig::preset(Product::AtlasA2);
            let _a = Emulator::join(&name, &first).unwrap();
            let mut other = first.clone();
            other.devices = 2;
            Emulator::join(&name, &other).err()?.code()
        }
        _ => return None,
    })
}

/// An unmap while a copy holds the mapping (`Emulator::hold` holds it as
/// a copy does, deterministically).
fn mapping_in_use(e: &Emulator) -> Option<AclError> {
    let (_, r) = mapped(e, 2 * MIB);
    let hold = e.hold(r.get(), 4096).ok()?;
    let code = e.unmap(r).err();
    drop(hold);
    assert_eq!(e.unmap(r), Ok(()), "unmapping works once the copy is done");
    code
}

fn ipc_key_length() -> Option<AclError> {
    use aclmem_emu_capi::*;
    // SAFETY: C prototypes with live locals; this binary's only user of
    // the C library's process-wide state.
    unsafe {
        std::env::set_var(
            "ACLMEM_EMU_MACHINE",
            format!("table-capi-{}", std::process::id()),
        );
        std::env::set_var("ACLMEM_EMU_QUIET", "1");
        assert_eq!(aclInit(ptr::null()), 0);
        assert_eq!(aclrtSetDevice(0), 0);
        let mut p: *mut c_void = ptr::null_mut();
        assert_eq!(aclrtMalloc(&mut p, 2 * MIB, 1), 0);
        let mut key = [0 as std::ffi::c_char; 64];
        let code = aclrtIpcMemGetExportKey(p, 2 * MIB, key.as_mut_ptr(), key.len(), 0);
        assert_eq!(aclrtFree(p), 0);
        assert_eq!(aclFinalize(), 0);
        AclError::from_code(code)
    }
}

/// A forked child's calls: run in the child, the code comes back as its
/// exit status (its offset from 100000).
fn forked_child() -> Option<AclError> {
    let e = Emulator::preset(Product::AtlasA2);
    // SAFETY: the child makes one emulator call (whose fork handler
    // prepared it) and leaves with `_exit`.
    unsafe {
        let pid = libc::fork();
        if pid == 0 {
            let code = e
                .malloc_physical(2 * MIB, &hbm(0), 0)
                .err()
                .map_or(0, |c| c.code());
            libc::_exit(code - 100_000);
        }
        let mut status = 0;
        libc::waitpid(pid, &mut status, 0);
        AclError::from_code(100_000 + libc::WEXITSTATUS(status))
    }
}

/// A page of host memory (leaked: the emulator may keep it registered).
fn host_page() -> usize {
    let page = Box::leak(vec![0u8; 2 * 4096].into_boxed_slice());
    (page.as_ptr() as usize).next_multiple_of(4096)
}

#[test]
fn every_situation_answers_its_code() {
    let mut covered = BTreeSet::new();
    for &s in Situation::ALL {
        let got = provoke(s).unwrap_or_else(|| panic!("{s:?} could not be provoked"));
        assert_eq!(got, s.code(), "{s:?}: {}", s.what());
        covered.insert(format!("{s:?}"));
    }
    assert_eq!(covered.len(), Situation::ALL.len());
}
