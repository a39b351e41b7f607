//! Goals 10 and 11: copies and fills through the C library against
//! `memcpy(3)` and `memset(3)`, and `aclmem timeline` on a long trace.

use super::*;

/// One copy through the C library, answering its code.
pub(crate) type CopyOp<'a> = Box<dyn Fn() -> i32 + 'a>;

/// Goal 10: copies through the C library against `memcpy(3)` and
/// `memset(3)` of warm host buffers of the same size, as bandwidth ratios
/// (baseline time / measured time).
pub(crate) fn copy_rows(f: &AclFunctions) -> Vec<Row> {
    let (malloc, free) = (f.aclrtMalloc.unwrap(), f.aclrtFree.unwrap());
    let (memcpy, memset) = (f.aclrtMemcpy.unwrap(), f.aclrtMemset.unwrap());
    let mut rows = Vec::new();
    for size in [4 * MIB, 64 * MIB, GIB] {
        let src: Vec<u8> = (0..size).map(|i| i as u8).collect();
        let mut dst = vec![0u8; size];
        let (s, d) = (
            src.as_ptr().cast::<c_void>(),
            dst.as_mut_ptr().cast::<c_void>(),
        );
        let (mut a, mut b) = (ptr::null_mut(), ptr::null_mut());
        // SAFETY: documented prototypes; every buffer is `size` bytes, live
        // for the whole measurement and freed at its end.
        unsafe {
            assert_eq!(malloc(&mut a, size, 0), 0);
            assert_eq!(malloc(&mut b, size, 0), 0);
            let baseline = || {
                libc::memcpy(d, s, size);
                black_box(d);
            };
            let kinds: [(&str, CopyOp); 4] = [
                ("H2D", Box::new(|| memcpy(a, size, s, size, 1))),
                ("D2H", Box::new(|| memcpy(d, size, a, size, 2))),
                ("D2D", Box::new(|| memcpy(b, size, a, size, 3))),
                ("memset", Box::new(|| memset(a, size, 7, size))),
            ];
            for (what, op) in &kinds {
                // Warm: device pages are touched before they are timed.
                assert_eq!(op(), 0, "{what}");
                let (ratio, base, acl) = if *what == "memset" {
                    paired(
                        || {
                            libc::memset(d, 7, size);
                            black_box(d);
                        },
                        || assert_eq!(op(), 0),
                    )
                } else {
                    paired(baseline, || assert_eq!(op(), 0))
                };
                let label = if *what == "memset" {
                    "aclrtMemset".to_owned()
                } else {
                    format!("aclrtMemcpy {what}")
                };
                let mut r = ratio_row(
                    10,
                    &format!(
                        "{label} {} MiB, bandwidth / {}(3)",
                        size / MIB,
                        if *what == "memset" {
                            "memset"
                        } else {
                            "memcpy"
                        }
                    ),
                    1.0 / ratio,
                    None,
                    Some(0.9),
                );
                let gbps = |ns: f64| size as f64 / ns;
                r.what += &format!(" ({:.1} / {:.1} GB/s)", gbps(acl), gbps(base));
                rows.push(r);
            }
            assert_eq!(free(a), 0);
            assert_eq!(free(b), 0);
        }
    }
    rows
}

/// Goal 11: `aclmem timeline` on a 10,000,000-event trace (two processes,
/// written here), timed, with the converter's peak memory. Needs the CLI
/// (`$ACLMEM_CLI`, which `cargo xtask bench` builds); without it the row
/// says so.
pub(crate) fn timeline_row() -> Option<Row> {
    use std::io::Write;
    const EVENTS: u64 = 10_000_000;
    let Some(cli) = std::env::var_os("ACLMEM_CLI") else {
        return Some(Row {
            goal: 11,
            what: "aclmem timeline: $ACLMEM_CLI not set (cargo xtask bench sets it)".into(),
            value: "—".into(),
            target: "≤ 60 s, ≤ 1 GiB".into(),
            met: Some(false),
        });
    };
    let dir = std::env::temp_dir().join(format!("aclmem-goal11-{}", std::process::id()));
    std::fs::create_dir_all(&dir).ok()?;
    let trace = dir.join("t.jsonl");
    {
        let mut f = std::io::BufWriter::with_capacity(1 << 20, std::fs::File::create(&trace).ok()?);
        for i in 0..EVENTS {
            let pid = 1000 + i % 2;
            let phys = (i / 2 % 64) * (2 << 20);
            writeln!(
                f,
                r#"{{"call":"aclrtMapMem","device":0,"h":{},"mapped":{phys},"phys":{phys},"pid":{pid},"ret":0,"size":2097152,"t":{},"tid":{pid},"va":{}}}"#,
                0x1000_0000_0000_0001u64 + i,
                1_000_000 + i * 3,
                0x1000_0000_0000u64 + (i % 64) * (2 << 20),
            )
            .ok()?;
        }
        f.flush().ok()?;
    }
    let bytes = std::fs::metadata(&trace).ok()?.len();
    let start = Instant::now();
    let out = std::process::Command::new(&cli)
        .arg("timeline")
        .arg(&trace)
        .output()
        .ok()?;
    let secs = start.elapsed().as_secs_f64();
    // The converter's own peak (VmHWM, which it prints): a child's
    // ru_maxrss would start at this large process's resident size.
    let said = String::from_utf8_lossy(&out.stdout);
    let mib: f64 = said
        .split("(peak memory ")
        .nth(1)
        .and_then(|r| r.split(' ').next())
        .and_then(|n| n.parse().ok())
        .unwrap_or(f64::INFINITY);
    let ok = out.status.success();
    let _ = std::fs::remove_dir_all(&dir);
    Some(Row {
        goal: 11,
        what: format!(
            "aclmem timeline, {EVENTS}-event trace of 2 processes ({:.1} GiB): wall time, peak memory {mib:.0} MiB",
            bytes as f64 / (1u64 << 30) as f64
        ),
        value: format!("{secs:.1} s"),
        target: "≤ 60 s, ≤ 1 GiB".into(),
        met: Some(ok && secs <= 60.0 && mib <= 1024.0),
    })
}
