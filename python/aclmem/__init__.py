"""Huawei Ascend physical memory from Python.

* :mod:`aclmem.acl`: pyACL's own calls (``acl.rt.malloc_physical`` and the
  rest of the memory API), over the emulator or the real ``libascendcl.so``;
  :func:`install` registers it as ``acl`` so pyACL scripts run unchanged.
* :mod:`aclmem.rt`: the runtime's memory calls pyACL does not bind (the
  stream-ordered pools, managed memory), named as pyACL would name them.
* :func:`check`, :func:`matrix`: the rules (which product, run mode and
  CANN release accept which location and attribute) as Python values, from
  the same table the Rust crates compile.
* :class:`Session` and friends: a Pythonic layer with exceptions that carry
  the ACL code, and context managers that free in the right order.

The backend is the emulator unless ``ACLMEM_BACKEND=driver``.
"""

from __future__ import annotations

import pathlib as _pathlib
import sys as _sys
from typing import TYPE_CHECKING as _TYPE_CHECKING

from . import _native, acl, rt
from ._session import (
    AclError,
    Exported,
    Mapping,
    PhysicalMemory,
    Reservation,
    RuleError,
    Session,
)

if _TYPE_CHECKING:  # annotations only: nothing but the API in the namespace
    from typing import Any, Dict, List, Optional, Union

__all__ = [
    "AclError",
    "Exported",
    "Mapping",
    "PhysicalMemory",
    "Reservation",
    "RuleError",
    "Session",
    "acl",
    "backend",
    "cann_releases",
    "check",
    "constants",
    "include_dir",
    "install",
    "lib_dir",
    "matrix",
    "rt",
]

__version__ = "0.1.0"

#: C names of the enums and error codes, with their values.
constants: Dict[str, int] = _native.constants()


def backend() -> str:
    """The backend in use: ``"emulator (<library path>)"`` (the process's one
    emulated ``libascendcl.so``), ``"emulator (built into aclmem._native)"``
    (no such library found: Python alone uses this emulator), ``"sanitizer"``
    or ``"driver (<library path>)"``."""
    return _native.backend_name()


def check(
    product_or_soc: str,
    location: str,
    attr: Union[str, int],
    cann: Optional[str] = None,
    run_mode: str = "ep",
) -> Dict[str, Any]:
    """The rules' verdict for one combination.

    ``product_or_soc`` is a product (``"a2"``, ``"atlas-a2"``, ``"AtlasA2"``)
    or a SoC name (``"Ascend910B3"``); ``location`` ``"device"``, ``"host"``
    or ``"host-numa"``; ``attr`` a C name (``"ACL_HBM_MEM_HUGE"``), a marker
    name (``"HbmHuge"``) or the raw value; ``cann`` a release (``"8.3"``,
    ``"8.3.RC1"``, default 9.0); ``run_mode`` ``"ep"`` or ``"rc"``. Names are
    parsed by the same parsers as the CLI's (case and punctuation ignored).

    Returns the record ``aclmem matrix --format json`` prints for the
    combination: ``cann``, ``product``, ``run_mode``, ``location``,
    ``attribute`` (ids and C names), ``allowed``, ``verdict``, ``code`` (0
    when allowed); when refused also the ``denial``, the ``rule`` it breaks,
    a ``message`` and, for a feature of a later release, ``since`` (a release
    id such as ``"8.5"``). Unknown names raise ``ValueError``.
    """
    return _native.check(product_or_soc, location, attr, cann, run_mode)


def matrix(cann: Optional[str] = None) -> List[Dict[str, Any]]:
    """Every platform (product × run mode) × location × attribute of a
    release, as the dicts :func:`check` returns."""
    return _native.matrix(cann)


def cann_releases() -> List[str]:
    """The CANN releases the rules cover, oldest first."""
    return _native.cann_releases()


def install() -> None:
    """Registers :mod:`aclmem.acl` as ``acl`` (with ``acl.rt`` and
    ``acl.util``), so ``import acl`` and ``from acl.rt import memcpy`` work
    in code written for pyACL. It replaces whatever ``acl`` was imported
    before, so call it before importing code that imports ``acl``."""
    _sys.modules["acl"] = acl
    _sys.modules["acl.rt"] = acl.rt
    _sys.modules["acl.util"] = acl.util


# `from __future__ import annotations` binds the name `annotations`.
del annotations


def _kit_dir(name: str, what: str) -> str:
    path = _pathlib.Path(__file__).resolve().parent / name
    if not path.is_dir():
        raise FileNotFoundError(
            f"aclmem was installed without its {what} ({path} is missing): install a "
            "wheel built by `cargo xtask wheels`, or build the package with that command's "
            "staging step (`cargo xtask wheels --stage`)"
        )
    return str(path)


def include_dir() -> str:
    """The directory of the C headers (``acl/acl.h`` and the rest) to build
    a C or C++ extension against the emulated ``libascendcl.so``, as
    ``numpy.get_include()`` does for NumPy: ``-I`` this, ``-L``
    :func:`lib_dir` ``-lascendcl``."""
    return _kit_dir("include", "C headers")


def lib_dir() -> str:
    """The directory of the emulated ``libascendcl.so`` (soname
    ``libascendcl.so``), the sanitizer ``libaclmem_sanitizer.so`` and the
    ``aclmem`` command this package carries."""
    return _kit_dir("_lib", "libraries")
