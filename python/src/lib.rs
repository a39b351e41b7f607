//! `aclmem._native`: the ACL calls of the backend, one Python function per
//! C function, with plain integers in and `(values..., ret)` out; and the
//! rules table as Python values. The pyACL-compatible module
//! (`aclmem.acl`) and the Pythonic layer are written in Python over it.
//!
//! The backend is chosen once per process, at the first call:
//! `ACLMEM_BACKEND=emulator` (the default: the process's one emulated
//! `libascendcl.so` — see [`shared_emulator`](backend::shared_emulator) — joining the machine
//! `ACLMEM_EMU_MACHINE` names, as C and Rust processes do) or
//! `ACLMEM_BACKEND=driver` (the real `libascendcl.so`, found as
//! `aclmem-driver` finds it).
//!
//! Pointers come from Python as integers. With the emulator every pointer
//! argument is checked by the kernel before use, so a wrong one is an ACL
//! error, never a crash; with the real library, pointers go to it as they
//! come, as with pyACL.

use pyo3::prelude::*;

mod backend;
mod blocks;
mod copies;
mod ipc;
mod memory;
mod pools;
mod rules;
mod runtime;
mod vmm;

use backend::backend_name;
use blocks::*;
use copies::*;
use ipc::*;
use memory::*;
use pools::*;
use rules::*;
use runtime::*;
use vmm::*;

#[pymodule]
fn _native(m: &Bound<'_, PyModule>) -> PyResult<()> {
    macro_rules! add {
        ($($f:ident),* $(,)?) => { $( m.add_function(wrap_pyfunction!($f, m)?)?; )* };
    }
    add!(
        backend_name,
        init,
        finalize,
        set_device,
        reset_device,
        reset_device_force,
        get_device,
        get_device_count,
        get_run_mode,
        get_soc_name,
        get_version,
        get_cann_version,
        get_mem_info,
        device_get_bare_tgid,
        synchronize_device,
        synchronize_device_with_timeout,
        create_context,
        destroy_context,
        set_context,
        get_context,
        create_stream,
        destroy_stream,
        synchronize_stream,
        malloc,
        malloc_align32,
        free,
        malloc_host,
        free_host,
        memcpy,
        memcpy_async,
        memset,
        malloc_physical,
        free_physical,
        mem_pool_create,
        mem_pool_destroy,
        mem_pool_set_attr,
        mem_pool_get_attr,
        mem_pool_malloc_async,
        mem_pool_free_async,
        mem_pool_trim_to,
        mem_alloc_managed,
        mem_managed_advise,
        mem_managed_prefetch_async,
        memcpy2d,
        memcpy2d_async,
        memset_async,
        malloc_cached,
        mem_flush,
        mem_invalidate,
        memset_d32,
        memset_d32_async,
        mem_get_allocation_granularity,
        reserve_mem_address,
        release_mem_address,
        map_mem,
        unmap_mem,
        mem_export_to_shareable_handle,
        mem_set_pid_to_shareable_handle,
        mem_import_from_shareable_handle,
        mem_get_address_range,
        ipc_mem_get_export_key,
        ipc_mem_set_import_pid,
        ipc_mem_import_by_key,
        ipc_mem_close,
        read_memory,
        write_memory,
        check,
        matrix,
        constants,
        cann_releases,
    );
    Ok(())
}
