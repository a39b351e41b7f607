//! Where a program was when it crashed, or when `aclmem explore` found it
//! hung: one [`Where`] per process and signal, written by the sanitizer to
//! the file named by [`ENV`] and read by `aclmem explore`.
//!
//! When [`ENV`] names a file, the sanitizer (from `aclInit` on) catches the
//! crash signals (`SIGSEGV`, `SIGBUS`, `SIGFPE`, `SIGILL`, `SIGABRT`): it
//! appends where the process was, then lets the signal end it as it would
//! have. It also answers [`PROBE_SIGNAL`], which `aclmem explore` sends a
//! run's processes when the run has not ended within its timeout, before it
//! kills them: each process appends where it waits, and goes on waiting.

/// The environment variable naming the file the records are appended to.
pub const ENV: &str = "ACLMEM_SANITIZER_WHERE";

/// The signal that asks a process where it is: `SIGURG` (23 on Linux for
/// x86_64 and aarch64), whose default action is to ignore it, so a process
/// of the run without the sanitizer (the `aclmem sanitize` command itself,
/// a helper program) is not disturbed by it.
pub const PROBE_SIGNAL: i32 = 23;

/// Where one process was.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct Where {
    /// The process.
    pub pid: u32,
    /// The signal that found it there: a crash signal, or
    /// [`PROBE_SIGNAL`] for a hang.
    pub signal: i32,
    /// The innermost frame of the program's own code (not the C library's,
    /// the loader's or aclmem's): `function (file:line)`, or `address in
    /// module` without debug information; `"unknown"` when no frame is the
    /// program's.
    pub site: String,
    /// The program's frames, innermost first (at most 8).
    pub stack: Vec<String>,
}
