"""The Pythonic layer: exceptions that carry the ACL code, and context
managers that free in the right order.

    with aclmem.Session() as s, s.malloc(4 << 20) as mem:
        with s.reserve(mem.size) as va, va.map(mem) as m:
            m.view()[:5] = b"hello"

Nothing here bypasses the rules: :meth:`Session.malloc` checks the
combination against the rules table first and raises :class:`RuleError`
with the rule, before the runtime is asked.
"""

from __future__ import annotations

import ctypes
import os
import sys
from typing import Any, Optional, Sequence, Tuple, Union

from . import _native

_NAMES = {v: k for k, v in _native.constants().items() if k.startswith("ACL_ERROR")}
_CONSTANTS = _native.constants()

#: ``aclrtMemcpyKind`` values used here.
_HOST_TO_DEVICE, _DEVICE_TO_HOST = 1, 2


class AclError(Exception):
    """An ACL call failed: ``code`` is the ``aclError``, ``call`` the C
    function, ``name`` the code's C name (``None`` for unknown codes)."""

    def __init__(self, code: int, call: str, detail: str = "") -> None:
        self.code = code
        self.call = call
        self.name = _NAMES.get(code)
        text = f"{call} returned {code}"
        if self.name:
            text += f" ({self.name})"
        if detail:
            text += f": {detail}"
        super().__init__(text)


class RuleError(AclError):
    """The rules table refuses the combination before the runtime is asked.

    ``denial`` names the rule broken (``"host-only-attr"``), ``rule`` says
    it, ``since`` is the release that adds what is missing (if any),
    ``code`` is what the runtime would answer, ``hint`` says what the same
    platform and release accept instead (from the same table), and
    ``verdict`` is the whole record :func:`aclmem.check` returns.
    """

    def __init__(self, verdict: dict) -> None:
        self.verdict = verdict
        self.denial = verdict.get("denial")
        self.rule = verdict.get("rule")
        self.since = verdict.get("since")
        self.hint = _hint(verdict)
        code = verdict["code"]
        AclError.__init__(self, code, "aclrtMallocPhysical")
        # The message in the core's words, without the code it ends with
        # (said once, below).
        words = verdict.get("message") or self.rule or "refused"
        name = verdict.get("code_name")
        if name and words.endswith(f"; {name} = {code}"):
            words = words[: -len(f"; {name} = {code}")]
        text = (
            f"{verdict.get('attribute')} at {verdict.get('location')} on "
            f"{verdict.get('product')} ({verdict.get('run_mode', '').upper()}, "
            f"CANN {verdict.get('cann')}): {words} [rule {self.denial}]; "
            f"aclrtMallocPhysical would return {code}"
        )
        if self.name:
            text += f" ({self.name})"
        if self.hint:
            text += f"\n  hint: {self.hint}"
        self.args = (text,)


def _hint(verdict: dict) -> str:
    """What the platform and release of a refused ``verdict`` accept
    instead, from the rules table: other attributes at the location, the
    attribute at other locations, or the release that adds it. Empty when
    the table has nothing to offer."""
    try:
        return _hint_from_table(verdict)
    except Exception:  # a hint must never hide the refusal itself
        return ""


def _hint_from_table(verdict: dict) -> str:
    product, mode = verdict["product"], verdict["run_mode"]
    attr, location, cann = verdict["attribute"], verdict["location"], verdict["cann"]
    platform = [r for r in _native.matrix(cann) if r["product"] == product and r["run_mode"] == mode]
    if not any(r["allowed"] for r in platform):
        return (
            f"{product} in {mode.upper()} form has no physical-memory API in CANN {cann}: "
            "allocate device memory with aclrtMalloc (acl.rt.malloc) instead"
        )
    parts = []
    here = [r["attribute"] for r in platform if r["allowed"] and r["location"] == location]
    if here:
        parts.append(f"at {location} it accepts {', '.join(here)}")
    elsewhere = [r["location"] for r in platform if r["allowed"] and r["attribute"] == attr]
    if elsewhere:
        parts.append(f"{attr} is accepted at {' or '.join(elsewhere)}")
    if verdict.get("since"):
        parts.append(f"{attr} at {location} is accepted from CANN {verdict['since']} on")
    elif not elsewhere:
        releases = _native.cann_releases()
        later = releases[[_native.matrix(r)[0]["cann"] for r in releases].index(cann) + 1 :]
        for release in later:
            rows = [
                r
                for r in _native.matrix(release)
                if r["product"] == product and r["run_mode"] == mode and r["attribute"] == attr and r["allowed"]
            ]
            if rows:
                where = " or ".join(r["location"] for r in rows)
                parts.append(f"{attr} is accepted at {where} from CANN {rows[0]['cann']} on")
                break
    return "; ".join(parts)


def _ok(ret: int, call: str) -> None:
    if ret != 0:
        raise AclError(ret, call)


def _uint(value: Any, what: str, bits: int = 64) -> int:
    """``value`` as an unsigned integer of ``bits`` bits: ``TypeError`` if it
    is not an ``int``, ``ValueError`` if it is negative or too large (checked
    here, so that no size reaches the native module that it cannot take)."""
    if isinstance(value, bool) or not isinstance(value, int):
        raise TypeError(f"{what} must be an int, not {type(value).__name__}")
    if value < 0 or value >= 1 << bits:
        raise ValueError(f"{what} {value} is not a {bits}-bit unsigned integer")
    return int(value)


def _int32(value: Any, what: str) -> int:
    if isinstance(value, bool) or not isinstance(value, int):
        raise TypeError(f"{what} must be an int, not {type(value).__name__}")
    if not -(1 << 31) <= value < 1 << 31:
        raise ValueError(f"{what} {value} is not a 32-bit integer")
    return int(value)


def _attr_value(attr: Union[str, int]) -> int:
    if isinstance(attr, int) and not isinstance(attr, bool):
        return _uint(attr, "memAttr", 32)
    if isinstance(attr, str) and attr in _CONSTANTS:
        return _CONSTANTS[attr]
    raise ValueError(f"unknown memAttr {attr!r}")


_LOCATIONS = {"device": 1, "host": 0, "host-numa": 4}


class Session:
    """ACL initialised and a device set for the duration of a ``with`` block
    (or until :meth:`close`).

    ``soc`` asks the emulator for a SoC (it sets ``ACLMEM_EMU_SOC`` when it
    is not set); with the real library it must match the device. ``cann``
    names the release whose rules :meth:`malloc` checks (default: the one
    the emulator runs, ``ACLMEM_EMU_CANN``, or the newest).
    """

    def __init__(self, soc: Optional[str] = None, device: int = 0, cann: Optional[str] = None):
        device = _int32(device, "device")
        if soc is not None and _native.backend_name().startswith("emulator"):
            os.environ.setdefault("ACLMEM_EMU_SOC", soc)
        self.device = device
        self.cann = cann or os.environ.get("ACLMEM_EMU_CANN") or None
        self._open = False
        self._initialised = False
        ret = _native.init(None)
        if ret == _CONSTANTS["ACL_ERROR_REPEAT_INITIALIZE"]:
            ret = 0
        else:
            self._initialised = ret == 0
        _ok(ret, "aclInit")
        try:
            _ok(_native.set_device(device), "aclrtSetDevice")
            name = _native.get_soc_name()
            if name is None:
                raise AclError(_CONSTANTS["ACL_ERROR_INTERNAL_ERROR"], "aclrtGetSocName")
            if soc is not None and name.lower() != soc.lower():
                raise AclError(
                    _CONSTANTS["ACL_ERROR_INVALID_PARAM"],
                    "aclrtGetSocName",
                    f"the machine is a {name}, not a {soc}",
                )
            self.soc: str = name
        except BaseException:
            if self._initialised:
                _native.finalize()
            raise
        self._open = True

    def __enter__(self) -> "Session":
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()

    def __repr__(self) -> str:
        state = "" if self._open else ", closed"
        return (
            f"Session(soc={getattr(self, 'soc', None)!r}, device={self.device}, "
            f"cann={self.cann!r}, backend={_native.backend_name()!r}{state})"
        )

    def close(self) -> None:
        """Resets the device and, if this session initialised ACL, finalises it."""
        if not self._open:
            return
        self._open = False
        _native.reset_device(self.device)
        if self._initialised:
            _native.finalize()

    def mem_info(self, attr: Union[str, int] = "ACL_HBM_MEM") -> Tuple[int, int]:
        """``(free, total)`` bytes of ``attr`` memory on the device, machine-wide."""
        free, total, ret = _native.get_mem_info(_attr_value(attr))
        _ok(ret, "aclrtGetMemInfo")
        return free, total

    def check(self, location: str, attr: Union[str, int]) -> dict:
        """The rules' verdict for this machine's product and release."""
        mode, ret = _native.get_run_mode()
        _ok(ret, "aclrtGetRunMode")
        return _native.check(self.soc, location, attr, self.cann, "ep" if mode == 1 else "rc")

    def malloc(
        self,
        size: int,
        attr: Union[str, int] = "ACL_HBM_MEM_HUGE",
        location: str = "device",
        location_id: Optional[int] = None,
    ) -> "PhysicalMemory":
        """``aclrtMallocPhysical``: ``size`` bytes of ``attr`` memory at
        ``location`` (``"device"``, ``"host"``, ``"host-numa"``; id default:
        this session's device, or 0 for the host). The rules are checked
        first (:class:`RuleError`)."""
        size = _uint(size, "size")
        if location_id is not None:
            location_id = _uint(location_id, "location_id", 32)
        verdict = self.check(location, attr)
        if not verdict["allowed"]:
            raise RuleError(verdict)
        if location not in _LOCATIONS:
            raise ValueError(f"unknown location {location!r}")
        loc_id = location_id if location_id is not None else (self.device if location == "device" else 0)
        prop = (0, 0, _attr_value(attr), loc_id, _LOCATIONS[location], 0)
        handle, ret = _native.malloc_physical(size, prop, 0)
        _ok(ret, "aclrtMallocPhysical")
        return PhysicalMemory(handle, size, prop)

    def import_memory(self, shareable: int, size: int, device: Optional[int] = None) -> "PhysicalMemory":
        """``aclrtMemImportFromShareableHandle``: memory another process
        exported, ``size`` bytes (the size is not carried by the handle)."""
        shareable = _uint(shareable, "shareable")
        size = _uint(size, "size")
        dev = self.device if device is None else _int32(device, "device")
        handle, ret = _native.mem_import_from_shareable_handle(shareable, dev)
        _ok(ret, "aclrtMemImportFromShareableHandle")
        return PhysicalMemory(handle, size, (0, 0, 0, dev, 1, 0))

    def reserve(self, size: int) -> "Reservation":
        """``aclrtReserveMemAddress``: ``size`` bytes of address space."""
        size = _uint(size, "size")
        addr, ret = _native.reserve_mem_address(size, 0, 0, 0)
        _ok(ret, "aclrtReserveMemAddress")
        return Reservation(addr, size)

    @staticmethod
    def pid() -> int:
        """``aclrtDeviceGetBareTgid``: the pid to whitelist for this process."""
        pid, ret = _native.device_get_bare_tgid()
        _ok(ret, "aclrtDeviceGetBareTgid")
        return pid


class PhysicalMemory:
    """A physical allocation; freed at the end of a ``with`` block.

    It cannot be freed while a :class:`Mapping` of it is live: :meth:`free`
    (and so the end of its ``with`` block) raises ``BufferError`` until every
    mapping is unmapped. (The runtime would take the call and only kill the
    handle, keeping the memory until its last mapping goes; the Rust API
    refuses it at compile time, since a mapping borrows the memory.)
    """

    def __init__(self, handle: int, size: int, prop: Tuple[int, ...]):
        self.handle = handle
        self.size = size
        self.prop = prop
        self._live = True
        #: Live mappings of this memory (see :meth:`Reservation.map`).
        self._mappings = 0

    def __enter__(self) -> "PhysicalMemory":
        return self

    def __exit__(self, *exc: Any) -> None:
        if self._live:
            self.free()

    def free(self) -> None:
        """``aclrtFreePhysical``."""
        if not self._live:
            raise AclError(_CONSTANTS["ACL_ERROR_RT_INVALID_HANDLE"], "aclrtFreePhysical", "already freed")
        if self._mappings:
            raise BufferError(
                f"{self!r} is still mapped ({self._mappings} mapping(s)): unmap it before freeing it"
            )
        self._live = False
        _ok(_native.free_physical(self.handle), "aclrtFreePhysical")

    def export(self, disable_pid_validation: bool = False) -> "Exported":
        """``aclrtMemExportToShareableHandle``: a shareable handle for other
        processes (whitelist them with :meth:`Exported.set_pids`, unless
        ``disable_pid_validation``)."""
        shareable, ret = _native.mem_export_to_shareable_handle(
            self.handle, 0, 1 if disable_pid_validation else 0
        )
        _ok(ret, "aclrtMemExportToShareableHandle")
        return Exported(shareable)

    def __repr__(self) -> str:
        state = ", freed" if not self._live else (f", mapped {self._mappings}x" if self._mappings else "")
        return f"PhysicalMemory(handle={self.handle:#x}, size={self.size}{state})"


class Exported:
    """A shareable handle of this process."""

    def __init__(self, shareable: int):
        self.shareable = shareable

    def __repr__(self) -> str:
        return f"Exported(shareable={self.shareable:#x})"

    def set_pids(self, pids: Union[int, Sequence[int]]) -> None:
        """``aclrtMemSetPidToShareableHandle``: whitelists processes."""
        pid_list = [_int32(p, "pid") for p in ([pids] if isinstance(pids, int) else list(pids))]
        _ok(
            _native.mem_set_pid_to_shareable_handle(self.shareable, pid_list),
            "aclrtMemSetPidToShareableHandle",
        )


class Reservation:
    """A reserved address range; released at the end of a ``with`` block."""

    def __init__(self, addr: int, size: int):
        self.addr = addr
        self.size = size
        self._live = True

    def __repr__(self) -> str:
        state = "" if self._live else ", released"
        return f"Reservation(addr={self.addr:#x}, size={self.size}{state})"

    def __enter__(self) -> "Reservation":
        return self

    def __exit__(self, *exc: Any) -> None:
        if self._live:
            self.release()

    def release(self) -> None:
        """``aclrtReleaseMemAddress`` (every mapping must be gone)."""
        _ok(_native.release_mem_address(self.addr), "aclrtReleaseMemAddress")
        self._live = False

    def map(self, memory: PhysicalMemory, offset: int = 0) -> "Mapping":
        """``aclrtMapMem``: maps all of ``memory`` at ``offset`` bytes into
        the range."""
        offset = _uint(offset, "offset")
        if offset + memory.size > self.size:
            raise ValueError("the mapping must lie inside the reservation")
        addr = self.addr + offset
        _ok(_native.map_mem(addr, memory.size, 0, memory.handle, 0), "aclrtMapMem")
        memory._mappings += 1
        return Mapping(addr, memory.size, memory)


class Mapping:
    """A mapping; unmapped at the end of a ``with`` block.

    With the emulator, mapped memory is host memory: :meth:`view` gives a
    ``memoryview`` of it. Unmapping while a view (or anything made from one,
    such as a slice or a numpy array) is alive raises ``BufferError``: the
    memory is never pulled from under a live view.
    """

    def __init__(self, addr: int, size: int, memory: Optional[PhysicalMemory] = None):
        self.addr = addr
        self.size = size
        #: The memory mapped here (which cannot be freed while this lives).
        self.memory = memory
        self._array: Optional[ctypes.Array] = None
        self._live = True

    def __repr__(self) -> str:
        handle = f", handle={self.memory.handle:#x}" if self.memory is not None else ""
        state = "" if self._live else ", unmapped"
        return f"Mapping(addr={self.addr:#x}, size={self.size}{handle}{state})"

    def __enter__(self) -> "Mapping":
        return self

    def __exit__(self, *exc: Any) -> None:
        if self._live:
            self.unmap()

    def view(self) -> memoryview:
        """A writable ``memoryview`` of the mapped bytes (emulator only)."""
        if not self._live:
            raise ValueError("the mapping is gone")
        name = _native.backend_name()
        if not (name.startswith("emulator") or name == "sanitizer"):
            raise RuntimeError("device memory is not host-visible on a real device; use write/read")
        try:
            _native.read_memory(self.addr, 1)
        except ValueError:
            raise RuntimeError("this device memory is not host-visible; use write/read") from None
        if self._array is None:
            self._array = (ctypes.c_ubyte * self.size).from_address(self.addr)
        return memoryview(self._array).cast("B")

    def write(self, data: bytes, offset: int = 0) -> None:
        """Copies ``data`` to the mapping (``aclrtMemcpy`` host to device)."""
        offset = _uint(offset, "offset")
        if offset + len(data) > self.size:
            raise ValueError("write past the mapping")
        src = ctypes.create_string_buffer(bytes(data), len(data))
        ret = _native.memcpy(self.addr + offset, self.size - offset, ctypes.addressof(src), len(data), _HOST_TO_DEVICE)
        _ok(ret, "aclrtMemcpy")

    def read(self, count: Optional[int] = None, offset: int = 0) -> bytes:
        """Copies bytes out (``aclrtMemcpy`` device to host)."""
        offset = _uint(offset, "offset")
        n = self.size - offset if count is None else _uint(count, "count")
        if n < 0 or offset + n > self.size:
            raise ValueError("read past the mapping")
        dst = ctypes.create_string_buffer(n)
        ret = _native.memcpy(ctypes.addressof(dst), n, self.addr + offset, n, _DEVICE_TO_HOST)
        _ok(ret, "aclrtMemcpy")
        return dst.raw

    def unmap(self) -> None:
        """``aclrtUnmapMem``; ``BufferError`` while a view is alive."""
        if self._array is not None:
            # Our reference and getrefcount's argument; any more is a view.
            if sys.getrefcount(self._array) > 2:
                raise BufferError("release the memoryviews of this mapping before unmapping it")
            self._array = None
        _ok(_native.unmap_mem(self.addr), "aclrtUnmapMem")
        if self._live and self.memory is not None:
            self.memory._mappings -= 1
        self._live = False
