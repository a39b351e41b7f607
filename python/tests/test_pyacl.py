"""pyACL's calls, as pyACL scripts make them."""

import ctypes
import os
import subprocess
import sys

import pytest

import aclmem
import acl
from conftest import DEVICE, HBM_HUGE, HOST, MIB, prop

INVALID_PARAM = 100000


def test_a_pyacl_script_runs_every_step_with_ret_0(device):
    size = 2 * MIB
    p = prop()
    granularity, ret = acl.rt.mem_get_allocation_granularity(p, 0)
    assert (granularity, ret) == (2 * MIB, 0)
    handle, ret = acl.rt.malloc_physical(size, p, 0)
    assert ret == 0 and handle != 0
    va, ret = acl.rt.reserve_mem_address(2 * size, 0, 0, 0)
    assert ret == 0 and va != 0
    assert acl.rt.map_mem(va, size, 0, handle, 0) == 0
    assert acl.rt.map_mem(va + size, size, 0, handle, 0) == 0
    data = bytes(range(256)) * 16
    assert acl.rt.memcpy(va, size, acl.util.bytes_to_ptr(data), len(data), 1) == 0
    out = bytearray(len(data))
    assert acl.rt.memcpy(acl.util.bytes_to_ptr(out), len(out), va + size, len(data), 2) == 0
    assert bytes(out) == data
    assert acl.rt.unmap_mem(va) == 0
    assert acl.rt.unmap_mem(va + size) == 0
    assert acl.rt.release_mem_address(va) == 0
    assert acl.rt.free_physical(handle) == 0


@pytest.mark.parametrize("mem_attr", range(18))
def test_every_mem_attr_gets_the_code_the_rules_give(device, mem_attr):
    verdict = aclmem.check("Ascend910B3", "device", mem_attr)
    size = 1 << 30 if mem_attr in (10, 11, 14, 17) else 2 * MIB
    handle, ret = acl.rt.malloc_physical(size, prop(mem_attr), 0)
    assert ret == verdict["code"], verdict
    if ret == 0:
        assert acl.rt.free_physical(handle) == 0


def _without(key):
    p = prop()
    del p[key]
    return p


@pytest.mark.parametrize(
    "bad",
    [
        None,
        "prop",
        {},
        _without("memAttr"),
        _without("location"),
        _without("reserve"),
        {**prop(), "location": 1},
        {**prop(), "location": {"id": 0}},
        {**prop(), "memAttr": "ACL_HBM_MEM_HUGE"},
        {**prop(), "memAttr": 4.0},
        {**prop(), "memAttr": -1},
        {**prop(), "location": {"id": 0, "type": 1 << 40}},
        {**prop(), "memAttr": 99},
        {**prop(), "location": {"id": 0, "type": 7}},
    ],
)
def test_a_bad_prop_dict_is_100000_not_an_exception(device, bad):
    handle, ret = acl.rt.malloc_physical(2 * MIB, bad, 0)
    assert (handle, ret) == (0, INVALID_PARAM)
    granularity, ret = acl.rt.mem_get_allocation_granularity(bad, 0)
    assert ret == INVALID_PARAM


def test_arguments_of_the_wrong_type_are_100000(device):
    assert acl.rt.free_physical("handle") == INVALID_PARAM
    assert acl.rt.map_mem(-1, 2 * MIB, 0, 1, 0) == INVALID_PARAM
    assert acl.rt.malloc(None, 0) == (0, INVALID_PARAM)
    assert acl.rt.memcpy(1.5, 1, 2, 1, 1) == INVALID_PARAM


def test_mem_info_follows_allocations(device):
    free0, total, ret = acl.rt.get_mem_info(1)  # ACL_HBM_MEM
    assert ret == 0 and total == 64 << 30
    handle, ret = acl.rt.malloc_physical(64 * MIB, prop(), 0)
    assert ret == 0
    free1, _, _ = acl.rt.get_mem_info(1)
    assert free0 - free1 == 64 * MIB
    assert acl.rt.free_physical(handle) == 0
    assert acl.rt.get_mem_info(1)[0] == free0


def test_dead_handles_are_refused(device):
    handle, ret = acl.rt.malloc_physical(2 * MIB, prop(), 0)
    assert ret == 0
    assert acl.rt.free_physical(handle) == 0
    assert acl.rt.free_physical(handle) == aclmem.constants["ACL_ERROR_RT_INVALID_HANDLE"]
    assert acl.rt.free_physical(0) == INVALID_PARAM


def test_contexts(device):
    context, ret = acl.rt.create_context(0)
    assert ret == 0 and context != 0
    assert acl.rt.get_context() == (context, 0)
    assert acl.rt.set_context(context) == 0
    assert acl.rt.synchronize_device() == 0
    assert acl.rt.destroy_context(context) == 0
    stream, ret = acl.rt.create_stream()
    assert ret == 0
    assert acl.rt.synchronize_stream(stream) == 0
    assert acl.rt.destroy_stream(stream) == 0


def test_plain_device_and_host_memory_and_copies(device):
    dev, ret = acl.rt.malloc(1 * MIB, 0)
    assert ret == 0
    host, ret = acl.rt.malloc_host(1 * MIB)
    assert ret == 0
    assert acl.rt.memset(dev, 1 * MIB, 0x5A, 4096) == 0
    assert acl.rt.memcpy(host, 1 * MIB, dev, 4096, 2) == 0
    assert acl.util.ptr_to_bytes(host, 4096) == b"\x5a" * 4096
    # count > destMax is refused by the runtime layer.
    assert acl.rt.memcpy(host, 16, dev, 32, 2) == 107000
    # A device address that is not mapped is an error, never a crash.
    assert acl.rt.memcpy(host, 16, 0x7F0000000000, 16, 2) != 0
    assert acl.rt.free(dev) == 0
    assert acl.rt.free_host(host) == 0


def test_from_acl_rt_import_memcpy_works_after_install():
    from acl.rt import memcpy

    import acl.util as util

    assert memcpy is acl.rt.memcpy
    assert util.ptr_to_bytes is acl.util.ptr_to_bytes


def test_util_round_trip_and_bad_addresses():
    data = bytearray(b"round trip")
    ptr = acl.util.bytes_to_ptr(data)
    assert acl.util.ptr_to_bytes(ptr, len(data)) == b"round trip"
    raw = ctypes.create_string_buffer(b"ctypes buffer")
    assert acl.util.ptr_to_bytes(ctypes.addressof(raw), 6) == b"ctypes"
    with pytest.raises(ValueError):
        acl.util.ptr_to_bytes(8, 16)


def test_version_soc_and_run_mode(device):
    assert acl.get_soc_name() == "Ascend910B3"
    major, minor, patch, ret = acl.get_version()
    assert (major, minor, ret) == (1, 17, 0)
    version, ret = acl.get_cann_version(0)
    assert ret == 0 and version["version"].startswith("9.0")
    assert acl.rt.get_run_mode() == (1, 0)  # ACL_HOST: EP form
    count, ret = acl.rt.get_device_count()
    assert ret == 0 and count == 8


def test_host_memory_through_malloc_physical(device):
    handle, ret = acl.rt.malloc_physical(2 * MIB, prop(2, HOST), 0)  # ACL_DDR_MEM_HUGE
    assert ret == 0
    assert acl.rt.free_physical(handle) == 0
    _, ret = acl.rt.malloc_physical(2 * MIB, prop(HBM_HUGE, 99), 0)
    assert ret == INVALID_PARAM


def test_a_process_cannot_import_its_own_export(device):
    handle, ret = acl.rt.malloc_physical(2 * MIB, prop(), 0)
    shareable, ret = acl.rt.mem_export_to_shareable_handle(handle, 0, 0)
    assert ret == 0
    assert acl.rt.mem_set_pid_to_shareable_handle(shareable, [12345]) == 0
    _, ret = acl.rt.mem_import_from_shareable_handle(shareable, 0)
    assert ret == aclmem.constants["ACL_ERROR_RT_FEATURE_NOT_SUPPORT"]
    assert acl.rt.free_physical(handle) == 0


def test_calls_before_init_answer_100001():
    _, ret = acl.rt.malloc_physical(2 * MIB, prop(), 0)
    assert ret == aclmem.constants["ACL_ERROR_UNINITIALIZE"]


def test_the_soc_name_is_known_before_init_as_the_runtime_answers_it(device):
    # `device` initialised and finalises again; a fresh process (no test
    # has left ACL initialised) is checked in a child.
    assert acl.get_soc_name() == "Ascend910B3"
    code = "import aclmem.acl as acl; print(acl.get_soc_name()); acl.init(); print(acl.get_soc_name())"
    env = dict(os.environ, ACLMEM_EMU_MACHINE=f"pytest-soc-{os.getpid()}")
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=120, env=env,
        cwd=os.path.dirname(os.path.abspath(__file__)),
    )
    assert out.stdout.split() == ["Ascend910B3", "Ascend910B3"], out.stderr
