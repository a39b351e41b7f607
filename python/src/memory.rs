//! Reading and writing memory by address, through the kernel: an address
//! this process may not use is a `ValueError`, never a crash.

use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use pyo3::types::PyBytes;

/// Above this many bytes, [`read_memory`] checks the whole range against
/// `/proc/self/maps` before allocating.
pub(crate) const LARGE_READ: usize = 1 << 20;

/// Whether `first..=last` is covered, without a gap, by mappings of this
/// process that are readable; `None` when `/proc/self/maps` cannot be read.
pub(crate) fn readable_mappings(first: usize, last: usize) -> Option<bool> {
    let maps = std::fs::read_to_string("/proc/self/maps").ok()?;
    let mut at = first;
    // The lines are sorted by address.
    for line in maps.lines() {
        let mut fields = line.split_whitespace();
        let (Some(range), Some(perms)) = (fields.next(), fields.next()) else {
            continue;
        };
        let Some((start, end)) = range.split_once('-') else {
            continue;
        };
        let (Ok(start), Ok(end)) = (
            usize::from_str_radix(start, 16),
            usize::from_str_radix(end, 16),
        ) else {
            continue;
        };
        if end <= at {
            continue;
        }
        if start > at || !perms.starts_with('r') {
            return Some(false);
        }
        if end > last {
            return Some(true);
        }
        at = end;
    }
    Some(false)
}

/// `size` bytes at `addr`, copied through the kernel: an address this
/// process cannot read is a `ValueError`, never a crash.
///
/// The range is checked before anything is allocated: a size beyond the
/// address space (or beyond what a `bytes` can hold), or a range whose
/// first or last byte the process cannot read (or, above 1 MiB, with a
/// part no readable mapping covers), is a `ValueError` at once; a buffer
/// Python cannot allocate is a `MemoryError`. Only a range the process can
/// read gets a buffer of its size.
#[pyfunction]
pub(crate) fn read_memory<'py>(
    py: Python<'py>,
    addr: usize,
    size: usize,
) -> PyResult<Bound<'py, PyBytes>> {
    let refused = || PyValueError::new_err(format!("cannot read {size} bytes at {addr:#x}"));
    if size == 0 {
        return Ok(PyBytes::new(py, &[]));
    }
    let Some(last) = addr.checked_add(size - 1) else {
        return Err(PyValueError::new_err(format!(
            "cannot read {size} bytes at {addr:#x}: the range passes the end of the address space"
        )));
    };
    if isize::try_from(size).is_err() {
        return Err(PyValueError::new_err(format!(
            "cannot read {size} bytes at {addr:#x}: larger than a bytes object can be"
        )));
    }
    let mut probe = [0u8; 1];
    if !aclmem_cmem::read_bytes(addr, &mut probe) || !aclmem_cmem::read_bytes(last, &mut probe) {
        return Err(refused());
    }
    // Readable at both ends but perhaps not in between: for a large range,
    // the process's own map says, before a buffer of that size is made.
    if size > LARGE_READ && readable_mappings(addr, last) == Some(false) {
        return Err(refused());
    }
    PyBytes::new_with(py, size, |buf| {
        if aclmem_cmem::read_bytes(addr, buf) {
            Ok(())
        } else {
            Err(refused())
        }
    })
}

/// Copies `data` to `addr` through the kernel: an address this process
/// cannot write is a `ValueError`, never a crash.
#[pyfunction]
pub(crate) fn write_memory(addr: usize, data: &[u8]) -> PyResult<()> {
    // SAFETY: the destination is memory the Python caller names by address
    // (mapped device memory of the emulator, or host memory it owns); no
    // Rust reference points into it. The kernel refuses addresses the
    // process cannot write.
    if !data.is_empty() && !unsafe { aclmem_cmem::write_bytes(addr, data) } {
        return Err(PyValueError::new_err(format!(
            "cannot write {} bytes at {addr:#x}",
            data.len()
        )));
    }
    Ok(())
}
