"""Convolutional networks on the emulated NPU against CPU torch: batch
normalisation and pooling operator by operator (forward and backward, in
float32, float16 and bfloat16), then a small CNN's training steps.

Scenarios (`python scenarios.py NAME`, imported there):
- `cnn_operators`: nn.BatchNorm1d/2d in training and evaluation mode
  (BNTrainingReduce, BNTrainingUpdate, BNInfer, BNTrainingUpdateGrad,
  BNTrainingReduceGrad, BNInferGrad), F.max_pool2d (MaxPoolWithArgmaxV1
  and its gradient), F.avg_pool2d (AvgPoolV2, AvgPoolV2Grad) and
  F.adaptive_avg_pool2d (AdaptiveAvgPool2d and its gradient, ReduceMean
  for a 1x1 output), on small shapes with odd sizes, padding, strides,
  dilation and ceil_mode; nn.BatchNorm3d (BN3DTrainingReduce, ...); an
  input in NC1HWC0;
- `cnn_training`: Conv2d, BatchNorm2d, ReLU, MaxPool2d, Conv2d,
  BatchNorm2d, ReLU, then AdaptiveAvgPool2d or AvgPool2d, Linear and
  cross-entropy; the same initial weights on both, three SGD steps with
  momentum, the losses, parameters, running statistics and evaluation
  outputs compared.
"""

import json

__all__ = ["cnn_operators", "cnn_training"]

TYPES = (("float32", 1e-5), ("float16", 1e-2), ("bfloat16", 6e-2))


def _report(**values):
    print(json.dumps(values), flush=True)


def _close(checks, torch):
    """A check recorder: NPU values against CPU ones (as float32)."""

    def close(name, npu, cpu, tol):
        npu, cpu = npu.detach().cpu().float(), cpu.detach().float()
        ok = npu.shape == cpu.shape and bool(torch.allclose(npu, cpu, rtol=tol, atol=tol))
        if not ok and npu.shape == cpu.shape:
            print(f"{name}: max difference {float((npu - cpu).abs().max())}", flush=True)
        checks[name] = ok

    return close


def _forward_backward(torch, fn, x):
    """fn(x) and x's gradient for a fixed upstream gradient (float32
    values rounded to y's type)."""
    x = x.detach().clone().requires_grad_()
    y = fn(x)
    g = torch.Generator().manual_seed(5)
    dy = torch.randn(y.shape, generator=g).to(y.dtype).to(y.device)
    y.backward(dy)
    return y, x.grad


def cnn_operators():
    import torch
    import torch.nn.functional as F
    import torch_npu

    torch.npu.set_device(0)
    torch.manual_seed(41)
    checks = {}
    close = _close(checks, torch)

    pools = {
        "max2": lambda t: F.max_pool2d(t, 2),
        "max3_s2_p1_ceil": lambda t: F.max_pool2d(t, 3, stride=2, padding=1, ceil_mode=True),
        "max_2x3_s1x2_p1x0": lambda t: F.max_pool2d(t, (2, 3), stride=(1, 2), padding=(1, 0)),
        "max3_dilation2": lambda t: F.max_pool2d(t, 3, stride=1, padding=1, dilation=2),
        "avg2": lambda t: F.avg_pool2d(t, 2),
        "avg3_s2_p1_ceil_exclusive": lambda t: F.avg_pool2d(t, 3, stride=2, padding=1, ceil_mode=True,
                                                           count_include_pad=False),
        "avg_3x2_s2x1_p1x0_exclusive": lambda t: F.avg_pool2d(t, (3, 2), stride=(2, 1), padding=(1, 0),
                                                             count_include_pad=False),
        "adaptive_2x3": lambda t: F.adaptive_avg_pool2d(t, (2, 3)),
        "adaptive_3": lambda t: F.adaptive_avg_pool2d(t, 3),
        "adaptive_1": lambda t: F.adaptive_avg_pool2d(t, 1),
    }
    # torch_npu asks float16 forwards for `exclusive` whatever
    # count_include_pad says: the padded windows that count the padding are
    # checked in float32 and bfloat16.
    include_pad = {
        "avg3_s2_p1_ceil": lambda t: F.avg_pool2d(t, 3, stride=2, padding=1, ceil_mode=True),
        "avg_3x2_s2x1_p1x1": lambda t: F.avg_pool2d(t, (3, 2), stride=(2, 1), padding=1),
    }
    x = torch.randn(2, 3, 7, 6) * 2
    unbatched = torch.randn(3, 5, 5)
    for kind, tol in TYPES:
        dtype = getattr(torch, kind)
        xd, ud = x.to(dtype), unbatched.to(dtype)
        fns = dict(pools, **({} if kind == "float16" else include_pad))
        for name, fn in fns.items():
            npu = _forward_backward(torch, fn, xd.npu())
            cpu = _forward_backward(torch, fn, xd.float())
            close(f"{name}_{kind}", npu[0], cpu[0], tol)
            close(f"{name}_grad_{kind}", npu[1], cpu[1], tol)
        # An unbatched [C, H, W] input: torch_npu copies its mask out of
        # NC1HWC0 before the backward.
        for name in ("max3_s2_p1_ceil", "avg2"):
            npu = _forward_backward(torch, pools[name], ud.npu())
            cpu = _forward_backward(torch, pools[name], ud.float())
            close(f"{name}_unbatched_{kind}", npu[0], cpu[0], tol)
            close(f"{name}_unbatched_grad_{kind}", npu[1], cpu[1], tol)
    # float16 average pooling counts no padding in its forward (torch_npu
    # asks for `exclusive`), as the NPU does.
    xh = x.half()
    npu = F.avg_pool2d(xh.npu(), 3, stride=2, padding=1)
    close("avg3_s2_p1_float16_forward_is_exclusive", npu,
          F.avg_pool2d(xh.float(), 3, stride=2, padding=1, count_include_pad=False), 1e-2)
    # divisor_override: the forward (torch_npu's backward drops it).
    close("avg3_s2_p1_divisor5", F.avg_pool2d(x.npu(), 3, stride=2, padding=1, divisor_override=5),
          F.avg_pool2d(x, 3, stride=2, padding=1, divisor_override=5), 1e-5)

    def batch_norm(name, make, shape, kind, tol, steps=2):
        """A module in training mode (`steps` forward/backward passes: the
        running statistics move), then in evaluation mode; the module's
        parameters float32, x of `kind`."""
        dtype = getattr(torch, kind)
        torch.manual_seed(43)
        cpu = make()
        npu = make().npu()
        npu.load_state_dict(cpu.state_dict())
        for step in range(steps):
            x = (torch.randn(shape) * 1.5 + 0.5).to(dtype)
            yn, gn = _forward_backward(torch, npu, x.npu())
            yc, gc = _forward_backward(torch, cpu, x.float())
            close(f"{name}_train{step}_{kind}", yn, yc, tol)
            close(f"{name}_train{step}_input_grad_{kind}", gn, gc, tol)
        for (pn, p), (_, q) in zip(cpu.named_parameters(), npu.named_parameters()):
            close(f"{name}_{pn}_grad_{kind}", q.grad, p.grad, tol * 10)
        for (bn, b), (_, c) in zip(cpu.named_buffers(), npu.named_buffers()):
            close(f"{name}_{bn}_{kind}", c, b, 1e-5)
        cpu.eval()
        npu.eval()
        x = torch.randn(shape).to(dtype)
        yn, gn = _forward_backward(torch, npu, x.npu())
        yc, gc = _forward_backward(torch, cpu, x.float())
        close(f"{name}_eval_{kind}", yn, yc, tol)
        close(f"{name}_eval_input_grad_{kind}", gn, gc, tol)

    nn = torch.nn
    for kind, tol in TYPES:
        batch_norm("bn2d", lambda: nn.BatchNorm2d(3), (4, 3, 5, 3), kind, tol)
        batch_norm("bn1d", lambda: nn.BatchNorm1d(5, momentum=0.3), (6, 5), kind, tol)
        batch_norm("bn1d_seq", lambda: nn.BatchNorm1d(4, eps=1e-3), (3, 4, 7), kind, tol)
    # No affine parameters, a cumulative average (momentum None), and
    # no running statistics at all.
    batch_norm("bn2d_plain", lambda: nn.BatchNorm2d(2, affine=False, momentum=None), (3, 2, 4, 4),
               "float32", 1e-5, steps=3)
    batch_norm("bn2d_untracked", lambda: nn.BatchNorm2d(2, track_running_stats=False), (3, 2, 3, 3),
               "float32", 1e-5, steps=1)
    # BatchNorm3d: the BN3D operators in training, BNInfer on [N·D, C, H, W]
    # in evaluation.
    batch_norm("bn3d", lambda: nn.BatchNorm3d(3), (2, 3, 2, 3, 4), "float32", 1e-5)
    # A half model (parameters and statistics float16): forward and
    # gradients in training mode.
    torch.manual_seed(47)
    cpu_bn = nn.BatchNorm2d(3)
    npu_bn = nn.BatchNorm2d(3).half().npu()
    npu_bn.load_state_dict(cpu_bn.state_dict())
    xh = (torch.randn(2, 3, 4, 4) + 1).half()
    yn, gn = _forward_backward(torch, npu_bn, xh.npu())
    yc, gc = _forward_backward(torch, cpu_bn, xh.float())
    close("bn2d_half_module_float16", yn, yc, 1e-2)
    close("bn2d_half_module_input_grad_float16", gn, gc, 1e-2)
    close("bn2d_half_module_weight_grad_float16", npu_bn.weight.grad, cpu_bn.weight.grad, 5e-2)
    # x in NC1HWC0 (torch_npu then hands batch norm's parameters over in
    # NC1HWC0 too): converted for the kernels like every private format.
    torch.npu.config.allow_internal_format = True
    torch.manual_seed(59)
    cpu_bn, npu_bn = nn.BatchNorm2d(20), nn.BatchNorm2d(20).npu()
    npu_bn.load_state_dict(cpu_bn.state_dict())
    x, g = torch.randn(2, 20, 3, 5), torch.randn(2, 20, 3, 5)
    xn = torch_npu.npu_format_cast(x.npu(), 3).requires_grad_()
    xc = x.clone().requires_grad_()
    yn, yc = npu_bn(xn), cpu_bn(xc)
    yn.backward(torch_npu.npu_format_cast(g.npu(), 3))
    yc.backward(g)
    checks["nc1hwc0_input"] = torch_npu.get_npu_format(xn) == 3
    close("bn2d_nc1hwc0", yn, yc, 1e-5)
    close("bn2d_nc1hwc0_input_grad", xn.grad, xc.grad, 1e-5)
    close("bn2d_nc1hwc0_weight_grad", npu_bn.weight.grad, cpu_bn.weight.grad, 1e-4)
    close("bn2d_nc1hwc0_running_var", npu_bn.running_var, cpu_bn.running_var, 1e-5)
    close("max_pool_nc1hwc0", F.max_pool2d(xn, 2, ceil_mode=True), F.max_pool2d(xc, 2, ceil_mode=True), 0)
    close("avg_pool_nc1hwc0", F.avg_pool2d(xn, 2, ceil_mode=True), F.avg_pool2d(xc, 2, ceil_mode=True), 1e-6)
    torch.npu.config.allow_internal_format = False
    _report(checks=checks)


class _Spec:
    """One of the small CNNs: the second pool, the input's shape."""

    def __init__(self, name, pool, shape, flat):
        self.name, self.pool, self.shape, self.flat = name, pool, shape, flat


def _small_cnn(torch, spec):
    nn = torch.nn
    first_pool = nn.MaxPool2d(2) if spec.name == "adaptive" else nn.MaxPool2d(3, stride=2, padding=1,
                                                                               ceil_mode=True)
    return nn.Sequential(
        nn.Conv2d(3, 6, 3, padding=1),
        nn.BatchNorm2d(6),
        nn.ReLU(),
        first_pool,
        nn.Conv2d(6, 8, 3, padding=1),
        nn.BatchNorm2d(8),
        nn.ReLU(),
        spec.pool(),
        nn.Flatten(),
        nn.Linear(spec.flat, 5),
    )


def cnn_training():
    import torch
    import torch.nn.functional as F
    import torch_npu  # noqa: F401

    torch.npu.set_device(0)
    checks = {}
    close = _close(checks, torch)
    nn = torch.nn
    specs = (
        # [4, 3, 10, 10] -> max 2: 5x5 -> adaptive 1x1: 8 features.
        _Spec("adaptive", lambda: nn.AdaptiveAvgPool2d(1), (4, 3, 10, 10), 8),
        # [4, 3, 11, 9] -> max 3/2/1 ceil: 6x5 -> avg 2 ceil: 3x3: 72.
        _Spec("avg", lambda: nn.AvgPool2d(2, ceil_mode=True), (4, 3, 11, 9), 72),
    )
    losses = {}
    for spec in specs:
        torch.manual_seed(53)
        cpu = _small_cnn(torch, spec)
        npu = _small_cnn(torch, spec).npu()
        npu.load_state_dict(cpu.state_dict())
        batches = [(torch.randn(spec.shape), torch.randint(0, 5, (spec.shape[0],))) for _ in range(3)]
        run = {}
        for tag, model, dev in (("cpu", cpu, "cpu"), ("npu", npu, "npu")):
            opt = torch.optim.SGD(model.parameters(), lr=0.05, momentum=0.9, foreach=False)
            step = []
            for x, y in batches:
                opt.zero_grad()
                loss = F.cross_entropy(model(x.to(dev)), y.to(dev))
                loss.backward()
                opt.step()
                step.append(loss.item())
            run[tag] = step
        losses[spec.name] = run
        checks[f"{spec.name}_losses"] = all(abs(a - b) < 1e-4 for a, b in zip(run["cpu"], run["npu"]))
        for (name, p), (_, q) in zip(cpu.named_parameters(), npu.named_parameters()):
            close(f"{spec.name}_{name}_after_steps", q, p, 1e-4)
        for (name, b), (_, c) in zip(cpu.named_buffers(), npu.named_buffers()):
            close(f"{spec.name}_{name}_after_steps", c, b, 1e-4)
        cpu.eval()
        npu.eval()
        x = torch.randn(spec.shape)
        with torch.no_grad():
            close(f"{spec.name}_eval_output", npu(x.npu()), cpu(x), 1e-4)
    _report(checks=checks, losses=losses)
