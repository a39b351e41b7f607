"""pyACL's ``acl`` module, for the memory API: ``acl.init``, ``acl.finalize``,
``acl.get_soc_name``, ``acl.get_version``, ``acl.get_cann_version``, and the
submodules :mod:`aclmem.acl.rt` and :mod:`aclmem.acl.util`.

Functions follow pyACL's conventions: they return ``ret`` or a tuple ending
in ``ret`` (the ``aclError`` as an ``int``) and never raise for an ACL
error; pointers and handles are ``int``. A script written for pyACL runs
with ``import aclmem.acl as acl``, or unchanged after
:func:`aclmem.install` registers this module as ``acl``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING as _TYPE_CHECKING

from .. import _native
from . import rt, util
from ._args import INVALID_PARAM as _INVALID_PARAM
from ._args import guarded as _guarded

if _TYPE_CHECKING:  # annotations only: nothing but the API in the namespace
    from typing import Any, Dict, Optional, Tuple

__all__ = ["init", "finalize", "get_soc_name", "get_version", "get_cann_version", "rt", "util"]


def init(config_path: Optional[str] = None) -> int:
    """``ret = acl.init(config_path)``: joins the emulated machine (or
    initialises the real runtime). ``config_path`` may be omitted."""
    if config_path is not None and not isinstance(config_path, str):
        return _INVALID_PARAM
    return _native.init(config_path)


def finalize() -> int:
    """``ret = acl.finalize()``."""
    return _native.finalize()


def get_soc_name() -> Optional[str]:
    """``name = acl.get_soc_name()``: the SoC name, or ``None`` on failure
    (as ``aclrtGetSocName``, it answers ``None`` before :func:`init`)."""
    return _native.get_soc_name()


def get_version() -> Tuple[int, int, int, int]:
    """``major, minor, patch, ret = acl.get_version()``: the ACL interface
    version of the runtime."""
    return _native.get_version()


def get_cann_version(name: int) -> Tuple[Dict[str, Any], int]:
    """``version, ret = acl.get_cann_version(name)``: the version strings of
    a CANN package (``ACL_PKG_NAME_*``); 100003 if it is not installed."""
    return _guarded(_native.get_cann_version, ({},), name)


# `from __future__ import annotations` binds the name `annotations`.
del annotations
