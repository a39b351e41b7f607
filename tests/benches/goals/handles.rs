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
    let take = |live: &mut Vec<*mut c_void>, n: usize| {
        for _ in 0..n {
            let mut h = ptr::null_mut();
            // SAFETY: documented prototype; live locals.
            let r = unsafe { f.aclrtMallocPhysical.unwrap()(&mut h, SIZE, &prop, 0) };
            assert_eq!(r, 0, "malloc #{} answered {r}", live.len() + 1);
            live.push(h);
        }
    };
    take(&mut live, 10);
    let at_10 = ns_per_op(|| c_cycle(&f));
    take(&mut live, 30_000 - 10);
    let at_30k = ns_per_op(|| c_cycle(&f));
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
