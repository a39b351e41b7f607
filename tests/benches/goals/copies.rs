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
/// written here), timed, with the converter's peak memory: the page and
/// the Perfetto file (≤ 15 s), and PyTorch's snapshots (`--format
/// memory-viz`, ≤ 60 s); both within 1 GiB. Needs the CLI
/// (`$ACLMEM_CLI`, which `cargo xtask bench` builds); without it the row
/// says so.
pub(crate) fn timeline_rows() -> Vec<Row> {
    use std::io::Write;
    const EVENTS: u64 = 10_000_000;
    let Some(cli) = std::env::var_os("ACLMEM_CLI") else {
        return vec![Row {
            goal: 11,
            what: "aclmem timeline: $ACLMEM_CLI not set (cargo xtask bench sets it)".into(),
            value: "—".into(),
            target: "≤ 15 s, ≤ 1 GiB".into(),
            met: Some(false),
        }];
    };
    let dir = std::env::temp_dir().join(format!("aclmem-goal11-{}", std::process::id()));
    let trace = dir.join("t.jsonl");
    let written = (|| -> std::io::Result<u64> {
        std::fs::create_dir_all(&dir)?;
        let mut f = std::io::BufWriter::with_capacity(1 << 20, std::fs::File::create(&trace)?);
        for i in 0..EVENTS {
            let pid = 1000 + i % 2;
            let phys = (i / 2 % 64) * (2 << 20);
            writeln!(
                f,
                r#"{{"call":"aclrtMapMem","device":0,"h":{},"mapped":{phys},"phys":{phys},"pid":{pid},"ret":0,"size":2097152,"t":{},"tid":{pid},"va":{}}}"#,
                0x1000_0000_0000_0001u64 + i,
                1_000_000 + i * 3,
                0x1000_0000_0000u64 + (i % 64) * (2 << 20),
            )?;
        }
        f.flush()?;
        Ok(std::fs::metadata(&trace)?.len())
    })();
    let Ok(bytes) = written else {
        let _ = std::fs::remove_dir_all(&dir);
        return Vec::new();
    };
    let gib = bytes as f64 / (1u64 << 30) as f64;
    // One conversion: wall time, the converter's own peak (VmHWM, which it
    // prints: a child's ru_maxrss would start at this large process's
    // resident size), and whether it succeeded.
    let convert = |args: &[&str]| -> (f64, f64, bool) {
        let start = Instant::now();
        let out = std::process::Command::new(&cli)
            .arg("timeline")
            .arg(&trace)
            .args(args)
            .output();
        let secs = start.elapsed().as_secs_f64();
        let Ok(out) = out else {
            return (secs, f64::INFINITY, false);
        };
        let said = String::from_utf8_lossy(&out.stdout);
        let mib: f64 = said
            .split("(peak memory ")
            .nth(1)
            .and_then(|r| r.split(' ').next())
            .and_then(|n| n.parse().ok())
            .unwrap_or(f64::INFINITY);
        (secs, mib, out.status.success())
    };
    let mut rows = Vec::new();
    for (format, args, limit) in [
        ("page and Perfetto file", &[][..], 15.0),
        (
            "memory-viz snapshots",
            &["--format", "memory-viz"][..],
            60.0,
        ),
    ] {
        let out = dir.join("out");
        let mut all = args.to_vec();
        let out_arg = out.to_string_lossy().into_owned();
        all.extend(["-o", out_arg.as_str()]);
        let (secs, mib, ok) = convert(&all);
        rows.push(Row {
            goal: 11,
            what: format!(
                "aclmem timeline, {format}: {EVENTS}-event trace of 2 processes ({gib:.1} GiB): wall time, peak memory {mib:.0} MiB"
            ),
            value: format!("{secs:.1} s"),
            target: format!("≤ {limit:.0} s, ≤ 1 GiB"),
            met: Some(ok && secs <= limit && mib <= 1024.0),
        });
        for f in std::fs::read_dir(&dir).into_iter().flatten().flatten() {
            if f.path() != trace {
                let _ = std::fs::remove_file(f.path());
            }
        }
    }
    let _ = std::fs::remove_dir_all(&dir);
    rows
}
