"""torch_npu scenarios, one per process: `python scenarios.py NAME`.

Each checks what it can itself (asserts) and prints one JSON line that the
pytest suite checks too. Device memory as the machine sees it is asked
from a second process (`meminfo`), through the emulated libascendcl.so
directly, so that it is not torch_npu's own bookkeeping that is checked.
"""

import ctypes
import hashlib
import json
import os
import subprocess
import sys

MIB = 1 << 20


def meminfo(device=0):
    """(free, total) HBM bytes of `device`, asked by another process."""
    code = (
        "import ctypes, os, sys\n"
        "acl = ctypes.CDLL(os.environ['ACLMEM_ASCENDCL'])\n"
        "assert acl.aclInit(None) == 0\n"
        f"assert acl.aclrtSetDevice({device}) == 0\n"
        "free, total = ctypes.c_size_t(), ctypes.c_size_t()\n"
        "assert acl.aclrtGetMemInfo(1, ctypes.byref(free), ctypes.byref(total)) == 0\n"
        "print(free.value, total.value)\n"
        "acl.aclFinalize()\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    free, total = map(int, out.stdout.split())
    return free, total


def used(device=0):
    free, total = meminfo(device)
    return total - free


def digest(t):
    return hashlib.sha256(t.cpu().numpy().tobytes()).hexdigest()


def report(**values):
    print(json.dumps(values), flush=True)


def basics():
    import torch
    import torch_npu  # noqa: F401

    available, count = torch.npu.is_available(), torch.npu.device_count()
    torch.npu.set_device(1)
    current = torch.npu.current_device()
    checks = {}
    for dtype in (torch.float32, torch.float16, torch.int64, torch.uint8, torch.bfloat16):
        host = (torch.arange(3 * MIB // 8, dtype=torch.float64) * 1.5).to(dtype)
        dev = host.to("npu:1")
        assert dev.device.type == "npu" and dev.device.index == 1
        back = dev.cpu()
        checks[str(dtype)] = bool(torch.equal(host, back))
    big = torch.randint(0, 255, (96 * MIB,), dtype=torch.uint8)
    dev = big.npu()
    same_big = torch.equal(dev.cpu(), big)
    clone = dev.clone()  # device to device, on the stream (aclrtMemcpyAsync)
    torch.npu.synchronize()
    same_clone = torch.equal(clone.cpu(), big)
    other = dev.to("npu:2")  # device to device across devices
    same_other = torch.equal(other.cpu(), big)
    non_blocking = big.to("npu:1", non_blocking=True)
    torch.npu.synchronize()
    same_async = torch.equal(non_blocking.cpu(), big)
    report(
        available=available,
        count=count,
        current=current,
        dtypes=checks,
        big=same_big,
        clone=same_clone,
        other_device=same_other,
        other_index=other.device.index,
        non_blocking=same_async,
    )


def stats():
    import torch
    import torch_npu  # noqa: F401

    torch.npu.set_device(0)
    base_used = used()
    sizes = [1 * MIB, 3 * MIB, 5 * MIB + 123, 24 * MIB]
    # Filled on the host: filling on the device is an operator.
    tensors = [torch.ones(s, dtype=torch.uint8).npu() for s in sizes]
    allocated = torch.npu.memory_allocated()
    reserved = torch.npu.memory_reserved()
    stats = torch.npu.memory_stats()
    snapshot = torch.npu.memory_snapshot()
    segments_total = sum(s["total_size"] for s in snapshot)
    blocks = [b for s in snapshot for b in s["blocks"] if b["state"] == "active_allocated"]
    used_while_held = used()
    del tensors
    allocated_after_del = torch.npu.memory_allocated()
    reserved_after_del = torch.npu.memory_reserved()
    used_after_del = used()
    torch.npu.empty_cache()
    reserved_after_empty = torch.npu.memory_reserved()
    used_after_empty = used()
    report(
        requested=sum(sizes),
        allocated=allocated,
        reserved=reserved,
        stats_allocated=stats["allocated_bytes.all.current"],
        stats_reserved=stats["reserved_bytes.all.current"],
        stats_allocations=stats["allocation.all.current"],
        segments_total=segments_total,
        active_blocks=len(blocks),
        active_block_bytes=sum(b["size"] for b in blocks),
        base_used=base_used,
        used_while_held=used_while_held,
        allocated_after_del=allocated_after_del,
        reserved_after_del=reserved_after_del,
        used_after_del=used_after_del,
        reserved_after_empty=reserved_after_empty,
        used_after_empty=used_after_empty,
    )


def expandable():
    import torch
    import torch_npu  # noqa: F401

    assert "expandable_segments:True" in os.environ.get("PYTORCH_NPU_ALLOC_CONF", "")
    torch.npu.set_device(0)
    base_used = used()
    a = torch.full((30 * MIB,), 7, dtype=torch.uint8).npu()
    a_ptr = a.data_ptr()
    snap1 = torch.npu.memory_snapshot()
    used1 = used()
    b = torch.full((50 * MIB,), 9, dtype=torch.uint8).npu()
    snap2 = torch.npu.memory_snapshot()
    used2 = used()
    a_intact = bool((a.cpu() == 7).all())
    b_intact = bool((b.cpu() == 9).all())
    del a, b
    torch.npu.empty_cache()
    used3 = used()
    snap3 = torch.npu.memory_snapshot()
    report(
        base_used=base_used,
        segments1=[(s["address"], s["total_size"]) for s in snap1],
        segments2=[(s["address"], s["total_size"]) for s in snap2],
        segments3=[(s["address"], s["total_size"]) for s in snap3],
        a_ptr=a_ptr,
        used1=used1,
        used2=used2,
        used3=used3,
        a_intact=a_intact,
        b_intact=b_intact,
    )


def _child(queue, results):
    import torch
    import torch_npu  # noqa: F401

    torch.npu.set_device(0)
    t = queue.get()
    seen = (t.device.type, digest(t), t.numel())
    # Then write through the shared memory (a host-to-device copy into it).
    t[:4096].copy_(torch.full((4096,), 0x5A, dtype=torch.uint8))
    torch.npu.synchronize()
    results.put(seen)
    # The parent keeps the tensor until this process has answered.
    del t


def ipc():
    import torch
    import torch.multiprocessing as mp
    import torch_npu  # noqa: F401

    torch.npu.set_device(0)
    host = torch.randint(0, 255, (6 * MIB + 17,), dtype=torch.uint8)
    dev = host.npu()
    ctx = mp.get_context("spawn")
    queue, results = ctx.Queue(), ctx.Queue()
    child = ctx.Process(target=_child, args=(queue, results))
    child.start()
    queue.put(dev)
    kind, child_digest, numel = results.get(timeout=240)
    child.join(timeout=240)
    back = dev.cpu()
    written = bool((back[:4096] == 0x5A).all()) and torch.equal(back[4096:], host[4096:])
    report(
        written_by_child=written,
        expandable="expandable_segments:True" in os.environ.get("PYTORCH_NPU_ALLOC_CONF", ""),
        child_exit=child.exitcode,
        child_device=kind,
        numel=numel,
        same=child_digest == digest(host),
    )


def operator():
    import torch
    import torch_npu  # noqa: F401

    torch.npu.set_device(0)
    y = torch.ones(4, 4).npu()
    try:
        # An operator the emulator has no kernel for (Histogram).
        torch.histc(y, 4).cpu()
        outcome = "returned"
    except RuntimeError as e:
        outcome = "raised: " + str(e).splitlines()[0][:200]
    # The memory path still works after the refused operator.
    z = torch.arange(64, dtype=torch.int32)
    report(outcome=outcome, still_copies=bool(torch.equal(z.npu().cpu(), z)))


def matrix_products():
    """The matrix products torch_npu launches (MatMul with its transpose
    flags and bias, BatchMatMul, Dot) on the emulated NPU, and nn.Linear's
    forward and backward, each against the same computation on the CPU."""
    import torch
    import torch_npu  # noqa: F401

    torch.npu.set_device(0)
    torch.manual_seed(7)
    checks = {}

    def close(name, npu, cpu, tol):
        checks[name] = bool(torch.allclose(npu.cpu().float(), cpu.float(), rtol=tol, atol=tol))

    for dtype, tol in ((torch.float32, 1e-5), (torch.float16, 2e-2), (torch.bfloat16, 5e-2)):
        a, b = torch.randn(33, 17), torch.randn(17, 9)
        ah, bh = a.to(dtype), b.to(dtype)
        ref = (ah.float() @ bh.float())
        name = str(dtype).split(".")[1]
        close(f"mm_{name}", torch.mm(ah.npu(), bh.npu()), ref, tol)
        close(f"mm_t_{name}", ah.npu() @ bh.t().contiguous().npu().t(), ref, tol)
        x, y = torch.randn(3, 5, 4).to(dtype), torch.randn(3, 4, 6).to(dtype)
        close(f"bmm_{name}", torch.bmm(x.npu(), y.npu()), torch.bmm(x.float(), y.float()), tol)
    v, w = torch.randn(64), torch.randn(64)
    close("dot", torch.dot(v.npu(), w.npu()), torch.dot(v, w), 1e-4)
    # nn.Linear: forward (addmm with the bias), backward (mm of the gradient
    # with the weight and with the input, the bias's gradient a sum).
    lin = torch.nn.Linear(12, 5)
    x = torch.randn(8, 12)
    lin_npu = torch.nn.Linear(12, 5).npu()
    with torch.no_grad():
        lin_npu.weight.copy_(lin.weight)
        lin_npu.bias.copy_(lin.bias)
    out_cpu = lin(x)
    out_npu = lin_npu(x.npu())
    close("linear_forward", out_npu, out_cpu, 1e-5)
    out_cpu.sum().backward()
    out_npu.sum().backward()
    close("linear_weight_grad", lin_npu.weight.grad, lin.weight.grad, 1e-5)
    close("linear_bias_grad", lin_npu.bias.grad, lin.bias.grad, 1e-5)
    report(checks=checks)


def data_operators():
    """The data operators torch_npu launches through aclopCompileAndExecute
    when no operator library is installed: made, filled, cast, copied
    through strided views, compared and reduced on the emulated device, each
    checked against the same computation on the CPU."""
    import torch
    import torch_npu  # noqa: F401

    torch.npu.set_device(0)
    checks = {}
    torch.manual_seed(1234)
    a = torch.randn(256, 64, device="npu")
    torch.manual_seed(1234)
    b = torch.randn(256, 64, device="npu")
    c = torch.randn(256, 64, device="npu")
    host = a.cpu()
    checks["randn_repeats_for_a_seed"] = bool(torch.equal(host, b.cpu()))
    checks["randn_differs_after"] = not torch.equal(host, c.cpu())
    checks["randn_is_standard_normal"] = abs(host.mean().item()) < 0.05 and abs(host.std().item() - 1) < 0.05
    u = torch.rand(4096, device="npu").cpu()
    checks["rand_in_unit_interval"] = bool((u >= 0).all() and (u < 1).all() and abs(u.mean().item() - 0.5) < 0.05)
    dtypes = [torch.float32, torch.float16, torch.bfloat16, torch.int8, torch.int16, torch.int32,
              torch.int64, torch.uint8, torch.bool]
    checks["zeros_ones_full"] = all(
        torch.equal(torch.zeros(3, 5, dtype=t, device="npu").cpu(), torch.zeros(3, 5, dtype=t))
        and torch.equal(torch.ones(7, dtype=t, device="npu").cpu(), torch.ones(7, dtype=t))
        and torch.equal(torch.full((2, 3), 1, dtype=t, device="npu").cpu(), torch.full((2, 3), 1, dtype=t))
        for t in dtypes
    )
    src = (torch.arange(60, dtype=torch.float32) - 30) / 4
    dev = src.npu()
    checks["cast_every_dtype"] = all(torch.equal(dev.to(t).cpu(), src.to(t)) for t in dtypes)
    m = torch.arange(24, dtype=torch.float32).reshape(2, 3, 4)
    md = m.npu()
    checks["permute_contiguous"] = bool(torch.equal(md.permute(2, 0, 1).contiguous().cpu(), m.permute(2, 0, 1).contiguous()))
    checks["slice_contiguous"] = bool(torch.equal(md[:, 1:, ::2].contiguous().cpu(), m[:, 1:, ::2].contiguous()))
    into = torch.zeros(4, 3, 2, device="npu")
    into.copy_(md.permute(2, 1, 0))
    checks["copy_into_strided"] = bool(torch.equal(into.cpu(), m.permute(2, 1, 0)))
    dst = torch.zeros(6, 6, device="npu")
    dst[1:4, ::2] = 5.0
    ref = torch.zeros(6, 6)
    ref[1:4, ::2] = 5.0
    checks["fill_a_view"] = bool(torch.equal(dst.cpu(), ref))
    checks["arange"] = bool(torch.equal(torch.arange(3, 40, 4, device="npu").cpu(), torch.arange(3, 40, 4)))
    checks["add_sub_mul"] = bool(torch.equal(((md + 1) * 2 - md).cpu(), (m + 1) * 2 - m))
    checks["sum"] = bool(torch.equal(md.sum(dim=1).cpu(), m.sum(dim=1)) and md.sum().item() == m.sum().item())
    checks["compare"] = bool(torch.equal((md == m.npu()).all().cpu(), torch.tensor(True)))
    checks["allclose_as_on_the_cpu"] = all(
        torch.allclose(md, md + eps) == torch.allclose(m, m + eps) for eps in (1e-7, 1e-3, 1.0)
    ) and torch.allclose(md, md * (1 + 1e-7))
    report(checks=checks)


# What a scenario keeps alive until the interpreter exits.
_ALIVE_AT_EXIT = []


def sleep_wake():
    """vllm-ascend's sleep mode over torch_npu: weights live in a memory
    pool of a pluggable allocator whose C code maps physical memory under
    reserved addresses; sleeping backs the weights up to the host and frees
    the physical memory (the addresses stay reserved), waking maps new
    physical memory at the same addresses and restores them."""
    import torch
    import torch_npu  # noqa: F401

    lib_path = os.environ["CAMEM_ALLOCATOR"]
    camem = ctypes.CDLL(lib_path)
    torch.npu.set_device(0)
    allocator = torch.npu.memory.NPUPluggableAllocator(lib_path, "my_malloc", "my_free")
    pool = torch.npu.memory.MemPool(allocator._allocator)
    with torch.npu.memory.use_mem_pool(pool):
        weights = [
            torch.randint(0, 255, (n,), dtype=torch.uint8).npu()
            for n in (4 * MIB, 7 * MIB + 5, 16 * MIB)
        ]
    # The weights live until the interpreter exits, as a server's model
    # does: torch_npu's shutdown then finds the pool's memory in use.
    _ALIVE_AT_EXIT.append((pool, weights))
    expected = [digest(w) for w in weights]
    ptrs = [w.data_ptr() for w in weights]
    base = used()
    awake_used, asleep_used, restored = [], [], []
    # 30 cycles; fewer where a test only needs the pattern (under the
    # sanitizer).
    for _ in range(int(os.environ.get("SLEEP_WAKE_CYCLES", "30"))):
        backup = [w.cpu() for w in weights]
        assert camem.camem_sleep() == 0
        asleep_used.append(used())
        assert camem.camem_wake() == 0
        awake_used.append(used())
        for w, b in zip(weights, backup):
            w.copy_(b)
        restored.append([digest(w) for w in weights] == expected)
    report(
        mapped=camem.camem_mapped_bytes(),
        base_used=base,
        asleep_used=asleep_used,
        awake_used=awake_used,
        restored=restored,
        same_addresses=[w.data_ptr() for w in weights] == ptrs,
    )


def pinned_memory():
    """Host memory the device uses: torch_npu's expandable pinned memory
    (host-located physical memory mapped into device address space, copied
    from with HOST_TO_DEVICE; gated on a 25.5.0 driver) and host
    registration through torch_npu's runtime bindings (`_npurt`)."""
    import mmap

    import torch
    import torch_npu

    torch.npu.set_device(0)
    x = torch.arange(1 << 20, dtype=torch.float32).pin_memory()
    y = x.to("npu", non_blocking=True)
    torch.npu.synchronize()
    round_trip = bool(torch.equal(y.cpu(), x))
    pinned = x.is_pinned()
    del x, y
    torch.npu.synchronize()

    rt = torch_npu._C._npurt
    page = mmap.mmap(-1, 2 * mmap.PAGESIZE)
    addr = ctypes.addressof(ctypes.c_char.from_buffer(page))
    mapped = 0x2
    codes = {
        "register": rt.npuHostRegister(addr, mmap.PAGESIZE, mapped),
        "again": rt.npuHostRegister(addr, mmap.PAGESIZE, mapped),
        "no_flags": rt.npuHostRegister(addr + mmap.PAGESIZE, mmap.PAGESIZE, 0),
        "unregister": rt.npuHostUnregister(addr),
        "unregister_again": rt.npuHostUnregister(addr),
    }
    report(pinned=pinned, round_trip=round_trip, codes=codes)


def history():
    """torch_npu's own memory history and snapshots on the emulated NPU:
    `_record_memory_history`, `_snapshot`, `_dump_snapshot`, a memory
    pool's snapshot; and, with OOM_SNAPSHOT_ENABLE, the pickle and the
    per-component CSV torch_npu writes at an out-of-memory."""
    import pickle

    import torch
    import torch_npu  # noqa: F401

    torch.npu.set_device(0)
    torch.npu.memory._record_memory_history(max_entries=100000)
    a = torch.ones(4 * MIB, dtype=torch.uint8, device="npu")
    b = torch.zeros(8 * MIB, dtype=torch.uint8, device="npu")
    a_ptr, b_ptr = a.data_ptr(), b.data_ptr()
    del a
    snap = torch.npu.memory._snapshot()
    path = os.path.join(os.environ["HISTORY_DIR"], "snap.pickle")
    torch.npu.memory._dump_snapshot(path)
    with open(path, "rb") as f:
        dumped = pickle.load(f)
    pool = torch.npu.MemPool()
    with torch.npu.use_mem_pool(pool):
        c = torch.ones(2 * MIB, dtype=torch.uint8, device="npu")
    pool_segments = torch.npu.memory_snapshot(pool.id)
    actions = [e["action"] for e in snap["device_traces"][0]]
    blocks = [blk for seg in snap["segments"] for blk in seg["blocks"] if blk["state"] == "active_allocated"]
    # Out of memory, with torch_npu's OOM snapshot on.
    oom = None
    held = []
    try:
        while True:
            held.append(torch.empty(64 * MIB, dtype=torch.uint8, device="npu"))
    except torch.OutOfMemoryError as e:
        oom = str(e).splitlines()[0][:200]
    del held
    report(
        actions=sorted(set(actions)),
        alloc_addrs=[e["addr"] for e in snap["device_traces"][0] if e["action"] == "alloc"],
        a_ptr=a_ptr,
        b_ptr=b_ptr,
        b_active=any(blk["address"] == b_ptr for blk in blocks),
        a_active=any(blk["address"] == a_ptr for blk in blocks),
        dumped_segments=len(dumped["segments"]),
        snap_segments=len(snap["segments"]),
        pool_segments=len(pool_segments),
        pool_has_c=any(
            blk["address"] == c.data_ptr() for seg in pool_segments for blk in seg["blocks"]
        ),
        oom=oom,
        files=sorted(os.listdir(os.environ["HISTORY_DIR"])),
    )


def joined():
    """torch_npu's snapshot taken before a sleep, with its history, for
    `aclmem timeline --snapshot`: the sleep (marked for the sanitizer)
    frees the tensors and empties the cache, which unmaps their handles;
    the wake allocates again at the same addresses."""
    import ctypes

    import torch
    import torch_npu  # noqa: F401

    assert "expandable_segments:True" in os.environ.get("PYTORCH_NPU_ALLOC_CONF", "")
    phase = ctypes.CDLL(None).aclmem_sanitizer_phase
    phase.argtypes = [ctypes.c_char_p]
    torch.npu.set_device(0)
    torch.npu.memory._record_memory_history(max_entries=100000)
    a = torch.ones(24 * MIB, dtype=torch.uint8, device="npu")
    b = torch.zeros(8 * MIB, dtype=torch.uint8, device="npu")
    a_ptr, b_ptr = a.data_ptr(), b.data_ptr()
    torch.npu.memory._dump_snapshot(os.path.join(os.environ["HISTORY_DIR"], "snap.pickle"))
    phase(b"sleep")
    del a, b
    torch.npu.empty_cache()
    phase(b"wake")
    c = torch.ones(24 * MIB, dtype=torch.uint8, device="npu")
    report(a_ptr=a_ptr, b_ptr=b_ptr, c_ptr=c.data_ptr(), c_ok=bool((c.cpu() == 1).all()))


def convolutions():
    """The convolutions torch_npu launches (a 1-D one as a 2-D one of
    height 1, transposed ones with their input size), forward, against the
    same computation on the CPU: what torch_npu's own allocator tests run
    (nn.Conv1d, then nn.ConvTranspose1d)."""
    import torch
    import torch_npu  # noqa: F401

    torch.npu.set_device(0)
    torch.manual_seed(11)
    checks = {}

    def same(name, module, x, tol):
        npu = type(module)(**module._aclmem_args).npu()
        with torch.no_grad():
            npu.weight.copy_(module.weight)
            if module.bias is not None:
                npu.bias.copy_(module.bias)
            got = npu(x.npu()).cpu()
            want = module(x)
        checks[name] = bool(torch.allclose(got, want, rtol=tol, atol=tol)) and got.shape == want.shape

    def make(cls, **kw):
        m = cls(**kw)
        m._aclmem_args = kw
        return m

    conv1 = make(torch.nn.Conv1d, in_channels=64, out_channels=16, kernel_size=4, stride=4)
    deconv1 = make(torch.nn.ConvTranspose1d, in_channels=16, out_channels=64, kernel_size=4, stride=4)
    x = torch.randn(2, 64, 24)
    same("conv1d", conv1, x, 1e-4)
    same("conv_transpose1d", deconv1, conv1(x).detach(), 1e-4)
    conv2 = make(torch.nn.Conv2d, in_channels=6, out_channels=4, kernel_size=3, padding=1, stride=2, groups=2)
    same("conv2d", conv2, torch.randn(2, 6, 9, 7), 1e-4)
    deconv2 = make(torch.nn.ConvTranspose2d, in_channels=4, out_channels=6, kernel_size=3, stride=2, padding=1, output_padding=1)
    same("conv_transpose2d", deconv2, torch.randn(1, 4, 5, 4), 1e-4)
    report(checks=checks)


def graphs():
    """torch_npu's NPUGraph over ACL graph capture: a step of copies
    (pinned host to device, device to device) captured on a side stream,
    nothing run while captured, each replay on new input; memory allocated
    during capture in the graph's private pool, a second graph sharing a
    pool through graph_pool_handle(), both released by reset()."""
    import torch
    import torch_npu  # noqa: F401

    torch.npu.set_device(0)
    checks = {}
    s = torch.npu.Stream()
    with torch.npu.stream(s):
        torch.ones(64, device="npu").mul_(2)
    torch.npu.synchronize()

    host = torch.zeros(1024).pin_memory()
    a = torch.zeros(1024, device="npu")
    b = torch.zeros(1024, device="npu")
    g = torch.npu.NPUGraph()
    with torch.npu.graph(g, stream=s):
        a.copy_(host, non_blocking=True)
        b.copy_(a, non_blocking=True)
        inner = torch.empty(1 << 20, device="npu")
        inner[:1024].copy_(b, non_blocking=True)
    torch.npu.synchronize()
    checks["nothing ran while captured"] = bool((b.cpu() == 0).all())
    for i in range(1, 4):
        host.fill_(float(i))
        g.replay()
        torch.npu.synchronize()
        checks[f"replay {i}"] = bool((b.cpu() == i).all()) and bool((inner[:1024].cpu() == i).all())

    def pool_of(ptr):
        for seg in torch.npu.memory_snapshot():
            if seg["address"] <= ptr < seg["address"] + seg["total_size"]:
                return tuple(seg.get("segment_pool_id", (0, 0)))
        return None

    checks["captured allocation in the graph's pool"] = pool_of(inner.data_ptr()) == tuple(g.pool())
    checks["ordinary allocation in the default pool"] = pool_of(a.data_ptr()) == (0, 0)

    shared = torch.npu.graph_pool_handle()
    g1, g2 = torch.npu.NPUGraph(), torch.npu.NPUGraph()
    with torch.npu.graph(g1, stream=s, pool=shared):
        x = torch.empty(1 << 18, device="npu")
        x.copy_(torch.ones(1 << 18).pin_memory(), non_blocking=True)
    with torch.npu.graph(g2, stream=s, pool=shared):
        y = torch.empty(1 << 18, device="npu")
        y.copy_(x, non_blocking=True)
    checks["shared pool"] = pool_of(x.data_ptr()) == pool_of(y.data_ptr()) == tuple(shared)
    g1.replay()
    g2.replay()
    torch.npu.synchronize()
    checks["shared replay"] = bool((y.cpu() == 1).all())

    reserved = torch.npu.memory_reserved()
    del inner, x, y
    for graph in (g, g1, g2):
        graph.reset()
    torch.npu.empty_cache()
    checks["reset releases the graph pools"] = torch.npu.memory_reserved() < reserved
    report(checks=checks)


def graph_compute():
    """A step of compute captured in an NPUGraph (the operator API's add,
    mul, div, matmul and addmm, which torch_npu takes during capture) and
    replayed on new input: each replay's output equals the same step on
    the CPU."""
    import torch
    import torch_npu  # noqa: F401

    torch.npu.set_device(0)
    torch.manual_seed(5)
    checks = {}
    w1, b1 = torch.randn(16, 32), torch.randn(32)
    w2 = torch.randn(32, 8)

    def step(x, w1, b1, w2):
        h = torch.addmm(b1, x, w1)
        h = h * 0.5 + h / 4.0
        return (h @ w2) - 1.0

    x = torch.randn(4, 16)
    dx, dw1, db1, dw2 = (t.npu() for t in (x, w1, b1, w2))
    s = torch.npu.Stream()
    with torch.npu.stream(s):
        step(dx, dw1, db1, dw2)
    torch.npu.synchronize()
    g = torch.npu.NPUGraph()
    with torch.npu.graph(g, stream=s):
        out = step(dx, dw1, db1, dw2)
    for i in range(3):
        x = torch.randn(4, 16)
        dx.copy_(x)
        g.replay()
        torch.npu.synchronize()
        checks[f"replay {i}"] = bool(torch.allclose(out.cpu(), step(x, w1, b1, w2), rtol=1e-4, atol=1e-4))
    report(checks=checks)


def _compare(checks, torch):
    """A check recorder: NPU values against CPU ones, within a tolerance."""

    def close(name, npu, cpu, tol):
        npu, cpu = npu.detach().cpu().float(), cpu.detach().float()
        checks[name] = npu.shape == cpu.shape and bool(torch.allclose(npu, cpu, rtol=tol, atol=tol))

    return close


def _forward_backward(fn, x, *extra):
    """fn(x, *extra) and the gradient of x (and of each extra tensor that
    wants one) for a fixed upstream gradient."""
    import torch

    x = x.detach().clone().requires_grad_()
    extra = [e.detach().clone().requires_grad_() if e.is_floating_point() else e for e in extra]
    y = fn(x, *extra)
    torch.manual_seed(5)
    g = torch.randn(y.shape).to(y.dtype).to(y.device)
    y.backward(g)
    return [y, x.grad] + [e.grad for e in extra if e.is_floating_point()]


def activations():
    """The activations, softmax and log-softmax torch_npu launches (Relu,
    Gelu, Swish, Sigmoid, Tanh, SoftplusV2, ThresholdV2D, SoftmaxV2,
    LogSoftmaxV2, LeakyRelu, Elu for elu and selu, Mish) and their gradients, forward and backward in float32,
    float16 and bfloat16, against the same computation on the CPU (float32
    for the half types)."""
    import torch
    import torch.nn.functional as F
    import torch_npu  # noqa: F401

    torch.npu.set_device(0)
    torch.manual_seed(3)
    checks = {}
    close = _compare(checks, torch)
    fns = {
        "relu": F.relu,
        # The NPU's Gelu is the tanh form, whatever `approximate` says.
        "gelu": lambda t: F.gelu(t, approximate="tanh"),
        "silu": F.silu,
        "sigmoid": torch.sigmoid,
        "tanh": torch.tanh,
        "softplus": lambda t: F.softplus(t, beta=2.0, threshold=3.0),
        "threshold": lambda t: F.threshold(t, 0.25, -1.0),
        "softmax": lambda t: F.softmax(t, dim=1),
        "log_softmax": lambda t: F.log_softmax(t, dim=-1),
        "leaky_relu": lambda t: F.leaky_relu(t, 0.1),
        "elu": lambda t: F.elu(t, 0.7),
        "selu": F.selu,
        "mish": F.mish,
    }
    x = torch.randn(6, 5, 7) * 3
    for dtype, tol in ((torch.float32, 1e-5), (torch.float16, 1e-2), (torch.bfloat16, 5e-2)):
        kind = str(dtype).split(".")[1]
        xd = x.to(dtype)
        for name, fn in fns.items():
            npu = _forward_backward(fn, xd.npu())
            cpu = _forward_backward(fn, xd.float())
            close(f"{name}_{kind}", npu[0], cpu[0], tol)
            close(f"{name}_grad_{kind}", npu[1], cpu[1], tol)
    # GELU's default (erf) form on the CPU is within 1e-3 of the NPU's.
    close("gelu_default_erf", F.gelu(x.npu()), F.gelu(x), 1e-3)
    report(checks=checks)


def training_operators():
    """Normalisation, convolution gradients, embeddings and the
    cross-entropy loss on the emulated NPU, forward and backward, against
    the CPU: LayerNorm/LayerNormGrad, RmsNorm, Conv2DBackpropInput/Filter
    (nn.Conv2d, and nn.Conv1d as a 2-D convolution of height 1), GatherV2
    and EmbeddingDenseGrad (nn.Embedding), and NLLLoss/NLLLossGrad after
    LogSoftmaxV2 (F.cross_entropy); then a small model's training step."""
    import torch
    import torch.nn.functional as F
    import torch_npu

    torch.npu.set_device(0)
    torch.manual_seed(13)
    checks = {}
    close = _compare(checks, torch)

    def both(name, module_fn, x, tol, inputs_grad=True):
        torch.manual_seed(17)
        cpu = module_fn()
        npu = module_fn().npu()
        npu.load_state_dict(cpu.state_dict())
        xc = x.clone().requires_grad_(inputs_grad)
        xn = x.npu().requires_grad_(inputs_grad)
        yc, yn = cpu(xc), npu(xn)
        g = torch.randn(yc.shape)
        yc.backward(g)
        yn.backward(g.npu())
        close(f"{name}_forward", yn, yc, tol)
        if inputs_grad:
            close(f"{name}_input_grad", xn.grad, xc.grad, tol)
        for (pn, p), (_, q) in zip(cpu.named_parameters(), npu.named_parameters()):
            close(f"{name}_{pn}_grad", q.grad, p.grad, tol)

    both("layer_norm", lambda: torch.nn.LayerNorm([5, 6]), torch.randn(4, 5, 6) * 2 + 1, 1e-4)
    both("conv2d", lambda: torch.nn.Conv2d(4, 6, 3, stride=2, padding=1, groups=2), torch.randn(2, 4, 9, 8), 1e-4)
    both("conv1d", lambda: torch.nn.Conv1d(3, 5, 4, dilation=2, padding=3), torch.randn(2, 3, 16), 1e-4)
    both("embedding", lambda: torch.nn.Embedding(11, 4, padding_idx=2),
         torch.tensor([[1, 2, 3, 1], [10, 0, 2, 1]]), 1e-5, inputs_grad=False)
    # fp16 layer norm and conv: accumulated in fp32, rounded once.
    both("layer_norm_fp16", lambda: torch.nn.LayerNorm(8).half(), torch.randn(3, 8).half(), 1e-2)
    both("conv2d_bf16", lambda: torch.nn.Conv2d(2, 3, 3).bfloat16(), torch.randn(1, 2, 5, 5).bfloat16(), 5e-2)

    logits, target = torch.randn(6, 5), torch.tensor([0, 4, 2, 2, 1, 3])
    weight = torch.rand(5) + 0.5
    for kw in ({}, {"reduction": "sum"}, {"reduction": "none", "weight": weight}, {"ignore_index": 2}):
        name = "cross_entropy_" + "_".join(kw) if kw else "cross_entropy"
        fn = lambda t, k=kw: F.cross_entropy(t, target.to(t.device), **{
            a: (b.to(t.device) if torch.is_tensor(b) else b) for a, b in k.items()})
        npu, cpu = _forward_backward(fn, logits.npu()), _forward_backward(fn, logits)
        close(name, npu[0], cpu[0], 1e-5)
        close(name + "_grad", npu[1], cpu[1], 1e-5)

    # RMS normalisation (torch_npu's own operator), forward.
    x, gamma = torch.randn(3, 4, 8), torch.rand(8) + 0.5
    y, rstd = torch_npu.npu_rms_norm(x.npu(), gamma.npu(), epsilon=1e-6)
    want = x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + 1e-6)
    close("rms_norm", y, want * gamma, 1e-5)
    close("rms_norm_rstd", rstd, torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + 1e-6), 1e-5)

    # A small model's training step: embedding, layer norm, linear, GELU,
    # a 1-D convolution, softmax attention weights, cross-entropy; SGD.
    class Tiny(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.emb = torch.nn.Embedding(20, 16)
            self.norm = torch.nn.LayerNorm(16)
            self.conv = torch.nn.Conv1d(16, 16, 3, padding=1)
            self.fc1 = torch.nn.Linear(16, 32)
            self.fc2 = torch.nn.Linear(32, 20)

        def forward(self, tokens):
            h = self.norm(self.emb(tokens))
            h = h + self.conv(h.transpose(1, 2)).transpose(1, 2)
            # bmm, not `@`: matmul's backward on 3-D tensors is aclnn-only
            # in torch_npu (no operator fallback).
            att = torch.softmax(torch.bmm(h, h.transpose(1, 2)) / 4.0, dim=-1)
            h = torch.bmm(att, h)
            return self.fc2(F.gelu(self.fc1(h), approximate="tanh"))

    torch.manual_seed(23)
    cpu_model = Tiny()
    npu_model = Tiny().npu()
    npu_model.load_state_dict(cpu_model.state_dict())
    tokens = torch.randint(0, 20, (2, 7))
    labels = torch.randint(0, 20, (2 * 7,))
    losses = {}
    for tag, model, dev in (("cpu", cpu_model, "cpu"), ("npu", npu_model, "npu")):
        # foreach=False: the foreach kernels are aclnn-only in torch_npu
        # with jit compile disabled.
        opt = torch.optim.SGD(model.parameters(), lr=0.1, foreach=False)
        step = []
        for _ in range(2):
            opt.zero_grad()
            loss = F.cross_entropy(model(tokens.to(dev)).reshape(-1, 20), labels.to(dev))
            loss.backward()
            opt.step()
            step.append(loss.item())
        losses[tag] = step
    checks["model_losses"] = all(abs(a - b) < 1e-4 for a, b in zip(losses["cpu"], losses["npu"]))
    for (name, p), (_, q) in zip(cpu_model.named_parameters(), npu_model.named_parameters()):
        close(f"model_{name}_after_step", q, p, 1e-4)
    report(checks=checks, losses=losses)


def private_formats():
    """The NPU's private formats (torch_npu with allow_internal_format):
    npu_format_cast to FRACTAL_NZ, NC1HWC0 and FRACTAL_Z and back, the
    tensors' values unchanged and their storage the padded size torch_npu
    computes; a half-precision batched product whose output torch_npu
    keeps in FRACTAL_NZ."""
    import torch
    import torch_npu

    torch.npu.set_device(0)
    torch.npu.config.allow_internal_format = True
    torch.manual_seed(3)
    checks = {}
    for fmt, base, t in [
        (29, 2, torch.randn(3, 33, 20)),
        (29, 2, torch.randn(40, 70).half()),
        (3, 0, torch.randn(2, 19, 3, 2)),
        (4, 0, torch.randn(17, 18, 2, 3)),
    ]:
        name = f"{fmt}_{'x'.join(map(str, t.shape))}_{str(t.dtype)[6:]}"
        y = torch_npu.npu_format_cast(t.npu(), fmt)
        back = torch_npu.npu_format_cast(y, base)
        checks[name] = (
            int(torch_npu.get_npu_format(y)) == fmt
            and bool(torch.equal(y.cpu(), t))
            and bool(torch.equal(back.cpu(), t))
            and int(torch_npu.get_npu_format(back)) == base
        )
    a, b = torch.randn(8, 300, 100).half(), torch.randn(8, 100, 300).half()
    got = torch.bmm(a.npu(), b.npu()).cpu().float()
    checks["bmm_float16"] = bool(torch.allclose(got, torch.bmm(a.float(), b.float()), rtol=1e-2, atol=1e-1))
    report(checks=checks)
def vm_rss():
    """This process's resident set (bytes), from /proc/self/status."""
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) * 1024
    return 0


def plan_step():
    """A model's training step (a stack of nn.Linear, forward, backward,
    an optimizer step), as large as PLAN_HIDDEN x PLAN_LAYERS say: in plan
    mode (ACLMEM_EMU_OPS=plan) a model whose weights and optimizer state are
    tens of GiB runs on a small host; its peak is torch_npu's caching
    allocator's own, as in compute mode."""
    import torch
    import torch_npu  # noqa: F401

    hidden = int(os.environ.get("PLAN_HIDDEN", "256"))
    layers = int(os.environ.get("PLAN_LAYERS", "2"))
    batch = int(os.environ.get("PLAN_BATCH", "8"))
    adam = os.environ.get("PLAN_OPTIMIZER", "sgd") == "adam"
    torch.npu.set_device(0)
    rss_start = vm_rss()
    # Parameters made on the device without an initialisation (no host
    # copy of them); the input a fill.
    model = torch.nn.Sequential(*[
        torch.nn.utils.skip_init(torch.nn.Linear, hidden, hidden, device="npu")
        for _ in range(layers)
    ])
    params = sum(p.numel() for p in model.parameters())
    opt = (torch.optim.Adam(model.parameters(), lr=1e-3, foreach=False) if adam
           else torch.optim.SGD(model.parameters(), lr=1e-2, foreach=False))
    x = torch.full((batch, hidden), 0.01, device="npu")
    for _ in range(2):
        opt.zero_grad(set_to_none=True)
        loss = model(x).sum()
        loss.backward()
        opt.step()
    torch.npu.synchronize()
    report(
        params=params,
        max_allocated=torch.npu.max_memory_allocated(),
        allocated=torch.npu.memory_allocated(),
        max_reserved=torch.npu.max_memory_reserved(),
        loss=float(loss.item()),
        rss=vm_rss(),
        rss_start=rss_start,
    )


def graph_freed_input():
    """A classic graph bug under torch_npu: a step captured reading an
    input that lives outside the graph's pool, the input then freed (and
    the cache emptied, so the segment goes back to the runtime) while the
    graph is alive, and the graph replayed."""
    import torch
    import torch_npu  # noqa: F401

    torch.npu.set_device(0)
    s = torch.npu.Stream()
    src = torch.ones(1 << 20, device="npu")
    torch.npu.synchronize()
    g = torch.npu.NPUGraph()
    with torch.npu.graph(g, stream=s):
        dst = torch.empty(1 << 20, device="npu")
        dst.copy_(src, non_blocking=True)
    del src
    torch.npu.empty_cache()
    # The replay reads memory the process gave back: the emulated runtime
    # refuses it (an NPU would read whatever is there now).
    try:
        g.replay()
        torch.npu.synchronize()
        refused = False
    except RuntimeError:
        refused = True
    g.reset()
    report(replayed=True, refused=refused)


def graph_conditionals():
    """torch.cond captured in an NPUGraph as a conditional node (torch_npu's
    control-flow dispatch mode: the predicate copied into the node's
    condition value, each branch a body of its own): every replay runs the
    branch the predicate holds then, on the input of then, as the CPU
    computes it; and the elementwise math and reductions of the operator
    API eagerly against the CPU."""
    import torch
    import torch_npu  # noqa: F401
    from torch_npu.npu._npugraph_conditional_nodes import (
        NPUGraphCaptureControlFlowOpDispatchMode,
    )

    torch.npu.set_device(0)
    torch.manual_seed(7)
    checks = {}
    close = _compare(checks, torch)

    def true_fn(x):
        return (x.sin() * 2.0 + x.exp()).sum(dim=1)

    def false_fn(x):
        return (x.cos() - x.abs().sqrt()).mean(dim=1)

    def fn(x, pred):
        return torch.cond(pred, true_fn, false_fn, (x,))

    x = torch.randn(3, 5, device="npu")
    pred = torch.tensor(True, device="npu")
    s = torch.npu.Stream()
    g = torch.npu.NPUGraph()
    with torch.npu.graph(g, stream=s), NPUGraphCaptureControlFlowOpDispatchMode():
        out = fn(x, pred)
    torch.npu.synchronize()
    for i, flag in enumerate([True, False, True, False]):
        cpu_x = torch.randn(3, 5)
        x.copy_(cpu_x)
        pred.fill_(flag)
        g.replay()
        torch.npu.synchronize()
        want = true_fn(cpu_x) if flag else false_fn(cpu_x)
        close(f"replay {i} ({flag})", out, want, 1e-4)

    a = torch.rand(4, 6) + 0.5
    b = torch.randn(4, 6)
    da, db = a.npu(), b.npu()
    for name, f in [
        ("exp", torch.exp),
        ("log", torch.log),
        ("sqrt", torch.sqrt),
        ("rsqrt", torch.rsqrt),
        ("reciprocal", torch.reciprocal),
        ("sin", torch.sin),
        ("cos", torch.cos),
        ("floor", torch.floor),
    ]:
        close(name, f(da), f(a), 1e-5)
    close("logical_not", torch.logical_not(db > 0), torch.logical_not(b > 0), 0)
    close("sum", db.sum(), b.sum(), 1e-5)
    close("sum dim keepdim", db.sum(dim=0, keepdim=True), b.sum(dim=0, keepdim=True), 1e-5)
    close("mean dims", db.mean(dim=(0, 1)), b.mean(dim=(0, 1)), 1e-5)
    close("max", db.max(), b.max(), 0)
    close("min", db.min(), b.min(), 0)
    close("amax", torch.amax(db, dim=-1), torch.amax(b, dim=-1), 0)
    close("amin keepdim", torch.amin(db, dim=0, keepdim=True), torch.amin(b, dim=0, keepdim=True), 0)
    t = db.clone()
    t.exp_()
    close("exp_", t, b.exp(), 1e-5)
    report(checks=checks)


def optimizer_steps():
    """The optimizers' steps and clip_grad_norm_ on the emulated NPU against
    the CPU: the aclnnForeach* list operators (torch's multi-tensor SGD,
    Adam and AdamW, the default), their per-tensor forms (foreach=False:
    Lerp, aclnnInplaceAddcmul/Addcdiv), the norms (aclnnForeachNorm,
    aclnnLinalgVectorNorm, LpNormReduceV2/LpNormUpdateV2) and clamping
    (ClipByValueV2), each in fp32, fp16 and bf16; then three steps of a
    small model per optimizer, losses and parameters compared."""
    import torch
    import torch_npu

    torch.npu.set_device(0)
    torch.manual_seed(29)
    checks = {}
    close = _compare(checks, torch)

    for dtype, tol in ((torch.float32, 1e-5), (torch.float16, 2e-3), (torch.bfloat16, 2e-2)):
        tag = str(dtype).split(".")[1]
        a, b, c = (torch.randn(3, 5).to(dtype) for _ in range(3))
        c = c.abs() + 0.5
        na, nb, nc = a.npu(), b.npu(), c.npu()
        close(f"lerp_{tag}", torch.lerp(na, nb, 0.3), torch.lerp(a, b, 0.3), tol)
        close(f"addcmul_{tag}", torch.addcmul(na, nb, nc, value=-0.5), torch.addcmul(a, b, c, value=-0.5), tol)
        close(f"addcdiv_{tag}", torch.addcdiv(na, nb, nc, value=0.25), torch.addcdiv(a, b, c, value=0.25), tol)
        close(f"clamp_{tag}", torch.clamp(na, min=-0.5, max=0.7), torch.clamp(a, min=-0.5, max=0.7), tol)
        close(f"maximum_{tag}", torch.maximum(na, nb), torch.maximum(a, b), 0)
        for ord in (1, 2, float("inf")):
            close(f"vector_norm_{ord}_{tag}", torch.linalg.vector_norm(na, ord),
                  torch.linalg.vector_norm(a, ord), tol)
        close(f"vector_norm_dim_{tag}", torch.linalg.vector_norm(na, 2, dim=1, keepdim=True),
              torch.linalg.vector_norm(a, 2, dim=1, keepdim=True), tol)
        # The foreach family on lists of two shapes.
        xs = [torch.randn(4, 3).to(dtype), torch.randn(7).to(dtype)]
        ys = [torch.randn(4, 3).to(dtype), torch.randn(7).to(dtype)]
        zs = [y.abs() + 0.5 for y in ys]
        nxs, nys, nzs = ([t.npu() for t in l] for l in (xs, ys, zs))
        steps = (
            ("mul_scalar", lambda x, y, z: torch._foreach_mul_(x, 0.5)),
            ("add_list", lambda x, y, z: torch._foreach_add_(x, y, alpha=-0.1)),
            ("lerp", lambda x, y, z: torch._foreach_lerp_(x, y, 0.1)),
            ("addcmul", lambda x, y, z: torch._foreach_addcmul_(x, y, z, 0.2)),
            ("addcdiv", lambda x, y, z: torch._foreach_addcdiv_(x, y, z, -0.3)),
            ("add_scalar", lambda x, y, z: torch._foreach_add_(x, 1e-3)),
            ("sqrt", lambda x, y, z: torch._foreach_sqrt_(z)),
        )
        for name, fn in steps:
            fn(nxs, nys, nzs)
            fn(xs, ys, zs)
            for i, (n, c_) in enumerate(zip(nxs + nzs, xs + zs)):
                close(f"foreach_{name}_{tag}_{i}", n, c_, tol * 4)
        for i, (n, c_) in enumerate(zip(torch._foreach_norm(nxs), torch._foreach_norm(xs))):
            close(f"foreach_norm_{tag}_{i}", n, c_, tol)

    def model():
        return torch.nn.Sequential(torch.nn.Linear(8, 16), torch.nn.Tanh(), torch.nn.LayerNorm(16),
                                   torch.nn.Linear(16, 4))

    losses = {}
    torch.manual_seed(31)
    batches = [(torch.randn(5, 8), torch.randint(0, 4, (5,))) for _ in range(3)]
    for kind, kw in (("SGD", {"lr": 0.1}), ("SGD", {"lr": 0.1, "momentum": 0.9, "weight_decay": 1e-2}),
                     ("Adam", {"lr": 1e-2}), ("AdamW", {"lr": 1e-2})):
        for foreach in (None, False):
            name = f"{kind}{'_momentum' if 'momentum' in kw else ''}{'_single' if foreach is False else ''}"
            torch.manual_seed(37)
            cpu = model()
            npu = model().npu()
            npu.load_state_dict(cpu.state_dict())
            run = {}
            for tag, m, dev in (("cpu", cpu, "cpu"), ("npu", npu, "npu")):
                opt = getattr(torch.optim, kind)(m.parameters(), foreach=foreach, **kw)
                step = []
                for x, y in batches:
                    opt.zero_grad()
                    loss = torch.nn.functional.cross_entropy(m(x.to(dev)), y.to(dev))
                    loss.backward()
                    norm = torch.nn.utils.clip_grad_norm_(m.parameters(), 0.5)
                    opt.step()
                    step.append((loss.item(), norm.item()))
                run[tag] = step
            losses[name] = run
            checks[f"{name}_losses"] = all(abs(a[0] - b[0]) < 1e-5 for a, b in zip(run["cpu"], run["npu"]))
            checks[f"{name}_clip_norms"] = all(abs(a[1] - b[1]) < 1e-5 * (1 + b[1])
                                               for a, b in zip(run["cpu"], run["npu"]))
            diff = max(float((q.detach().cpu() - p.detach()).abs().max())
                       for p, q in zip(cpu.parameters(), npu.parameters()))
            checks[f"{name}_params"] = diff < 1e-5
            losses[name]["max_param_diff"] = diff
    report(checks=checks, losses=losses)


from models_transformer import *  # noqa
from models_attention import *  # noqa
from models_cnn import *  # noqa
from models_data import *  # noqa
from models_ops_a import *  # noqa
from models_ops_b import *  # noqa
from models_atb import *  # noqa
from models_gaps import *  # noqa

if __name__ == "__main__":
    globals()[sys.argv[1]]()
