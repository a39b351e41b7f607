//! Goal 9: the sanitizer's overhead on the C-library cycle (loaded as the
//! library; it forwards to the emulated one, with every check on), without
//! and with 8-frame stacks.

use super::*;

/// The targets: every check on, and with 8-frame stacks.
const SANITIZER_GOAL: f64 = 1.10;
const SANITIZER_STACKS_GOAL: f64 = 1.30;

/// The two rows of goal 9, against the cycle through `f` (the emulated
/// library without the sanitizer).
pub(super) fn rows(f: &AclFunctions) -> Option<(Row, Option<Row>)> {
    let sanitizer = library().with_file_name("libaclmem_sanitizer.so");
    // SAFETY: set before the sanitizer first resolves its next functions.
    unsafe {
        std::env::set_var("ACLMEM_ASCENDCL", library());
        std::env::set_var("ACLMEM_SANITIZER_TARGETS", "a2@8.3,a3");
    }
    match AscendCl::load(Some(&sanitizer)) {
        Ok(san) => {
            let sf = san.functions();
            init(&sf, 0);
            // The cycle with and without the sanitizer, as a row of goal 9.
            let row = |what: &str, target: f64| {
                let (ratio, plain, checked) = paired(|| c_cycle(f), || c_cycle(&sf));
                let mut r = ratio_row(9, what, ratio, Some(target), None);
                r.what += &format!(" ({checked:.0} / {plain:.0} ns)");
                r
            };
            let r = row(
                "2 MiB cycle with the sanitizer, every check on / without",
                SANITIZER_GOAL,
            );
            // The same with a native stack of 8 frames kept at every call.
            // SAFETY: the sanitizer's exported control function, which
            // takes a depth and answers the previous one.
            let stacks = unsafe {
                libloading::Library::new(&sanitizer).and_then(|l| {
                    l.get::<unsafe extern "C" fn(u32) -> u32>(b"aclmem_sanitizer_stacks\0")
                        .map(|f| *f)
                })
            };
            let stacked = stacks.ok().map(|set| {
                // SAFETY: as above.
                unsafe { set(8) };
                let s = row(
                    "2 MiB cycle with the sanitizer, every check on and 8-frame stacks / without",
                    SANITIZER_STACKS_GOAL,
                );
                // SAFETY: as above.
                unsafe { set(0) };
                s
            });
            Some((r, stacked))
        }
        Err(e) => Some((
            Row {
                goal: 9,
                what: format!("the sanitizer did not load: {e}"),
                value: "—".into(),
                target: format!("≤ {SANITIZER_GOAL:.2}×"),
                met: Some(false),
            },
            None,
        )),
    }
}
