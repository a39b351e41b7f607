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
