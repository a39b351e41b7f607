"""Every test process joins a machine of its own, so test runs never meet
other runs or programs on the default machine."""

import os
import pathlib
import subprocess

import pytest

os.environ.setdefault("ACLMEM_EMU_MACHINE", f"pytest-{os.getpid()}")
os.environ.setdefault("ACLMEM_EMU_QUIET", "1")
os.environ.setdefault("ACLMEM_EMU_SOC", "Ascend910B3")
os.environ.setdefault("ACLMEM_EMU_HBM", "64GiB")

import aclmem  # noqa: E402

aclmem.install()

import acl  # noqa: E402

HBM_HUGE = 4
DEVICE, HOST = 1, 0
MIB = 1 << 20


def prop(mem_attr=HBM_HUGE, loc_type=DEVICE, loc_id=0):
    """pyACL's prop dict."""
    return {
        "handleType": 0,
        "allocationType": 0,
        "memAttr": mem_attr,
        "location": {"id": loc_id, "type": loc_type},
        "reserve": 0,
    }


@pytest.fixture
def device():
    """ACL initialised with device 0 set, torn down after the test."""
    assert acl.init() == 0
    assert acl.rt.set_device(0) == 0
    yield 0
    assert acl.rt.reset_device(0) == 0
    assert acl.finalize() == 0


ROOT = pathlib.Path(__file__).resolve().parents[2]


def emulated_library():
    """The emulated ``libascendcl.so`` the tests' C code links:
    ``$ACLMEM_ASCENDCL``, else the one ``cargo build`` puts in ``target/debug``."""
    lib = os.environ.get("ACLMEM_ASCENDCL")
    path = pathlib.Path(lib) if lib else ROOT / "target" / "debug" / "libascendcl.so"
    if not path.exists():
        pytest.fail(f"the emulated library is not built at {path}: run `cargo xtask lib`")
    return path


KIT = pathlib.Path(__file__).resolve().parent / "kit"


def build_camem(tmp_path, rpath=True):
    """Compiles the test kit's C extension (``kit/camem.c``, vllm-ascend's
    allocator pattern, with debug information for call sites) against
    :func:`emulated_library` into ``tmp_path/camem.so``; with ``rpath`` it
    finds the library itself, without it only an already loaded one
    satisfies it."""
    import shutil

    lib = emulated_library()
    cc = os.environ.get("CC") or shutil.which("cc")
    assert cc, "a C compiler is needed"
    so = tmp_path / "camem.so"
    link = [f"-L{lib.parent}", "-lascendcl"]
    if rpath:
        link.append(f"-Wl,-rpath,{lib.parent}")
    subprocess.run(
        [cc, "-g", "-shared", "-fPIC", "-std=c11", "-Wall", "-Werror",
         f"-I{aclmem.include_dir()}", str(KIT / "camem.c"), "-o", str(so), *link],
        check=True,
    )
    return so
