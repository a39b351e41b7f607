"""No argument crashes the interpreter or panics into it: sizes are checked
before anything is allocated, invalid integers are ``ret`` 100000 in
``aclmem.acl``, and exceptions (never a ``PanicException``) in the Pythonic
layer."""

import ctypes
import inspect
import os
import subprocess
import sys

import pytest

import aclmem
import acl
from conftest import MIB, prop

INVALID_PARAM = 100000
PAGE = os.sysconf("SC_PAGESIZE")


def run_isolated(code):
    """Runs ``code`` in a fresh interpreter (an abort there does not take
    pytest down); returns the completed process. It runs in the tests'
    directory, so that it imports the installed package, not the source
    tree."""
    env = dict(os.environ, ACLMEM_EMU_MACHINE=f"pytest-isolated-{os.getpid()}")
    return subprocess.run(
        [sys.executable, "-c", code],
        capture_output=True,
        text=True,
        timeout=120,
        env=env,
        cwd=os.path.dirname(os.path.abspath(__file__)),
    )


# ----- acl.util.ptr_to_bytes -------------------------------------------------------


@pytest.mark.parametrize(
    "ptr, size",
    [
        (0, 1 << 40),  # aborted the interpreter: allocated before checking
        (0, 2**63),  # a PanicException (capacity overflow)
        (16, 2**64 - 1),  # past the end of the address space
        (2**63, 4),
        (1, 1),
    ],
)
def test_ptr_to_bytes_checks_the_range_before_allocating(ptr, size):
    p = run_isolated(
        "import aclmem.acl as acl\n"
        "try:\n"
        f"    acl.util.ptr_to_bytes({ptr}, {size})\n"
        "except ValueError as e:\n"
        "    print('ValueError', e)\n"
    )
    assert p.returncode == 0, p.stderr
    assert p.stdout.startswith("ValueError cannot read"), (p.stdout, p.stderr)


@pytest.mark.parametrize("ptr, size", [(-1, 4), (0, -1), (2**64, 1), (0, 2**64), (1.5, 1), ("0", 1), (None, 1)])
def test_ptr_to_bytes_with_an_invalid_int_raises_value_error(ptr, size):
    with pytest.raises(ValueError):
        acl.util.ptr_to_bytes(ptr, size)


def test_ptr_to_bytes_reads_what_is_there():
    data = bytearray(os.urandom(3 * MIB + 17))
    assert acl.util.ptr_to_bytes(acl.util.bytes_to_ptr(data), len(data)) == bytes(data)
    assert acl.util.ptr_to_bytes(acl.util.bytes_to_ptr(data), 0) == b""
    # A readable start but a size past its end: refused without a buffer.
    with pytest.raises(ValueError):
        acl.util.ptr_to_bytes(acl.util.bytes_to_ptr(data), 1 << 40)


libc = ctypes.CDLL(None, use_errno=True)
libc.mmap.restype = ctypes.c_void_p
libc.mmap.argtypes = [ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int, ctypes.c_int, ctypes.c_int, ctypes.c_long]
libc.munmap.argtypes = [ctypes.c_void_p, ctypes.c_size_t]
libc.mprotect.argtypes = [ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int]
PROT_NONE, PROT_READ, PROT_WRITE = 0, 1, 2
MAP_PRIVATE, MAP_ANONYMOUS = 0x02, 0x20


@pytest.mark.parametrize("gap", ["unmapped", "prot-none"])
def test_ptr_to_bytes_refuses_a_range_with_a_hole(gap):
    size = 4 * MIB
    base = libc.mmap(None, size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0)
    assert base not in (None, ctypes.c_void_p(-1).value)
    try:
        ctypes.memset(base, 0x5A, size)
        assert acl.util.ptr_to_bytes(base, size) == b"\x5a" * size
        middle = base + MIB
        if gap == "unmapped":
            assert libc.munmap(middle, MIB) == 0
        else:
            assert libc.mprotect(middle, MIB, PROT_NONE) == 0
        with pytest.raises(ValueError):
            acl.util.ptr_to_bytes(base, size)
        assert acl.util.ptr_to_bytes(base, MIB) == b"\x5a" * MIB
    finally:
        libc.munmap(base, size)


# ----- acl.rt: invalid integers are ret 100000 -------------------------------------

#: Values no C integer parameter (at most 64 bits) can take, and objects
#: that are not integers at all.
class _BadIndex:
    def __index__(self):
        raise RuntimeError("no index")


NEVER_VALID = [2**64, 2**200, -(2**70), 1.5, None, _BadIndex()]

#: Each function of acl.rt taking integers, with valid placeholders.
CALLS = {
    "set_device": ("i",),
    "reset_device": ("i",),
    "reset_device_force": ("i",),
    "get_mem_info": ("u",),
    "synchronize_device_with_timeout": ("i",),
    "create_context": ("i",),
    "destroy_context": ("u",),
    "set_context": ("u",),
    "destroy_stream": ("u",),
    "synchronize_stream": ("u",),
    "malloc": ("u", "u"),
    "malloc_align32": ("u", "u"),
    "free": ("u",),
    "malloc_host": ("u",),
    "free_host": ("u",),
    "memcpy": ("u", "u", "u", "u", "u"),
    "memcpy_async": ("u", "u", "u", "u", "u", "u"),
    "memset": ("u", "u", "i", "u"),
    "memset_async": ("u", "u", "i", "u", "u"),
    "memcpy2d": ("u",) * 7,
    "memcpy2d_async": ("u",) * 8,
    "malloc_cached": ("u", "u"),
    "mem_flush": ("u", "u"),
    "mem_invalidate": ("u", "u"),
    "malloc_physical": ("u", "prop", "u"),
    "free_physical": ("u",),
    "mem_get_allocation_granularity": ("prop", "u"),
    "reserve_mem_address": ("u", "u", "u", "u"),
    "release_mem_address": ("u",),
    "map_mem": ("u", "u", "u", "u", "u"),
    "unmap_mem": ("u",),
    "mem_get_address_range": ("u",),
    "mem_export_to_shareable_handle": ("u", "u", "u"),
    "mem_set_pid_to_shareable_handle": ("u", "pids"),
    "mem_import_from_shareable_handle": ("u", "i"),
    "ipc_mem_get_export_key": ("u", "u", "u"),
    "ipc_mem_set_import_pid": ("key", "pids"),
    "ipc_mem_import_by_key": ("key", "u"),
    "ipc_mem_close": ("key",),
}


def _placeholder(kind):
    # Invalid enough that nothing is made or torn down, valid in type.
    return {"u": 1, "i": 99, "prop": {**prop(), "memAttr": 99}, "pids": [1], "key": "no-such-key"}[kind]


def _shape(name, result):
    """The ret of a pyACL result (an int, or a tuple ending in one)."""
    if isinstance(result, tuple):
        assert all(not isinstance(v, BaseException) for v in result)
        return result[-1]
    return result


def test_the_table_covers_every_function_that_takes_an_argument():
    taking = {n for n in acl.rt.__all__ if inspect.signature(getattr(acl.rt, n)).parameters}
    assert taking == set(CALLS)


@pytest.mark.parametrize("name", sorted(CALLS))
def test_an_int_no_c_parameter_can_hold_is_100000(device, name):
    fn = getattr(acl.rt, name)
    kinds = CALLS[name]
    for i, kind in enumerate(kinds):
        for bad in NEVER_VALID + (["x"] if kind in ("u", "i") else []):
            args = [_placeholder(k) for k in kinds]
            if kind == "prop":
                args[i] = {**prop(), "memAttr": bad}
            elif kind == "pids":
                args[i] = [1, bad]
            elif name == "reserve_mem_address" and i == 2 and bad is None:
                continue  # expect_ptr None is pyACL's "the system chooses"
            else:
                args[i] = bad
            assert _shape(name, fn(*args)) == INVALID_PARAM, (name, i, bad)


@pytest.mark.parametrize("name", sorted(CALLS))
def test_negative_and_2_63_get_a_code_never_an_exception(device, name):
    fn = getattr(acl.rt, name)
    kinds = CALLS[name]
    for i, kind in enumerate(kinds):
        if kind not in ("u", "i"):
            continue
        for value in (-1, 2**63, 2**64 - 1) + ((2**31,) if kind == "i" else ()):
            args = [_placeholder(k) for k in kinds]
            args[i] = value
            ret = _shape(name, fn(*args))
            assert isinstance(ret, int), (name, i, value, ret)
            if kind == "u" and value < 0:
                assert ret == INVALID_PARAM, (name, i, value)
            if kind == "i" and value >= 2**31:
                assert ret == INVALID_PARAM, (name, i, value)


def test_sizes_of_2_63_are_refused_by_the_runtime(device):
    for size in (2**63, 2**64 - 1):
        ptr, ret = acl.rt.malloc(size, 0)
        assert ret != 0 and ptr == 0
        handle, ret = acl.rt.malloc_physical(size, prop(), 0)
        assert ret != 0 and handle == 0
        va, ret = acl.rt.reserve_mem_address(size, 0, 0, 0)
        assert ret != 0 and va == 0
        host, ret = acl.rt.malloc_host(size)
        assert ret != 0 and host == 0


class RaisingMapping(dict):
    """A prop mapping whose lookups raise (a user's lazy config object)."""

    def __init__(self, error):
        super().__init__(prop())
        self.error = error

    def __getitem__(self, key):
        raise self.error


class RaisingInt(int):
    def __lt__(self, other):
        raise RuntimeError("no order")


@pytest.mark.parametrize(
    "bad",
    [
        RaisingMapping(KeyError("memAttr")),
        RaisingMapping(RuntimeError("lookup failed")),
        {**prop(), "location": RaisingMapping(LookupError("id"))},
        {**prop(), "memAttr": RaisingInt(4)},
    ],
)
def test_a_prop_whose_lookup_raises_is_100000(device, bad):
    assert acl.rt.malloc_physical(2 * MIB, bad, 0) == (0, INVALID_PARAM)
    assert acl.rt.mem_get_allocation_granularity(bad, 0) == (0, INVALID_PARAM)


def test_a_pid_iterable_that_raises_is_100000(device):
    def pids():
        yield 1
        raise RuntimeError("no more")

    assert acl.rt.mem_set_pid_to_shareable_handle(1, pids()) == INVALID_PARAM
    assert acl.rt.ipc_mem_set_import_pid("no-such-key", pids()) == INVALID_PARAM


# ----- the Pythonic layer: exceptions, never a panic ---------------------------------


@pytest.mark.parametrize("size, error", [(-1, ValueError), (2**64, ValueError), (2**200, ValueError), (1.5, TypeError), ("2", TypeError)])
def test_the_pythonic_layer_checks_sizes(size, error):
    with aclmem.Session() as s:
        with pytest.raises(error):
            s.malloc(size)
        with pytest.raises(error):
            s.reserve(size)
        with s.malloc(2 * MIB) as mem, s.reserve(2 * MIB) as va, va.map(mem) as m:
            with pytest.raises(error):
                m.read(size)
            with pytest.raises((ValueError, TypeError)):
                m.write(b"x", offset=size)


def test_a_size_the_runtime_refuses_is_an_acl_error():
    with aclmem.Session() as s:
        with pytest.raises(aclmem.AclError) as e:
            s.malloc(2**63)
        assert e.value.call == "aclrtMallocPhysical" and e.value.code != 0
        with pytest.raises(aclmem.AclError):
            s.reserve(2**63)
