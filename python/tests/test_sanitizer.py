"""Python programs under `aclmem sanitize`: seeded defects are reported once
each, with their class; a clean pyACL script reports nothing."""

import json
import os
import pathlib
import signal
import subprocess
import sys

import pytest

from conftest import prop

ROOT = pathlib.Path(__file__).resolve().parents[2]

PRELUDE = (
    "import aclmem; aclmem.install(); import acl\n"
    "P = {prop!r}\n"
    "assert acl.init() == 0 and acl.rt.set_device(0) == 0\n"
    "assert aclmem.backend() == 'sanitizer', aclmem.backend()\n"
)

DEFECTS = {
    "double-free": "h, _ = acl.rt.malloc_physical(2 << 20, P, 0)\n"
    "acl.rt.free_physical(h)\nacl.rt.free_physical(h)\n",
    "use-after-free": "h, _ = acl.rt.malloc_physical(2 << 20, P, 0)\nacl.rt.free_physical(h)\n"
    "va, _ = acl.rt.reserve_mem_address(2 << 20, 0, 0, 0)\n"
    "acl.rt.map_mem(va, 2 << 20, 0, h, 0)\nacl.rt.release_mem_address(va)\n",
    "rule": "bad = dict(P, memAttr=2)\nacl.rt.malloc_physical(2 << 20, bad, 0)\n",
    "import-own-export": "h, _ = acl.rt.malloc_physical(2 << 20, P, 0)\n"
    "s, _ = acl.rt.mem_export_to_shareable_handle(h, 0, 1)\n"
    "acl.rt.mem_import_from_shareable_handle(s, 0)\nacl.rt.free_physical(h)\n",
    "leak": "h, _ = acl.rt.malloc_physical(2 << 20, P, 0)\n",
}

CLEAN = (
    "h, _ = acl.rt.malloc_physical(2 << 20, P, 0)\n"
    "va, _ = acl.rt.reserve_mem_address(4 << 20, 0, 0, 0)\n"
    "assert acl.rt.map_mem(va, 2 << 20, 0, h, 0) == 0\n"
    "data = b'clean'\n"
    "assert acl.rt.memcpy(va, 2 << 20, acl.util.bytes_to_ptr(data), 5, 1) == 0\n"
    "assert acl.util.ptr_to_bytes(va, 5) == data\n"
    "assert acl.rt.unmap_mem(va) == 0 and acl.rt.release_mem_address(va) == 0\n"
    "assert acl.rt.free_physical(h) == 0\n"
)

EPILOGUE = "acl.rt.reset_device(0)\nacl.finalize()\n"


def _cli():
    cli = os.environ.get("ACLMEM_CLI") or str(ROOT / "target" / "debug" / "aclmem")
    if not pathlib.Path(cli).exists():
        pytest.fail(f"the aclmem CLI is not built at {cli}: run `cargo build -p aclmem-cli`")
    return cli


def _sanitize(body, tmp_path, name):
    script = tmp_path / f"{name}.py"
    script.write_text(PRELUDE.format(prop=prop()) + body + EPILOGUE)
    log = tmp_path / f"{name}.jsonl"
    env = dict(os.environ, ACLMEM_EMU_MACHINE=f"pysan-{os.getpid()}-{name}")
    out = subprocess.run(
        [_cli(), "sanitize", "--log", str(log), "--", sys.executable, str(script)],
        capture_output=True, text=True, timeout=120, env=env, cwd=tmp_path,
    )
    findings = [json.loads(l) for l in log.read_text().splitlines()] if log.exists() else []
    return out, findings


@pytest.mark.parametrize("defect", sorted(DEFECTS))
def test_a_seeded_defect_is_reported_once(defect, tmp_path):
    out, findings = _sanitize(DEFECTS[defect], tmp_path, defect)
    assert [f["class"] for f in findings] == [defect], out.stderr
    assert out.returncode == 1, out.stderr


def test_a_clean_pyacl_script_reports_nothing(tmp_path):
    out, findings = _sanitize(CLEAN, tmp_path, "clean")
    assert findings == [], out.stderr
    assert out.returncode == 0, out.stderr


def test_a_finding_in_python_names_the_scripts_function_and_line(tmp_path):
    # The prelude is four lines: `load` is on line 5, its call on line 6.
    body = "def load():\n    h, _ = acl.rt.malloc_physical(2 << 20, P, 0)\n\nload()\n"
    out, findings = _sanitize(body, tmp_path, "where")
    assert [(f["class"], f["site"]) for f in findings] == [("leak", "load (where.py:6)")], out.stderr
    assert "at load (where.py:6)" in out.stderr, out.stderr


def test_a_python_finding_carries_the_scripts_stack(tmp_path):
    # The prelude is four lines; the allocation is made in `load` (line 6),
    # called from `setup` (line 9), called from the module (line 11).
    body = (
        "def load():\n    h, _ = acl.rt.malloc_physical(2 << 20, P, 0)\n\n"
        "def setup():\n    load()\n\nsetup()\n"
    )
    out, findings = _sanitize(body, tmp_path, "stacked")
    assert [f["class"] for f in findings] == ["leak"], out.stderr
    assert findings[0]["site"] == "load (stacked.py:6)"
    assert findings[0]["stack"] == [
        "load (stacked.py:6)",
        "setup (stacked.py:9)",
        "<module> (stacked.py:11)",
    ], out.stderr
    assert "    #1 setup (stacked.py:9)" in out.stderr, out.stderr


# Two processes: the parent exports, a child forked by multiprocessing
# initialises and imports (or not). Each script marks the defect's line.
SHARING = {
    "import-after-free": (
        "import multiprocessing as mp\n"
        "def importer(s):\n"
        "    assert acl.init() == 0 and acl.rt.set_device(0) == 0\n"
        "    h, ret = acl.rt.mem_import_from_shareable_handle(s, 0)  # DEFECT\n"
        "    assert ret != 0\n"
        "def main():\n"
        "    h, _ = acl.rt.malloc_physical(2 << 20, P, 0)\n"
        "    s, _ = acl.rt.mem_export_to_shareable_handle(h, 0, 1)\n"
        "    acl.rt.free_physical(h)\n"
        "    p = mp.get_context('fork').Process(target=importer, args=(s,))\n"
        "    p.start(); p.join()\n"
        "    assert p.exitcode == 0\n"
        "main()\n"
    ),
    "whitelisted-never-imported": (
        "import multiprocessing as mp\n"
        "def idle(q):\n"
        "    q.get()\n"
        "def main():\n"
        "    ctx = mp.get_context('fork')\n"
        "    q = ctx.Queue()\n"
        "    p = ctx.Process(target=idle, args=(q,))\n"
        "    p.start()\n"
        "    h, _ = acl.rt.malloc_physical(2 << 20, P, 0)\n"
        "    s, _ = acl.rt.mem_export_to_shareable_handle(h, 0, 0)\n"
        "    assert acl.rt.mem_set_pid_to_shareable_handle(s, [p.pid]) == 0  # DEFECT\n"
        "    q.put(s); p.join()\n"
        "    acl.rt.free_physical(h)\n"
        "main()\n"
    ),
}

SHARING_CLEAN = (
    "import multiprocessing as mp\n"
    "def importer(q, back):\n"
    "    assert acl.init() == 0 and acl.rt.set_device(0) == 0\n"
    "    back.put(acl.rt.device_get_bare_tgid()[0])\n"
    "    h, ret = acl.rt.mem_import_from_shareable_handle(q.get(), 0)\n"
    "    assert ret == 0\n"
    "    va, _ = acl.rt.reserve_mem_address(2 << 20, 0, 0, 0)\n"
    "    assert acl.rt.map_mem(va, 2 << 20, 0, h, 0) == 0\n"
    "    assert acl.rt.unmap_mem(va) == 0 and acl.rt.release_mem_address(va) == 0\n"
    "    assert acl.rt.free_physical(h) == 0\n"
    "def main():\n"
    "    ctx = mp.get_context('fork')\n"
    "    q, back = ctx.Queue(), ctx.Queue()\n"
    "    p = ctx.Process(target=importer, args=(q, back))\n"
    "    p.start()\n"
    "    h, _ = acl.rt.malloc_physical(2 << 20, P, 0)\n"
    "    s, _ = acl.rt.mem_export_to_shareable_handle(h, 0, 0)\n"
    "    assert acl.rt.mem_set_pid_to_shareable_handle(s, [back.get()]) == 0\n"
    "    q.put(s); p.join()\n"
    "    assert p.exitcode == 0\n"
    "    acl.rt.free_physical(h)\n"
    "main()\n"
)


@pytest.mark.parametrize("defect", sorted(SHARING))
def test_a_sharing_defect_across_python_processes_names_its_line(defect, tmp_path):
    out, findings = _sanitize(SHARING[defect], tmp_path, defect)
    assert [f["class"] for f in findings] == [defect], out.stderr
    lines = (PRELUDE.format(prop=prop()) + SHARING[defect]).splitlines()
    line = next(i for i, l in enumerate(lines, 1) if "# DEFECT" in l)
    f = findings[0]
    assert f["site"].endswith(f"({defect}.py:{line})"), out.stderr
    # The script's stack (in the child, through multiprocessing's frames),
    # and the other process's side.
    assert sum(f"({defect}.py:" in frame for frame in f["stack"]) >= 2, f
    assert f["other"]["pid"] != f["pid"] or defect == "whitelisted-never-imported", f
    assert f["other"]["site"].startswith("main ("), f
    assert out.returncode == 1, out.stderr


def test_python_processes_sharing_memory_correctly_report_nothing(tmp_path):
    out, findings = _sanitize(SHARING_CLEAN, tmp_path, "sharing-clean")
    assert findings == [], out.stderr
    assert out.returncode == 0, out.stderr


def test_clean_python_flows_report_nothing_in_20_runs(tmp_path):
    """vllm-ascend's flow (a C extension maps, pyACL copies, three
    sleep/wake cycles) and two processes sharing memory correctly: no
    finding in 20 runs each, and the JSON log parses every time."""
    from conftest import KIT as kit, build_camem

    so = build_camem(tmp_path)
    for run in range(20):
        log = tmp_path / f"camem-{run}.jsonl"
        env = dict(os.environ, ACLMEM_EMU_MACHINE=f"pysan-{os.getpid()}-camem-{run}")
        out = subprocess.run(
            [_cli(), "sanitize", "--log", str(log), "--", sys.executable,
             str(kit / "sleep_wake.py"), str(so), "c-first"],
            capture_output=True, text=True, timeout=120, env=env,
        )
        findings = [json.loads(l) for l in log.read_text().splitlines()] if log.exists() else []
        assert findings == [] and out.returncode == 0, (run, out.stdout + out.stderr)
        assert "3 cycles, weights intact" in out.stdout, out.stdout
        out, findings = _sanitize(SHARING_CLEAN, tmp_path, f"sharing-clean-{run}")
        assert findings == [] and out.returncode == 0, (run, out.stderr)


# What a script calling libascendcl.so through ctypes starts with.
CTYPES_PRELUDE = """import ctypes


class Prop(ctypes.Structure):
    _fields_ = [("handleType", ctypes.c_int), ("allocationType", ctypes.c_int),
                ("memAttr", ctypes.c_int), ("id", ctypes.c_uint32), ("type", ctypes.c_int),
                ("reserve", ctypes.c_uint64)]


acl = ctypes.CDLL({lib!r})
assert acl.aclInit(None) == 0 and acl.aclrtSetDevice(0) == 0
prop = Prop(0, 0, 4, 0, 1, 0)
"""

CTYPES = CTYPES_PRELUDE + """

def release(h):
    acl.aclrtFreePhysical(h)  # DEFECT


h = ctypes.c_void_p()
assert acl.aclrtMallocPhysical(ctypes.byref(h), ctypes.c_size_t(2 << 20), ctypes.byref(prop), ctypes.c_uint64(0)) == 0
release(h)
release(h)
"""


def test_a_ctypes_call_names_the_scripts_line_and_stack(tmp_path):
    """A script that calls libascendcl.so through ctypes (which releases
    the GIL for the call): the finding names the script's function and
    line, and the script's stack below it."""
    from conftest import emulated_library

    source = CTYPES.format(lib=str(emulated_library()))
    script = tmp_path / "by_ctypes.py"
    script.write_text(source)
    log = tmp_path / "by_ctypes.jsonl"
    env = dict(os.environ, ACLMEM_EMU_MACHINE=f"pysan-{os.getpid()}-ctypes")
    out = subprocess.run(
        [_cli(), "sanitize", "--log", str(log), "--", sys.executable, str(script)],
        capture_output=True, text=True, timeout=120, env=env, cwd=tmp_path,
    )
    findings = [json.loads(l) for l in log.read_text().splitlines()]
    assert [f["class"] for f in findings] == ["double-free"], out.stderr
    line = next(i for i, l in enumerate(source.splitlines(), 1) if "# DEFECT" in l)
    assert findings[0]["site"] == f"release (by_ctypes.py:{line})", out.stderr
    assert findings[0]["stack"][1].startswith("<module> (by_ctypes.py:"), findings[0]
    assert out.returncode == 1


def test_explore_fails_each_allocation_of_the_camem_flow(tmp_path):
    """`aclmem explore` over vllm-ascend's flow from Python: the C
    extension's physical allocations and mappings fail in turn (the 1st and
    2nd of each), each run under the sanitizer; every fault is reported at
    the extension's call site, and no run hangs."""
    from conftest import KIT as kit, build_camem

    so = build_camem(tmp_path)
    log = tmp_path / "explore.jsonl"
    env = dict(os.environ, ACLMEM_EMU_MACHINE=f"pyexplore-{os.getpid()}")
    out = subprocess.run(
        [_cli(), "explore", "--only", "aclrtMallocPhysical,aclrtMapMem", "--depth", "2",
         "--timeout", "120", "--log", str(log), "--",
         sys.executable, str(kit / "sleep_wake.py"), str(so), "c-first"],
        capture_output=True, text=True, timeout=900, env=env,
    )
    assert out.returncode in (0, 1), out.stderr[-3000:]
    records = [json.loads(line) for line in log.read_text().splitlines()]
    assert {r["function"] for r in records} == {"aclrtMallocPhysical", "aclrtMapMem"}, records
    assert {r["nth"] for r in records} == {1, 2}
    for r in records:
        assert r["site"].startswith("camem.c:"), r
        assert r["outcome"] != "hang", r


CTYPES_HANDLED = CTYPES_PRELUDE + """h = ctypes.c_void_p()
if acl.aclrtMallocPhysical(ctypes.byref(h), ctypes.c_size_t(2 << 20), ctypes.byref(prop), ctypes.c_uint64(0)) == 0:  # MALLOC
    acl.aclrtFreePhysical(h)
"""


def test_explore_names_a_ctypes_scripts_fault_by_its_line(tmp_path):
    """`aclmem explore` over a script calling through ctypes (the GIL
    released for the call): the emulated library asks the sanitizer for
    the call's Python line while the sanitizer holds its lock across the
    call, and gets the line found before the lock (the interpreter is not
    asked to take the GIL then)."""
    from conftest import emulated_library

    source = CTYPES_HANDLED.format(lib=str(emulated_library()))
    out, records, line = _explore_script(
        tmp_path, "explored_ctypes.py", source.replace("{", "{{").replace("}", "}}"),
        "aclrtMallocPhysical", 120,
    )
    assert [r["site"] for r in records] == [f"explored_ctypes.py:{line('MALLOC')}"], (
        out.stderr[-3000:])
    assert [r["outcome"] for r in records] == ["handled"], records


def _explore_script(tmp_path, name, source, only, timeout):
    """`aclmem explore --only ONLY --timeout TIMEOUT` over the script
    `source` (with this machine's prop), written as `name`, on a machine of
    its own: the finished process, the log's records, and the line of each
    `# MARKER` in the script."""
    script = tmp_path / name
    script.write_text(source.format(prop=prop()))
    log = tmp_path / "explore.jsonl"
    env = dict(os.environ, ACLMEM_EMU_MACHINE=f"pyexplore-{script.stem}-{os.getpid()}")
    out = subprocess.run(
        [_cli(), "explore", "--only", only, "--timeout", str(timeout),
         "--log", str(log), "--", sys.executable, str(script)],
        capture_output=True, text=True, timeout=600, env=env,
    )
    records = [json.loads(l) for l in log.read_text().splitlines()] if log.exists() else []

    def line(marker):
        return next(i for i, l in enumerate(source.splitlines(), 1) if f"# {marker}" in l)

    return out, records, line


# A pyACL script whose error paths are seeded: a failed mapping returns
# without freeing the handle (a leak, made at the PHYSICAL line); a failed
# reservation is handled (nothing made yet).
EXPLORED = '''\
import aclmem; aclmem.install(); import acl
P = {prop!r}


def load():
    h, ret = acl.rt.malloc_physical(2 << 20, P, 0)  # PHYSICAL
    if ret != 0:
        return False
    va, ret = acl.rt.reserve_mem_address(2 << 20, 0, 0, 0)  # RESERVE
    if ret != 0:
        acl.rt.free_physical(h)
        return False
    if acl.rt.map_mem(va, 2 << 20, 0, h, 0) != 0:  # MAP: the handle leaks
        acl.rt.release_mem_address(va)
        return False
    acl.rt.unmap_mem(va)
    acl.rt.release_mem_address(va)
    acl.rt.free_physical(h)
    return True


assert acl.init() == 0 and acl.rt.set_device(0) == 0
print("loaded" if load() else "not loaded")
assert acl.rt.reset_device(0) == 0 and acl.finalize() == 0
'''


def test_explore_names_a_pyacl_scripts_faults_by_its_lines(tmp_path):
    """`aclmem explore` over a pyACL script: each call of the script is a
    failure point of its own, named and failed by the script's line (not
    the binding's native frame, which all of them share), and the seeded
    leak is found on the mapping's error path, made at its line."""
    out, log, line = _explore_script(
        tmp_path, "explored.py", EXPLORED,
        "aclrtMallocPhysical,aclrtReserveMemAddress,aclrtMapMem", 120,
    )
    assert out.returncode == 1, out.stderr[-3000:]
    records = {r["site"]: r for r in log}
    assert set(records) == {
        f"explored.py:{line(m)}" for m in ("PHYSICAL", "RESERVE", "MAP")
    }, records
    assert records[f"explored.py:{line('PHYSICAL')}"]["outcome"] == "handled"
    assert records[f"explored.py:{line('RESERVE')}"]["outcome"] == "handled"
    leak = records[f"explored.py:{line('MAP')}"]
    assert leak["outcome"] == "leak", leak
    assert [f["class"] for f in leak["findings"]] == ["leak"], leak
    assert leak["findings"][0]["site"].endswith(f"(explored.py:{line('PHYSICAL')})"), leak


CRASHES_AND_HANGS = '''\
import os
import time

import aclmem; aclmem.install(); import acl
P = {prop!r}


def load():
    h, ret = acl.rt.malloc_physical(2 << 20, P, 0)
    if ret != 0:
        os.abort()  # CRASH
    va, ret = acl.rt.reserve_mem_address(2 << 20, 0, 0, 0)
    if ret != 0:
        time.sleep(600)  # HANG
    acl.rt.release_mem_address(va)
    acl.rt.free_physical(h)


assert acl.init() == 0 and acl.rt.set_device(0) == 0
load()
assert acl.rt.reset_device(0) == 0 and acl.finalize() == 0
'''


def test_explore_names_the_script_line_a_python_program_crashed_or_waits_at(tmp_path):
    """A pyACL script that aborts on one error path and sleeps for ever on
    another: explore's crash and hang records say where, by the script's
    lines (the interpreter's native frames name nothing of the program)."""
    out, log, line = _explore_script(
        tmp_path, "crashes.py", CRASHES_AND_HANGS,
        "aclrtMallocPhysical,aclrtReserveMemAddress", 10,
    )
    assert out.returncode == 1, out.stderr[-3000:]
    records = {r["function"]: r for r in log}
    crash = records["aclrtMallocPhysical"]
    assert crash["outcome"] == "crash", crash
    assert crash["where"]["signal"] == signal.SIGABRT, crash
    assert crash["where"]["site"] == f"load (crashes.py:{line('CRASH')})", crash
    assert crash["where"]["stack"][1].startswith("<module> (crashes.py:"), crash
    hang = records["aclrtReserveMemAddress"]
    assert hang["outcome"] == "hang", hang
    assert hang["where"]["signal"] == signal.SIGURG, hang
    assert hang["where"]["site"] == f"load (crashes.py:{line('HANG')})", hang
    assert f"at load (crashes.py:{line('HANG')})" in out.stderr, out.stderr[-3000:]
