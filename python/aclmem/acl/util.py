"""pyACL's ``acl.util``: between Python buffers and addresses."""

from __future__ import annotations

import ctypes
from typing import Any

from .. import _native

__all__ = ["ptr_to_bytes", "bytes_to_ptr"]


def ptr_to_bytes(ptr: int, size: int) -> bytes:
    """``data = acl.util.ptr_to_bytes(ptr, size)``: a copy of ``size`` bytes at
    ``ptr``. An address the process cannot read raises ``ValueError``."""
    return _native.read_memory(ptr, size)


def bytes_to_ptr(data: Any) -> int:
    """``ptr = acl.util.bytes_to_ptr(data)``: the address of the buffer of
    ``data`` (``bytes``, ``bytearray``, or any contiguous buffer such as a
    ``memoryview`` or a numpy array). As with pyACL, ``data`` must outlive
    every use of the address, and copies into it write into ``data``."""
    if isinstance(data, bytes):
        return ctypes.cast(ctypes.c_char_p(data), ctypes.c_void_p).value or 0
    view = memoryview(data)
    if not view.contiguous:
        raise ValueError("bytes_to_ptr needs a contiguous buffer")
    if view.readonly:
        # A read-only buffer other than bytes: its address through a copy
        # would be wrong; ctypes reaches it only through a writable view.
        raise ValueError("bytes_to_ptr needs bytes or a writable buffer")
    return ctypes.addressof(ctypes.c_char.from_buffer(view.cast("B")))
