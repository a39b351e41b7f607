"""The formats of `aclmem timeline`, read by their own consumers' code: a
C program's and a pyACL script's traces as PyTorch's memory snapshot,
rendered by PyTorch's own viewer (`torch.cuda._memory_viz`), and as
msMemScope's event CSV, read by Python's csv module. (torch_npu's runs are
checked in test_torch_npu.py.)

The pyACL script runs on `ACLMEM_PYACL_PYTHON`, a Python with the aclmem
package installed (`cargo xtask torch-npu` sets it): torch's venv does not
hold aclmem, and the viewer's code runs here, in torch's."""

import csv
import os
import pathlib
import pickle
import subprocess

from conftest import HERE

ROOT = HERE.parent.parent
MIB = 1 << 20

# A program that leaves memory held at its end: a reservation of 8 MiB with
# one of its two mappings still in place, and an aclrtMalloc block.
PROGRAM = r"""
#include <string.h>
#include <acl/acl.h>

#define MIB ((size_t)1 << 20)

static aclrtDrvMemHandle handle(void) {
    aclrtPhysicalMemProp p;
    aclrtDrvMemHandle h = NULL;
    memset(&p, 0, sizeof p);
    p.memAttr = ACL_HBM_MEM_HUGE;
    p.location.type = ACL_MEM_LOCATION_TYPE_DEVICE;
    p.location.id = 0;
    if (aclrtMallocPhysical(&h, 2 * MIB, &p, 0) != 0) return NULL;
    return h;
}

int main(void) {
    void *va = NULL, *block = NULL;
    if (aclInit(NULL) != 0 || aclrtSetDevice(0) != 0) return 2;
    if (aclrtReserveMemAddress(&va, 8 * MIB, 0, NULL, 0) != 0) return 2; /* RESERVE */
    aclrtDrvMemHandle kept = handle();
    aclrtDrvMemHandle gone = handle();
    if (!kept || !gone) return 2;
    if (aclrtMapMem(va, 2 * MIB, 0, kept, 0) != 0) return 2; /* KEPT-MAP */
    if (aclrtMapMem((char *)va + 2 * MIB, 2 * MIB, 0, gone, 0) != 0) return 2;
    aclrtUnmapMem((char *)va + 2 * MIB);
    aclrtFreePhysical(gone);
    if (aclrtMalloc(&block, MIB, ACL_MEM_MALLOC_HUGE_FIRST) != 0) return 2; /* BLOCK */
    return 0;
}
"""


def line_of(marker, program=PROGRAM):
    return next(i for i, l in enumerate(program.splitlines(), 1) if marker in l) - 1


# The same memory held from Python through pyACL (aclmem's `acl`).
SCRIPT = r"""
import aclmem

try:
    import acl  # aclmem's, under `aclmem run` or `aclmem sanitize`
except ImportError:
    aclmem.install()
    import acl

MIB = 1 << 20
PROP = {"handleType": 0, "allocationType": 0, "memAttr": 4,  # ACL_HBM_MEM_HUGE
        "location": {"id": 0, "type": 1}, "reserve": 0}


def handle():
    h, ret = acl.rt.malloc_physical(2 * MIB, PROP, 0)  # PHYSICAL
    assert ret == 0, ret
    return h


def main():
    assert acl.init() == 0 and acl.rt.set_device(0) == 0
    va, ret = acl.rt.reserve_mem_address(8 * MIB, 0, 0, 0)  # RESERVE
    assert ret == 0, ret
    kept, gone = handle(), handle()
    assert acl.rt.map_mem(va, 2 * MIB, 0, kept, 0) == 0  # KEPT-MAP
    assert acl.rt.map_mem(va + 2 * MIB, 2 * MIB, 0, gone, 0) == 0  # GONE-MAP
    assert acl.rt.unmap_mem(va + 2 * MIB) == 0  # UNMAP
    assert acl.rt.free_physical(gone) == 0
    block, ret = acl.rt.malloc(MIB, 0)  # BLOCK
    assert ret == 0, ret


main()
"""


def render(cli, trace, out):
    """The trace as a memory snapshot, and PyTorch's viewer over it."""
    subprocess.run(
        [cli, "timeline", str(trace), "--format", "memory-viz", "-o", str(out)],
        check=True, capture_output=True,
    )
    data = pickle.loads(out.with_suffix(".pickle").read_bytes())
    from torch.cuda import _memory_viz as viz

    assert "segments:" in viz.segsum(data)
    assert "<script" in viz.trace_plot(data) and "<script" in viz.segment_plot(data)
    return data, viz.trace(data)


def test_a_pyacl_scripts_trace_renders_in_pytorchs_viewer(machine, tmp_path):
    cli = os.environ["ACLMEM_CLI"]
    python = os.environ["ACLMEM_PYACL_PYTHON"]
    script = tmp_path / "held.py"
    script.write_text(SCRIPT.lstrip("\n"))
    trace = tmp_path / "trace.jsonl"
    env = dict(os.environ, ACLMEM_EMU_MACHINE=machine)
    run = subprocess.run(
        [cli, "sanitize", "--trace", str(trace), "--", python, str(script)],
        capture_output=True, text=True, env=env, timeout=120,
    )
    assert run.returncode == 1 and "leak" in run.stderr, run.stderr[-3000:]
    data, text = render(cli, trace, tmp_path / "viz")

    def at(frames, marker):
        line = line_of(marker, SCRIPT)
        return any(f["filename"].endswith("held.py") and f["line"] == line for f in frames)

    segments = data["segments"]
    resv = next(s for s in segments if s["is_expandable"])
    assert resv["total_size"] == 8 * MIB
    assert f"cudaMalloc({resv['address']}, " in text
    active = [b for b in resv["blocks"] if b["state"] == "active_allocated"]
    # The mapping held at the end, at the script's line, and the function
    # that made its handle below it.
    assert [(b["address"] - resv["address"], b["size"]) for b in active] == [(0, 2 * MIB)]
    assert at(active[0]["frames"], "KEPT-MAP"), active[0]["frames"]
    block = next(s for s in segments if not s["is_expandable"])
    assert block["total_size"] == MIB
    assert at(block["frames"], "BLOCK"), block["frames"]
    # The mapping released during the run: mapped and unmapped, each event
    # at its own line.
    events = [e for t in data["device_traces"] for e in t if e["addr"] == resv["address"] + 2 * MIB]
    assert [e["action"] for e in events] == [
        "segment_map", "alloc", "free_requested", "free_completed", "segment_unmap",
    ], events
    assert all(at(e["frames"], "GONE-MAP") for e in events[:2]), events
    assert all(at(e["frames"], "UNMAP") for e in events[2:]), events


def test_a_c_programs_trace_renders_in_pytorchs_viewer_and_as_msmemscope_csv(machine, tmp_path):
    cli = os.environ["ACLMEM_CLI"]
    lib_dir = pathlib.Path(cli).parent
    src = tmp_path / "held.c"
    # The source's first line is empty: line numbers count from the next.
    src.write_text(PROGRAM.lstrip("\n"))
    exe = tmp_path / "held"
    subprocess.run(
        [os.environ.get("CC", "cc"), "-g", "-O0", "-std=c11",
         f"-I{ROOT / 'crates/emu-capi/include'}", str(src), "-o", str(exe),
         f"-L{lib_dir}", "-lascendcl", f"-Wl,-rpath,{lib_dir}"],
        check=True,
    )
    trace = tmp_path / "trace.jsonl"
    env = dict(os.environ, ACLMEM_EMU_MACHINE=machine)
    run = subprocess.run(
        [cli, "sanitize", "--trace", str(trace), "--", str(exe)],
        capture_output=True, text=True, env=env, timeout=120,
    )
    # What the program leaves held is reported as leaks: exit code 1.
    assert run.returncode == 1 and "leak" in run.stderr, run.stderr[-3000:]

    # PyTorch's viewer code renders it, and its numbers are the trace's.
    data, text = render(cli, trace, tmp_path / "viz")
    segments = {s["address"]: s for s in data["segments"]}
    resv = next(s for s in segments.values() if s["is_expandable"])
    assert resv["total_size"] == 8 * MIB
    active = [b for b in resv["blocks"] if b["state"] == "active_allocated"]
    # One mapping held at the end, made at its line of the program.
    assert [(b["address"] - resv["address"], b["size"]) for b in active] == [(0, 2 * MIB)]
    assert any(
        f["filename"].endswith("held.c") and f["line"] == line_of("KEPT-MAP")
        for f in active[0]["frames"]
    ), active[0]["frames"]
    block = next(s for s in segments.values() if not s["is_expandable"])
    assert block["total_size"] == MIB
    assert any(f["line"] == line_of("BLOCK") for f in block["frames"]), block["frames"]

    assert f"cudaMalloc({resv['address']}, " in text

    # The same trace as msMemScope's events.
    subprocess.run(
        [cli, "timeline", str(trace), "--format", "msmemscope", "-o", str(tmp_path / "scope")],
        check=True, capture_output=True,
    )
    with open(tmp_path / "scope.csv", newline="") as f:
        rows = list(csv.reader(f))
    assert rows[0][:10] == [
        "ID", "Event", "Event Type", "Name", "Timestamp(ns)", "Process Id",
        "Thread Id", "Device Id", "Ptr", "Attr",
    ]
    created = [r for r in rows if r[1] == "MALLOC" and "alloc_type:create" in r[9]]
    assert len(created) == 2
    freed = [r for r in rows if r[1] == "FREE"]
    # The handle freed is one of the two made, under its allocation id.
    ids = {r[9].split(",")[0] for r in created}
    assert len(freed) == 1 and freed[0][9].split(",")[0] in ids
    assert any(f"held.c:{line_of('BLOCK')}" in r[11] for r in rows if "alloc_type:alloc" in r[9])
