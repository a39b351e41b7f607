"""Benchmark (not a test): the emulated NPU's compute operators against
CPU torch on the same machine, in the same process.

Run under `aclmem run` with a release build of the library; the numbers
go in docs/benchmarks.md with the command:

    cargo xtask lib --release
    aclmem run --lib target/release/libascendcl.so -- \\
        target/torch-venv/bin/python tests/torch_npu/compute_bench.py

For each case, the median of several runs of the operator on NPU tensors
(the result copied back, so the work is done) and on CPU tensors, and the
ratio of the NPU's throughput to the CPU's (goals: 0.5 for matrix
products, 0.3 for a convolution). CPU torch uses every core it finds;
the emulated kernels run on one thread (the library lives in programs
that fork). One JSON line per case.
"""

import json
import statistics
import time

import torch
import torch_npu  # noqa: F401


def median(fn, runs):
    fn()
    times = []
    for _ in range(runs):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def case(name, flops, npu_fn, cpu_fn, runs=5):
    t_npu = median(npu_fn, runs)
    t_cpu = median(cpu_fn, runs)
    print(json.dumps({
        "case": name,
        "npu_s": round(t_npu, 4),
        "cpu_s": round(t_cpu, 4),
        "npu_gflops": round(flops / t_npu / 1e9, 2),
        "cpu_gflops": round(flops / t_cpu / 1e9, 2),
        "ratio": round(t_cpu / t_npu, 3),
        "cpu_threads": torch.get_num_threads(),
    }), flush=True)


def main():
    torch.npu.set_device(0)
    for (m, k, n) in [(1024, 1024, 1024), (4096, 1024, 4096)]:
        for dtype in (torch.float32, torch.bfloat16):
            a, b = torch.randn(m, k).to(dtype), torch.randn(k, n).to(dtype)
            an, bn = a.npu(), b.npu()
            name = f"matmul {m}x{k}x{n} {str(dtype).split('.')[1]}"
            case(name, 2 * m * k * n,
                 lambda: torch.mm(an, bn).cpu(),
                 lambda: torch.mm(a, b))
    x, w = torch.randn(8, 64, 56, 56), torch.randn(128, 64, 3, 3)
    xn, wn = x.npu(), w.npu()
    flops = 2 * 8 * 128 * 56 * 56 * 64 * 9
    case("conv2d 8x64x56x56 * 128x64x3x3 forward", flops,
         lambda: torch.nn.functional.conv2d(xn, wn, padding=1).cpu(),
         lambda: torch.nn.functional.conv2d(x, w, padding=1))


if __name__ == "__main__":
    main()
