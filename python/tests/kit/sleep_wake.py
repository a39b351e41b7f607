"""vllm-ascend's sleep/wake pattern: the C extension (argv[1]) maps device
memory, pyACL's ``acl.rt.memcpy`` copies the weights in and out, three
sleep/wake cycles, and the weights must come back intact.

``argv[2]`` is ``c-first`` (the extension is loaded before pyACL) or
``python-first``. Under ``aclmem run``, ``import acl`` is aclmem's pyACL;
elsewhere ``aclmem.install()`` makes it so.
"""

import ctypes
import sys


def load_camem():
    lib = ctypes.CDLL(sys.argv[1])
    lib.create_and_map.argtypes = [ctypes.c_size_t, ctypes.POINTER(ctypes.c_void_p),
                                   ctypes.POINTER(ctypes.c_void_p)]
    lib.unmap_and_release.argtypes = [ctypes.c_void_p, ctypes.c_void_p]
    return lib


camem = load_camem() if sys.argv[2] == "c-first" else None
import aclmem  # noqa: E402

try:
    import acl  # noqa: E402  (aclmem's, under `aclmem run`)
except ImportError:
    aclmem.install()
    import acl  # noqa: E402
assert acl.init() == 0
assert acl.rt.set_device(0) == 0
if camem is None:
    camem = load_camem()
print("backend:", aclmem.backend())

SIZE = 4 << 20
H2D, D2H = 1, 2
weights = bytes((i * 7 + 3) % 251 for i in range(SIZE))
src = ctypes.create_string_buffer(weights, SIZE)
backup = ctypes.create_string_buffer(SIZE)
check = ctypes.create_string_buffer(SIZE)


def create():
    va, handle = ctypes.c_void_p(), ctypes.c_void_p()
    assert camem.create_and_map(SIZE, ctypes.byref(va), ctypes.byref(handle)) == 0
    return va.value, handle.value


va, handle = create()
assert acl.rt.memcpy(va, SIZE, ctypes.addressof(src), SIZE, H2D) == 0
for cycle in range(3):
    # sleep: back the weights up, give the device memory back
    assert acl.rt.memcpy(ctypes.addressof(backup), SIZE, va, SIZE, D2H) == 0
    assert camem.unmap_and_release(va, handle) == 0
    # wake: new device memory, weights restored
    va, handle = create()
    assert acl.rt.memcpy(va, SIZE, ctypes.addressof(backup), SIZE, H2D) == 0
    ctypes.memset(check, 0, SIZE)
    assert acl.rt.memcpy(ctypes.addressof(check), SIZE, va, SIZE, D2H) == 0
    assert check.raw == weights, f"weights differ after cycle {cycle + 1}"
assert camem.unmap_and_release(va, handle) == 0
assert acl.rt.reset_device(0) == 0
assert acl.finalize() == 0
print("3 cycles, weights intact")
