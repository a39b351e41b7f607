"""pyACL's ``acl.rt``: devices, contexts, streams, memory, copies, physical
memory and sharing. Every function returns ``ret`` or a tuple ending in
``ret`` and never raises for an ACL error; a malformed argument (a ``prop``
dict with a missing key, a value that is not an integer) is ``ret`` 100000,
as with pyACL."""

from __future__ import annotations

from typing import TYPE_CHECKING as _TYPE_CHECKING

from .. import _native
from ._args import INVALID_PARAM as _INVALID_PARAM
from ._args import guarded as _guarded
from ._args import pid_list as _pid_list
from ._args import prop_tuple as _prop_tuple

if _TYPE_CHECKING:  # annotations only: nothing but the API in the namespace
    from typing import Any, Sequence, Tuple, Union

__all__ = [
    "set_device", "reset_device", "reset_device_force", "get_device", "get_device_count",
    "get_run_mode", "get_mem_info", "device_get_bare_tgid",
    "synchronize_device", "synchronize_device_with_timeout",
    "create_context", "destroy_context", "set_context", "get_context",
    "create_stream", "destroy_stream", "synchronize_stream",
    "malloc", "malloc_align32", "free", "malloc_host", "free_host",
    "memcpy", "memcpy_async", "memset", "memset_async",
    "memcpy2d", "memcpy2d_async", "malloc_cached", "mem_flush", "mem_invalidate",
    "malloc_physical", "free_physical", "mem_get_allocation_granularity",
    "reserve_mem_address", "release_mem_address", "map_mem", "unmap_mem",
    "mem_export_to_shareable_handle", "mem_set_pid_to_shareable_handle",
    "mem_import_from_shareable_handle", "mem_get_address_range",
    "ipc_mem_get_export_key", "ipc_mem_set_import_pid", "ipc_mem_import_by_key",
    "ipc_mem_close",
]

# ----- devices -----------------------------------------------------------------


def set_device(device_id: int) -> int:
    """``ret = acl.rt.set_device(device_id)``."""
    return _guarded(_native.set_device, (), device_id)


def reset_device(device_id: int) -> int:
    """``ret = acl.rt.reset_device(device_id)``."""
    return _guarded(_native.reset_device, (), device_id)


def reset_device_force(device_id: int) -> int:
    """``ret = acl.rt.reset_device_force(device_id)``."""
    return _guarded(_native.reset_device_force, (), device_id)


def get_device() -> Tuple[int, int]:
    """``device_id, ret = acl.rt.get_device()``."""
    return _native.get_device()


def get_device_count() -> Tuple[int, int]:
    """``count, ret = acl.rt.get_device_count()``."""
    return _native.get_device_count()


def get_run_mode() -> Tuple[int, int]:
    """``run_mode, ret = acl.rt.get_run_mode()``: 0 ``ACL_DEVICE``, 1 ``ACL_HOST``."""
    return _native.get_run_mode()


def get_mem_info(attr: int) -> Tuple[int, int, int]:
    """``free, total, ret = acl.rt.get_mem_info(attr)`` for the current device."""
    return _guarded(_native.get_mem_info, (0, 0), attr)


def device_get_bare_tgid() -> Tuple[int, int]:
    """``pid, ret = acl.rt.device_get_bare_tgid()``: the pid whitelists expect."""
    return _native.device_get_bare_tgid()


def synchronize_device() -> int:
    """``ret = acl.rt.synchronize_device()``."""
    return _native.synchronize_device()


def synchronize_device_with_timeout(timeout: int) -> int:
    """``ret = acl.rt.synchronize_device_with_timeout(timeout)`` (ms, -1 forever)."""
    return _guarded(_native.synchronize_device_with_timeout, (), timeout)


# ----- contexts and streams -------------------------------------------------------


def create_context(device_id: int) -> Tuple[int, int]:
    """``context, ret = acl.rt.create_context(device_id)``."""
    return _guarded(_native.create_context, (0,), device_id)


def destroy_context(context: int) -> int:
    """``ret = acl.rt.destroy_context(context)``."""
    return _guarded(_native.destroy_context, (), context)


def set_context(context: int) -> int:
    """``ret = acl.rt.set_context(context)``."""
    return _guarded(_native.set_context, (), context)


def get_context() -> Tuple[int, int]:
    """``context, ret = acl.rt.get_context()``."""
    return _native.get_context()


def create_stream() -> Tuple[int, int]:
    """``stream, ret = acl.rt.create_stream()``."""
    return _native.create_stream()


def destroy_stream(stream: int) -> int:
    """``ret = acl.rt.destroy_stream(stream)``."""
    return _guarded(_native.destroy_stream, (), stream)


def synchronize_stream(stream: int) -> int:
    """``ret = acl.rt.synchronize_stream(stream)``."""
    return _guarded(_native.synchronize_stream, (), stream)


# ----- plain memory and copies ----------------------------------------------------


def malloc(size: int, policy: int) -> Tuple[int, int]:
    """``dev_ptr, ret = acl.rt.malloc(size, policy)``."""
    return _guarded(_native.malloc, (0,), size, policy)


def malloc_align32(size: int, policy: int) -> Tuple[int, int]:
    """``dev_ptr, ret = acl.rt.malloc_align32(size, policy)``."""
    return _guarded(_native.malloc_align32, (0,), size, policy)


def free(dev_ptr: int) -> int:
    """``ret = acl.rt.free(dev_ptr)``."""
    return _guarded(_native.free, (), dev_ptr)


def malloc_host(size: int) -> Tuple[int, int]:
    """``host_ptr, ret = acl.rt.malloc_host(size)``."""
    return _guarded(_native.malloc_host, (0,), size)


def free_host(host_ptr: int) -> int:
    """``ret = acl.rt.free_host(host_ptr)``."""
    return _guarded(_native.free_host, (), host_ptr)


def memcpy(dst: int, dest_max: int, src: int, count: int, kind: int) -> int:
    """``ret = acl.rt.memcpy(dst, dest_max, src, count, kind)``: synchronous."""
    return _guarded(_native.memcpy, (), dst, dest_max, src, count, kind)


def memcpy_async(dst: int, dest_max: int, src: int, count: int, kind: int, stream: int) -> int:
    """``ret = acl.rt.memcpy_async(dst, dest_max, src, count, kind, stream)``."""
    return _guarded(_native.memcpy_async, (), dst, dest_max, src, count, kind, stream)


def memset(dev_ptr: int, max_count: int, value: int, count: int) -> int:
    """``ret = acl.rt.memset(dev_ptr, max_count, value, count)``."""
    return _guarded(_native.memset, (), dev_ptr, max_count, value, count)


def memset_async(dev_ptr: int, max_count: int, value: int, count: int, stream: int) -> int:
    """``ret = acl.rt.memset_async(dev_ptr, max_count, value, count, stream)``."""
    return _guarded(_native.memset_async, (), dev_ptr, max_count, value, count, stream)


def memcpy2d(dst: int, dpitch: int, src: int, spitch: int, width: int, height: int, kind: int) -> int:
    """``ret = acl.rt.memcpy2d(dst, dpitch, src, spitch, width, height, kind)``:
    ``height`` rows of ``width`` bytes, ``spitch`` and ``dpitch`` apart."""
    return _guarded(_native.memcpy2d, (), dst, dpitch, src, spitch, width, height, kind)


def memcpy2d_async(
    dst: int, dpitch: int, src: int, spitch: int, width: int, height: int, kind: int, stream: int
) -> int:
    """``ret = acl.rt.memcpy2d_async(dst, dpitch, src, spitch, width, height, kind, stream)``."""
    return _guarded(
        _native.memcpy2d_async, (), dst, dpitch, src, spitch, width, height, kind, stream
    )


def malloc_cached(size: int, policy: int) -> Tuple[int, int]:
    """``dev_ptr, ret = acl.rt.malloc_cached(size, policy)``."""
    return _guarded(_native.malloc_cached, (0,), size, policy)


def mem_flush(dev_ptr: int, size: int) -> int:
    """``ret = acl.rt.mem_flush(dev_ptr, size)``."""
    return _guarded(_native.mem_flush, (), dev_ptr, size)


def mem_invalidate(dev_ptr: int, size: int) -> int:
    """``ret = acl.rt.mem_invalidate(dev_ptr, size)``."""
    return _guarded(_native.mem_invalidate, (), dev_ptr, size)


# ----- physical memory --------------------------------------------------------------


def malloc_physical(size: int, prop: Any, flags: int) -> Tuple[int, int]:
    """``handle, ret = acl.rt.malloc_physical(size, prop, flags)``: ``prop`` is
    a dict with ``handleType``, ``allocationType``, ``memAttr``,
    ``location`` (``{"id", "type"}``) and ``reserve``."""
    fields = _prop_tuple(prop)
    if fields is None:
        return 0, _INVALID_PARAM
    return _guarded(_native.malloc_physical, (0,), size, fields, flags)


def free_physical(handle: int) -> int:
    """``ret = acl.rt.free_physical(handle)``."""
    return _guarded(_native.free_physical, (), handle)


def mem_get_allocation_granularity(prop: Any, option: int) -> Tuple[int, int]:
    """``granularity, ret = acl.rt.mem_get_allocation_granularity(prop, option)``."""
    fields = _prop_tuple(prop)
    if fields is None:
        return 0, _INVALID_PARAM
    return _guarded(_native.mem_get_allocation_granularity, (0,), fields, option)


def reserve_mem_address(size: int, alignment: int, expect_ptr: int, flags: int) -> Tuple[int, int]:
    """``vir_ptr, ret = acl.rt.reserve_mem_address(size, alignment, expect_ptr, flags)``
    (``expect_ptr`` 0: the system chooses)."""
    return _guarded(_native.reserve_mem_address, (0,), size, alignment, expect_ptr or 0, flags)


def release_mem_address(vir_ptr: int) -> int:
    """``ret = acl.rt.release_mem_address(vir_ptr)``."""
    return _guarded(_native.release_mem_address, (), vir_ptr)


def map_mem(vir_ptr: int, size: int, offset: int, handle: int, flags: int) -> int:
    """``ret = acl.rt.map_mem(vir_ptr, size, offset, handle, flags)``."""
    return _guarded(_native.map_mem, (), vir_ptr, size, offset, handle, flags)


def unmap_mem(vir_ptr: int) -> int:
    """``ret = acl.rt.unmap_mem(vir_ptr)``."""
    return _guarded(_native.unmap_mem, (), vir_ptr)


def mem_get_address_range(ptr: int) -> Tuple[int, int, int]:
    """``base, size, ret = acl.rt.mem_get_address_range(ptr)``."""
    return _guarded(_native.mem_get_address_range, (0, 0), ptr)


# ----- sharing ----------------------------------------------------------------------


def mem_export_to_shareable_handle(handle: int, handle_type: int, flags: int) -> Tuple[int, int]:
    """``shareable_handle, ret = acl.rt.mem_export_to_shareable_handle(handle,
    handle_type, flags)``: flags 0 enforces the whitelist, 1 disables it."""
    return _guarded(_native.mem_export_to_shareable_handle, (0,), handle, handle_type, flags)


def mem_set_pid_to_shareable_handle(shareable_handle: int, pid: Union[int, Sequence[int]]) -> int:
    """``ret = acl.rt.mem_set_pid_to_shareable_handle(shareable_handle, pid_list)``
    (one pid or a list)."""
    pids = _pid_list(pid)
    if pids is None:
        return _INVALID_PARAM
    return _guarded(_native.mem_set_pid_to_shareable_handle, (), shareable_handle, pids)


def mem_import_from_shareable_handle(shareable_handle: int, device_id: int) -> Tuple[int, int]:
    """``handle, ret = acl.rt.mem_import_from_shareable_handle(shareable_handle, device_id)``."""
    return _guarded(_native.mem_import_from_shareable_handle, (0,), shareable_handle, device_id)


def ipc_mem_get_export_key(dev_ptr: int, size: int, flags: int) -> Tuple[str, int]:
    """``key, ret = acl.rt.ipc_mem_get_export_key(dev_ptr, size, flags)``."""
    return _guarded(_native.ipc_mem_get_export_key, ("",), dev_ptr, size, flags)


def ipc_mem_set_import_pid(key: str, pid: Union[int, Sequence[int]]) -> int:
    """``ret = acl.rt.ipc_mem_set_import_pid(key, pid_list)``."""
    pids = _pid_list(pid)
    if pids is None:
        return _INVALID_PARAM
    return _guarded(_native.ipc_mem_set_import_pid, (), key, pids)


def ipc_mem_import_by_key(key: str, flags: int) -> Tuple[int, int]:
    """``dev_ptr, ret = acl.rt.ipc_mem_import_by_key(key, flags)``."""
    return _guarded(_native.ipc_mem_import_by_key, (0,), key, flags)


def ipc_mem_close(key: str) -> int:
    """``ret = acl.rt.ipc_mem_close(key)``."""
    return _guarded(_native.ipc_mem_close, (), key)


# `from __future__ import annotations` binds the name `annotations`.
del annotations
