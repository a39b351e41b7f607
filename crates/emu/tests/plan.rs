//! Plan mode (`ACLMEM_EMU_OPS=plan`): copies and sets are checked and move
//! no device data, so device memory that is never written stays unbacked
//! however large it is; host memory still moves.

use aclmem_core::{AclError, GIB, MIB, Product};
use aclmem_emu::{CallerMemory, EmuConfig, Emulator, OpsMode};
use aclmem_sys::{MallocPolicy, MemcpyKind};

/// Bytes of memory backing this process's memfds (the emulator's pool
/// files): what the kernel allocated to them, holes not counted.
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

/// The tests of this file, one at a time: `memfd_backing` counts every
/// memfd of the process, so a test running beside another would count the
/// other's pages.
static ONE_AT_A_TIME: std::sync::Mutex<()> = std::sync::Mutex::new(());

fn machine(ops: OpsMode) -> Emulator {
    let mut config = EmuConfig::preset(Product::AtlasA2);
    config.devices = 1;
    config.device_memory = 64 * GIB;
    let emu = Emulator::new(config).unwrap().with_ops(ops);
    emu.set_device(0).unwrap();
    emu
}

fn copy(
    emu: &Emulator,
    dst: usize,
    src: usize,
    n: usize,
    kind: MemcpyKind,
) -> Result<(), AclError> {
    // SAFETY: every host range passed is a live Vec of this test, not
    // borrowed elsewhere during the call.
    let caller = unsafe { CallerMemory::vouch() };
    emu.memcpy(dst, n, src, n, kind, &caller)
}

#[test]
fn plan_mode_moves_no_device_data_and_backs_no_page() {
    let _serial = ONE_AT_A_TIME.lock().unwrap_or_else(|e| e.into_inner());
    let emu = machine(OpsMode::Plan);
    assert_eq!(emu.ops(), OpsMode::Plan);
    let before = memfd_backing();
    let size = 16 * GIB;
    let a = emu
        .malloc_device(0, size, MallocPolicy::from_raw(0), false)
        .unwrap();
    let b = emu
        .malloc_device(0, size, MallocPolicy::from_raw(0), false)
        .unwrap();
    let mut host = vec![0xabu8; 64 * MIB];
    // Host to device over the whole allocation, device to device, a set
    // of all of it: nothing written.
    for off in (0..size).step_by(host.len()) {
        let src = host.as_ptr() as usize;
        copy(&emu, a + off, src, host.len(), MemcpyKind::HostToDevice).unwrap();
    }
    copy(&emu, b, a, size, MemcpyKind::DeviceToDevice).unwrap();
    emu.memset(a, size, 0x5a, size).unwrap();
    // Device to host: zeros, whatever was "written".
    let dst = host.as_mut_ptr() as usize;
    copy(&emu, dst, b + GIB, host.len(), MemcpyKind::DeviceToHost).unwrap();
    assert!(host.iter().all(|&x| x == 0), "device reads give zeros");
    let mut small = [7u8; 16];
    emu.copy_from_device(&mut small, a).unwrap();
    assert_eq!(small, [0; 16]);
    let grown = memfd_backing().saturating_sub(before);
    assert!(
        grown < 16 * MIB as u64,
        "{grown} bytes of device memory backed after 32 GiB of copies and sets"
    );
    // Checked as a copy is: past an allocation, or an unmapped address.
    let src = host.as_ptr() as usize;
    assert!(copy(&emu, a + size - 16, src, 4 * MIB, MemcpyKind::HostToDevice).is_err());
    assert!(copy(&emu, 0x1000, src, 4096, MemcpyKind::HostToDevice).is_err());
    assert!(copy(&emu, dst, 0x1000, 4096, MemcpyKind::DeviceToHost).is_err());
    // Host memory is host memory: copied.
    let from = vec![3u8; 4096];
    let mut to = vec![0u8; 4096];
    copy(
        &emu,
        to.as_mut_ptr() as usize,
        from.as_ptr() as usize,
        4096,
        MemcpyKind::HostToHost,
    )
    .unwrap();
    assert_eq!(to, from);
    emu.free_device(a).unwrap();
    emu.free_device(b).unwrap();
}

#[test]
fn compute_mode_backs_what_it_writes() {
    let _serial = ONE_AT_A_TIME.lock().unwrap_or_else(|e| e.into_inner());
    // The measurement itself: the same copy in compute mode backs its pages.
    let emu = machine(OpsMode::Compute);
    let before = memfd_backing();
    let a = emu
        .malloc_device(0, 64 * MIB, MallocPolicy::from_raw(0), false)
        .unwrap();
    let host = vec![0xabu8; 64 * MIB];
    copy(
        &emu,
        a,
        host.as_ptr() as usize,
        host.len(),
        MemcpyKind::HostToDevice,
    )
    .unwrap();
    assert!(memfd_backing() - before >= 60 * MIB as u64);
    let mut back = [0u8; 4];
    emu.copy_from_device(&mut back, a).unwrap();
    assert_eq!(back, [0xab; 4]);
    emu.free_device(a).unwrap();
}
