"""Indexing, selections, scans, reductions and elementwise math on the
emulated NPU against CPU torch, forward and backward.

Scenario (`python scenarios.py NAME`, imported there):
- `indexing_and_math`: advanced indexing (`x[idx]`, `x[mask]`,
  `x[:, idx]`, `x[i, j]`: Index, and IndexPutV2 for the gradient),
  `torch.max`/`torch.min` along a dim (ArgMaxWithValue, ArgMinWithValue),
  `repeat` (Tile), `torch.gather` (GatherElements), `index_add`
  (InplaceIndexAdd), `F.one_hot` (OneHot), `roll` (Roll), `cumprod`
  (Cumprod), `prod` (ReduceProd), `logsumexp` (ReduceLogSumExp), `std`
  (ReduceMeanD, ReduceStdWithMean), `var` (ReduceStdV2Update),
  `var_mean` (the operator API's aclnnVarMean), the
  elementwise functions (Sign, ClipByValue/HardtanhGrad for hardtanh and
  relu6, Erf, Erfc, Atan, Asin, Acos, Tan, Sinh, Cosh, Expm1, Log1p,
  Atan2, LogAddExp, Round, Trunc, Mod, Erfinv, Log of base 2 and 10), `masked_scatter`
  (MaskedScatter), `take` (Gather), `argmin` (ArgMin) and `cummax`
  (Cummax) in float32, float16 and bfloat16, and the integer ones
  (FloorDiv, FloorMod, Mod, BitwiseAnd/Or/Xor, Invert) in int32 and
  int64.
"""

import json

__all__ = ["indexing_and_math"]

TYPES = (("float32", 1e-5), ("float16", 1e-2), ("bfloat16", 6e-2))
# What torch_npu refuses in bfloat16 before launching anything ("Var Mean
# only support float16 or float32 type").
HALF_ONLY = ("var", "var_biased")


def _report(**values):
    print(json.dumps(values), flush=True)


def _close(checks, torch):
    """A check recorder: NPU values against CPU ones (as float64)."""

    def close(name, npu, cpu, tol):
        npu, cpu = npu.detach().cpu().double(), cpu.detach().double()
        ok = npu.shape == cpu.shape and bool(torch.allclose(npu, cpu, rtol=tol, atol=tol, equal_nan=True))
        if not ok and npu.shape == cpu.shape:
            print(f"{name}: max difference {float((npu - cpu).abs().max())}", flush=True)
        checks[name] = ok

    return close


def _run(torch, fn, x, extra, device, dtype, grad=True):
    """fn(x, *extra) on `device` in `dtype` and the gradients of the float
    tensors among x and extra for a fixed upstream gradient."""
    tensors = [t.to(dtype) if t.is_floating_point() else t for t in (x, *extra)]
    tensors = [t.to(device).detach() for t in tensors]
    wants = [t for t in tensors if grad and t.is_floating_point()]
    for t in wants:
        t.requires_grad_()
    y = fn(*tensors)
    if not grad:
        return [y]
    torch.manual_seed(5)
    g = torch.randn(y.shape).to(y.dtype).to(device)
    y.backward(g)
    return [y] + [t.grad for t in wants]


def indexing_and_math():
    import torch
    import torch.nn.functional as F
    import torch_npu  # noqa: F401

    torch.npu.set_device(0)
    torch.manual_seed(11)
    checks = {}
    close = _close(checks, torch)

    x = torch.randn(6, 5, 4)
    rows = torch.tensor([4, 0, 2, 2, 5])
    cols = torch.tensor([[3, 1], [0, 3]])
    mask = torch.tensor([True, False, True, True, False, True])
    idx2 = torch.randint(0, 5, (6, 3, 4))
    add_at = torch.tensor([1, 3, 1])
    floats = {
        "index_rows": (lambda t, i: t[i], x, [rows]),
        "index_mask": (lambda t, m: t[m], x, [mask]),
        "index_cols": (lambda t, i: t[:, i], x, [cols]),
        "index_pair": (lambda t, i, j: t[i, :, j], x, [rows, torch.tensor([3, 0, 1, 1, 2])]),
        "max_dim": (lambda t: torch.max(t, 1)[0], x, []),
        "min_dim_keep": (lambda t: torch.min(t, -1, keepdim=True)[0], x, []),
        "repeat": (lambda t: t.repeat(2, 1, 3), x, []),
        "repeat_new_axes": (lambda t: t[0].repeat(2, 2, 1), x, []),
        "gather": (lambda t, i: torch.gather(t, 1, i), x, [idx2]),
        "index_add": (lambda t, s, i: torch.index_add(t, 1, i, s, alpha=0.5), x, [torch.randn(6, 3, 4), add_at]),
        "roll": (lambda t: torch.roll(t, (2, -1), (0, 2)), x, []),
        "roll_flat": (lambda t: torch.roll(t, 7), x, []),
        "cumprod": (lambda t: torch.cumprod(t, 1), x.clamp(-1.5, 1.5), []),
        "prod": (lambda t: t.prod(2), x.clamp(-1.5, 1.5), []),
        "logsumexp": (lambda t: torch.logsumexp(t, 1), x * 3, []),
        "std": (lambda t: t.std(1), x, []),
        "std_all": (lambda t: t.std(), x, []),
        "var": (lambda t: t.var(2, keepdim=True), x, []),
        "var_biased": (lambda t: t.var(0, correction=0), x, []),
        "var_mean": (lambda t: torch.stack(torch.var_mean(t, 1)), x, []),
        "var_mean_all": (lambda t: torch.stack(torch.var_mean(t, correction=0)), x, []),
        "var_mean_keep": (lambda t: torch.cat(torch.var_mean(t, (0, 2), keepdim=True)), x, []),
        "cummax": (lambda t: torch.cummax(t, 1)[0], x, []),
        "logaddexp": (torch.logaddexp, x, [torch.randn(5, 4) * 3]),
        "logaddexp2": (torch.logaddexp2, x, [torch.randn(5, 4) * 3]),
        "masked_scatter": (lambda t, s, m: t.masked_scatter(m, s), x, [torch.randn(6, 5, 4), x > 0.3]),
        "erfinv": (torch.erfinv, (x * 0.3).clamp(-0.95, 0.95), []),
        "log2": (torch.log2, x.abs() + 0.1, []),
        "log10": (torch.log10, x.abs() + 0.1, []),
        "sign": (torch.sign, x, []),
        "hardtanh": (lambda t: F.hardtanh(t, -0.5, 1.0), x, []),
        "relu6": (lambda t: F.relu6(t * 4), x, []),
        "erf": (torch.erf, x, []),
        "erfc": (torch.erfc, x, []),
        "atan": (torch.atan, x, []),
        "asin": (torch.asin, x.clamp(-0.95, 0.95), []),
        "acos": (torch.acos, x.clamp(-0.95, 0.95), []),
        "tan": (torch.tan, x.clamp(-1.2, 1.2), []),
        "sinh": (torch.sinh, x, []),
        "cosh": (torch.cosh, x, []),
        "expm1": (torch.expm1, x, []),
        "log1p": (torch.log1p, x.abs(), []),
        "atan2": (torch.atan2, x, [torch.randn(5, 4)]),
    }
    for kind, tol in TYPES:
        dtype = getattr(torch, kind)
        for name, (fn, t, extra) in floats.items():
            if kind == "bfloat16" and name in HALF_ONLY:
                continue
            npu = _run(torch, fn, t, extra, "npu", dtype)
            cpu = _run(torch, fn, t.to(dtype).float(), [e.to(dtype).float() if e.is_floating_point() else e
                                                        for e in extra], "cpu", torch.float32)
            # Sums of many rounded terms: a looser bound in the half types.
            wide = tol * (4 if kind != "float32" and name in ("prod", "cumprod", "std_all") else 1)
            for k, (a, b) in enumerate(zip(npu, cpu)):
                close(f"{name}_{kind}" + ("" if k == 0 else f"_grad{k}"), a, b, wide)
        # The indices of max/min along a dim (a tie-free input).
        xd = x.to(dtype)
        for name, fn in (("argmax", lambda t: torch.max(t, 1)[1]), ("argmin", lambda t: torch.min(t, 2)[1]),
                         ("argmin_plain", lambda t: torch.argmin(t, 1)), ("cummax_indices", lambda t: torch.cummax(t, 2)[1])):
            checks[f"{name}_{kind}"] = bool(torch.equal(fn(xd.npu()).cpu(), fn(xd.float())))

    ints = {
        "floor_divide": lambda a, b: torch.floor_divide(a, b),
        "remainder": lambda a, b: torch.remainder(a, b),
        "bitwise_and": lambda a, b: a & b,
        "bitwise_or": lambda a, b: a | b,
        "bitwise_xor": lambda a, b: a ^ b,
        "bitwise_not": lambda a, b: ~a,
        "fmod": lambda a, b: torch.fmod(a, b),
    }
    a = torch.randint(-20, 20, (4, 6))
    b = torch.randint(1, 7, (6,)) * torch.tensor([1, -1, 1, -1, 1, -1])
    for dtype in (torch.int32, torch.int64):
        kind = str(dtype).split(".")[1]
        ad, bd = a.to(dtype), b.to(dtype)
        for name, fn in ints.items():
            checks[f"{name}_{kind}"] = bool(torch.equal(fn(ad.npu(), bd.npu()).cpu(), fn(ad, bd)))
    # Float floor division and remainder (no gradient through floor).
    fa, fb = torch.randn(4, 6) * 5, torch.randn(6) + 0.1
    for kind, tol in TYPES:
        dtype = getattr(torch, kind)
        for name in ("floor_divide", "remainder", "fmod"):
            fn = ints[name]
            close(f"{name}_{kind}", fn(fa.to(dtype).npu(), fb.to(dtype).npu()),
                  fn(fa.to(dtype).float(), fb.to(dtype).float()).to(dtype), tol)
    # take (Gather; its backward, put_, ends in a copy_ of a flattened
    # tensor that the operator API refuses: not checked).
    flat = torch.tensor([[0, 17], [-1, 42]])
    for kind, tol in TYPES:
        xd = x.to(getattr(torch, kind))
        close(f"take_{kind}", torch.take(xd.npu(), flat.npu()), torch.take(xd, flat), 0)
    # Rounding (halves to even, and at two decimals) and truncation.
    r = torch.tensor([-2.5, -1.5, -0.5, 0.5, 1.5, 2.5, 1.234, -7.777])
    for kind, tol in TYPES:
        rd = r.to(getattr(torch, kind))
        close(f"round_{kind}", torch.round(rd.npu()), torch.round(rd.float()).to(rd.dtype), 0)
        close(f"round_decimals_{kind}", torch.round(rd.npu(), decimals=2), torch.round(rd.float(), decimals=2).to(rd.dtype), tol)
        close(f"trunc_{kind}", torch.trunc(rd.npu()), torch.trunc(rd.float()).to(rd.dtype), 0)
    # one_hot (int64 in, int64 out), explicit and inferred class counts.
    labels = torch.tensor([[0, 3], [2, 1], [3, 3]])
    checks["one_hot"] = bool(torch.equal(F.one_hot(labels.npu(), 5).cpu(), F.one_hot(labels, 5)))
    checks["one_hot_inferred"] = bool(torch.equal(F.one_hot(labels.npu()).cpu(), F.one_hot(labels)))
    # A bool mask on a 2-D selection and an index of int32.
    m2 = x[:, :, 0] > 0
    close("index_mask_2d", x.npu()[m2.npu()], x[m2], 0)
    close("index_int32", x.npu()[rows.int().npu()], x[rows], 0)
    # Ties: the first of equal elements, as the CPU picks it.
    tie = torch.tensor([[1.0, 3.0, 3.0, 0.0], [2.0, 2.0, -1.0, -1.0]])
    checks["max_ties"] = bool(torch.equal(torch.max(tie.npu(), 1)[1].cpu(), torch.max(tie, 1)[1]))
    checks["min_ties"] = bool(torch.equal(torch.min(tie.npu(), 1)[1].cpu(), torch.min(tie, 1)[1]))
    _report(checks=checks)
