"""pyACL's ``acl.util``: between Python buffers and addresses."""

from __future__ import annotations

import ctypes as _ctypes
from typing import TYPE_CHECKING as _TYPE_CHECKING

from .. import _native

if _TYPE_CHECKING:  # annotations only: nothing but the API in the namespace
    from typing import Any

__all__ = ["ptr_to_bytes", "bytes_to_ptr"]


def _address_int(value: Any, what: str) -> int:
    """``value`` as a 64-bit unsigned integer, or ``ValueError``."""
    if isinstance(value, bool) or not isinstance(value, int):
        raise ValueError(f"{what} must be an int, not {type(value).__name__}")
    if value < 0 or value >= 1 << 64:
        raise ValueError(f"{what} {value} is not a 64-bit unsigned integer")
    return int(value)


def ptr_to_bytes(ptr: int, size: int) -> bytes:
    """``data = acl.util.ptr_to_bytes(ptr, size)``: a copy of ``size`` bytes of
    host memory at ``ptr``.

    The range is checked before a buffer is allocated: an address the
    process cannot read, a negative or non-integer argument, or a range past
    the end of the address space raises ``ValueError`` (this call has no
    ``ret``); a buffer Python cannot allocate raises ``MemoryError``.

    Device memory is not host memory on a real NPU: copy it to a host
    buffer with ``acl.rt.memcpy`` (``ACL_MEMCPY_DEVICE_TO_HOST``) and read
    that. (With the emulator mapped device memory happens to be host
    memory, so reading it directly works there only.)
    """
    return _native.read_memory(_address_int(ptr, "ptr"), _address_int(size, "size"))


def bytes_to_ptr(data: Any) -> int:
    """``ptr = acl.util.bytes_to_ptr(data)``: the address of the buffer of
    ``data`` (``bytes``, ``bytearray``, or any contiguous buffer such as a
    ``memoryview`` or a numpy array). As with pyACL, ``data`` must outlive
    every use of the address, and copies into it write into ``data``."""
    if isinstance(data, bytes):
        return _ctypes.cast(_ctypes.c_char_p(data), _ctypes.c_void_p).value or 0
    view = memoryview(data)
    if not view.contiguous:
        raise ValueError("bytes_to_ptr needs a contiguous buffer")
    if view.readonly:
        # A read-only buffer other than bytes: its address through a copy
        # would be wrong; ctypes reaches it only through a writable view.
        raise ValueError("bytes_to_ptr needs bytes or a writable buffer")
    return _ctypes.addressof(_ctypes.c_char.from_buffer(view.cast("B")))


# `from __future__ import annotations` binds the name `annotations`.
del annotations
