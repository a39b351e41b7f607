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
    "mem_alloc_managed",
    "ACL_RT_MEM_POOL_REUSE_FOLLOW_EVENT_DEPENDENCIES",
    "ACL_RT_MEM_POOL_REUSE_ALLOW_OPPORTUNISTIC",
    "ACL_RT_MEM_POOL_REUSE_ALLOW_INTERNAL_DEPENDENCIES",
    "ACL_RT_MEM_POOL_ATTR_RELEASE_THRESHOLD",
    "ACL_RT_MEM_POOL_ATTR_RESERVED_MEM_CURRENT",
    "ACL_RT_MEM_POOL_ATTR_RESERVED_MEM_HIGH",
    "ACL_RT_MEM_POOL_ATTR_USED_MEM_CURRENT",
    "ACL_RT_MEM_POOL_ATTR_USED_MEM_HIGH",
    "ACL_RT_MEM_ATTACH_GLOBAL",
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

_PROPS_KEYS = ("allocType", "handleType", "location", "maxSize")


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


# `from __future__ import annotations` binds the name `annotations`.
del annotations
