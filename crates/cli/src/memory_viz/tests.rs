//! Tests of `memory_viz`.

use super::*;

#[test]
fn frames_are_read_from_the_sanitizers_text() {
    assert_eq!(
        frame("main (sleep_wake.c:57)"),
        Frame {
            filename: "sleep_wake.c".into(),
            line: 57,
            name: "main".into()
        }
    );
    assert_eq!(frame("_start").name, "_start");
    let native = frame("0x7f37 in /lib/libtorch_npu.so");
    assert_eq!(
        (native.filename.as_str(), native.name.as_str()),
        ("/lib/libtorch_npu.so", "0x7f37")
    );
    assert_eq!(frame("_start").line, 0);
}

#[test]
fn reservations_hold_their_mappings_and_gaps() {
    let dir = std::env::temp_dir().join(format!("aclmem-viz-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let trace = dir.join("t.jsonl");
    std::fs::write(
        &trace,
        [
            r#"{"t":1,"pid":7,"call":"aclrtReserveMemAddress","size":8388608,"ret":0,"va":4194304,"site":1}"#,
            r#"{"t":2,"pid":7,"call":"aclrtMapMem","size":2097152,"ret":0,"va":6291456,"h":9,"device":1,"site":2}"#,
            r#"{"t":3,"pid":7,"call":"aclrtMalloc","size":1024,"ret":0,"va":65536,"device":1,"site":2}"#,
            r#"{"t":4,"pid":7,"call":"aclrtMalloc","size":512,"ret":0,"va":131072,"device":1}"#,
            r#"{"t":5,"pid":7,"call":"aclrtFree","size":0,"ret":0,"va":131072,"device":1}"#,
            r#"{"t":6,"pid":7,"call":"aclrtMapMem","size":2097152,"ret":207001,"va":8388608}"#,
            r#"{"t":9,"pid":7,"call":"sites","ret":0,"sites":{"1":["main (a.c:3)"],"2":["f (a.c:9)","main (a.c:4)"]}}"#,
        ]
        .join("\n"),
    )
    .unwrap();
    let snaps = snapshots(&trace).unwrap();
    let s = &snaps[&7];
    assert_eq!(s.segments.len(), 2);
    let r = &s.segments[0];
    assert_eq!(
        (r.device, r.address, r.total_size, r.active_size),
        (1, 4 << 20, 8 << 20, 2 << 20)
    );
    assert!(r.is_expandable);
    let blocks: Vec<_> = r
        .blocks
        .iter()
        .map(|b| (b.address, b.size, b.state))
        .collect();
    assert_eq!(
        blocks,
        [
            (4 << 20, 2 << 20, "inactive"),
            (6 << 20, 2 << 20, "active_allocated"),
            (8 << 20, 4 << 20, "inactive"),
        ]
    );
    assert_eq!(r.blocks[1].frames[0].name, "f");
    assert_eq!(r.frames[0].line, 3);
    let m = &s.segments[1];
    assert_eq!(
        (m.address, m.total_size, m.is_expandable),
        (65536, 1024, false)
    );
    // Device 1's trace: the reservation takes its mapping's device; the
    // refused map is not an event.
    assert_eq!(s.device_traces.len(), 2);
    let actions: Vec<_> = s.device_traces.device(1).map(|e| e.action).collect();
    assert_eq!(
        actions,
        [
            "segment_alloc",
            "segment_map",
            "alloc",
            "segment_alloc",
            "alloc",
            "segment_alloc",
            "alloc",
            "free_requested",
            "free_completed",
            "segment_free"
        ]
    );
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn pool_blocks_are_segments_until_freed_on_their_stream() {
    let dir = std::env::temp_dir().join(format!("aclmem-viz-pool-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let trace = dir.join("t.jsonl");
    std::fs::write(
        &trace,
        [
            r#"{"t":1,"pid":7,"call":"aclrtMemPoolMallocAsync","size":4096,"ret":0,"va":65536,"site":1}"#,
            r#"{"t":2,"pid":7,"call":"aclrtMemPoolMallocAsync","size":8192,"ret":0,"va":131072}"#,
            r#"{"t":3,"pid":7,"call":"aclrtMemPoolFreeAsync","size":8192,"ret":0,"va":131072}"#,
        ]
        .join("\n"),
    )
    .unwrap();
    let snaps = snapshots(&trace).unwrap();
    let s = &snaps[&7];
    let segments: Vec<_> = s
        .segments
        .iter()
        .map(|g| (g.address, g.total_size))
        .collect();
    assert_eq!(segments, [(65536, 4096)]);
    let actions: Vec<_> = s.device_traces.device(0).map(|e| e.action).collect();
    assert_eq!(
        actions,
        [
            "segment_alloc",
            "alloc",
            "segment_alloc",
            "alloc",
            "free_requested",
            "free_completed",
            "segment_free"
        ]
    );
    std::fs::remove_dir_all(&dir).unwrap();
}
