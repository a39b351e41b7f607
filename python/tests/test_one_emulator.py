"""One emulator per process: a C extension that links ``libascendcl.so``
and ``aclmem.acl`` reach the same emulated runtime, whichever loads first.

This is vllm-ascend's ``camem`` pattern: its C extension reserves, allocates
and maps device memory; Python copies weights into it with
``acl.rt.memcpy``; on sleep Python backs the weights up to the host and the
C extension unmaps and frees; on wake the C extension maps new memory and
Python copies the weights back. With two emulators in the process the
copies fail (the address is unknown to Python's copy), and weights come
back wrong after the first cycle.
"""

import os
import subprocess
import sys

import pytest

from conftest import KIT, build_camem, emulated_library

@pytest.mark.parametrize("order", ["python-first", "c-first"])
def test_a_c_extension_and_pyacl_share_one_emulator_across_sleep_and_wake(order, tmp_path):
    lib = emulated_library()
    env = dict(os.environ)
    # c-first: the extension finds the library itself (its run path);
    # aclmem is not told where it is and must bind to the one already
    # loaded. python-first: the extension has no run path; only the
    # library aclmem loaded (found by its soname) satisfies it.
    so = build_camem(tmp_path, rpath=order == "c-first")
    if order == "c-first":
        env.pop("ACLMEM_ASCENDCL", None)
    out = subprocess.run(
        [sys.executable, str(KIT / "sleep_wake.py"), str(so), order],
        capture_output=True, text=True, timeout=120, env=env,
    )
    assert out.returncode == 0, out.stdout + out.stderr
    assert f"backend: emulator ({lib.resolve()})" in out.stdout, out.stdout
    assert "3 cycles, weights intact" in out.stdout, out.stdout
