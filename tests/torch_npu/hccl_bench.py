"""Benchmark (not a test): the emulated HCCL's bandwidth on NPU tensors
against Gloo's on CPU tensors, in the same processes, and memcpy's.

Run by torchrun, two ranks on one host, under `aclmem run` (a release build
of the library), the numbers go in docs/benchmarks.md with the command:

    aclmem run --devices 2 -- torchrun --standalone --nproc-per-node 2 \\
        tests/torch_npu/hccl_bench.py [MiB ...]

For each size (64 and 1024 MiB by default) and each of all_reduce (sum of
float32) and all_gather, the median time of several runs with the "hccl"
group on NPU tensors and with a "gloo" group on CPU tensors of the same
size; the ratio is HCCL's bandwidth over Gloo's (the goal is at least 0.9:
the same engine carries both, the device memory must add nothing). Also a
host memcpy of the same size. Rank 0 prints one JSON line per case.
"""

import json
import os
import statistics
import sys
import time

import torch
import torch_npu  # noqa: F401
import torch.distributed as dist

RANK = int(os.environ["RANK"])
WORLD = int(os.environ["WORLD_SIZE"])
MIB = 1 << 20


def median_time(fn, sync, runs):
    fn()  # warm up: communicators, segments, connections
    sync()
    times = []
    for _ in range(runs):
        start = time.perf_counter()
        fn()
        sync()
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def main():
    torch.npu.set_device(int(os.environ["LOCAL_RANK"]))
    dist.init_process_group("hccl")
    gloo = dist.new_group(backend="gloo")
    sizes = [int(a) for a in sys.argv[1:]] or [64, 1024]
    for mib in sizes:
        n = mib * MIB // 4
        runs = 7 if mib <= 256 else 3
        npu_sync = torch.npu.synchronize
        nothing = lambda: None  # noqa: E731
        for op in ["all_reduce", "all_gather"]:
            if op == "all_reduce":
                x_npu = torch.ones(n, device="npu")
                x_cpu = torch.ones(n)
                hccl = lambda: dist.all_reduce(x_npu)  # noqa: E731
                cpu = lambda: dist.all_reduce(x_cpu, group=gloo)  # noqa: E731
            else:
                x_npu, x_cpu = torch.ones(n // WORLD, device="npu"), torch.ones(n // WORLD)
                o_npu, o_cpu = torch.empty(n, device="npu"), torch.empty(n)
                hccl = lambda: dist.all_gather_into_tensor(o_npu, x_npu)  # noqa: E731
                cpu = lambda: dist.all_gather_into_tensor(o_cpu, x_cpu, group=gloo)  # noqa: E731
            t_hccl = median_time(hccl, npu_sync, runs)
            t_gloo = median_time(cpu, nothing, runs)
            src, dst = torch.ones(n), torch.empty(n)
            t_copy = median_time(lambda: dst.copy_(src), nothing, runs)
            if RANK == 0:
                gb = mib * MIB / 1e9
                print(json.dumps({
                    "op": op, "MiB": mib, "ranks": WORLD,
                    "hccl_npu_GBps": round(gb / t_hccl, 3), "gloo_cpu_GBps": round(gb / t_gloo, 3),
                    "ratio": round(t_gloo / t_hccl, 3), "memcpy_GBps": round(gb / t_copy, 3),
                }), flush=True)
            del x_npu, x_cpu
            torch.npu.empty_cache()
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
