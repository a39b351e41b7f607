//! Goal 5: many live handles under a low descriptor limit.

use super::*;

/// Goal 5, in a child process of its own (it lowers its fd limit).
pub(super) fn many_handles_child() {
    let soft = 1024;
    // SAFETY: getrlimit/setrlimit on a local struct.
    let hard = unsafe {
        let mut l = libc::rlimit {
            rlim_cur: 0,
            rlim_max: 0,
        };
        libc::getrlimit(libc::RLIMIT_NOFILE, &mut l);
        l.rlim_cur = soft;
        assert_eq!(libc::setrlimit(libc::RLIMIT_NOFILE, &l), 0);
        l.rlim_max
    };
    let cl = AscendCl::load(Some(&library())).expect("library");
    let f = cl.functions();
    init(&f, 0);
    let prop = hbm();
    let mut live = Vec::new();
    // Up to `target` live handles.
    let take = |live: &mut Vec<*mut c_void>, target: usize| {
        while live.len() < target {
            let mut h = ptr::null_mut();
            // SAFETY: documented prototype; live locals.
            let r = unsafe { f.aclrtMallocPhysical.unwrap()(&mut h, SIZE, &prop, 0) };
            assert_eq!(r, 0, "malloc #{} answered {r}", live.len() + 1);
            live.push(h);
        }
    };
    // Down to `keep` live handles.
    let give_back = |live: &mut Vec<*mut c_void>, keep: usize| {
        let keep = keep.min(live.len());
        for h in live.drain(keep..) {
            // SAFETY: documented prototype; a handle made above.
            unsafe { f.aclrtFreePhysical.unwrap()(h) };
        }
    };
    // Three rounds, each measuring with 10 live handles and then with
    // 30,000, so that a quiet or a busy moment of the machine does not
    // fall on one side only; the best of each side.
    let (mut at_10, mut at_30k) = (f64::INFINITY, f64::INFINITY);
    for _ in 0..3 {
        // Back to 10 live handles (from none, or from 30,000).
        give_back(&mut live, 10);
        take(&mut live, 10);
        at_10 = at_10.min(ns_per_op(|| c_cycle(&f)));
        take(&mut live, 30_000);
        at_30k = at_30k.min(ns_per_op(|| c_cycle(&f)));
    }
    // SAFETY: open/close of a path literal.
    let open_ok = unsafe {
        let fd = libc::open(c"/dev/null".as_ptr(), libc::O_RDONLY);
        if fd >= 0 {
            libc::close(fd);
        }
        fd >= 0
    };
    for h in live {
        // SAFETY: documented prototype; a handle made above.
        unsafe { f.aclrtFreePhysical.unwrap()(h) };
    }
    println!("{at_10} {at_30k} {open_ok} {hard}");
}
