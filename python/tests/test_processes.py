"""Python processes share memory with each other and with C processes, on
one emulated machine."""

import multiprocessing as mp
import os
import pathlib
import shutil
import subprocess

import pytest

from conftest import MIB, ROOT, emulated_library, prop

CTX = mp.get_context("spawn")
PATTERN = bytes((i * 7 + 3) % 256 for i in range(4096))


def _import_and_read(shareable, go, results):
    import aclmem

    aclmem.install()
    import acl

    assert acl.init() == 0 and acl.rt.set_device(0) == 0
    pid, _ = acl.rt.device_get_bare_tgid()
    results.put(("pid", pid))
    go.wait(60)
    handle, ret = acl.rt.mem_import_from_shareable_handle(shareable, 0)
    if ret != 0:
        results.put(("import", ret))
        return
    va, _ = acl.rt.reserve_mem_address(2 * MIB, 0, 0, 0)
    ret = acl.rt.map_mem(va, 2 * MIB, 0, handle, 0)
    results.put(("import", ret))
    results.put(("data", acl.util.ptr_to_bytes(va, len(PATTERN))))
    acl.rt.unmap_mem(va)
    acl.rt.release_mem_address(va)
    acl.rt.free_physical(handle)
    acl.finalize()


def _exported(acl):
    handle, ret = acl.rt.malloc_physical(2 * MIB, prop(), 0)
    assert ret == 0
    va, _ = acl.rt.reserve_mem_address(2 * MIB, 0, 0, 0)
    assert acl.rt.map_mem(va, 2 * MIB, 0, handle, 0) == 0
    assert acl.rt.memcpy(va, 2 * MIB, acl.util.bytes_to_ptr(PATTERN), len(PATTERN), 1) == 0
    assert acl.rt.unmap_mem(va) == 0 and acl.rt.release_mem_address(va) == 0
    return handle


def _run_child(shareable, whitelist, acl):
    go, results = CTX.Event(), CTX.Queue()
    child = CTX.Process(target=_import_and_read, args=(shareable, go, results))
    child.start()
    kind, pid = results.get(timeout=60)
    assert kind == "pid" and pid == child.pid
    if whitelist:
        assert acl.rt.mem_set_pid_to_shareable_handle(shareable, [pid]) == 0
    go.set()
    kind, ret = results.get(timeout=60)
    data = results.get(timeout=60)[1] if ret == 0 else None
    child.join(60)
    return ret, data


def test_two_python_processes_share_memory(device):
    import acl

    handle = _exported(acl)
    shareable, ret = acl.rt.mem_export_to_shareable_handle(handle, 0, 0)
    assert ret == 0
    ret, data = _run_child(shareable, True, acl)
    assert ret == 0 and data == PATTERN
    assert acl.rt.free_physical(handle) == 0


def test_a_python_process_off_the_whitelist_is_refused(device):
    import acl

    handle = _exported(acl)
    shareable, _ = acl.rt.mem_export_to_shareable_handle(handle, 0, 0)
    ret, _ = _run_child(shareable, False, acl)
    assert ret == 207006  # ACL_ERROR_RT_NO_PERMISSION
    assert acl.rt.free_physical(handle) == 0


def test_capacity_is_shared_between_processes(device):
    import acl

    big = 40 << 30
    handle, ret = acl.rt.malloc_physical(big, prop(), 0)
    assert ret == 0
    out = subprocess.run(
        [
            os.sys.executable,
            "-c",
            "import aclmem; aclmem.install(); import acl; "
            "acl.init(); acl.rt.set_device(0); "
            f"print(acl.rt.malloc_physical({big}, {prop()!r}, 0)[1])",
        ],
        capture_output=True,
        text=True,
        timeout=120,
        cwd=pathlib.Path(__file__).parent,
    )
    assert out.stdout.strip() == "207001", out.stderr
    assert acl.rt.free_physical(handle) == 0


C_IMPORTER = r"""
#include <acl/acl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int main(int argc, char **argv) {
    if (argc != 3 || aclInit(NULL) != 0 || aclrtSetDevice(0) != 0) return 2;
    uint64_t shareable = strtoull(argv[1], NULL, 10);
    size_t n = strlen(argv[2]);
    aclrtDrvMemHandle h = NULL;
    aclError ret = aclrtMemImportFromShareableHandle(shareable, 0, &h);
    if (ret != 0) { printf("import %d\n", ret); return 1; }
    void *va = NULL;
    if (aclrtReserveMemAddress(&va, 2 << 20, 0, NULL, 0) != 0) return 3;
    if (aclrtMapMem(va, 2 << 20, 0, h, 0) != 0) return 4;
    char buf[256] = {0};
    if (aclrtMemcpy(buf, sizeof buf, va, n, ACL_MEMCPY_DEVICE_TO_HOST) != 0) return 5;
    printf("read %s\n", buf);
    aclrtUnmapMem(va);
    aclrtReleaseMemAddress(va);
    aclrtFreePhysical(h);
    aclFinalize();
    return strcmp(buf, argv[2]) == 0 ? 0 : 6;
}
"""


def test_a_python_process_shares_with_a_c_process(device, tmp_path):
    import acl

    lib = emulated_library()
    include = ROOT / "crates" / "emu-capi" / "include"
    cc = os.environ.get("CC") or shutil.which("cc")
    assert cc, "a C compiler is needed"
    src = tmp_path / "importer.c"
    src.write_text(C_IMPORTER)
    exe = tmp_path / "importer"
    subprocess.run(
        [cc, "-std=c11", "-Wall", "-Werror", f"-I{include}", str(src), "-o", str(exe),
         f"-L{lib.parent}", "-lascendcl", f"-Wl,-rpath,{lib.parent}"],
        check=True,
    )
    handle, ret = acl.rt.malloc_physical(2 * MIB, prop(), 0)
    va, _ = acl.rt.reserve_mem_address(2 * MIB, 0, 0, 0)
    assert acl.rt.map_mem(va, 2 * MIB, 0, handle, 0) == 0
    message = b"from python to C"
    assert acl.rt.memcpy(va, 2 * MIB, acl.util.bytes_to_ptr(message), len(message), 1) == 0
    shareable, ret = acl.rt.mem_export_to_shareable_handle(handle, 0, 1)
    assert ret == 0
    out = subprocess.run([str(exe), str(shareable), message.decode()], capture_output=True,
                         text=True, timeout=120)
    assert out.returncode == 0, out.stdout + out.stderr
    assert out.stdout.strip() == "read from python to C"
    assert acl.rt.unmap_mem(va) == 0 and acl.rt.release_mem_address(va) == 0
    assert acl.rt.free_physical(handle) == 0


LEAKY = (
    "import aclmem; aclmem.install(); import acl; "
    "acl.init(); acl.rt.set_device(0); "
    "h, ret = acl.rt.malloc_physical(2 << 20, {prop!r}, 0); "
    "va, ret = acl.rt.reserve_mem_address(4 << 20, 0, 0, 0); "
    "{finish}"
)


@pytest.mark.parametrize(
    "finish, when",
    [("acl.rt.reset_device(0); acl.finalize()", "aclFinalize"), ("pass", "exit")],
)
def test_the_leak_report_names_what_was_left(finish, when):
    env = dict(os.environ, ACLMEM_EMU_LEAK_REPORT="1")
    env.pop("ACLMEM_EMU_QUIET", None)
    out = subprocess.run(
        [os.sys.executable, "-c", LEAKY.format(prop=prop(), finish=finish)],
        capture_output=True, text=True, timeout=120, env=env,
        cwd=pathlib.Path(__file__).parent,
    )
    assert out.returncode == 0, out.stderr
    assert f"leak report at {when}" in out.stderr, out.stderr
    assert "1 handle(s), 1 reservation(s), 0 mapping(s)" in out.stderr, out.stderr
    assert "2097152 bytes of ACL_HBM_MEM_HUGE" in out.stderr, out.stderr
