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
products, 0.3 for a convolution's forward and backward). CPU torch uses
every core it finds, and so do the emulated matrix products (a thread
per core made for each large product). One JSON line per case.

`compute_bench.py data MIB` measures the data operators instead (fill,
cast, sum, a strided copy) on MIB MiB of float32 (goal: 0.5 of CPU
torch at 2048); `compute_bench.py transformer`, a small transformer's
training step end to end.
"""

import json
import statistics
import sys
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


def data(mib):
    """The data operators on `mib` MiB of float32: fill, cast to float16,
    sum of every element, and a strided copy (a transpose made
    contiguous). Each NPU run ends with a synchronisation, not a copy back
    (the result stays on the device, as in a model)."""
    n = mib * (1 << 20) // 4
    x, xn = torch.empty(n), torch.empty(n, device="npu")
    x.uniform_()
    xn.copy_(x)

    def synced(fn):
        return lambda: (fn(), torch.npu.synchronize())

    gb = mib / 1024
    for name, npu_fn, cpu_fn in [
        ("fill", lambda: xn.fill_(1.5), lambda: x.fill_(1.5)),
        ("cast float32->float16", lambda: xn.half(), lambda: x.half()),
        ("sum", lambda: xn.sum(), lambda: x.sum()),
        ("strided copy (transpose)",
         lambda: xn.view(1024, -1).t().contiguous(),
         lambda: x.view(1024, -1).t().contiguous()),
    ]:
        t_npu = median(synced(npu_fn), 3)
        t_cpu = median(cpu_fn, 3)
        print(json.dumps({
            "case": f"{name} {mib} MiB",
            "npu_s": round(t_npu, 3),
            "cpu_s": round(t_cpu, 3),
            "npu_gib_s": round(gb / t_npu, 2),
            "cpu_gib_s": round(gb / t_cpu, 2),
            "ratio": round(t_cpu / t_npu, 3),
        }), flush=True)


def transformer_step():
    """A small transformer's training step end to end (embedding, two
    encoder layers of d_model 256 with their attention on the fused
    kernel, a linear head, cross-entropy, AdamW): seconds per step on the
    emulated NPU and on the CPU."""
    nn = torch.nn

    def make(dev):
        torch.manual_seed(0)
        layer = nn.TransformerEncoderLayer(256, 8, 1024, dropout=0.0, batch_first=True)
        model = nn.Sequential(nn.Embedding(1000, 256),
                              nn.TransformerEncoder(layer, 2, enable_nested_tensor=False),
                              nn.Linear(256, 1000)).to(dev)
        return model, torch.optim.AdamW(model.parameters(), lr=1e-4)

    x, y = torch.randint(0, 1000, (8, 128)), torch.randint(0, 1000, (8, 128))
    times = {}
    for dev in ("npu", "cpu"):
        model, opt = make(dev)
        xd, yd = x.to(dev), y.to(dev)

        def step():
            opt.zero_grad()
            loss = torch.nn.functional.cross_entropy(model(xd).reshape(-1, 1000), yd.reshape(-1))
            loss.backward()
            opt.step()
            return loss.item()

        times[dev] = median(step, 3)
    print(json.dumps({
        "case": "transformer step (8x128 tokens, d_model 256, 2 layers, AdamW)",
        "npu_s": round(times["npu"], 4),
        "cpu_s": round(times["cpu"], 4),
        "ratio": round(times["cpu"] / times["npu"], 3),
    }), flush=True)


def main():
    torch.npu.set_device(0)
    if len(sys.argv) > 1 and sys.argv[1] == "transformer":
        transformer_step()
        return
    if len(sys.argv) > 2 and sys.argv[1] == "data":
        data(int(sys.argv[2]))
        return
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

    def forward_backward(x, w):
        x, w = x.detach().requires_grad_(), w.detach().requires_grad_()
        torch.nn.functional.conv2d(x, w, padding=1).sum().backward()
        return x.grad.cpu(), w.grad.cpu()

    # The backward is the input's gradient and the filter's, each a
    # product of the forward's size.
    case("conv2d 8x64x56x56 * 128x64x3x3 forward and backward", 3 * flops,
         lambda: forward_backward(xn, wn),
         lambda: forward_backward(x, w))


if __name__ == "__main__":
    main()
