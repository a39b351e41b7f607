use super::*;
use serde_json::json;

const X: u64 = 0x1000_0000_0000;
const Y: u64 = 0x1000_4000_0000;
const MIB: u64 = 1 << 20;

fn files(records: &[serde_json::Value], snapshot: &serde_json::Value) -> (PathBuf, PathBuf) {
    let dir = std::env::temp_dir().join(format!(
        "aclmem-blocks-{}-{:?}",
        std::process::id(),
        std::thread::current().id()
    ));
    std::fs::create_dir_all(&dir).unwrap();
    let trace = dir.join("trace.jsonl");
    let text: String = records.iter().map(|r| format!("{r}\n")).collect();
    std::fs::write(&trace, text).unwrap();
    let snap = dir.join("snap.pickle");
    std::fs::write(
        &snap,
        serde_pickle::to_vec(snapshot, serde_pickle::SerOptions::new()).unwrap(),
    )
    .unwrap();
    (trace, snap)
}

fn rec(t: u64, call: &str, more: serde_json::Value) -> serde_json::Value {
    let mut r = json!({"t": t, "pid": 7, "tid": 1, "call": call, "size": 0, "ret": 0});
    r.as_object_mut()
        .unwrap()
        .extend(more.as_object().unwrap().clone());
    r
}

/// A sleep unmaps the handle at X and the wake maps another there: the
/// snapshot (taken before the sleep) places its blocks at X in the first
/// handle, "released by sleep 1", lists them under the second too (not
/// held then), keeps Y's block in its handle, and names the block no
/// mapping covers.
#[test]
fn blocks_sit_in_the_handle_live_when_the_snapshot_was_taken() {
    let records = [
        rec(
            1,
            "sites",
            json!({"sites": {"3": ["map_weights (loader.c:12)"]}}),
        ),
        rec(
            10,
            "aclrtMapMem",
            json!({"va": X, "size": 4 * MIB, "h": 0x51, "site": 3}),
        ),
        rec(
            12,
            "aclrtMapMem",
            json!({"va": Y, "size": 2 * MIB, "h": 0x52}),
        ),
        rec(20, "phase", json!({"name": "sleep"})),
        rec(21, "aclrtUnmapMem", json!({"va": X})),
        rec(30, "phase", json!({"name": "end of sleep"})),
        rec(
            31,
            "aclrtMapMem",
            json!({"va": X, "size": 4 * MIB, "h": 0x53}),
        ),
        // Another process of the run, whose memory is not the snapshot's.
        json!({"t": 5, "pid": 9, "tid": 1, "call": "aclrtMapMem", "size": MIB, "ret": 0, "va": 0x2000_0000_0000u64, "h": 1}),
    ];
    let frames = json!([{"filename": "train.py", "line": 42, "name": "load"}]);
    let snapshot = json!({
        "segments": [
            {"address": X, "total_size": 4 * MIB, "blocks": [
                {"address": X, "size": MIB, "requested_size": MIB - 16, "state": "active_allocated", "frames": frames},
                {"address": X + MIB, "size": 3 * MIB, "requested_size": 0, "state": "inactive", "frames": []},
            ]},
            // Blocks without addresses: the segment's, plus the sizes before.
            {"address": Y, "total_size": 2 * MIB, "blocks": [
                {"size": MIB, "requested_size": MIB, "state": "active_allocated"},
                {"size": MIB, "requested_size": MIB, "state": "active_allocated"},
            ]},
            {"address": 0x3000_0000_0000u64, "total_size": MIB, "blocks": [
                {"address": 0x3000_0000_0000u64, "size": MIB, "requested_size": MIB, "state": "active_allocated"},
            ]},
        ],
        "device_traces": [],
    });
    let (trace, snap) = files(&records, &snapshot);
    let j = join(&trace, &snap).unwrap();
    assert_eq!(j.pid, 7);
    // The earliest moment X and Y are both mapped.
    assert_eq!(j.snapshot_at, Some(12));
    assert_eq!(
        j.unplaced.iter().map(|b| b.address).collect::<Vec<_>>(),
        [0x3000_0000_0000]
    );
    assert_eq!(j.empty_mappings, 0);
    let by_handle = |h: u64| j.mappings.iter().find(|m| m.handle == Some(h)).unwrap();
    let first = by_handle(0x51);
    assert!(first.released);
    assert_eq!(first.released_by.as_deref(), Some("sleep 1"));
    assert_eq!(first.made_at, ["map_weights (loader.c:12)"]);
    assert_eq!(first.blocks.len(), 2);
    assert!(first.blocks.iter().all(|b| b.held_at_snapshot));
    assert_eq!(
        first.blocks[0].made_at.as_deref(),
        Some("load (train.py:42)")
    );
    let second = by_handle(0x53);
    assert_eq!(second.made_in.as_deref(), Some("after wake 1"));
    assert!(!second.released);
    assert_eq!(second.blocks.len(), 2);
    assert!(second.blocks.iter().all(|b| !b.held_at_snapshot));
    let y = by_handle(0x52);
    assert_eq!(
        y.blocks.iter().map(|b| b.address).collect::<Vec<_>>(),
        [Y, Y + MIB]
    );
    assert!(y.blocks.iter().all(|b| b.held_at_snapshot));

    // A block that starts before a mapping and runs into it is listed
    // there too, at a negative offset.
    let spanning = json!({"segments": [{"address": X - MIB, "blocks": [
        {"address": X - MIB, "size": 2 * MIB, "requested_size": 0, "state": "active_allocated"},
    ]}]});
    let (trace2, snap2) = files(&records, &spanning);
    let j2 = join(&trace2, &snap2).unwrap();
    assert_eq!(j2.mappings.len(), 2, "both handles mapped at X");
    assert!(page(&j2, &trace2, &snap2).contains("<td>-0x100000</td>"));

    let html = page(&j, &trace, &snap);
    assert!(html.contains("released by sleep 1"), "{html}");
    assert!(html.contains("load (train.py:42)"));
}

#[test]
fn a_file_that_is_not_a_snapshot_is_a_clear_error() {
    let (trace, snap) = files(&[rec(1, "phase", json!({"name": "x"}))], &json!([1, 2]));
    let e = join(&trace, &snap).unwrap_err();
    assert!(e.contains("not a memory snapshot of torch"), "{e}");
    std::fs::write(&snap, b"garbage").unwrap();
    assert!(join(&trace, &snap).is_err());
}
