"""Multi-rank torch_npu scenarios over the emulated HCCL, one rank per
process as `torchrun` starts them. `distributed.py SCENARIO` prints one JSON
line per rank: what it checked and what did not hold (test_distributed.py
asserts on them)."""

import json
import os
import sys
import time

import torch
import torch_npu  # noqa: F401  (registers the NPU and the hccl backend)
import torch.distributed as dist

RANK = int(os.environ["RANK"])
WORLD = int(os.environ["WORLD_SIZE"])
LOCAL = int(os.environ["LOCAL_RANK"])
MIB = 1 << 20


class Checks:
    def __init__(self):
        self.count, self.fails = 0, []

    def equal(self, name, got, want):
        self.count += 1
        got, want = got.cpu(), want.cpu()
        if got.dtype != want.dtype or got.shape != want.shape or not torch.equal(got, want):
            self.fails.append(f"{name}: {got.flatten().tolist()[:6]} want {want.flatten().tolist()[:6]}")

    def attempt(self, name, fn):
        try:
            fn()
        except Exception as e:  # the failure is the finding
            self.fails.append(f"{name}: {type(e).__name__}: {str(e)[:400]}")


def val(r, dtype, n=6):
    """What rank r contributes: small integers, exact in every type."""
    return (torch.arange(n, dtype=torch.int64) % 3 + 1 + r).to(dtype)


REDUCTIONS = {
    dist.ReduceOp.SUM: lambda t: t.sum(0),
    dist.ReduceOp.PRODUCT: lambda t: t.prod(0),
    dist.ReduceOp.MAX: lambda t: t.max(0).values,
    dist.ReduceOp.MIN: lambda t: t.min(0).values,
}
# Every type torch_npu reduces with HCCL (uint8 is cast to int32 first,
# by an operator).
TYPES = [torch.float32, torch.float16, torch.bfloat16, torch.int32, torch.int64,
         torch.int8, torch.int16, torch.uint8]


def collectives(c):
    for dtype in TYPES:
        for op, f in REDUCTIONS.items():
            def one():
                x = val(RANK, dtype).npu()
                dist.all_reduce(x, op=op)
                want = f(torch.stack([val(r, dtype) for r in range(WORLD)]).to(torch.float64)).to(dtype)
                c.equal(f"all_reduce {dtype} {op}", x, want)
            c.attempt(f"all_reduce {dtype} {op}", one)
    f32 = torch.float32

    def broadcast():
        x = val(RANK, f32).npu()
        dist.broadcast(x, src=WORLD - 1)
        c.equal("broadcast", x, val(WORLD - 1, f32))

    def all_gather():
        outs = [torch.empty(6, device="npu") for _ in range(WORLD)]
        dist.all_gather(outs, val(RANK, f32).npu())
        for r in range(WORLD):
            c.equal(f"all_gather {r}", outs[r], val(r, f32))
        o = torch.empty(6 * WORLD, device="npu")
        dist.all_gather_into_tensor(o, val(RANK, f32).npu())
        c.equal("all_gather_into_tensor", o, torch.cat([val(r, f32) for r in range(WORLD)]))

    def reduce_scatter():
        inp = torch.cat([val(RANK + i, f32) for i in range(WORLD)]).npu()
        o = torch.empty(6, device="npu")
        dist.reduce_scatter_tensor(o, inp)
        c.equal("reduce_scatter_tensor", o, sum(val(r + RANK, f32) for r in range(WORLD)))

    def reduce():
        x = val(RANK, f32).npu()
        dist.reduce(x, dst=0, op=dist.ReduceOp.MAX)
        if RANK == 0:
            c.equal("reduce", x, val(WORLD - 1, f32))

    def scatter():
        o = torch.empty(6, device="npu")
        dist.scatter(o, [val(10 + r, f32).npu() for r in range(WORLD)] if RANK == 0 else None, src=0)
        c.equal("scatter", o, val(10 + RANK, f32))

    def gather():
        outs = [torch.empty(6, device="npu") for _ in range(WORLD)] if RANK == 0 else None
        dist.gather(val(RANK, f32).npu(), outs, dst=0)
        if RANK == 0:
            for r in range(WORLD):
                c.equal(f"gather {r}", outs[r], val(r, f32))

    def all_to_all():
        inp = torch.arange(WORLD * 2, dtype=f32).npu() + 100 * RANK
        o = torch.empty(WORLD * 2, device="npu")
        dist.all_to_all_single(o, inp)
        c.equal("all_to_all_single", o, torch.cat(
            [torch.arange(2 * RANK, 2 * RANK + 2, dtype=f32) + 100 * r for r in range(WORLD)]))
        # Uneven: rank r sends j + 1 elements to rank j.
        inp = torch.arange(sum(j + 1 for j in range(WORLD)), dtype=f32).npu() + 100 * RANK
        o = torch.empty((RANK + 1) * WORLD, device="npu")
        dist.all_to_all_single(o, inp, output_split_sizes=[RANK + 1] * WORLD,
                               input_split_sizes=[j + 1 for j in range(WORLD)])
        start = sum(j + 1 for j in range(RANK))
        c.equal("all_to_all_single uneven", o, torch.cat(
            [torch.arange(start, start + RANK + 1, dtype=f32) + 100 * r for r in range(WORLD)]))

    def point_to_point():
        nxt, prv = (RANK + 1) % WORLD, (RANK - 1) % WORLD
        x = val(RANK, f32).npu()
        o = torch.empty(6, device="npu")
        if RANK % 2 == 0:
            dist.send(x, nxt)
            dist.recv(o, prv)
        else:
            dist.recv(o, prv)
            dist.send(x, nxt)
        c.equal("send/recv", o, val(prv, f32))
        o2 = torch.empty(6, device="npu")
        for req in dist.batch_isend_irecv([dist.P2POp(dist.isend, x, nxt), dist.P2POp(dist.irecv, o2, prv)]):
            req.wait()
        c.equal("batch_isend_irecv", o2, val(prv, f32))

    for name, fn in [("broadcast", broadcast), ("all_gather", all_gather),
                     ("reduce_scatter", reduce_scatter), ("reduce", reduce), ("scatter", scatter),
                     ("gather", gather), ("all_to_all", all_to_all), ("p2p", point_to_point),
                     ("barrier", dist.barrier)]:
        c.attempt(name, fn)
    torch.npu.synchronize()
    return {}


def weight_sync(c):
    """verl's actor -> rollout resharding, three cycles: each rank's shard
    all-gathered into a rollout buffer made on wake, compared byte for
    byte, then freed; the device's free memory comes back every cycle."""
    n = 8 * MIB  # bf16 elements per shard: 16 MiB
    g = torch.Generator().manual_seed(1234 + RANK)
    shard_host = torch.randn(n, generator=g).to(torch.bfloat16)
    shard = shard_host.npu()
    everyone = [torch.randn(n, generator=torch.Generator().manual_seed(1234 + r)).to(torch.bfloat16)
                for r in range(WORLD)]
    want = torch.cat(everyone).view(torch.int16)
    torch.npu.synchronize()
    torch.npu.empty_cache()
    free = []
    for cycle in range(3):
        before = torch.npu.mem_get_info()[0]
        rollout = torch.empty(n * WORLD, dtype=torch.bfloat16, device="npu")  # wake
        dist.all_gather_into_tensor(rollout, shard)
        c.equal(f"cycle {cycle} rollout", rollout.view(torch.int16), want)
        awake = torch.npu.mem_get_info()[0]
        del rollout  # sleep
        torch.npu.synchronize()
        torch.npu.empty_cache()
        after = torch.npu.mem_get_info()[0]
        free.append([before, awake, after])
    return {"free": free, "zero_copy": os.environ.get("TORCH_HCCL_ZERO_COPY")}


def report(result):
    """This rank's report, one JSON line written with one `write`: the
    ranks share the launcher's stdout, and a line written in pieces (as
    `print` does when stdout is unbuffered, which torchrun may make it)
    can interleave with another rank's."""
    sys.stdout.flush()
    os.write(sys.stdout.fileno(), (json.dumps(result) + "\n").encode())


def dying_rank(c):
    """Rank 1 leaves after the first collective; the others' next one fails
    within the timeout, and rank 1's device memory returns to the machine."""
    x = torch.ones(1024, device="npu")
    dist.all_reduce(x)
    torch.npu.synchronize()
    if RANK == 1:
        report({"rank": RANK, "checks": 0, "fails": [], "left": True})
        os._exit(0)
    time.sleep(1)
    start = time.monotonic()
    error = None
    try:
        dist.all_reduce(x)
        torch.npu.synchronize()
    except Exception as e:  # the failure is what is tested
        error = f"{type(e).__name__}: {str(e)[:300]}"
    waited = time.monotonic() - start
    # Rank 1's device, as the machine sees it now.
    free, total = torch.npu.mem_get_info(1)
    return {"error": error, "waited": waited, "device1_free": free, "device1_total": total}


def fake_world(c):
    """One rank of a large world without its peers (`aclmem run
    --fake-world`): collectives complete at once, peers contribute zeros
    and the reductions' identity; the memory is what this rank's would be."""
    f32 = torch.float32
    x = torch.arange(1024, dtype=f32, device="npu")
    dist.all_reduce(x)
    c.equal("all_reduce", x, torch.arange(1024, dtype=f32))
    before = torch.npu.memory_allocated()
    o = torch.empty(1024 * WORLD, device="npu")
    dist.all_gather_into_tensor(o, x)
    rows = o.cpu().view(WORLD, 1024)
    c.equal("all_gather own", rows[RANK], torch.arange(1024, dtype=f32))
    c.equal("all_gather others", (rows.abs().sum(1) != 0).sum(), torch.tensor(1))
    torch.npu.synchronize()
    return {"world": dist.get_world_size(), "gathered_bytes": torch.npu.memory_allocated() - before}


def completes(works, limit=60.0):
    """Whether every work reports completion within `limit` seconds after
    its `wait()` (a bound against a hang, not a measure: the emulator's
    collectives run on torch_npu's task queue, which records the work's end
    event only once the collective is done)."""
    for w in works:
        w.wait()
    deadline = time.monotonic() + limit
    while not all(w.is_completed() for w in works):
        if time.monotonic() > deadline:
            return False
        time.sleep(0.005)
    return True


def grouped(c):
    """Work launched inside an HCCL group (HcclGroupStart/End): two async
    all_reduces between the backend's _group_start() and _group_end(), the
    coalescing manager's coalesced all_reduce (with and without a device),
    a point-to-point pair of batch_isend_irecv, and a plain async
    all_reduce beside them. Each work completes after wait(), its values
    are right, and after the current stream is synchronised (which waits
    for the end event wait() made it wait for) it is complete at once."""
    f32 = torch.float32
    dev = torch.device("npu", LOCAL)
    backend = dist.distributed_c10d._get_default_group()._get_backend(dev)
    nxt, prv = (RANK + 1) % WORLD, (RANK - 1) % WORLD
    everyone = sum(val(r, f32) for r in range(WORLD))
    cases = {}

    def plain():
        x = val(RANK, f32).npu()
        return [dist.all_reduce(x, async_op=True)], [(x, everyone)]

    def group():
        a, b = val(RANK, f32).npu(), (val(RANK, f32) * 2).npu()
        backend._group_start()
        works = [dist.all_reduce(a, async_op=True), dist.all_reduce(b, async_op=True)]
        backend._group_end()
        return works, [(a, everyone), (b, everyone * 2)]

    def coalesced(device=None):
        a, b = val(RANK, f32).npu(), (val(RANK, f32) * 3).npu()
        with dist.distributed_c10d._coalescing_manager(device=device, async_ops=True) as cm:
            dist.all_reduce(a)
            dist.all_reduce(b)
        return cm.works, [(a, everyone), (b, everyone * 3)]

    def p2p():
        x, o = val(RANK, f32).npu(), torch.empty(6, device="npu")
        works = dist.batch_isend_irecv([dist.P2POp(dist.isend, x, nxt), dist.P2POp(dist.irecv, o, prv)])
        return works, [(o, val(prv, f32))]

    for name, make in [("plain", plain), ("group", group), ("coalesced", coalesced),
                       ("coalesced_device", lambda: coalesced(dev)), ("batch_isend_irecv", p2p)]:
        def one(name=name, make=make):
            works, checks = make()
            c.count += 1
            if not works:
                c.fails.append(f"{name}: no work returned")
                return
            if not completes(works):
                c.fails.append(f"{name}: not completed after wait()")
            torch.npu.current_stream().synchronize()
            c.count += 1
            done = [w.is_completed() for w in works]
            if not all(done):
                c.fails.append(f"{name}: not completed after the stream's synchronisation: {done}")
            for i, (got, want) in enumerate(checks):
                c.equal(f"{name} {i}", got, want)
            cases[name] = len(works)
        c.attempt(name, one)
    torch.npu.synchronize()
    return {"cases": cases}


SCENARIOS = {"collectives": collectives, "weight_sync": weight_sync, "dying_rank": dying_rank,
             "fake_world": fake_world, "grouped": grouped}


def main():
    torch.npu.set_device(LOCAL)
    if os.environ.get("ACLMEM_HCCL_FAKE_WORLD"):
        # No peers will connect: an in-process store, which torch's
        # env:// rendezvous (waiting for every rank) is not.
        dist.init_process_group("hccl", store=dist.HashStore(), rank=RANK, world_size=WORLD)
    else:
        dist.init_process_group("hccl")
    c = Checks()
    out = SCENARIOS[sys.argv[1]](c)
    report({"rank": RANK, "checks": c.count, "fails": c.fails, **out})
    if sys.argv[1] != "dying_rank":
        dist.destroy_process_group()
    else:
        # The group cannot be shut down cleanly with a peer gone.
        sys.stdout.flush()
        os._exit(0)


if __name__ == "__main__":
    main()
