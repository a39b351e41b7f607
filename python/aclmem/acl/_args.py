"""Argument handling shared by the pyACL-compatible functions."""

from __future__ import annotations

from typing import Any, Callable, Mapping, Optional, Tuple

ACL_SUCCESS = 0
#: ``ACL_ERROR_INVALID_PARAM``: what pyACL answers for a malformed argument.
INVALID_PARAM = 100000

_PROP_KEYS = ("handleType", "allocationType", "memAttr", "location", "reserve")


def guarded(fn: Callable[..., Any], defaults: Tuple[Any, ...], *args: Any) -> Any:
    """Calls ``fn(*args)``; an argument of the wrong type or out of range
    (which the C prototype cannot take) gives ``INVALID_PARAM`` in pyACL's
    return shape (``defaults`` then ``ret``) instead of an exception."""
    try:
        return fn(*args)
    except (TypeError, OverflowError, ValueError):
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
    if any(f is None for f in fields):
        return None
    return fields  # type: ignore[return-value]


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
