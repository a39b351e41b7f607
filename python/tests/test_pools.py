"""The stream-ordered pools and managed memory (``aclmem.rt``): the calls
pyACL does not bind, under pyACL's naming, per release."""

import os
import pathlib
import subprocess
import sys
import textwrap

import aclmem.rt as rt
import acl
from conftest import MIB

PROPS = {"allocType": 0, "handleType": 0, "location": {"id": 0, "type": 1}, "maxSize": 64 * MIB}


def _run_on_cann(release, code):
    """``code`` in a fresh interpreter on a machine of its own running
    ``release``."""
    env = dict(
        os.environ,
        ACLMEM_EMU_MACHINE=f"pytest-pools-{os.getpid()}-{release}",
        ACLMEM_EMU_CANN=release,
    )
    return subprocess.run(
        [sys.executable, "-c", textwrap.dedent(code)],
        capture_output=True, text=True, timeout=120, env=env,
        # The installed package, not the source tree.
        cwd=pathlib.Path(__file__).parent,
    )


def test_cann_9_0_has_pools_but_not_their_allocations(device):
    # The tests' machine runs the default release, 9.0.
    pool, ret = rt.mem_pool_create(PROPS)
    assert ret == 0 and pool != 0
    assert rt.mem_pool_get_attr(pool, rt.ACL_RT_MEM_POOL_ATTR_RESERVED_MEM_CURRENT) == (0, 0)
    stream, ret = acl.rt.create_stream()
    assert ret == 0
    assert rt.mem_pool_malloc_async(MIB, pool, stream) == (0, 207000)
    assert rt.mem_pool_trim_to(pool, 0) == 207000
    assert rt.mem_pool_destroy(pool) == 0
    assert acl.rt.destroy_stream(stream) == 0


def test_malformed_props_are_invalid_param(device):
    assert rt.mem_pool_create({"allocType": 0}) == (0, 100000)
    assert rt.mem_pool_create(None) == (0, 100000)
    assert rt.mem_pool_create(dict(PROPS, maxSize="big")) == (0, 100000)


def test_cann_9_1_pools_allocate_reuse_and_trim_byte_for_byte():
    p = _run_on_cann("9.1", """
        import aclmem, aclmem.rt as rt
        aclmem.install()
        import acl
        MIB = 1 << 20
        assert acl.init() == 0 and acl.rt.set_device(0) == 0
        stream, ret = acl.rt.create_stream(); assert ret == 0
        pool, ret = rt.mem_pool_create({"allocType": 0, "handleType": 0,
            "location": {"id": 0, "type": 1}, "maxSize": 64 * MIB}); assert ret == 0
        assert rt.mem_pool_set_attr(pool, rt.ACL_RT_MEM_POOL_REUSE_ALLOW_OPPORTUNISTIC, 1) == 0
        assert rt.mem_pool_get_attr(pool, rt.ACL_RT_MEM_POOL_REUSE_ALLOW_OPPORTUNISTIC) == (1, 0)
        ptr, ret = rt.mem_pool_malloc_async(MIB, pool, stream); assert ret == 0 and ptr
        data = bytes(range(256)) * 16
        assert acl.rt.memcpy(ptr, MIB, acl.util.bytes_to_ptr(data), len(data), 1) == 0
        out = bytearray(len(data))
        assert acl.rt.memcpy(acl.util.bytes_to_ptr(out), len(out), ptr, len(data), 2) == 0
        assert bytes(out) == data
        assert rt.mem_pool_get_attr(pool, rt.ACL_RT_MEM_POOL_ATTR_USED_MEM_CURRENT) == (2 * MIB, 0)
        assert rt.mem_pool_free_async(ptr, stream) == 0
        again, ret = rt.mem_pool_malloc_async(MIB, pool, stream); assert (again, ret) == (ptr, 0)
        assert rt.mem_pool_free_async(again, stream) == 0
        assert rt.mem_pool_trim_to(pool, 0) == 0
        assert rt.mem_pool_get_attr(pool, rt.ACL_RT_MEM_POOL_ATTR_RESERVED_MEM_CURRENT) == (0, 0)
        assert rt.mem_pool_destroy(pool) == 0
        managed, ret = rt.mem_alloc_managed(4096, rt.ACL_RT_MEM_ATTACH_GLOBAL)
        assert ret == 0 and managed
        assert acl.rt.free(managed) == 0
        assert acl.rt.destroy_stream(stream) == 0
        print("ok")
    """)
    assert p.returncode == 0 and p.stdout.strip() == "ok", p.stderr


def test_pyacl_2d_copies_cached_memory_and_async_memset(device):
    # pyACL's own names (its rt_memory.cpp): memcpy2d, memcpy2d_async,
    # memset_async, malloc_cached, mem_flush, mem_invalidate.
    rows, width, spitch, dpitch = 4, 8, 16, 32
    src = bytes(range(rows * spitch))
    dev, ret = acl.rt.malloc_cached(rows * dpitch, 0)
    assert ret == 0 and dev
    assert acl.rt.memset(dev, rows * dpitch, 0xEE, rows * dpitch) == 0
    stream, _ = acl.rt.create_stream()
    host = acl.util.bytes_to_ptr(src)
    assert acl.rt.memcpy2d(dev, dpitch, host, spitch, width, rows, 1) == 0
    out = bytearray(rows * dpitch)
    assert acl.rt.memcpy(acl.util.bytes_to_ptr(out), len(out), dev, len(out), 2) == 0
    for r in range(rows):
        assert out[r * dpitch:r * dpitch + width] == src[r * spitch:r * spitch + width]
        assert out[r * dpitch + width:(r + 1) * dpitch] == b"\xee" * (dpitch - width)
    back = bytearray(rows * width)
    assert acl.rt.memcpy2d_async(acl.util.bytes_to_ptr(back), width, dev, dpitch, width, rows, 2, stream) == 0
    assert acl.rt.synchronize_stream(stream) == 0
    assert bytes(back) == b"".join(src[r * spitch:r * spitch + width] for r in range(rows))
    assert acl.rt.memset_async(dev, rows * dpitch, 7, rows * dpitch, stream) == 0
    assert acl.rt.mem_flush(dev, rows * dpitch) == 0
    assert acl.rt.mem_invalidate(dev, rows * dpitch) == 0
    assert acl.rt.synchronize_stream(stream) == 0
    assert acl.rt.memcpy(acl.util.bytes_to_ptr(out), len(out), dev, len(out), 2) == 0
    assert bytes(out) == b"\x07" * len(out)
    assert acl.rt.free(dev) == 0
    assert acl.rt.destroy_stream(stream) == 0


def test_cann_9_0_has_no_32_bit_memset(device):
    dev, ret = acl.rt.malloc(4096, 0)
    assert ret == 0
    assert rt.memset_d32(dev, 4096, 0xDEADBEEF, 1024) == 207000
    assert acl.rt.free(dev) == 0


def test_cann_9_1_32_bit_memsets_and_managed_advice_byte_for_byte():
    p = _run_on_cann("9.1", """
        import struct
        import aclmem, aclmem.rt as rt
        aclmem.install()
        import acl
        MIB = 1 << 20
        assert acl.init() == 0 and acl.rt.set_device(0) == 0
        stream, ret = acl.rt.create_stream(); assert ret == 0
        dev, ret = acl.rt.malloc(4096, 0); assert ret == 0
        assert rt.memset_d32(dev, 4096, 0xDEADBEEF, 1024) == 0
        out = bytearray(4096)
        assert acl.rt.memcpy(acl.util.bytes_to_ptr(out), 4096, dev, 4096, 2) == 0
        assert out == struct.pack("<I", 0xDEADBEEF) * 1024
        assert rt.memset_d32_async(dev, 4096, 7, 512, stream) == 0
        assert acl.rt.synchronize_stream(stream) == 0
        assert acl.rt.memcpy(acl.util.bytes_to_ptr(out), 4096, dev, 4096, 2) == 0
        assert out == struct.pack("<I", 7) * 512 + struct.pack("<I", 0xDEADBEEF) * 512
        assert acl.rt.free(dev) == 0
        managed, ret = rt.mem_alloc_managed(2 * MIB, rt.ACL_RT_MEM_ATTACH_GLOBAL); assert ret == 0
        device0 = {"type": rt.ACL_MEM_LOCATIONTYPE_DEVICE, "id": 0}
        assert rt.mem_managed_advise(managed, 2 * MIB, rt.ACL_MEM_ADVISE_SET_PREFERRED_LOCATION, device0) == 0
        assert rt.mem_managed_advise(managed, 2 * MIB, 9, device0) == 107000
        assert rt.mem_managed_advise(managed, 2 * MIB, 0, None) == 100000
        assert rt.mem_managed_prefetch_async(managed, 2 * MIB, device0, 0, stream) == 0
        assert acl.rt.free(managed) == 0
        assert acl.rt.destroy_stream(stream) == 0
        print("ok")
    """)
    assert p.returncode == 0 and p.stdout.strip() == "ok", p.stderr
