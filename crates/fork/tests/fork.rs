//! A lock held by another thread at `fork`, and one on which threads wait,
//! are both usable at once in the child.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use aclmem_fork::{ForkMutex, generation};

static HELD: ForkMutex<Vec<u32>> = ForkMutex::new(Vec::new);

/// Forks; the child runs `f` and exits with its code; the parent waits for
/// it with a deadline and kills it if it is late (a hang fails the test,
/// never the run).
fn in_child(f: impl FnOnce() -> i32) -> i32 {
    // SAFETY: the child only runs `f` (locks, a vector) and `_exit`s.
    let pid = unsafe { libc::fork() };
    assert!(pid >= 0, "fork");
    if pid == 0 {
        let code = f();
        // SAFETY: ends the child without running the parent's exit handlers.
        unsafe { libc::_exit(code) };
    }
    let deadline = std::time::Instant::now() + Duration::from_secs(20);
    loop {
        let mut status = 0;
        // SAFETY: waits for our own child.
        let r = unsafe { libc::waitpid(pid, &mut status, libc::WNOHANG) };
        if r == pid {
            return if libc::WIFEXITED(status) {
                libc::WEXITSTATUS(status)
            } else {
                -1
            };
        }
        if std::time::Instant::now() > deadline {
            // SAFETY: our own child.
            unsafe {
                libc::kill(pid, libc::SIGKILL);
                libc::waitpid(pid, &mut status, 0);
            }
            return -2;
        }
        std::thread::sleep(Duration::from_millis(5));
    }
}

#[test]
fn a_lock_held_by_another_thread_at_fork_is_fresh_in_the_child() {
    HELD.lock().push(1);
    let before = generation();
    let (taken_tx, taken_rx) = std::sync::mpsc::channel();
    let (done_tx, done_rx) = std::sync::mpsc::channel::<()>();
    let holder = std::thread::spawn(move || {
        let _g = HELD.lock();
        taken_tx.send(()).unwrap();
        let _ = done_rx.recv();
    });
    taken_rx.recv().unwrap();
    // Threads that wait on the lock at the fork, too.
    let stop = Arc::new(AtomicBool::new(false));
    let waiters: Vec<_> = (0..3)
        .map(|_| {
            let stop = Arc::clone(&stop);
            std::thread::spawn(move || {
                while !stop.load(Ordering::Relaxed) {
                    HELD.lock().push(2);
                }
            })
        })
        .collect();
    std::thread::sleep(Duration::from_millis(20));
    let code = in_child(|| {
        if generation() != before + 1 {
            return 3;
        }
        let mut g = HELD.lock();
        // Fresh: the initial value, not the parent's.
        if !g.is_empty() {
            return 4;
        }
        g.push(7);
        drop(g);
        i32::from(HELD.lock().as_slice() != [7])
    });
    assert_eq!(code, 0, "the child's lock (-2: it hung)");
    assert!(HELD.try_lock().is_none(), "the parent's lock is still held");
    done_tx.send(()).unwrap();
    holder.join().unwrap();
    stop.store(true, Ordering::Relaxed);
    for w in waiters {
        w.join().unwrap();
    }
    // The parent's state is its own, untouched by the child.
    assert_eq!(HELD.lock().first(), Some(&1));
    assert_eq!(generation(), before);
}

static KEPT: std::sync::Mutex<Vec<u32>> = std::sync::Mutex::new(Vec::new());

#[test]
fn a_lock_held_across_fork_is_let_go_in_both_processes() {
    KEPT.lock().unwrap().push(1);
    // Threads wait on the lock while the forking thread holds it.
    let stop = Arc::new(AtomicBool::new(false));
    let waiters: Vec<_> = (0..3)
        .map(|_| {
            let stop = Arc::clone(&stop);
            std::thread::spawn(move || {
                while !stop.load(Ordering::Relaxed) {
                    KEPT.lock().unwrap().push(2);
                    std::thread::yield_now();
                }
            })
        })
        .collect();
    std::thread::sleep(Duration::from_millis(20));
    aclmem_fork::hold(KEPT.lock().unwrap());
    std::thread::sleep(Duration::from_millis(20));
    let code = in_child(|| {
        aclmem_fork::release_held();
        // The parent's state, kept whole; the child's own thread may lock.
        let ok = KEPT.lock().unwrap().first() == Some(&1);
        KEPT.lock().unwrap().push(9);
        i32::from(!ok)
    });
    aclmem_fork::release_held();
    assert_eq!(code, 0, "the child's copy (-2: it hung)");
    stop.store(true, Ordering::Relaxed);
    for w in waiters {
        w.join().unwrap();
    }
    assert!(!KEPT.lock().unwrap().contains(&9));
}
