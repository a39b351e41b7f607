//! `aclmem timeline`: a trace of several processes becomes one page with a
//! track per process and device; a long trace is streamed and its page
//! downsampled, keeping every low and high of the physical memory.

use std::io::Write;

/// A trace of two processes, each with `n` records. Process 1: physical
/// memory that climbs 2 MiB per record to 100 MiB and drops to 0 (a sleep),
/// with one 1 GiB spike. Process 2: a 100 MiB plateau with one dip to
/// 1 MiB.
fn write_trace(path: &std::path::Path, n: u64) {
    let mut f = std::io::BufWriter::new(std::fs::File::create(path).unwrap());
    for i in 0..n {
        for pid in [1u64, 2] {
            let phys = match pid {
                1 if i == n / 3 => 1 << 30,
                1 => (i % 51) * (2 << 20),
                _ if i == n / 2 => 1 << 20,
                _ => 100 << 20,
            };
            writeln!(
                f,
                r#"{{"t":{},"pid":{pid},"tid":{pid},"call":"aclrtMapMem","size":2097152,"ret":0,"device":0,"phys":{phys},"mapped":{phys}}}"#,
                1_000_000 + i * 10 + pid
            )
            .unwrap();
        }
    }
}

fn page_data(html: &str) -> serde_json::Value {
    let start = html.find("const TRACKS = ").unwrap() + "const TRACKS = ".len();
    let end = start + html[start..].find(";\n").unwrap();
    serde_json::from_str(&html[start..end]).unwrap()
}

#[test]
fn several_processes_and_a_long_trace() {
    let dir = std::env::temp_dir().join(format!("aclmem-timeline-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let trace = dir.join("t.jsonl");
    let n = 12_000;
    write_trace(&trace, n);
    // Through qemu when the tests run for another architecture.
    let out = aclmem_tests::through_test_runner(env!("CARGO_BIN_EXE_aclmem"))
        .arg("timeline")
        .arg(&trace)
        .output()
        .unwrap();
    assert!(out.status.success(), "{out:?}");
    let said = String::from_utf8_lossy(&out.stdout);
    assert!(
        said.starts_with("24000 events, 2 (process 1, device 0, process 2, device 0)"),
        "{said}"
    );
    // The Perfetto trace holds every record (an instant and a counter each).
    let chrome: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(dir.join("t.json")).unwrap()).unwrap();
    assert_eq!(chrome["traceEvents"].as_array().unwrap().len(), 48_000);
    // The page: a track per process, downsampled, extremes kept.
    let html = std::fs::read_to_string(dir.join("t.html")).unwrap();
    let tracks = page_data(&html);
    let tracks = tracks.as_array().unwrap();
    assert_eq!(tracks.len(), 2);
    for (tr, name) in tracks
        .iter()
        .zip(["process 1, device 0", "process 2, device 0"])
    {
        assert_eq!(tr["name"], name);
        assert_eq!(tr["records"], n);
        let points = tr["points"].as_array().unwrap();
        assert!(
            points.len() <= 2 * 4000 && points.len() < n as usize,
            "{}",
            points.len()
        );
        let times: Vec<u64> = points.iter().map(|p| p[0].as_u64().unwrap()).collect();
        assert!(times.windows(2).all(|w| w[0] <= w[1]), "in time order");
    }
    let phys = |i: usize| -> Vec<u64> {
        tracks[i]["points"]
            .as_array()
            .unwrap()
            .iter()
            .map(|p| p[1].as_u64().unwrap())
            .collect()
    };
    assert!(phys(0).contains(&0), "the sleeps' lows survive");
    let peak = |i: usize| {
        tracks[i]["points"]
            .as_array()
            .unwrap()
            .iter()
            .map(|p| p[1].as_u64().unwrap())
            .max()
            .unwrap()
    };
    assert_eq!(peak(0), 1 << 30, "the spike survives");
    assert_eq!(tracks[0]["peak_phys"], 1u64 << 30);
    assert!(phys(1).contains(&(1 << 20)), "process 2's one dip survives");
    assert_eq!(
        tracks[1]["levels"],
        serde_json::json!([0, 100 << 20, 1 << 20, 100 << 20])
    );
    let _ = std::fs::remove_dir_all(&dir);
}

/// Input that is not a trace (an endless line, for one) is a clear error
/// and an error status from every reader of traces, never a read without
/// end (which aborted when memory ran out).
#[test]
fn an_endless_line_is_an_error_not_an_abort() {
    let dir = std::env::temp_dir().join(format!("aclmem-timeline-zero-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let out = dir.join("z");
    let out = out.to_str().unwrap();
    for args in [
        vec!["timeline", "/dev/zero", "-o", out],
        vec!["timeline", "/dev/zero", "--format", "memory-viz", "-o", out],
        vec!["replay", "/dev/zero", "--targets", "a2"],
    ] {
        let o = aclmem_tests::through_test_runner(env!("CARGO_BIN_EXE_aclmem"))
            .args(&args)
            .output()
            .unwrap();
        let stderr = String::from_utf8_lossy(&o.stderr);
        assert!(
            matches!(o.status.code(), Some(1 | 2)),
            "{args:?}: {:?} {stderr}",
            o.status
        );
        assert!(
            stderr.contains("/dev/zero:1: a line longer than 16 MiB"),
            "{args:?}: {stderr}"
        );
    }
    std::fs::remove_dir_all(&dir).unwrap();
}
