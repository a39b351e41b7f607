"""Argument handling shared by the pyACL-compatible functions."""

from __future__ import annotations

from typing import Any, Callable, List, Mapping, Optional, Tuple

from .. import _native

ACL_SUCCESS = 0
#: ``ACL_ERROR_INVALID_PARAM``: what pyACL answers for a malformed argument.
INVALID_PARAM = 100000

_PROP_KEYS = ("handleType", "allocationType", "memAttr", "location", "reserve")


def guarded(fn: Callable[..., Any], defaults: Tuple[Any, ...], *args: Any) -> Any:
    """Calls ``fn(*args)``; an argument the C prototype cannot take (of the
    wrong type, negative for an unsigned parameter, too large for its
    width, or an object whose conversion raises) gives ``INVALID_PARAM`` in
    pyACL's return shape (``defaults`` then ``ret``) instead of an
    exception.

    The backend is loaded first, outside the guard: a backend that cannot
    load is an exception, not a code. Past that point the native function
    raises only while converting its arguments, so every ``Exception`` is
    an argument the runtime would refuse. (A Rust panic would be a
    ``BaseException`` and is not swallowed; the native module has none.)
    """
    _native.backend_name()
    try:
        return fn(*args)
    except Exception:
        if not defaults:
            return INVALID_PARAM
        return (*defaults, INVALID_PARAM)


def _uint(value: Any, bits: int) -> Optional[int]:
    if isinstance(value, bool) or not isinstance(value, int):
        return None
    if value < 0 or value >= 1 << bits:
        return None
    return value


def prop_tuple(prop: Any) -> Optional[Tuple[int, int, int, int, int, int]]:
    """pyACL's ``prop`` dict as the six fields of ``aclrtPhysicalMemProp``,
    or ``None`` when a key is missing or a value is not an integer of the
    field's width (the caller answers ``INVALID_PARAM``). Values outside the
    enums are passed on: the runtime refuses them with its own code."""
    try:
        if not isinstance(prop, Mapping) or any(k not in prop for k in _PROP_KEYS):
            return None
        location = prop["location"]
        if not isinstance(location, Mapping) or "id" not in location or "type" not in location:
            return None
        fields = (
            _uint(prop["handleType"], 32),
            _uint(prop["allocationType"], 32),
            _uint(prop["memAttr"], 32),
            _uint(location["id"], 32),
            _uint(location["type"], 32),
            _uint(prop["reserve"], 64),
        )
    except Exception:
        # A mapping whose lookup (or an int subclass whose comparison)
        # raises: a malformed prop, answered like any other.
        return None
    if any(f is None for f in fields):
        return None
    return fields  # type: ignore[return-value]


def pid_list(pid: Any) -> Optional[List[int]]:
    """One pid or an iterable of them as a list, or ``None`` when ``pid``
    is neither (or iterating it raises)."""
    if isinstance(pid, int):
        return [pid]
    try:
        return list(pid)
    except Exception:
        return None


def prop_dict(fields: Tuple[int, int, int, int, int, int]) -> dict:
    """The dict form of the six fields."""
    handle_type, allocation_type, mem_attr, loc_id, loc_type, reserve = fields
    return {
        "handleType": handle_type,
        "allocationType": allocation_type,
        "memAttr": mem_attr,
        "location": {"id": loc_id, "type": loc_type},
        "reserve": reserve,
    }
