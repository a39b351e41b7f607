//! Reading C data through pointers a program passed, checked by the kernel
//! (`aclmem-cmem`, which the emulated library and the Python module use
//! too): an address the process may not read is answered with `None`,
//! never a fault.
//!
//! The sanitizer reads what a call hands in (a `aclrtPhysicalMemProp`, a
//! DEFAULT shareable handle) before the library underneath has seen it, and
//! out values after the library answered. A program may pass NULL, `1`, or
//! a page it unmapped: the library answers those with a code (100000), and
//! the sanitizer must not turn them into a crash.

pub(crate) use aclmem_cmem::{read, read_array, read_bytes, stack_word};
