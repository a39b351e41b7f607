//! Expandable segments (the torch_npu pattern) on the emulator.

use aclmem_core::{AclError, AlignedSize, AtlasA2, Device, HbmHuge, MIB, PhysicalMemProp, Product};
use aclmem_emu::{Emulator, Op, PoolId};
use aclmem_hal::{ExpandableSegment, Session};

const CHUNK: usize = 2 * MIB;

fn prop() -> PhysicalMemProp<AtlasA2, Device, HbmHuge> {
    PhysicalMemProp::on_device(0)
}

fn chunk() -> AlignedSize<HbmHuge> {
    AlignedSize::new::<CHUNK>()
}

#[test]
fn grows_at_the_lowest_addresses_and_keeps_its_data() {
    let emu = Emulator::preset(Product::AtlasA2);
    let session = Session::<_, AtlasA2>::new(&emu).unwrap();
    {
        let mut seg: ExpandableSegment<_, 8> =
            session.expandable_segment(prop(), chunk(), 8).unwrap();
        assert_eq!(seg.capacity(), 8 * CHUNK);
        assert_eq!(seg.mapped_bytes(), 0);
        assert_eq!(seg.map(0, 1).unwrap(), 0..CHUNK);
        let base = seg.addr().get();
        emu.write(base + 10, b"first chunk").unwrap();
        // Already mapped: nothing new.
        assert_eq!(seg.map(0, CHUNK).unwrap(), 0..0);
        assert_eq!(seg.map(CHUNK - 1, 2 * CHUNK).unwrap(), CHUNK..3 * CHUNK);
        assert_eq!(seg.mapped_bytes(), 3 * CHUNK);
        assert!(seg.is_mapped(2) && !seg.is_mapped(3));
        let mut buf = [0u8; 11];
        emu.read(base + 10, &mut buf).unwrap();
        assert_eq!(&buf, b"first chunk");
        // The range is contiguous: one read may span two chunks.
        emu.write(base + CHUNK - 2, b"span").unwrap();
        let mut span = [0u8; 4];
        emu.read(base + CHUNK - 2, &mut span).unwrap();
        assert_eq!(&span, b"span");
        assert_eq!(emu.stats().device[0].used, 3 * CHUNK);
        assert_eq!(
            seg.map(7 * CHUNK, CHUNK + 1).unwrap_err(),
            AclError::INVALID_PARAM
        );
        assert_eq!(seg.map(0, 0).unwrap_err(), AclError::INVALID_PARAM);
    }
    // Dropped: everything unmapped, freed and released.
    assert!(emu.leak_report().is_empty(), "{}", emu.leak_report());
    assert_eq!(emu.stats().device[0].used, 0);
    assert_eq!(session.take_deferred_error(), None);
}

#[test]
fn out_of_memory_rolls_back_only_what_the_call_created() {
    let emu = Emulator::preset(Product::AtlasA2);
    let session = Session::<_, AtlasA2>::new(&emu).unwrap();
    let mut seg: ExpandableSegment<_, 16> =
        session.expandable_segment(prop(), chunk(), 16).unwrap();
    seg.map(CHUNK, 1).unwrap(); // chunk 1, mapped before
    emu.write(seg.addr().get() + CHUNK, b"survives").unwrap();
    emu.set_capacity(PoolId::Device(0), 3 * CHUNK).unwrap(); // room for two more
    let before = emu.stats();
    // Chunks 0, 2 and 3 are needed: 0 and 2 fit, 3 does not.
    assert_eq!(
        seg.map(0, 4 * CHUNK).unwrap_err(),
        AclError::RT_MEMORY_ALLOCATION
    );
    let after = emu.stats();
    assert_eq!(after.device[0].used, before.device[0].used);
    assert_eq!(
        (after.live_handles, after.mappings),
        (before.live_handles, before.mappings)
    );
    assert!(seg.is_mapped(1), "the chunk mapped before the call stays");
    assert!(!seg.is_mapped(0) && !seg.is_mapped(2));
    let mut buf = [0u8; 8];
    emu.read(seg.addr().get() + CHUNK, &mut buf).unwrap();
    assert_eq!(&buf, b"survives");
    // Freeing cache and retrying, as torch_npu does: now it fits.
    emu.set_capacity(PoolId::Device(0), 64 * CHUNK).unwrap();
    assert_eq!(seg.map(0, 4 * CHUNK).unwrap(), 0..4 * CHUNK);
    assert_eq!(seg.mapped_bytes(), 4 * CHUNK);
}

#[test]
fn a_failed_map_frees_its_chunk_and_raises_other_errors() {
    let emu = Emulator::preset(Product::AtlasA2);
    let session = Session::<_, AtlasA2>::new(&emu).unwrap();
    let mut seg: ExpandableSegment<_, 4> = session.expandable_segment(prop(), chunk(), 4).unwrap();
    emu.inject_fault(Op::Map, 2, AclError::RT_DRV_INTERNAL_ERROR);
    assert_eq!(
        seg.map(0, 3 * CHUNK).unwrap_err(),
        AclError::RT_DRV_INTERNAL_ERROR
    );
    assert_eq!(seg.mapped_bytes(), 0);
    let stats = emu.stats();
    assert_eq!(
        (stats.live_handles, stats.mappings, stats.device[0].used),
        (0, 0, 0)
    );
    assert_eq!(seg.map(0, 3 * CHUNK).unwrap(), 0..3 * CHUNK);
}

#[test]
fn shrinking_releases_only_whole_free_chunks() {
    let emu = Emulator::preset(Product::AtlasA2);
    let session = Session::<_, AtlasA2>::new(&emu).unwrap();
    let mut seg: ExpandableSegment<_, 6> = session.expandable_segment(prop(), chunk(), 6).unwrap();
    seg.map(0, 6 * CHUNK).unwrap();
    // 1.5 .. 4.5 chunks: only chunks 2 and 3 lie wholly inside.
    assert_eq!(
        seg.unmap(CHUNK + CHUNK / 2, 3 * CHUNK).unwrap(),
        2 * CHUNK..4 * CHUNK
    );
    assert!(seg.is_mapped(1) && !seg.is_mapped(2) && !seg.is_mapped(3) && seg.is_mapped(4));
    assert_eq!(emu.stats().device[0].used, 4 * CHUNK);
    assert_eq!(
        seg.unmap(2 * CHUNK, 2 * CHUNK).unwrap(),
        0..0,
        "already released"
    );
    assert_eq!(
        seg.unmap(0, 7 * CHUNK).unwrap_err(),
        AclError::INVALID_PARAM
    );
    // Grow back into the hole.
    assert_eq!(seg.map(2 * CHUNK, 2 * CHUNK).unwrap(), 2 * CHUNK..4 * CHUNK);
}

#[test]
fn the_chunk_count_is_between_one_and_the_capacity() {
    let emu = Emulator::preset(Product::AtlasA2);
    let session = Session::<_, AtlasA2>::new(&emu).unwrap();
    for chunks in [0, 5] {
        let refused: Result<ExpandableSegment<_, 4>, _> =
            session.expandable_segment(prop(), chunk(), chunks);
        assert_eq!(refused.unwrap_err(), AclError::INVALID_PARAM, "{chunks}");
    }
    let fewer: ExpandableSegment<_, 4> = session.expandable_segment(prop(), chunk(), 3).unwrap();
    assert_eq!(fewer.capacity(), 3 * CHUNK);
    drop(fewer);
    assert!(emu.leak_report().is_empty());
    assert_eq!(
        emu.stats().calls[&Op::Reserve],
        1,
        "nothing reserved for a refused count"
    );
}
