//! Watching the processes of a run for `aclmem sanitize`: a process that
//! ends without exit handlers gets its exit event from here, so that the
//! checks across processes (`aclmem_formats::across`) see every end.

use std::collections::BTreeSet;
use std::path::Path;

use aclmem_formats::sharing::{Event, Kind};

/// The end of every process of the run, also of those that end without
/// exit handlers (`_exit`, Python's forked `multiprocessing` workers, a
/// kill), which write no exit event of their own: while the program runs,
/// a thread reads the start events as they are appended and, every few
/// milliseconds, looks whether each started process still runs (`/proc`:
/// gone, or a zombie, is ended); for one that ended without its exit
/// event, it appends one (`"observed": true`), timed by the same monotonic
/// clock. The check takes each process's earliest exit event.
pub struct Watcher {
    done: std::sync::Arc<std::sync::atomic::AtomicBool>,
    thread: Option<std::thread::JoinHandle<()>>,
}

/// How often the watcher looks.
const WATCH_EVERY: std::time::Duration = std::time::Duration::from_millis(5);

impl Watcher {
    /// Starts watching the events appended to `path`.
    pub fn start(path: std::path::PathBuf) -> Watcher {
        let done = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
        let flag = done.clone();
        let thread = std::thread::Builder::new()
            .name("aclmem-sanitize-watch".into())
            .spawn(move || watch(&path, &flag))
            .ok();
        Watcher { done, thread }
    }

    /// After the program ended: a last look, then the thread ends.
    pub fn finish(mut self) {
        self.done.store(true, std::sync::atomic::Ordering::Release);
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}

/// The system's monotonic clock in µs (the sanitizer's time base).
fn now_us() -> u64 {
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: clock_gettime writes the live `timespec` above.
    unsafe { libc::clock_gettime(libc::CLOCK_MONOTONIC, &mut ts) };
    (ts.tv_sec as u64).saturating_mul(1_000_000) + (ts.tv_nsec as u64) / 1_000
}

/// Whether process `pid` still runs (a zombie has ended).
fn running(pid: u32) -> bool {
    match std::fs::read_to_string(format!("/proc/{pid}/stat")) {
        // The state follows the command's closing parenthesis.
        Ok(stat) => stat
            .rsplit_once(')')
            .and_then(|(_, rest)| rest.split_whitespace().next())
            .is_some_and(|state| state != "Z" && state != "X"),
        Err(_) => false,
    }
}

fn watch(path: &Path, done: &std::sync::atomic::AtomicBool) {
    use std::io::{Read, Seek, Write};
    let mut offset = 0u64;
    let mut pending = String::new();
    let mut live = BTreeSet::new();
    loop {
        let last = done.load(std::sync::atomic::Ordering::Acquire);
        if let Ok(mut f) = std::fs::File::open(path) {
            let mut more = String::new();
            if f.seek(std::io::SeekFrom::Start(offset)).is_ok()
                && f.read_to_string(&mut more).is_ok()
            {
                offset += more.len() as u64;
                pending.push_str(&more);
            }
        }
        // Whole lines only (a line is one write, but a read may meet one
        // half written).
        if let Some(end) = pending.rfind('\n') {
            for line in pending[..end].lines() {
                let Ok(e) = serde_json::from_str::<Event>(line) else {
                    continue;
                };
                match e.ev {
                    Kind::Start => {
                        live.insert(e.pid);
                    }
                    Kind::Exit => {
                        live.remove(&e.pid);
                    }
                    _ => {}
                }
            }
            pending.drain(..=end);
        }
        let ended: Vec<u32> = live.iter().copied().filter(|&p| !running(p)).collect();
        for pid in ended {
            live.remove(&pid);
            let mut exit = Event::new(Kind::Exit, "", pid, now_us());
            exit.observed = true;
            let line = format!("{}\n", serde_json::to_string(&exit).unwrap_or_default());
            if let Ok(mut f) = std::fs::File::options().append(true).open(path) {
                let _ = f.write_all(line.as_bytes());
            }
        }
        if last {
            break;
        }
        std::thread::sleep(WATCH_EVERY);
    }
}
