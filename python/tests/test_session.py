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


# ----- diagnostics -------------------------------------------------------------------


def test_a_rule_error_names_the_rule_once_with_the_code_and_a_hint():
    with aclmem.Session(cann="8.3") as s:
        with pytest.raises(aclmem.RuleError) as e:
            s.malloc(2 << 20, attr="ACL_DDR_MEM_HUGE", location="device")
    err = e.value
    text = str(err)
    assert "DDR_* attributes are host-only" in text and "[rule host-only-attr]" in text
    assert text.count("100000") == 1 and "ACL_ERROR_INVALID_PARAM" in text
    assert "CANN 8.3" in text and "hint: " in text and err.hint in text
    # The hint offers what the table accepts, and it is accepted.
    offered = err.hint.split("at device it accepts ")[1].split(";")[0].split(", ")
    assert offered and "ACL_DDR_MEM_HUGE" not in offered
    for attr in offered:
        assert aclmem.check(s.soc, "device", attr, cann="8.3")["allowed"], attr


def test_a_hint_names_the_release_that_adds_a_feature():
    with aclmem.Session(cann="8.3") as s:
        with pytest.raises(aclmem.RuleError) as e:
            s.malloc(2 << 20, attr="ACL_MEM_HUGE")
    assert e.value.since == "8.5"
    assert "from CANN 8.5 on" in e.value.hint
    assert "ACL_HBM_MEM_HUGE" in e.value.hint  # what 8.3 has instead


def test_a_platform_without_the_api_is_pointed_at_acl_rt_malloc():
    verdict = aclmem.check("Ascend310B1", "device", "ACL_HBM_MEM_HUGE", run_mode="rc")
    err = aclmem.RuleError(verdict)
    assert err.denial == "rc-form" and err.code == 207000
    assert "aclrtMalloc" in err.hint and "RC form" in err.hint


# ----- freeing mapped memory -----------------------------------------------------------


def test_freeing_mapped_memory_raises_until_every_mapping_is_gone():
    with aclmem.Session() as s:
        free0, _ = s.mem_info()
        mem = s.malloc(2 << 20)
        with s.reserve(4 << 20) as va:
            a = va.map(mem)
            b = va.map(mem, offset=2 << 20)
            a.write(b"kept")
            with pytest.raises(BufferError, match="still mapped"):
                mem.free()
            assert b.read(4) == b"kept"  # nothing was freed
            a.unmap()
            with pytest.raises(BufferError):
                mem.free()
            b.unmap()
            mem.free()
        assert s.mem_info()[0] == free0
        with pytest.raises(aclmem.AclError):
            mem.free()  # freed once only


def test_leaving_the_memory_block_while_mapped_raises():
    with aclmem.Session() as s, s.reserve(2 << 20) as va:
        with pytest.raises(BufferError):
            with s.malloc(2 << 20) as mem:
                m = va.map(mem)
        m.unmap()
        mem.free()


# ----- reprs -------------------------------------------------------------------------


def test_reprs_say_what_and_in_which_state():
    with aclmem.Session() as s:
        assert repr(s) == f"Session(soc='Ascend910B3', device=0, cann=None, backend={aclmem.backend()!r})"
        mem = s.malloc(2 << 20)
        va = s.reserve(2 << 20)
        m = va.map(mem)
        assert repr(m) == f"Mapping(addr={m.addr:#x}, size={2 << 20}, handle={mem.handle:#x})"
        assert repr(mem) == f"PhysicalMemory(handle={mem.handle:#x}, size={2 << 20}, mapped 1x)"
        assert repr(va) == f"Reservation(addr={va.addr:#x}, size={2 << 20})"
        m.unmap()
        va.release()
        mem.free()
        assert repr(m).endswith(", unmapped)")
        assert repr(va).endswith(", released)")
        assert repr(mem).endswith(", freed)")
        assert repr(aclmem.Exported(0x1234)) == "Exported(shareable=0x1234)"
    assert repr(s).endswith(", closed)")
