"""Operators real torch code calls that the emulator once refused
(100024), on the emulated NPU against CPU torch, forward and backward.

Scenario (`python scenarios.py operator_gaps`, imported there):
- `F.logsigmoid` (LogSigmoid, LogSigmoidGrad) forward and the input's
  gradient, in float32, float16 and bfloat16;
- `torch.atanh` and `atanh_` (Atanh) forward and gradient (torch's
  backward is elementwise math), in the three types;
- `torch.aminmax` over the whole tensor and along a dim with and without
  keepdim (the operator API's aclnnAminmax: torch_npu calls it directly),
  in the three types and int32;
- `index_fill_` / `index_fill` with a scalar on three dims and a 0-dim
  tensor value (IndexFillD with its assist tensors) and the gradient, in
  float32, float16, bfloat16, int32 and int64;
- `torch.unique` sorted, with return_inverse and return_counts, of 1-D and
  2-D (flattened) inputs (UniqueWithCountsAndSorting, whose output shapes
  torch_npu reads back from the descriptors after the run), along a dim
  (UniqueWithCountsExt2), and `torch.unique_consecutive` flattened and along each dim
  (UniqueConsecutive, the same way), in float32, float16, bfloat16, int32
  and int64;
- `F.max_pool3d` (MaxPool3D, MaxPool3DGrad) and `F.avg_pool3d`
  (AvgPool3D, AvgPool3DGrad) forward and the input's gradient with
  strides, padding, ceil_mode, count_include_pad, divisor_override, on
  5-D and 4-D inputs, in the three float types.
"""

import json

__all__ = ["operator_gaps"]

TYPES = (("float32", 1e-5), ("float16", 1e-2), ("bfloat16", 6e-2))


def _report(**values):
    print(json.dumps(values), flush=True)


def _close(checks, torch):
    """A check recorder: NPU values against CPU ones (as float64)."""

    def close(name, npu, cpu, tol):
        npu, cpu = npu.detach().cpu().double(), cpu.detach().double()
        ok = npu.shape == cpu.shape and bool(torch.allclose(npu, cpu, rtol=tol, atol=tol, equal_nan=True))
        if not ok:
            diff = float((npu - cpu).abs().max()) if npu.shape == cpu.shape else None
            print(f"{name}: shapes {tuple(npu.shape)} {tuple(cpu.shape)}, max difference {diff}", flush=True)
        checks[name] = ok

    return close


def _exact(checks):
    def exact(name, npu, cpu):
        npu = npu.detach().cpu()
        ok = npu.shape == cpu.shape and npu.dtype == cpu.dtype and bool((npu == cpu).all())
        if not ok:
            print(f"{name}: {npu} vs {cpu}", flush=True)
        checks[name] = ok

    return exact


def _grad(torch, fn, x, device, dtype, compute=None):
    """fn(x) on `device` in `dtype` (computed in `compute`, the values
    rounded to `dtype` first, when given) and x's gradient for a fixed
    upstream gradient."""
    compute = compute or dtype
    x = x.to(dtype).to(compute).to(device).detach().requires_grad_()
    y = fn(x)
    g = torch.Generator().manual_seed(5)
    dy = torch.randn(y.shape, generator=g).to(dtype).to(compute).to(device)
    y.backward(dy)
    return y, x.grad


def _elementwise(torch, F, checks):
    close = _close(checks, torch)
    g = torch.Generator().manual_seed(11)
    x = torch.randn(4, 7, generator=g) * 3
    x[0, 0], x[0, 1] = -30.0, 30.0
    u = torch.rand(4, 7, generator=g) * 1.8 - 0.9
    for dtype_name, tol in TYPES:
        dtype = getattr(torch, dtype_name)
        for name, fn, inp in (("logsigmoid", F.logsigmoid, x), ("atanh", torch.atanh, u)):
            y, dx = _grad(torch, fn, inp, "npu", dtype)
            cy, cdx = _grad(torch, fn, inp, "cpu", dtype)
            close(f"{name}_{dtype_name}", y, cy, tol)
            close(f"{name}_grad_{dtype_name}", dx, cdx, tol)
        # In place, and the edges: +-1 give +-inf, beyond them NaN.
        edges = torch.tensor([1.0, -1.0, 1.5, 0.25]).to(dtype)
        got = edges.clone().npu().atanh_()
        close(f"atanh__{dtype_name}", got, edges.clone().atanh_(), tol)


def _aminmax(torch, checks):
    close = _close(checks, torch)
    g = torch.Generator().manual_seed(12)
    x = torch.randn(3, 5, 4, generator=g)
    xi = torch.randint(-50, 50, (3, 5, 4), generator=g, dtype=torch.int32)
    cases = (("all", {}), ("dim1", {"dim": 1}), ("dim-1_keep", {"dim": -1, "keepdim": True}))
    for dtype_name, tol in TYPES + (("int32", 0),):
        dtype = getattr(torch, dtype_name)
        src = xi if dtype == torch.int32 else x.to(dtype)
        for case, kw in cases:
            lo, hi = torch.aminmax(src.npu(), **kw)
            clo, chi = torch.aminmax(src, **kw)
            close(f"aminmax_{case}_min_{dtype_name}", lo, clo, tol)
            close(f"aminmax_{case}_max_{dtype_name}", hi, chi, tol)


def _index_fill(torch, checks):
    exact = _exact(checks)
    g = torch.Generator().manual_seed(13)
    x = torch.randn(5, 4, 3, generator=g)
    xi = torch.randint(-9, 9, (5, 4, 3), generator=g, dtype=torch.int32)
    for dtype_name in ("float32", "float16", "bfloat16", "int32", "int64"):
        dtype = getattr(torch, dtype_name)
        src = x.to(dtype) if dtype.is_floating_point else xi.to(dtype)
        # Not dim -1: torch_npu builds the assists for a negative dim as
        # given, unwrapped (the whole tensor filled when the index holds
        # 0, on an NPU too: the operator only reads the assists).
        for dim, idx in ((0, [0, 3]), (1, [2]), (2, [0, 2])):
            index = torch.tensor(idx)
            got = src.npu().index_fill_(dim, index.npu(), 2.5 if dtype.is_floating_point else 7)
            want = src.clone().index_fill_(dim, index, 2.5 if dtype.is_floating_point else 7)
            exact(f"index_fill__{dim}_{dtype_name}", got, want)
        if dtype.is_floating_point:
            # The gradient: the upstream one with the filled slices 0.
            fn = lambda t: t.index_fill(1, torch.tensor([0, 2], device=t.device), 2.5)  # noqa: E731
            _, dx = _grad(torch, fn, x, "npu", dtype)
            _, cdx = _grad(torch, fn, x, "cpu", dtype)
            exact(f"index_fill_grad_{dtype_name}", dx, cdx)
        value = torch.tensor(-1.5 if dtype.is_floating_point else -3).to(dtype)
        got = src.npu().index_fill(1, torch.tensor([1, 3]).npu(), value.npu())
        exact(f"index_fill_tensor_{dtype_name}", got, src.index_fill(1, torch.tensor([1, 3]), value))


def _unique(torch, checks):
    exact = _exact(checks)
    g = torch.Generator().manual_seed(14)
    ints = torch.randint(-4, 6, (3, 7), generator=g)
    # torch_npu casts float16 to float32 for the operator and back.
    for dtype_name in ("float32", "float16", "bfloat16", "int32", "int64"):
        dtype = getattr(torch, dtype_name)
        src = ints.to(dtype) * (0.5 if dtype.is_floating_point else 1)
        for shape_name, t in (("1d", src[0]), ("2d", src)):
            u = torch.unique(t.npu())
            exact(f"unique_{shape_name}_{dtype_name}", u, torch.unique(t))
            got = torch.unique(t.npu(), sorted=True, return_inverse=True, return_counts=True)
            want = torch.unique(t, sorted=True, return_inverse=True, return_counts=True)
            for part, a, b in zip(("values", "inverse", "counts"), got, want):
                exact(f"unique_all_{part}_{shape_name}_{dtype_name}", a, b)
            got = torch.unique(t.npu(), return_counts=True)
            want = torch.unique(t, return_counts=True)
            exact(f"unique_counts_{shape_name}_{dtype_name}", got[1], want[1])
        # Distinct rows and columns (a repeated row and column among them).
        grid = torch.cat([src[:, :4], src[:1, :4]]).repeat_interleave(torch.tensor([1, 2, 1, 1]), dim=1)
        for dim in (0, 1):
            got = torch.unique(grid.npu(), dim=dim, return_inverse=True, return_counts=True)
            want = torch.unique(grid, dim=dim, return_inverse=True, return_counts=True)
            for part, a, b in zip(("values", "inverse", "counts"), got, want):
                exact(f"unique_dim{dim}_{part}_{dtype_name}", a, b)
        # Runs of equal neighbours: flattened, and of rows and columns.
        runs = src.repeat_interleave(2, dim=1)[:, :9]
        for where, kw in (("flat", {}), ("dim0", {"dim": 0}), ("dim1", {"dim": 1})):
            t = torch.cat([runs[:1], runs[:1], runs[1:]]) if where == "dim0" else runs
            got = torch.unique_consecutive(t.npu(), return_inverse=True, return_counts=True, **kw)
            want = torch.unique_consecutive(t, return_inverse=True, return_counts=True, **kw)
            for part, a, b in zip(("values", "inverse", "counts"), got, want):
                exact(f"unique_consecutive_{where}_{part}_{dtype_name}", a, b)


def _pool3d(torch, F, checks):
    close = _close(checks, torch)
    g = torch.Generator().manual_seed(15)
    x5 = torch.randn(2, 3, 6, 7, 8, generator=g)
    x4 = torch.randn(3, 5, 6, 4, generator=g)
    cases = {
        "max_k2": (x5, lambda t: F.max_pool3d(t, 2)),
        "max_k3s2p1_ceil": (x5, lambda t: F.max_pool3d(t, 3, stride=2, padding=1, ceil_mode=True)),
        "max_k232_s121": (x5, lambda t: F.max_pool3d(t, (2, 3, 2), stride=(1, 2, 1), padding=(0, 1, 1))),
        "max_4d": (x4, lambda t: F.max_pool3d(t, 2, stride=1)),
        "avg_k2": (x5, lambda t: F.avg_pool3d(t, 2)),
        "avg_k3s2p1_ceil": (x5, lambda t: F.avg_pool3d(t, 3, stride=2, padding=1, ceil_mode=True)),
        "avg_k3s2p1_exclusive": (
            x5,
            lambda t: F.avg_pool3d(t, 3, stride=2, padding=1, count_include_pad=False),
        ),
        "avg_divisor": (x5, lambda t: F.avg_pool3d(t, (2, 3, 2), stride=(1, 2, 2), divisor_override=5)),
        "avg_4d": (x4, lambda t: F.avg_pool3d(t, 2, stride=1)),
    }
    for dtype_name, tol in TYPES:
        dtype = getattr(torch, dtype_name)
        for name, (x, fn) in cases.items():
            y, dx = _grad(torch, fn, x, "npu", dtype)
            # CPU torch has no float16 avg_pool3d: float32 of the same
            # values there.
            cy, cdx = _grad(torch, fn, x, "cpu", dtype, torch.float32)
            close(f"{name}_{dtype_name}", y, cy, tol)
            close(f"{name}_grad_{dtype_name}", dx, cdx, tol)


def operator_gaps(parts="elementwise,aminmax,index_fill,unique,pool3d"):
    import torch
    import torch.nn.functional as F
    import torch_npu  # noqa: F401

    torch.npu.set_device(0)
    checks = {}
    parts = parts.split(",")
    if "elementwise" in parts:
        _elementwise(torch, F, checks)
    if "aminmax" in parts:
        _aminmax(torch, checks)
    if "index_fill" in parts:
        _index_fill(torch, checks)
    if "unique" in parts:
        _unique(torch, checks)
    if "pool3d" in parts:
        _pool3d(torch, F, checks)
    _report(checks=checks)
