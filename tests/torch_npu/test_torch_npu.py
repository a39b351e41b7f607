"""Real torch_npu (from the package registry) on aclmem's emulated CANN
libraries: its memory path, with the values asserted."""

import os
import pickle
import subprocess
import sys

import pytest

from conftest import HERE, run_scenario, sanitize_scenario

MIB = 1 << 20
EXPANDABLE = {"PYTORCH_NPU_ALLOC_CONF": "expandable_segments:True"}


def test_import_devices_and_copies(machine):
    r, _, _ = run_scenario("basics", machine, {"ACLMEM_EMU_DEVICES": "4"})
    assert r["available"] is True
    assert r["count"] == 4
    assert r["current"] == 1
    assert r["dtypes"] == {
        "torch.float32": True,
        "torch.float16": True,
        "torch.int64": True,
        "torch.uint8": True,
        "torch.bfloat16": True,
    }
    assert r["big"] and r["clone"] and r["non_blocking"]
    assert r["other_device"] and r["other_index"] == 2


def test_pinned_memory_expandable_and_host_registration(machine):
    env = {
        "PYTORCH_NPU_ALLOC_CONF": "pin_memory_expandable_segments:True",
        # The driver torch_npu asks for expandable pinned memory.
        "ACLMEM_EMU_DRIVER": "25.5.0",
    }
    r, err, _ = run_scenario("pinned_memory", machine, env)
    assert "pin_memory_expandable_segments setting failure" not in err
    assert r["pinned"] and r["round_trip"]
    assert r["codes"] == {
        "register": 0,
        "again": 507910,
        "no_flags": 107000,
        "unregister": 0,
        "unregister_again": 507911,
    }


def test_the_trace_opens_in_pytorchs_memory_viewer(machine, tmp_path):
    """`aclmem timeline --format memory-viz` on torch_npu's expandable
    segments: PyTorch's own viewer code reads the snapshot, and what it
    shows is what torch_npu itself reported."""
    r, _, _, code = sanitize_scenario("expandable", machine, tmp_path, EXPANDABLE)
    assert code == 0, sanitize_scenario.stderr[-3000:]
    out = tmp_path / "viz"
    subprocess.run(
        [os.environ["ACLMEM_CLI"], "timeline", str(tmp_path / "trace.jsonl"),
         "--format", "memory-viz", "-o", str(out)],
        check=True, capture_output=True,
    )
    data = pickle.loads((tmp_path / "viz.pickle").read_bytes())
    events = data["device_traces"][0]
    (a_addr, _), = r["segments1"]
    (_, size2), = r["segments2"]
    # torch_npu's expandable segment is one reservation of the trace,
    # grown by mappings whose peak is the segment's size when b was made.
    resv = [e for e in events if e["action"] == "segment_alloc" and e["addr"] == a_addr]
    assert len(resv) == 1 and resv[0]["size"] >= size2
    level = peak = 0
    for e in events:
        if a_addr <= e["addr"] < a_addr + resv[0]["size"]:
            if e["action"] == "segment_map":
                level += e["size"]
            elif e["action"] == "segment_unmap":
                level -= e["size"]
            peak = max(peak, level)
    assert peak == size2
    maps = [e for e in events if e["action"] == "segment_map"]
    assert all(e["frames"] for e in maps), "each mapping names its call site"
    # PyTorch's viewer code renders it.
    from torch.cuda import _memory_viz as viz

    assert f"cudaMalloc({a_addr}, " in viz.trace(data)
    assert "segments:" in viz.segsum(data)
    assert "<script" in viz.trace_plot(data) and "<script" in viz.segment_plot(data)


def test_torch_npus_memory_history_and_oom_snapshot(machine, tmp_path):
    env = {
        "HISTORY_DIR": str(tmp_path),
        "ACLMEM_EMU_HBM": "512MiB",
        "OOM_SNAPSHOT_ENABLE": "1",
        "OOM_SNAPSHOT_PATH": str(tmp_path),
    }
    r, err, _ = run_scenario("history", machine, env)
    # The per-component usage torch_npu asks for is answered.
    assert "AclrtGetMemUsageInfo failed" not in err
    assert {"alloc", "free_requested", "free_completed", "segment_alloc"} <= set(r["actions"])
    assert r["a_ptr"] in r["alloc_addrs"] and r["b_ptr"] in r["alloc_addrs"]
    assert r["b_active"] and not r["a_active"]
    assert r["dumped_segments"] == r["snap_segments"] >= 1
    assert r["pool_segments"] >= 1 and r["pool_has_c"]
    assert r["oom"] and "out of memory" in r["oom"].lower()
    pickles = [f for f in r["files"] if f.startswith("oom_snapshot_") and f.endswith(".pickle")]
    csvs = [f for f in r["files"] if f.startswith("device_0_memUsageInfo_") and f.endswith(".csv")]
    assert len(pickles) == 1 and len(csvs) == 1, r["files"]
    oom = pickle.loads((tmp_path / pickles[0]).read_bytes())
    assert any(e["action"] == "oom" for e in oom["device_traces"][0])
    rows = (tmp_path / csvs[0]).read_text().splitlines()
    assert rows[0] == "moduleName,curMemSize(MB),memPeakSize(MB)"
    name, cur, peak = rows[1].split(",")
    # The device's memory, nearly all of its 512 MiB held at the OOM.
    assert name == "device_memory" and 448 <= float(cur) <= float(peak) <= 512


def test_explore_fails_each_map_of_a_growing_segment(machine, tmp_path):
    """`aclmem explore` over torch_npu's expandable segments: the 1st, 2nd
    and 3rd aclrtMapMem of a growing segment fail in turn. What torch_npu
    then does is reported (not judged here); each run ends."""
    import json

    log = tmp_path / "explore.jsonl"
    env = dict(os.environ, ACLMEM_EMU_MACHINE=machine, **EXPANDABLE)
    out = subprocess.run(
        [os.environ["ACLMEM_CLI"], "explore", "--only", "aclrtMapMem", "--depth", "3",
         "--timeout", "240", "--log", str(log), "--",
         sys.executable, str(HERE / "scenarios.py"), "expandable"],
        capture_output=True, text=True, timeout=900, env=env,
    )
    assert out.returncode in (0, 1), out.stderr[-3000:]
    records = [json.loads(line) for line in log.read_text().splitlines()]
    assert sorted(r["nth"] for r in records) == [1, 2, 3], records
    for r in records:
        assert r["function"] == "aclrtMapMem" and r["code"] == 107000
        assert r["site"].startswith("libtorch_npu.so+"), r
        assert r["outcome"] in ("handled", "leak", "misuse", "crash"), r
    assert "aclmem explore: 3 fault(s)" in out.stderr


def test_statistics_and_snapshot_agree_with_the_machine(machine):
    r, _, _ = run_scenario("stats", machine)
    # torch_npu's allocator rounds each block up (512 bytes, plus 32 of
    # padding on this SoC): what it counts covers what was asked, closely.
    assert r["requested"] <= r["allocated"] <= r["requested"] + 4 * 1024
    assert r["stats_allocated"] == r["allocated"]
    assert r["stats_reserved"] == r["reserved"] == r["segments_total"]
    assert r["stats_allocations"] == r["active_blocks"] == 4
    assert r["active_block_bytes"] == r["allocated"]
    # Reserved memory is device memory the machine has handed out, seen
    # from another process.
    assert r["used_while_held"] - r["base_used"] == r["reserved"]
    # Freeing tensors keeps the cache; empty_cache gives it back.
    assert r["allocated_after_del"] == 0
    assert r["reserved_after_del"] == r["reserved"]
    assert r["used_after_del"] == r["used_while_held"]
    assert r["reserved_after_empty"] == 0
    assert r["used_after_empty"] == r["base_used"]


def test_expandable_segments_grow_by_mapping_and_empty_cache_unmaps(machine):
    r, _, _ = run_scenario("expandable", machine, EXPANDABLE)
    (addr1, size1), = r["segments1"]
    (addr2, size2), = r["segments2"]
    # One segment at one address, grown in place by mapping 20 MiB
    # physical handles: the first tensor was never copied or moved.
    assert addr1 == addr2 == r["a_ptr"]
    assert size1 % (20 * MIB) == 0 and size1 >= 30 * MIB
    assert size2 % (20 * MIB) == 0 and size2 >= 80 * MIB and size2 > size1
    assert r["used1"] - r["base_used"] == size1
    assert r["used2"] - r["base_used"] == size2
    assert r["a_intact"] and r["b_intact"]
    # empty_cache unmapped and freed every handle.
    assert r["segments3"] == []
    assert r["used3"] == r["base_used"]


@pytest.mark.parametrize("conf", [{}, EXPANDABLE], ids=["ipc-key", "shareable-handle"])
def test_an_npu_tensor_reaches_a_spawned_child(machine, conf):
    r, _, _ = run_scenario("ipc", machine, conf)
    assert r["expandable"] == bool(conf)
    assert r["child_exit"] == 0
    assert r["child_device"] == "npu"
    assert r["numel"] == 6 * MIB + 17
    assert r["same"] is True
    # One memory, not a copy: what the child wrote, the parent reads.
    assert r["written_by_child"] is True


@pytest.mark.parametrize("conf", [{}, EXPANDABLE], ids=["ipc-key", "shareable-handle"])
def test_ipc_under_the_sanitizer_is_clean_and_its_export_reaches_the_child(machine, tmp_path, conf):
    """torch.multiprocessing's IPC under `aclmem sanitize`: both processes
    are followed, their sharing is joined (no cross-process finding: the
    child imports what the parent exported, and the parent outlives it),
    torch_npu's own cache at exit is not called a leak, and the trace has
    the export and the import, in two processes, for the timeline's
    arrow."""
    if not os.environ.get("ACLMEM_CLI"):
        pytest.skip("ACLMEM_CLI (the aclmem command) is not set")
    r, findings, trace, code = sanitize_scenario("ipc", machine, tmp_path, conf)
    assert findings == [] and code == 0, findings
    assert r["same"] is True and r["written_by_child"] is True
    shared = [t for t in trace if "share" in t]
    exports = [t for t in shared if t["call"] in
               ("aclrtMemExportToShareableHandle", "aclrtIpcMemGetExportKey")]
    imports = [t for t in shared if t["call"] in
               ("aclrtMemImportFromShareableHandle", "aclrtIpcMemImportByKey")]
    assert exports and imports, shared
    joined = {(e["pid"], i["pid"]) for e in exports for i in imports if e["share"] == i["share"]}
    assert joined and all(a != b for a, b in joined), shared


def test_an_input_freed_under_a_live_graph_is_reported(machine, tmp_path):
    """The sanitizer names the graph and where its capture read the memory
    that torch_npu's empty_cache gave back to the runtime."""
    if not os.environ.get("ACLMEM_CLI"):
        pytest.skip("ACLMEM_CLI (the aclmem command) is not set")
    r, findings, trace, code = sanitize_scenario("graph_freed_input", machine, tmp_path)
    assert r is not None and r["replayed"] is True, sanitize_scenario.stderr[-3000:]
    classes = [f["class"] for f in findings]
    assert classes == ["graph-memory-released", "graph-replay-released"], findings
    assert r["refused"] is True, "the emulated runtime refuses to replay over released memory"
    released = findings[0]
    assert "aclrtFree" == released["call"], released
    assert "capture begun at" in released["message"], released
    assert code == 1
    calls = {t["call"] for t in trace}
    assert {"aclmdlRICaptureBegin", "aclmdlRICaptureEnd", "aclmdlRIExecuteAsync"} <= calls, calls


def test_memory_still_held_when_torch_npu_shuts_down_is_not_a_leak_by_default(machine, tmp_path):
    """vllm-ascend's sleep mode under the sanitizer: at the interpreter's
    exit torch_npu finalizes the runtime while the weights (a memory pool
    of the C allocator) still hold their memory. By default that is summed
    up in one line, not reported; `--leak-check full` reports each object
    (the pool's reservations, mappings and handles)."""
    if not os.environ.get("ACLMEM_CLI"):
        pytest.skip("ACLMEM_CLI (the aclmem command) is not set")
    few = {"SLEEP_WAKE_CYCLES": "3"}
    r, findings, _, code = sanitize_scenario("sleep_wake", machine, tmp_path, few)
    assert findings == [] and code == 0, findings
    assert "libtorch_npu.so finalized the runtime at exit" in sanitize_scenario.stderr
    assert all(r["restored"])
    _, findings, _, code = sanitize_scenario(
        "sleep_wake", machine, tmp_path, few, args=("--leak-check", "full"))
    assert code == 1
    assert findings and {f["class"] for f in findings} == {"leak"}, findings
    assert any("made at map_new" in f["message"] or f["site"].startswith("map_new") for f in findings), findings


def test_thirty_sleep_wake_cycles_do_not_grow(machine):
    lib = os.environ.get("CAMEM_ALLOCATOR")
    if not lib:
        pytest.skip("CAMEM_ALLOCATOR (the test allocator, built by cargo xtask torch-npu) is not set")
    r, _, _ = run_scenario("sleep_wake", machine, {"CAMEM_ALLOCATOR": lib})
    mapped = r["mapped"]
    # Three weights of 4, 7 and 16 MiB, in the blocks torch_npu's allocator
    # asked the pluggable allocator for (rounded up, padded), which maps
    # them in 2 MiB granules: that is all the device memory in use.
    assert mapped >= (4 + 8 + 16) * MIB and mapped % (2 * MIB) == 0
    assert r["base_used"] == mapped
    assert r["asleep_used"] == [0] * 30
    assert r["awake_used"] == [mapped] * 30
    assert r["restored"] == [True] * 30
    assert r["same_addresses"] is True


def test_data_operators_compute_what_the_cpu_computes(machine):
    r, err, _ = run_scenario("data_operators", machine)
    failed = [name for name, ok in r["checks"].items() if not ok]
    assert not failed, failed
    assert "is not supported" not in err, err


def test_matrix_products_compute_what_the_cpu_computes(machine):
    r, err, _ = run_scenario("matrix_products", machine)
    failed = [name for name, ok in r["checks"].items() if not ok]
    assert not failed, failed
    assert len(r["checks"]) == 13
    assert "is not supported" not in err, err


def test_convolutions_compute_what_the_cpu_computes(machine):
    r, err, _ = run_scenario("convolutions", machine)
    failed = [name for name, ok in r["checks"].items() if not ok]
    assert not failed, failed
    assert len(r["checks"]) == 4
    assert "is not supported" not in err, err


def test_npu_graphs_capture_replay_and_keep_their_pools(machine):
    r, err, _ = run_scenario("graphs", machine)
    failed = [name for name, ok in r["checks"].items() if not ok]
    assert not failed, failed
    assert len(r["checks"]) == 9
    assert "is not supported" not in err, err


def test_a_captured_step_of_compute_replays_as_the_cpu_computes(machine):
    r, err, _ = run_scenario("graph_compute", machine)
    failed = [name for name, ok in r["checks"].items() if not ok]
    assert not failed, failed
    assert len(r["checks"]) == 3
def test_conditional_nodes_replay_the_branch_their_predicate_picks(machine):
    r, err, _ = run_scenario("graph_conditionals", machine)
    failed = [name for name, ok in r["checks"].items() if not ok]
    assert not failed, failed
    # 4 replays, 8 unary functions, logical_not, 7 reductions, exp_.
    assert len(r["checks"]) == 4 + 8 + 1 + 7 + 1
    assert "is not supported" not in err, err


def test_activations_and_softmax_forward_and_backward_match_the_cpu(machine):
    r, err, _ = run_scenario("activations", machine)
    failed = [name for name, ok in r["checks"].items() if not ok]
    assert not failed, failed
    # 13 functions x (forward, gradient) x 3 types, and GELU's erf form.
    assert len(r["checks"]) == 13 * 2 * 3 + 1
    assert "is not supported" not in err, err


def test_a_small_models_training_step_matches_the_cpu(machine):
    r, err, _ = run_scenario("training_operators", machine)
    failed = [name for name, ok in r["checks"].items() if not ok]
    assert not failed, failed
    assert len(r["checks"]) == 42
    assert r["losses"]["npu"][1] < r["losses"]["npu"][0]
    assert "is not supported" not in err, err


def test_batch_norm_and_pooling_forward_and_backward_match_the_cpu(machine):
    r, err, _ = run_scenario("cnn_operators", machine)
    failed = [name for name, ok in r["checks"].items() if not ok]
    assert not failed, failed
    # Pools: 12 functions x (forward, gradient) in float32 and bfloat16, 10
    # in float16, 2 unbatched x 2 in each type, float16's exclusive forward
    # and divisor_override; batch norm: 3 modules x 3 types x 11 checks,
    # the plain (11), untracked (6) and 3-D (11) ones, a half module (3);
    # an NC1HWC0 input (7).
    assert len(r["checks"]) == (12 * 2 * 2 + 10 * 2 + 2 * 2 * 3 + 2) + (3 * 3 * 11 + 11 + 6 + 11 + 3) + 7
    assert "is not supported" not in err, err


def test_a_small_cnns_training_steps_match_the_cpu(machine):
    r, err, _ = run_scenario("cnn_training", machine)
    failed = [name for name, ok in r["checks"].items() if not ok]
    assert not failed, failed
    # Per model: the losses, 10 parameters, 6 batch norm buffers, the
    # evaluation output.
    assert len(r["checks"]) == 2 * (1 + 10 + 6 + 1)
    assert set(r["losses"]) == {"adaptive", "avg"}
    assert all(len(run["npu"]) == 3 for run in r["losses"].values())
    assert "is not supported" not in err, err


def test_losses_and_layers_forward_and_backward_match_the_cpu(machine):
    """models_ops_b.py: the element-wise losses, group norm, resizing,
    mirror padding, 3-D convolutions and embedding bags per type, and a
    small network's three SGD steps."""
    r, err, _ = run_scenario("losses_and_layers", machine)
    failed = [name for name, ok in r["checks"].items() if not ok]
    assert not failed, failed
    # 54 functions x (forward, gradient) x 3 types, the 3-D convolutions'
    # 3 weight and bias gradients x 3 types; the network's losses, 6
    # parameters and evaluation output.
    assert len(r["checks"]) == 54 * 2 * 3 + 3 * 3 + (1 + 6 + 1)
    assert len(r["losses"]["npu"]) == 3
    assert "is not supported by the emulator" not in err, err


def test_optimizer_steps_and_clip_grad_norm_match_the_cpu(machine):
    r, err, _ = run_scenario("optimizer_steps", machine)
    failed = [name for name, ok in r["checks"].items() if not ok]
    assert not failed, failed
    assert len(r["checks"]) == 141
    assert len(r["losses"]) == 8
    assert all(len(run["npu"]) == 3 for run in r["losses"].values())
    assert "is not supported" not in err, err


def test_a_transformers_training_step_and_dropout_match_the_cpu(machine):
    """models_transformer.py: a causal encoder layer's three AdamW steps
    (attention's math path, then the fused kernel), dropout's mask and
    gradient, and the selections and sorts per type."""
    r, err, _ = run_scenario("transformer", machine)
    failed = [name for name, ok in r["checks"].items() if not ok]
    assert not failed, failed
    assert len(r["checks"]) == 158
    assert len(r["losses"]["npu"]) == 3
    assert r["losses"]["npu"][2][0] < r["losses"]["npu"][0][0]
    # (torch_npu itself says that isneginf, of the padding mask, runs on
    # the CPU.)
    assert "is not supported by the emulator" not in err, err


def test_private_formats_convert_and_keep_their_values(machine):
    r, err, _ = run_scenario("private_formats", machine)
    failed = [name for name, ok in r["checks"].items() if not ok]
    assert not failed, failed
    assert len(r["checks"]) == 5
    assert "is not supported" not in err, err


def test_an_operator_is_refused_and_reported_and_memory_still_works(machine):
    r, err, _ = run_scenario("operator", machine)
    assert r["outcome"].startswith("raised:")
    assert r["still_copies"] is True
    # Said at the first call (ACLMEM_EMU_UNSUPPORTED=warn, the default) ...
    assert "operator Histogram (libacl_op_compiler.so) is not supported" in err
    # ... and in the report at exit, with a count and where it came from.
    report = err[err.index("calls the emulator did not carry out"):]
    line = next(l for l in report.splitlines() if "operator Histogram" in l)
    assert line.split()[:2] == ["not", "supported"]
    assert "libtorch_npu.so" in line


def test_abort_policy_stops_at_the_first_unsupported_call(machine):
    r, err, code = run_scenario(
        "operator", machine, {"ACLMEM_EMU_UNSUPPORTED": "abort"}, check=False
    )
    assert r is None
    assert code != 0
    assert "ACLMEM_EMU_UNSUPPORTED=abort" in err


def test_the_sanitizer_sees_every_call_torch_npu_makes_by_name(machine, tmp_path):
    """torch_npu looks its calls up with dlsym on its own handle of
    libascendcl.so; `aclmem sanitize` audits those bindings, so the
    expandable segments' calls reach the checks and the timeline."""
    if not os.environ.get("ACLMEM_CLI"):
        pytest.skip("ACLMEM_CLI (the aclmem command) is not set")
    r, findings, trace, code = sanitize_scenario("expandable", machine, tmp_path, EXPANDABLE)
    assert code == 0, findings
    assert findings == []
    assert r["a_intact"] and r["b_intact"]
    calls = [t["call"] for t in trace]
    (_, grown), = r["segments2"]
    handles = grown // (20 * MIB)
    for call in ("aclrtMallocPhysical", "aclrtMapMem", "aclrtUnmapMem", "aclrtFreePhysical"):
        assert calls.count(call) == handles, (call, calls)
    reserves = [t["size"] for t in trace if t["call"] == "aclrtReserveMemAddress"]
    assert reserves[0] == 512, "torch_npu's probe, before any device is set"
    assert calls.count("aclrtReleaseMemAddress") == len(reserves) == 2
    # The recorded run, replayed on other machines: an A2 with CANN 8.0
    # runs it; the RC form of Atlas 200I A2 has no physical-memory API.
    out = subprocess.run(
        [os.environ["ACLMEM_CLI"], "replay", str(tmp_path / "trace.jsonl"),
         "--targets", "a2@8.0,200i-a2:rc"],
        capture_output=True, text=True, timeout=120,
    )
    assert out.returncode == 1, out.stdout + out.stderr
    lines = out.stdout.splitlines()
    assert lines[1].startswith("  a2@8.0") and lines[1].endswith("runs through"), out.stdout
    assert "fails at call 1 " in lines[2] and "aclrtReserveMemAddress(0x200) answers" in lines[2], out.stdout


def test_torch_npus_snapshot_joined_with_the_trace(machine, tmp_path):
    """`aclmem timeline --snapshot`: torch_npu's own snapshot (taken before
    a sleep) joined with the sanitizer's trace puts each tensor in the
    physical handle that held it, names the sleep that released that
    handle, and the tensor's line in the program."""
    import json

    # torch_npu writes its per-component usage CSV beside each snapshot,
    # in OOM_SNAPSHOT_PATH (the working directory without it).
    env = dict(EXPANDABLE, HISTORY_DIR=str(tmp_path), OOM_SNAPSHOT_PATH=str(tmp_path))
    r, findings, _, code = sanitize_scenario("joined", machine, tmp_path, env)
    assert code == 0, (findings, sanitize_scenario.stderr[-3000:])
    assert r["c_ok"]
    out = tmp_path / "page"
    subprocess.run(
        [os.environ["ACLMEM_CLI"], "timeline", str(tmp_path / "trace.jsonl"),
         "--snapshot", str(tmp_path / "snap.pickle"), "-o", str(out)],
        check=True, capture_output=True,
    )
    joined = json.loads((tmp_path / "page.blocks.json").read_text())
    held = {
        blk["address"]: m
        for m in joined["mappings"]
        for blk in m["blocks"]
        if blk["held_at_snapshot"]
    }
    for ptr in (r["a_ptr"], r["b_ptr"]):
        m = held[ptr]
        assert m["kind"] == "aclrtMapMem" and m["handle"] is not None
        assert m["released_by"] == "sleep 1", m
    # The wake maps new handles where a was: they list a's block too, not
    # as its holder at the snapshot.
    later = [
        m for m in joined["mappings"]
        if m["made_in"] == "after wake 1"
        and any(blk["address"] == r["a_ptr"] for blk in m["blocks"])
    ]
    assert later and all(
        not blk["held_at_snapshot"] for m in later for blk in m["blocks"]
    )
    made = [
        blk["made_at"] for m in joined["mappings"] for blk in m["blocks"]
        if blk["address"] == r["a_ptr"] and blk["held_at_snapshot"]
    ]
    assert made and "scenarios.py" in made[0], made
    page = (tmp_path / "page.blocks.html").read_text()
    assert "released by sleep 1" in page
    # The same trace as msMemScope's event file, read by Python's csv:
    # the documented columns; torch_npu's physical allocations, made in
    # its library, and their frees under shared allocation ids; the phases.
    import csv

    subprocess.run(
        [os.environ["ACLMEM_CLI"], "timeline", str(tmp_path / "trace.jsonl"),
         "--format", "msmemscope", "-o", str(tmp_path / "memscope")],
        check=True, capture_output=True,
    )
    with open(tmp_path / "memscope.csv", newline="") as f:
        rows = list(csv.reader(f))
    assert rows[0] == [
        "ID", "Event", "Event Type", "Name", "Timestamp(ns)", "Process Id",
        "Thread Id", "Device Id", "Ptr", "Attr", "Call Stack(Python)", "Call Stack(C)",
    ]
    assert all(len(r) == 12 for r in rows)
    created = [r for r in rows if r[1] == "MALLOC" and "alloc_type:create" in r[9]]
    freed = {r[9].split(",")[0] for r in rows if r[1] == "FREE"}
    assert created and all("libtorch_npu" in r[10] + r[11] for r in created), created[:3]
    assert any(r[9].split(",")[0] in freed for r in created)
    assert [r[3] for r in rows if r[1] == "MSTX"] == ["sleep", "wake"]


GIB = 1 << 30
PLAN = {"ACLMEM_EMU_OPS": "plan"}


def test_plan_mode_runs_a_model_larger_than_the_host(machine):
    """Plan mode (`ACLMEM_EMU_OPS=plan`): a 2-billion-parameter model's
    training step with Adam (34 GiB of weights, gradients and optimizer
    state on a machine of 64 GiB HBM) runs its real allocations with the
    host process's resident set staying small: no device page is backed."""
    env = dict(PLAN, ACLMEM_EMU_HBM="64GiB", PLAN_HIDDEN="16384", PLAN_LAYERS="8",
               PLAN_OPTIMIZER="adam")
    r, err, _ = run_scenario("plan_step", machine, env)
    assert r["params"] > 2_000_000_000
    assert r["max_allocated"] > 32 * GIB, r
    assert r["rss"] < 2 * GIB, r
    assert r["rss"] - r["rss_start"] < 512 * MIB, r
    # Values are not results: device reads give zeros.
    assert r["loss"] == 0.0
    if not os.environ.get("ACLMEM_EMU_QUIET"):
        assert "plan mode (ACLMEM_EMU_OPS=plan)" in err, err[-3000:]
        assert "operator Lerp (plan mode)" in err, "Adam's operators, accepted without a kernel"


def test_plan_mode_peak_memory_is_compute_modes(machine):
    """The same small step in compute mode and in plan mode: torch_npu's
    caching allocator sees the same allocations, so its statistics agree."""
    compute, _, _ = run_scenario("plan_step", machine + "-compute")
    plan, _, _ = run_scenario("plan_step", machine + "-plan", PLAN)
    for key in ("max_allocated", "allocated", "max_reserved"):
        assert plan[key] == compute[key], (key, plan, compute)
    assert compute["loss"] != 0.0 and plan["loss"] == 0.0


def test_the_sanitizer_names_plan_mode(machine, tmp_path):
    r, findings, trace, code = sanitize_scenario("plan_step", machine, tmp_path, PLAN)
    assert code == 0, sanitize_scenario.stderr[-3000:]
    assert r["loss"] == 0.0
    assert "aclmem-sanitizer: the emulated library runs in plan mode" in sanitize_scenario.stderr
    phases = [t["name"] for t in trace if t.get("call") == "phase"]
    assert any("plan mode (ACLMEM_EMU_OPS=plan)" in p for p in phases), phases


def test_fused_attention_and_a_transformers_step_on_it_match_the_cpu(machine):
    """models_attention.py: scaled_dot_product_attention on torch_npu's
    fused kernel (no mask, causal, boolean mask, grouped heads; three
    types, forward and backward), two encoder layers' AdamW steps, and the
    attention's dropout."""
    r, err, _ = run_scenario("fused_attention", machine)
    failed = [name for name, ok in r["checks"].items() if not ok]
    assert not failed, (failed, r["errors"], r["losses"])
    assert len(r["checks"]) == 58
    # (torch_npu's own "kernel [isneginf.out] is not supported by NPU"
    # names its CPU fallback, not the emulator.)
    assert "is not supported by the emulator" not in err, err


def test_complex_tensors_fill_copy_and_cast_as_on_the_cpu(machine):
    """models_data.py: complex64 and complex128 made, filled, copied
    (strided too) and cast on the device; arithmetic on them refused with
    the operator API's code."""
    r, err, _ = run_scenario("complex_data", machine)
    failed = [name for name, ok in r["checks"].items() if not ok]
    assert not failed, failed
    assert len(r["checks"]) == 24


def test_indexing_reductions_and_elementwise_math_match_the_cpu(machine):
    """models_ops_a.py: advanced indexing, max/min along a dim, repeat,
    gather, index_add, one_hot, roll, cumprod, prod, logsumexp, std, var
    and the elementwise math, forward and backward, against CPU torch."""
    r, err, _ = run_scenario("indexing_and_math", machine)
    failed = [name for name, ok in r["checks"].items() if not ok]
    assert not failed, failed
    # 43 float functions x (forward, gradient) and the second gradient of
    # index_add, atan2, logaddexp, logaddexp2 and masked_scatter, in
    # float32 and float16, and in bfloat16 but var's two (torch_npu refuses
    # them): 91 + 91 + 87; 4 index results (max, min, argmin, cummax) x 3
    # types; 7 integer functions x 2 types; float floor_divide, remainder
    # and fmod x 3 types; round, round to 2 decimals, trunc x 3 types; take
    # x 3 types; one_hot x 2; a 2-D mask, an int32 index; max/min ties.
    assert len(r["checks"]) == 269 + 12 + 14 + 9 + 9 + 3 + 2 + 2 + 2
    assert "is not supported by the emulator" not in err, err


def test_atbs_paged_attention_matches_its_definition_eagerly_and_in_an_updated_graph(machine):
    r, err, _ = run_scenario("atb_paged_attention", machine)
    failed = [name for name, ok in r["checks"].items() if not ok]
    assert not failed, (failed, r["errors"])
    # float16 and bfloat16 eagerly, two replays after graph.update, and the
    # refused reshape-and-cache.
    assert len(r["checks"]) == 5
    unsupported = [l for l in err.splitlines() if "is not supported" in l]
    assert len(unsupported) == 1 and "ReshapeAndCacheParam" in unsupported[0], unsupported


def test_operators_real_code_calls_match_the_cpu(machine):
    """models_gaps.py: logsigmoid and atanh forward and backward,
    aminmax, index_fill, unique, unique_consecutive, and 3-D max and
    average pooling forward and backward, against CPU torch."""
    r, err, _ = run_scenario("operator_gaps", machine)
    failed = [name for name, ok in r["checks"].items() if not ok]
    assert not failed, failed
    # logsigmoid and atanh x (forward, gradient) and atanh_ x 3 types;
    # aminmax's min and max x (whole, dim, dim kept) x 4 types;
    # index_fill_ on 3 dims and with a tensor value x 5 types, its
    # gradient x 3; unique (plain, values/inverse/counts, counts) x 1-D
    # and 2-D x 5 types; unique along dim 0 and 1 and unique_consecutive
    # flat, along dim 0 and 1, each (values, inverse, counts) x 5 types.
    # max_pool3d and avg_pool3d in 9 forms x (forward, gradient) x 3 types.
    assert len(r["checks"]) == 5 * 3 + 6 * 4 + 4 * 5 + 3 + 5 * 2 * 5 + 5 * 3 * 5 + 9 * 2 * 3
    assert "is not supported by the emulator" not in err, err
