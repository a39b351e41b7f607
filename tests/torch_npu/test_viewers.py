"""The formats of `aclmem timeline`, read by their own consumers' code: a
C program's trace as PyTorch's memory snapshot, rendered by PyTorch's own
viewer (`torch.cuda._memory_viz`), and as msMemScope's event CSV, read by
Python's csv module. (torch_npu's runs are checked in test_torch_npu.py.)"""

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


def line_of(marker):
    return next(i for i, l in enumerate(PROGRAM.splitlines(), 1) if marker in l) - 1


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

    subprocess.run(
        [cli, "timeline", str(trace), "--format", "memory-viz", "-o", str(tmp_path / "viz")],
        check=True, capture_output=True,
    )
    data = pickle.loads((tmp_path / "viz.pickle").read_bytes())
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

    # PyTorch's viewer code renders it, and its numbers are the trace's.
    from torch.cuda import _memory_viz as viz

    summary = viz.segsum(data)
    assert "segments:" in summary
    text = viz.trace(data)
    assert f"cudaMalloc({resv['address']}, " in text
    assert "<script" in viz.trace_plot(data) and "<script" in viz.segment_plot(data)

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
