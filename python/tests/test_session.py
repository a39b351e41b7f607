"""The Pythonic layer."""

import pytest

import aclmem


def test_a_session_allocates_maps_and_frees_in_order():
    with aclmem.Session(soc="Ascend910B3") as s:
        free0, _ = s.mem_info()
        with s.malloc(4 << 20) as mem, s.reserve(8 << 20) as va:
            with va.map(mem) as a, va.map(mem, offset=4 << 20) as b:
                a.write(b"through a")
                assert b.read(9) == b"through a"
                view = b.view()
                view[0:7] = b"THROUGH"
                assert a.read(9) == b"THROUGH a"
                view.release()
            assert s.mem_info()[0] == free0 - (4 << 20)
        assert s.mem_info()[0] == free0


def test_the_rules_refuse_before_the_runtime_is_asked():
    with aclmem.Session() as s:
        with pytest.raises(aclmem.RuleError) as e:
            s.malloc(2 << 20, attr="ACL_DDR_MEM_HUGE", location="device")
        assert e.value.code == 100000 and e.value.denial == "host-only-attr"
        assert "host-only" in e.value.rule


def test_acl_errors_carry_the_code():
    with aclmem.Session() as s:
        with pytest.raises(aclmem.AclError) as e:
            s.malloc(3 << 20)  # not a multiple of the 2 MiB granularity
        assert e.value.code == 107000 and e.value.name == "ACL_ERROR_RT_PARAM_INVALID"
        assert e.value.call == "aclrtMallocPhysical"


def test_unmapping_under_a_live_view_is_refused():
    with aclmem.Session() as s, s.malloc(2 << 20) as mem, s.reserve(2 << 20) as va:
        m = va.map(mem)
        view = m.view()
        part = view[10:20]
        with pytest.raises(BufferError):
            m.unmap()
        del view
        with pytest.raises(BufferError):
            m.unmap()  # the slice still holds the memory
        del part
        m.unmap()


def test_an_exception_in_the_block_still_frees_everything():
    with aclmem.Session() as s:
        free0, _ = s.mem_info()
        with pytest.raises(RuntimeError):
            with s.malloc(8 << 20) as mem, s.reserve(8 << 20) as va, va.map(mem):
                raise RuntimeError("boom")
        assert s.mem_info()[0] == free0


def test_a_session_for_another_soc_is_refused():
    with pytest.raises(aclmem.AclError):
        aclmem.Session(soc="Ascend310P3")
