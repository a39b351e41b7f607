"""A pyACL script with one seeded defect: physical memory it never frees.
``aclmem sanitize -- python leak.py`` reports it at the line marked below."""

import aclmem

try:
    import acl  # aclmem's, under `aclmem run`
except ImportError:
    aclmem.install()
    import acl

PROP = {
    "handleType": 0,
    "allocationType": 0,
    "memAttr": 4,  # ACL_HBM_MEM_HUGE
    "location": {"id": 0, "type": 1},  # device 0
    "reserve": 0,
}


def load_weights():
    handle, ret = acl.rt.malloc_physical(2 << 20, PROP, 0)  # the leak
    assert ret == 0, ret
    return handle


assert acl.init() == 0
assert acl.rt.set_device(0) == 0
load_weights()
assert acl.rt.reset_device(0) == 0
assert acl.finalize() == 0
