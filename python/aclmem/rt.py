"""The runtime's memory calls pyACL does not bind (the stream-ordered pools
of CANN 9.0/9.1, managed memory), named as pyACL names C functions
(``aclrtMemPoolMallocAsync`` is ``mem_pool_malloc_async``) and following
its conventions: each returns ``ret`` or a tuple ending in ``ret`` and
never raises for an ACL error; pointers, pools and streams are ``int``
(streams from ``acl.rt.create_stream``); a malformed argument is ``ret``
100000. On a release or product without the calls the answer is the
runtime's (207000).

>>> import aclmem.acl as acl, aclmem.rt as rt
>>> pool, ret = rt.mem_pool_create({"allocType": 0, "handleType": 0,
...     "location": {"id": 0, "type": 1}, "maxSize": 64 << 20})  # doctest: +SKIP
"""

from __future__ import annotations

from typing import TYPE_CHECKING as _TYPE_CHECKING
from collections.abc import Mapping as _Mapping

from . import _native
from .acl._args import INVALID_PARAM as _INVALID_PARAM
from .acl._args import guarded as _guarded

if _TYPE_CHECKING:  # annotations only: nothing but the API in the namespace
    from typing import Any, Tuple

__all__ = [
    "mem_pool_create", "mem_pool_destroy", "mem_pool_set_attr", "mem_pool_get_attr",
    "mem_pool_malloc_async", "mem_pool_free_async", "mem_pool_trim_to",
    "mem_alloc_managed", "mem_managed_advise", "mem_managed_prefetch_async",
    "memset_d32", "memset_d32_async",
    "ACL_RT_MEM_POOL_REUSE_FOLLOW_EVENT_DEPENDENCIES",
    "ACL_RT_MEM_POOL_REUSE_ALLOW_OPPORTUNISTIC",
    "ACL_RT_MEM_POOL_REUSE_ALLOW_INTERNAL_DEPENDENCIES",
    "ACL_RT_MEM_POOL_ATTR_RELEASE_THRESHOLD",
    "ACL_RT_MEM_POOL_ATTR_RESERVED_MEM_CURRENT",
    "ACL_RT_MEM_POOL_ATTR_RESERVED_MEM_HIGH",
    "ACL_RT_MEM_POOL_ATTR_USED_MEM_CURRENT",
    "ACL_RT_MEM_POOL_ATTR_USED_MEM_HIGH",
    "ACL_RT_MEM_ATTACH_GLOBAL",
    "ACL_MEM_ADVISE_SET_READ_MOSTLY", "ACL_MEM_ADVISE_UNSET_READ_MOSTLY",
    "ACL_MEM_ADVISE_SET_PREFERRED_LOCATION", "ACL_MEM_ADVISE_UNSET_PREFERRED_LOCATION",
    "ACL_MEM_ADVISE_SET_ACCESSED_BY", "ACL_MEM_ADVISE_UNSET_ACCESSED_BY",
    "ACL_MEM_LOCATIONTYPE_INVALID", "ACL_MEM_LOCATIONTYPE_DEVICE", "ACL_MEM_LOCATIONTYPE_HOST",
    "ACL_MEM_LOCATIONTYPE_HOST_NUMA", "ACL_MEM_LOCATIONTYPE_HOST_NUMA_CURRENT",
]

#: ``aclrtMemPoolAttr`` (``acl_rt_memory_soma.h``): the reuse switches are
#: ``uint32_t`` 0 or 1, the rest ``uint64_t`` bytes.
ACL_RT_MEM_POOL_REUSE_FOLLOW_EVENT_DEPENDENCIES = 0x1
ACL_RT_MEM_POOL_REUSE_ALLOW_OPPORTUNISTIC = 0x2
ACL_RT_MEM_POOL_REUSE_ALLOW_INTERNAL_DEPENDENCIES = 0x3
ACL_RT_MEM_POOL_ATTR_RELEASE_THRESHOLD = 0x4
ACL_RT_MEM_POOL_ATTR_RESERVED_MEM_CURRENT = 0x5
ACL_RT_MEM_POOL_ATTR_RESERVED_MEM_HIGH = 0x6
ACL_RT_MEM_POOL_ATTR_USED_MEM_CURRENT = 0x7
ACL_RT_MEM_POOL_ATTR_USED_MEM_HIGH = 0x8
#: ``aclrtMemAllocManaged``'s one flag.
ACL_RT_MEM_ATTACH_GLOBAL = 0x1

#: ``aclrtMemManagedAdviseType``.
ACL_MEM_ADVISE_SET_READ_MOSTLY = 0
ACL_MEM_ADVISE_UNSET_READ_MOSTLY = 1
ACL_MEM_ADVISE_SET_PREFERRED_LOCATION = 2
ACL_MEM_ADVISE_UNSET_PREFERRED_LOCATION = 3
ACL_MEM_ADVISE_SET_ACCESSED_BY = 4
ACL_MEM_ADVISE_UNSET_ACCESSED_BY = 5
#: ``aclrtMemManagedLocationType`` (the ``type`` of a location dict).
ACL_MEM_LOCATIONTYPE_INVALID = 0
ACL_MEM_LOCATIONTYPE_DEVICE = 1
ACL_MEM_LOCATIONTYPE_HOST = 2
ACL_MEM_LOCATIONTYPE_HOST_NUMA = 3
ACL_MEM_LOCATIONTYPE_HOST_NUMA_CURRENT = 4

_PROPS_KEYS = ("allocType", "handleType", "location", "maxSize")


def _location(location: Any) -> Any:
    """An ``aclrtMemManagedLocation`` dict (``{"type", "id"}``) as its two
    fields, or ``None`` when malformed."""
    try:
        if not isinstance(location, _Mapping) or "type" not in location or "id" not in location:
            return None
        return location["type"], location["id"]
    except Exception:
        return None


def mem_pool_create(props: Any) -> Tuple[int, int]:
    """``pool, ret = rt.mem_pool_create(props)``: ``props`` is a dict with
    ``allocType`` (0, pinned), ``handleType`` (0, none), ``location``
    (``{"id": device, "type": 1}``) and ``maxSize`` (bytes, 0: the
    device's memory), the fields of ``aclrtMemPoolProps``."""
    try:
        if not isinstance(props, _Mapping) or any(k not in props for k in _PROPS_KEYS):
            return 0, _INVALID_PARAM
        location = props["location"]
        if not isinstance(location, _Mapping) or "id" not in location or "type" not in location:
            return 0, _INVALID_PARAM
        args = (
            props["allocType"], props["handleType"], location["type"], location["id"],
            props["maxSize"],
        )
    except Exception:
        return 0, _INVALID_PARAM
    return _guarded(_native.mem_pool_create, (0,), *args)


def mem_pool_destroy(pool: int) -> int:
    """``ret = rt.mem_pool_destroy(pool)``: the pool and all its memory."""
    return _guarded(_native.mem_pool_destroy, (), pool)


def mem_pool_set_attr(pool: int, attr: int, value: int) -> int:
    """``ret = rt.mem_pool_set_attr(pool, attr, value)``."""
    return _guarded(_native.mem_pool_set_attr, (), pool, attr, value)


def mem_pool_get_attr(pool: int, attr: int) -> Tuple[int, int]:
    """``value, ret = rt.mem_pool_get_attr(pool, attr)``."""
    return _guarded(_native.mem_pool_get_attr, (0,), pool, attr)


def mem_pool_malloc_async(size: int, pool: int, stream: int) -> Tuple[int, int]:
    """``ptr, ret = rt.mem_pool_malloc_async(size, pool, stream)`` (CANN 9.1):
    device memory of the pool for work on ``stream``."""
    return _guarded(_native.mem_pool_malloc_async, (0,), size, pool, stream)


def mem_pool_free_async(ptr: int, stream: int) -> int:
    """``ret = rt.mem_pool_free_async(ptr, stream)`` (CANN 9.1): the memory
    goes back to its pool in ``stream``'s order."""
    return _guarded(_native.mem_pool_free_async, (), ptr, stream)


def mem_pool_trim_to(pool: int, min_bytes_to_keep: int) -> int:
    """``ret = rt.mem_pool_trim_to(pool, min_bytes_to_keep)`` (CANN 9.1)."""
    return _guarded(_native.mem_pool_trim_to, (), pool, min_bytes_to_keep)


def mem_alloc_managed(size: int, flag: int) -> Tuple[int, int]:
    """``ptr, ret = rt.mem_alloc_managed(size, flag)`` (CANN 9.0): memory the
    host and the device both reach; ``flag`` is
    ``ACL_RT_MEM_ATTACH_GLOBAL``; freed with ``acl.rt.free``."""
    return _guarded(_native.mem_alloc_managed, (0,), size, flag)



def mem_managed_advise(ptr: int, size: int, advise: int, location: Any) -> int:
    """``ret = rt.mem_managed_advise(ptr, size, advise, location)`` (CANN 9.1):
    ``location`` is ``{"type": ACL_MEM_LOCATIONTYPE_*, "id": n}``; ``size``
    a multiple of 2 MiB."""
    fields = _location(location)
    if fields is None:
        return _INVALID_PARAM
    return _guarded(_native.mem_managed_advise, (), ptr, size, advise, *fields)


def mem_managed_prefetch_async(ptr: int, size: int, location: Any, flags: int, stream: int) -> int:
    """``ret = rt.mem_managed_prefetch_async(ptr, size, location, flags, stream)``
    (CANN 9.1): ``flags`` 0."""
    fields = _location(location)
    if fields is None:
        return _INVALID_PARAM
    return _guarded(_native.mem_managed_prefetch_async, (), ptr, size, *fields, flags, stream)


def memset_d32(ptr: int, mem_size: int, value: int, n: int) -> int:
    """``ret = rt.memset_d32(ptr, mem_size, value, n)`` (CANN 9.1): ``n``
    32-bit words of ``value``."""
    return _guarded(_native.memset_d32, (), ptr, mem_size, value, n)


def memset_d32_async(ptr: int, mem_size: int, value: int, n: int, stream: int) -> int:
    """``ret = rt.memset_d32_async(ptr, mem_size, value, n, stream)`` (CANN 9.1)."""
    return _guarded(_native.memset_d32_async, (), ptr, mem_size, value, n, stream)

# `from __future__ import annotations` binds the name `annotations`.
del annotations
