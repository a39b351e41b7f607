//! Tests of `timeline`.

use super::*;

/// Two processes: the importer's records come first in the file (each
/// process writes in blocks), yet the arrow joins the export to the
/// import; reservations, handles and mappings are slices that begin
/// and end at their calls; the address space track follows them.
#[test]
fn lifetimes_are_slices_and_exports_are_joined_to_later_records() {
    let dir = std::env::temp_dir().join(format!("aclmem-timeline-unit-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let trace = dir.join("t.jsonl");
    let lines = [
        r#"{"t":50,"pid":2,"tid":2,"call":"aclrtMemImportFromShareableHandle","size":0,"ret":0,"h":9,"share":"0x5"}"#,
        r#"{"t":60,"pid":2,"tid":2,"call":"aclrtReserveMemAddress","size":4194304,"ret":0,"va":4096}"#,
        r#"{"t":70,"pid":2,"tid":2,"call":"aclrtMapMem","size":2097152,"ret":0,"va":4096,"h":9,"device":0,"phys":0,"mapped":2097152,"site":1}"#,
        r#"{"t":80,"pid":2,"tid":2,"call":"aclrtUnmapMem","size":0,"ret":0,"va":4096,"device":0,"phys":0,"mapped":0}"#,
        r#"{"t":90,"pid":2,"tid":2,"call":"aclrtReleaseMemAddress","size":0,"ret":0,"va":4096}"#,
        r#"{"t":10,"pid":1,"tid":1,"call":"aclrtMallocPhysical","size":2097152,"ret":0,"h":7,"device":0,"phys":2097152,"mapped":0}"#,
        r#"{"t":20,"pid":1,"tid":1,"call":"aclrtMemExportToShareableHandle","size":0,"ret":0,"h":7,"share":"0x5"}"#,
        r#"{"t":100,"pid":1,"tid":1,"call":"aclrtFreePhysical","size":0,"ret":0,"h":7,"device":0,"phys":0,"mapped":0}"#,
        r#"{"t":95,"pid":2,"tid":2,"call":"sites","size":0,"ret":0,"sites":{"1":["map_weights (w.c:12)","main (w.c:30)"]}}"#,
    ];
    std::fs::write(&trace, lines.join("\n")).unwrap();
    let (records, names) = run(&trace, &dir.join("t")).unwrap();
    assert_eq!(records, 9);
    assert!(
        names.contains(&"process 2, address space".to_owned()),
        "{names:?}"
    );
    let json: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(dir.join("t.json")).unwrap()).unwrap();
    let events = json["traceEvents"].as_array().unwrap();
    let ph = |p: &str| events.iter().filter(|e| e["ph"] == p).collect::<Vec<_>>();
    let (s, f) = (ph("s"), ph("f"));
    assert_eq!((s.len(), f.len()), (1, 1));
    assert_eq!(
        (s[0]["pid"].as_u64(), s[0]["ts"].as_u64()),
        (Some(1), Some(20))
    );
    assert_eq!(
        (f[0]["pid"].as_u64(), f[0]["ts"].as_u64()),
        (Some(2), Some(50))
    );
    let (b, e) = (ph("b"), ph("e"));
    // Handle 7, imported handle 9, the reservation and the mapping
    // begin; all but the imported handle (never freed) end.
    assert_eq!(b.len(), 4, "{b:?}");
    assert_eq!(e.len(), 3, "{e:?}");
    for end in &e {
        assert!(
            b.iter().any(|begin| begin["id"] == end["id"]
                && begin["cat"] == end["cat"]
                && begin["name"] == end["name"]),
            "{end}"
        );
    }
    let html = std::fs::read_to_string(dir.join("t.html")).unwrap();
    assert!(
        html.contains(r#""from":[1,10]"#),
        "the arrow starts at the export"
    );
    // The mapping's tooltip gets the stack its process described.
    assert!(
        html.contains(r#""sites":{"1":"map_weights (w.c:12)\nmain (w.c:30)"}"#),
        "the page carries the mapping's stack"
    );
    let _ = std::fs::remove_dir_all(&dir);
}

/// An allocation refused for lack of memory is a marker of its
/// process; one refused for another reason is not.
#[test]
fn out_of_memory_is_marked() {
    let dir = std::env::temp_dir().join(format!("aclmem-timeline-oom-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let trace = dir.join("t.jsonl");
    let lines = [
        r#"{"t":10,"pid":3,"tid":3,"call":"aclrtMallocPhysical","size":2097152,"ret":0,"h":7,"device":0,"phys":2097152,"mapped":0}"#,
        r#"{"t":20,"pid":3,"tid":3,"call":"aclrtMallocPhysical","size":1099511627776,"ret":207001,"h":null}"#,
        r#"{"t":30,"pid":3,"tid":3,"call":"aclrtMalloc","size":0,"ret":100000}"#,
    ];
    std::fs::write(&trace, lines.join("\n")).unwrap();
    run(&trace, &dir.join("t")).unwrap();
    let html = std::fs::read_to_string(dir.join("t.html")).unwrap();
    assert!(
        html.contains(
            r#""markers":[[10,"out of memory: aclrtMallocPhysical of 1099511627776 bytes"]]"#
        ),
        "{}",
        &html[html.find("markers").unwrap_or(0)..][..200.min(html.len())]
    );
    let _ = std::fs::remove_dir_all(&dir);
}
