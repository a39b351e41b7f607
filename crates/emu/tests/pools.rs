//! Stream-ordered memory pools on the engine: blocks of real device
//! memory (charged to the device, readable and writable), reuse as the
//! pool's attributes allow, exact reserved and used sizes, trims and the
//! release threshold at a stream synchronisation.

use aclmem_core::{AclError, MIB, MemAttr, Product};
use aclmem_emu::{EmuConfig, Emulator, PoolAttr};

const POOL_ERROR: AclError = AclError::RT_INTERNAL_ERROR;

fn emu() -> Emulator {
    let mut config = EmuConfig::preset(Product::AtlasA2);
    config.device_memory = 256 * MIB;
    let e = Emulator::new(config).unwrap();
    e.set_device(0).unwrap();
    e
}

fn attr(e: &Emulator, pool: u64, a: PoolAttr) -> u64 {
    let raw = a as u32 + 1;
    e.mem_pool_get_attr(pool, raw).unwrap().0
}

fn set(e: &Emulator, pool: u64, a: PoolAttr, v: u64) -> Result<(), AclError> {
    e.mem_pool_set_attr(pool, a as u32 + 1, |_| Ok(v))
}

fn device_free(e: &Emulator) -> usize {
    e.mem_info(MemAttr::HbmMem, 0).unwrap().0
}

#[test]
fn blocks_are_device_memory_reused_on_their_stream() {
    let e = emu();
    let before = device_free(&e);
    let pool = e.mem_pool_create(0, 64 * MIB as u64, 0).unwrap();
    assert_eq!(device_free(&e), before, "a pool reserves no memory yet");
    let s = e.create_stream(0).unwrap();
    let a = e.mem_pool_malloc_async(3 * MIB as u64, pool, s).unwrap();
    assert_eq!(
        device_free(&e),
        before - 4 * MIB,
        "rounded to 2 MiB, charged"
    );
    e.write(a, b"pool block").unwrap();
    let mut seen = [0u8; 10];
    e.read(a, &mut seen).unwrap();
    assert_eq!(&seen, b"pool block");
    assert_eq!(attr(&e, pool, PoolAttr::UsedMemCurrent), 4 * MIB as u64);
    assert_eq!(attr(&e, pool, PoolAttr::ReservedMemCurrent), 4 * MIB as u64);
    e.mem_pool_free_async(a, s).unwrap();
    assert_eq!(attr(&e, pool, PoolAttr::UsedMemCurrent), 0);
    assert_eq!(attr(&e, pool, PoolAttr::ReservedMemCurrent), 4 * MIB as u64);
    assert_eq!(device_free(&e), before - 4 * MIB, "cached: kept");
    // The same stream takes it again.
    let b = e.mem_pool_malloc_async(4 * MIB as u64, pool, s).unwrap();
    assert_eq!(b, a);
    // A second block; the highs follow.
    let c = e.mem_pool_malloc_async(1, pool, s).unwrap();
    assert_eq!(attr(&e, pool, PoolAttr::UsedMemHigh), 6 * MIB as u64);
    assert_eq!(attr(&e, pool, PoolAttr::ReservedMemHigh), 6 * MIB as u64);
    // Freed twice, or in the middle of a block: 107000.
    e.mem_pool_free_async(c, s).unwrap();
    assert_eq!(e.mem_pool_free_async(c, s), Err(AclError::RT_PARAM_INVALID));
    assert_eq!(
        e.mem_pool_free_async(b + 4096, s),
        Err(AclError::RT_PARAM_INVALID)
    );
    // Destroyed with a block in use: everything goes back to the device.
    e.mem_pool_destroy(pool).unwrap();
    assert_eq!(device_free(&e), before);
    assert_eq!(e.mem_pool_destroy(pool), Err(POOL_ERROR));
    assert_eq!(
        e.mem_pool_get_attr(pool, 5),
        Err(AclError::RT_PARAM_INVALID)
    );
    assert!(e.leak_report().is_empty(), "{}", e.leak_report());
}

#[test]
fn other_streams_reuse_only_as_the_attributes_allow() {
    let e = emu();
    let pool = e.mem_pool_create(0, 0, 0).unwrap();
    let (s1, s2) = (e.create_stream(0).unwrap(), e.create_stream(0).unwrap());
    let a = e.mem_pool_malloc_async(2 * MIB as u64, pool, s1).unwrap();
    e.mem_pool_free_async(a, s1).unwrap();
    // Default: another stream gets new memory.
    let b = e.mem_pool_malloc_async(2 * MIB as u64, pool, s2).unwrap();
    assert_ne!(b, a);
    // Following events: after s2 waited for an event recorded on s1 after
    // the free, s2 may take s1's block.
    set(&e, pool, PoolAttr::ReuseFollowEventDependencies, 7).unwrap();
    assert_eq!(
        attr(&e, pool, PoolAttr::ReuseFollowEventDependencies),
        1,
        "any non-zero value is stored as 1"
    );
    let ev = e.create_event(0).unwrap();
    e.record_event(ev, s1).unwrap();
    e.stream_wait_event(ev, s2).unwrap();
    assert_eq!(
        e.mem_pool_malloc_async(2 * MIB as u64, pool, s2).unwrap(),
        a
    );
    // A free after the event is not covered by it.
    e.mem_pool_free_async(a, s1).unwrap();
    let c = e.mem_pool_malloc_async(2 * MIB as u64, pool, s2).unwrap();
    assert!(c != a && c != b, "new memory, not s1's newer free");
    e.mem_pool_free_async(c, s2).unwrap();
    // Opportunistic: any completed free (all are); the stream's own first.
    set(&e, pool, PoolAttr::ReuseFollowEventDependencies, 0).unwrap();
    set(&e, pool, PoolAttr::ReuseAllowOpportunistic, 1).unwrap();
    assert_eq!(
        e.mem_pool_malloc_async(2 * MIB as u64, pool, s2).unwrap(),
        c
    );
    assert_eq!(
        e.mem_pool_malloc_async(2 * MIB as u64, pool, s2).unwrap(),
        a
    );
    assert_eq!(attr(&e, pool, PoolAttr::ReservedMemCurrent), 6 * MIB as u64);
    e.mem_pool_destroy(pool).unwrap();
}

#[test]
fn trims_and_the_release_threshold() {
    let e = emu();
    let pool = e.mem_pool_create(0, 20 * MIB as u64, 0).unwrap();
    let s = e.create_stream(0).unwrap();
    let blocks: Vec<usize> = [2, 4, 6]
        .iter()
        .map(|m| e.mem_pool_malloc_async(m * MIB as u64, pool, s).unwrap())
        .collect();
    assert_eq!(
        attr(&e, pool, PoolAttr::ReservedMemCurrent),
        12 * MIB as u64
    );
    // Full: 20 MiB pool, 12 reserved, 10 asked.
    assert_eq!(
        e.mem_pool_malloc_async(10 * MIB as u64, pool, s),
        Err(POOL_ERROR)
    );
    for b in &blocks[..2] {
        e.mem_pool_free_async(*b, s).unwrap();
    }
    // Refused trims: above the pool, below what is in use (6 MiB).
    assert_eq!(e.mem_pool_trim_to(pool, 22 * MIB as u64), Err(POOL_ERROR));
    assert_eq!(e.mem_pool_trim_to(pool, 5 * MIB as u64), Err(POOL_ERROR));
    // Keep 9 MiB: the 2 MiB block goes; the 4 MiB one would go below.
    e.mem_pool_trim_to(pool, 9 * MIB as u64).unwrap();
    assert_eq!(
        attr(&e, pool, PoolAttr::ReservedMemCurrent),
        10 * MIB as u64
    );
    e.mem_pool_trim_to(pool, 6 * MIB as u64).unwrap();
    assert_eq!(attr(&e, pool, PoolAttr::ReservedMemCurrent), 6 * MIB as u64);
    // The threshold: at most the pool's size; applied at a synchronisation.
    assert_eq!(
        set(&e, pool, PoolAttr::ReleaseThreshold, 21 * MIB as u64),
        Err(POOL_ERROR)
    );
    set(&e, pool, PoolAttr::ReleaseThreshold, 6 * MIB as u64).unwrap();
    let more = e.mem_pool_malloc_async(4 * MIB as u64, pool, s).unwrap();
    e.mem_pool_free_async(more, s).unwrap();
    e.mem_pool_free_async(blocks[2], s).unwrap();
    assert_eq!(
        attr(&e, pool, PoolAttr::ReservedMemCurrent),
        10 * MIB as u64
    );
    e.synchronize_stream(s).unwrap();
    assert_eq!(attr(&e, pool, PoolAttr::ReservedMemCurrent), 6 * MIB as u64);
    set(&e, pool, PoolAttr::ReleaseThreshold, 0).unwrap();
    e.synchronize_device().unwrap();
    assert_eq!(attr(&e, pool, PoolAttr::ReservedMemCurrent), 0);
    // Read only, high marks reset to 0 only.
    assert_eq!(
        set(&e, pool, PoolAttr::UsedMemCurrent, 0),
        Err(AclError::RT_PARAM_INVALID)
    );
    assert_eq!(set(&e, pool, PoolAttr::UsedMemHigh, 1), Err(POOL_ERROR));
    assert_eq!(attr(&e, pool, PoolAttr::UsedMemHigh), 12 * MIB as u64);
    set(&e, pool, PoolAttr::UsedMemHigh, 0).unwrap();
    assert_eq!(attr(&e, pool, PoolAttr::UsedMemHigh), 0);
    assert_eq!(e.mem_pool_get_attr(pool, 9), Err(POOL_ERROR));
    e.mem_pool_destroy(pool).unwrap();
}

#[test]
fn pool_creation_and_streams_are_checked() {
    let e = emu();
    assert_eq!(
        e.mem_pool_create(0, 257 * MIB as u64, 0),
        Err(AclError::RT_PARAM_INVALID),
        "above the device's memory"
    );
    assert_eq!(
        e.mem_pool_create(9, 0, 0),
        Err(AclError::RT_INVALID_DEVICEID)
    );
    assert_eq!(
        e.mem_pool_create(0, 0, 2),
        Err(AclError::RT_PARAM_INVALID),
        "POSIX pools are CANN 9.1's"
    );
    let pool = e.mem_pool_create(0, 0, 0).unwrap();
    assert_eq!(
        attr(&e, pool, PoolAttr::ReleaseThreshold),
        0,
        "unset: the default"
    );
    assert_eq!(
        e.mem_pool_malloc_async(MIB as u64, pool, 0),
        Err(AclError::RT_INTERNAL_ERROR),
        "no stream"
    );
    assert_eq!(
        e.mem_pool_malloc_async(MIB as u64, pool, 0x1234),
        Err(AclError::RT_PARAM_INVALID)
    );
    // aclrtFree of a block in use: it leaves its pool.
    let s = e.create_stream(0).unwrap();
    let a = e.mem_pool_malloc_async(MIB as u64, pool, s).unwrap();
    e.free_device(a).unwrap();
    assert_eq!(attr(&e, pool, PoolAttr::ReservedMemCurrent), 0);
    // FreeAsync of aclrtMalloc memory frees it.
    let m = e
        .malloc_device(0, 64, aclmem_sys::MallocPolicy::from_raw(0), false)
        .unwrap();
    e.mem_pool_free_async(m, s).unwrap();
    assert!(e.free_device(m).is_err());
    e.mem_pool_destroy(pool).unwrap();
    // Another product: no pools.
    let a3 = Emulator::preset(Product::AtlasA3);
    a3.set_device(0).unwrap();
    assert_eq!(
        a3.mem_pool_create(0, 0, 0),
        Err(AclError::RT_FEATURE_NOT_SUPPORT)
    );
}
