"""Losses and layers on the emulated NPU against CPU torch, operator by
operator (forward and the input's gradient, in float32, float16 and
bfloat16), then a small network built from them trained for three steps.

Scenario (`python scenarios.py losses_and_layers`, imported there):
- the element-wise losses in each reduction: F.mse_loss (MseLoss,
  MseLossGrad), F.binary_cross_entropy_with_logits with and without
  weight and pos_weight (SigmoidCrossEntropyWithLogitsV2 and its
  gradient), F.binary_cross_entropy with a weight (BinaryCrossEntropy,
  BinaryCrossEntropyGrad), F.l1_loss (LpLoss, L1LossGrad),
  F.smooth_l1_loss with two betas (SmoothL1LossV2, SmoothL1LossGradV2),
  F.soft_margin_loss (SoftMarginLoss, SoftMarginLossGrad),
  F.kl_div with none/sum/mean/batchmean and a log target (KLDiv,
  KlDivLossGrad);
- F.group_norm in three group counts (GroupNorm; the backward is
  torch_npu's batch-norm composition);
- F.interpolate nearest by scale and size (ResizeNearestNeighborV2 and
  its gradient), bilinear by scale and size, align_corners both ways
  (ResizeBilinearV2 and its gradient), bicubic (ResizeD, ResizeGradD);
  on sequences linear (ResizeD, ResizeGradD); on volumes nearest and trilinear
  (UpsampleNearest3d, UpsampleTrilinear3d and their gradients);
- F.pad reflect and replicate on 4-D and 3-D inputs (MirrorPad, PadV3
  edge, PadV3Grad);
- F.conv3d and F.conv_transpose3d with strides, pads, dilation, groups,
  output_padding and a bias (Conv3D, Conv3DBackpropInput,
  Conv3DBackpropFilter, Conv3DTranspose), their weight and bias
  gradients too;
- F.embedding_bag in each mode, with padding_idx, include_last_offset,
  per_sample_weights and 2-D indices (EmbeddingBag), the weight's
  gradient;
- a network of reflect-padded Conv2d, GroupNorm, ReLU, bilinear
  upsampling, replicate-padded Conv2d and an MSE loss: the same initial
  weights on both, three SGD steps, the losses, parameters and an
  evaluation output compared.
"""

import json

__all__ = ["losses_and_layers"]

TYPES = (("float32", 1e-4), ("float16", 1e-2), ("bfloat16", 6e-2))


def _report(**values):
    print(json.dumps(values), flush=True)


def _close(checks, torch):
    """A check recorder: NPU values against CPU ones (as float32), within
    `tol` relative to the CPU values' largest magnitude."""

    def close(name, npu, cpu, tol):
        npu, cpu = npu.detach().cpu().float(), cpu.detach().float()
        scale = max(1.0, float(cpu.abs().max())) if cpu.numel() else 1.0
        ok = npu.shape == cpu.shape and bool(torch.allclose(npu, cpu, rtol=tol, atol=tol * scale))
        if not ok and npu.shape == cpu.shape:
            print(f"{name}: max difference {float((npu - cpu).abs().max())}", flush=True)
        checks[name] = ok

    return close


def _forward_backward(torch, fn, x, params=()):
    """fn(x) and the gradients of x and `params` for a fixed upstream
    gradient (float32 values rounded to y's type)."""
    x = x.detach().clone().requires_grad_()
    for p in params:
        p.grad = None
    y = fn(x)
    g = torch.Generator().manual_seed(5)
    dy = torch.randn(y.shape, generator=g).to(y.dtype).to(y.device)
    y.backward(dy)
    return y, x.grad, [p.grad for p in params]


def _operators(torch, F):
    """name -> (function of x and the tensors it reads, x's shape, x's
    kind: "any" or "unit" for a probability)."""
    g = torch.Generator().manual_seed(61)
    target = torch.randn(4, 6, generator=g)
    prob = torch.rand(4, 6, generator=g) * 0.9 + 0.05
    weight = torch.rand(6, generator=g) + 0.5
    pos_weight = torch.rand(6, generator=g) * 2 + 0.25
    bce_weight = torch.rand(4, 6, generator=g) + 0.5
    log_prob = torch.log(prob)
    gamma, beta = torch.randn(6, generator=g), torch.randn(6, generator=g)
    w3 = torch.randn(4, 2, 3, 2, 3, generator=g) * 0.3
    w3t = torch.randn(2, 3, 3, 3, 2, generator=g) * 0.3
    b3 = torch.randn(4, generator=g)
    w3g = torch.randn(4, 1, 3, 2, 3, generator=g) * 0.3
    ops = {}
    for r in ("none", "mean", "sum"):
        ops[f"mse_{r}"] = (lambda x, d, r=r: F.mse_loss(x, d["target"], reduction=r), "loss")
        ops[f"bce_logits_{r}"] = (lambda x, d, r=r: F.binary_cross_entropy_with_logits(
            x, d["prob"], weight=d["weight"], pos_weight=d["pos_weight"], reduction=r), "loss")
        ops[f"bce_{r}"] = (lambda x, d, r=r: F.binary_cross_entropy(x, d["prob"], weight=d["bce_weight"],
                                                                     reduction=r), "unit")
        ops[f"l1_{r}"] = (lambda x, d, r=r: F.l1_loss(x, d["target"], reduction=r), "loss")
        ops[f"smooth_l1_beta0.5_{r}"] = (lambda x, d, r=r: F.smooth_l1_loss(x, d["target"], reduction=r,
                                                                           beta=0.5), "loss")
        ops[f"soft_margin_{r}"] = (lambda x, d, r=r: F.soft_margin_loss(x, d["sign"], reduction=r), "loss")
    ops["bce_logits_plain_mean"] = (lambda x, d: F.binary_cross_entropy_with_logits(x, d["prob"]), "loss")
    ops["smooth_l1_beta1_mean"] = (lambda x, d: F.smooth_l1_loss(x, d["target"]), "loss")
    for r in ("none", "sum", "mean", "batchmean"):
        ops[f"kl_{r}"] = (lambda x, d, r=r: F.kl_div(x, d["prob"], reduction=r), "loss")
    ops["kl_log_target_batchmean"] = (lambda x, d: F.kl_div(x, d["log_prob"], reduction="batchmean",
                                                            log_target=True), "loss")
    ops["group_norm_3"] = (lambda x, d: F.group_norm(x, 3, d["gamma"], d["beta"]), "image")
    ops["group_norm_1"] = (lambda x, d: F.group_norm(x, 1), "image")
    ops["group_norm_6"] = (lambda x, d: F.group_norm(x, 6, d["gamma"], d["beta"], eps=1e-3), "image")
    ops["nearest_scale2"] = (lambda x, d: F.interpolate(x, scale_factor=2), "image")
    ops["nearest_size6x7"] = (lambda x, d: F.interpolate(x, size=(6, 7)), "image")
    ops["bilinear_scale2"] = (lambda x, d: F.interpolate(x, scale_factor=2, mode="bilinear"), "image")
    ops["bilinear_size7x5_corners"] = (lambda x, d: F.interpolate(x, size=(7, 5), mode="bilinear",
                                                                  align_corners=True), "image")
    ops["bilinear_size3x9"] = (lambda x, d: F.interpolate(x, size=(3, 9), mode="bilinear"), "image")
    ops["bicubic_scale2"] = (lambda x, d: F.interpolate(x, scale_factor=2, mode="bicubic"), "image")
    ops["bicubic_size7x3_corners"] = (lambda x, d: F.interpolate(x, size=(7, 3), mode="bicubic",
                                                                 align_corners=True), "image")
    ops["linear_scale2"] = (lambda x, d: F.interpolate(x, scale_factor=2, mode="linear"), "sequence")
    ops["linear_size4_corners"] = (lambda x, d: F.interpolate(x, size=4, mode="linear", align_corners=True),
                                   "sequence")
    ops["nearest3d_scale2"] = (lambda x, d: F.interpolate(x, scale_factor=2), "volume")
    ops["nearest3d_size3x7x4"] = (lambda x, d: F.interpolate(x, size=(3, 7, 4)), "volume")
    ops["trilinear_scale2"] = (lambda x, d: F.interpolate(x, scale_factor=2, mode="trilinear"), "volume")
    ops["trilinear_size5x3x8_corners"] = (lambda x, d: F.interpolate(x, size=(5, 3, 8), mode="trilinear",
                                                                     align_corners=True), "volume")
    ops["pad_reflect"] = (lambda x, d: F.pad(x, (1, 2, 2, 1), mode="reflect"), "image")
    ops["pad_replicate"] = (lambda x, d: F.pad(x, (2, 1, 0, 3), mode="replicate"), "image")
    ops["pad_reflect_1d"] = (lambda x, d: F.pad(x, (3, 1), mode="reflect"), "sequence")
    ops["conv3d_p1"] = (lambda x, d: F.conv3d(x, d["w3"], d["b3"], padding=1), "volume")
    ops["conv3d_s2_d2_groups2"] = (lambda x, d: F.conv3d(x, d["w3g"], None,
                                                         stride=(2, 1, 1), dilation=(1, 1, 2), groups=2),
                                   "volume")
    ops["conv_transpose3d_s2_op1"] = (lambda x, d: F.conv_transpose3d(x, d["w3t"], stride=2, padding=1,
                                                                      output_padding=1), "volume")
    bag_idx = torch.tensor([1, 2, 4, 5, 4, 3, 2, 9, 0])
    bag_off = torch.tensor([0, 2, 2, 5])
    last_off = torch.tensor([0, 2, 2, 5, 9])
    psw = torch.rand(9, generator=g) + 0.5
    rows = torch.tensor([[1, 4, 4], [0, 9, 3]])
    for mode in ("sum", "mean", "max"):
        ops[f"embedding_bag_{mode}"] = (lambda x, d, mode=mode: F.embedding_bag(d["bag_idx"], x, d["bag_off"],
                                                                                mode=mode), "table")
    ops["embedding_bag_mean_padding"] = (lambda x, d: F.embedding_bag(d["bag_idx"], x, d["bag_off"], mode="mean",
                                                                      padding_idx=4), "table")
    ops["embedding_bag_sum_last_offset"] = (lambda x, d: F.embedding_bag(d["bag_idx"], x, d["last_off"],
                                                                         mode="sum", include_last_offset=True),
                                            "table")
    ops["embedding_bag_sum_per_sample_weights"] = (lambda x, d: F.embedding_bag(
        d["bag_idx"], x, d["bag_off"], mode="sum", per_sample_weights=d["psw"]), "table")
    ops["embedding_bag_max_rows"] = (lambda x, d: F.embedding_bag(d["rows"], x, mode="max"), "table")
    sign = torch.randn(4, 6, generator=g).sign()
    data = dict(sign=sign, bag_idx=bag_idx, bag_off=bag_off, last_off=last_off, psw=psw, rows=rows, target=target, prob=prob, weight=weight, pos_weight=pos_weight, bce_weight=bce_weight,
                log_prob=log_prob, gamma=gamma, beta=beta, w3=w3, w3g=w3g, w3t=w3t, b3=b3)
    return ops, data


def losses_and_layers():
    import torch
    import torch.nn.functional as F
    import torch_npu  # noqa: F401

    torch.npu.set_device(0)
    torch.manual_seed(67)
    checks = {}
    close = _close(checks, torch)
    ops, data = _operators(torch, F)
    inputs = {
        "loss": torch.randn(4, 6),
        "unit": torch.rand(4, 6) * 0.9 + 0.05,
        "image": torch.randn(2, 6, 4, 5),
        "sequence": torch.randn(2, 3, 6),
        "volume": torch.randn(2, 2, 4, 5, 6),
        "table": torch.randn(10, 4),
    }
    for kind, tol in TYPES:
        dtype = getattr(torch, kind)
        # The values rounded to the type once, then float32 on the CPU.
        on = {k: v.to(dtype) if v.is_floating_point() else v for k, v in data.items()}
        npu_data = {k: v.npu() for k, v in on.items()}
        cpu_data = {k: v.float() if v.is_floating_point() else v for k, v in on.items()}
        for name, (fn, shape) in ops.items():
            x = inputs[shape].to(dtype)
            yn, gn, _ = _forward_backward(torch, lambda t: fn(t, npu_data), x.npu())
            yc, gc, _ = _forward_backward(torch, lambda t: fn(t, cpu_data), x.float())
            close(f"{name}_{kind}", yn, yc, tol)
            close(f"{name}_grad_{kind}", gn, gc, tol)
        # The 3-D convolutions' weight (and bias) gradients.
        x = inputs["volume"].to(dtype)
        for name, fn, params in (
            ("conv3d", lambda t, w, b: F.conv3d(t, w, b, padding=1), ("w3", "b3")),
            ("conv_transpose3d", lambda t, w, b: F.conv_transpose3d(t, w, stride=2, padding=1,
                                                                    output_padding=1), ("w3t",)),
        ):
            grads = {}
            for dev, src in (("npu", on), ("cpu", cpu_data)):
                ps = [src[p].to(dev).clone().requires_grad_() for p in params]
                w, b = ps[0], ps[1] if len(ps) > 1 else None
                xd = x.to(dev) if dev == "npu" else x.float()
                _, _, grads[dev] = _forward_backward(torch, lambda t: fn(t, w, b), xd, ps)
            for p, gnpu, gcpu in zip(params, grads["npu"], grads["cpu"]):
                close(f"{name}_{p}_grad_{kind}", gnpu, gcpu, tol)
    losses = _small_network(torch, F, checks, close)
    _report(checks=checks, losses=losses)


def _network(torch):
    nn = torch.nn
    return nn.Sequential(
        nn.Conv2d(3, 8, 3, padding=1, padding_mode="reflect"),
        nn.GroupNorm(4, 8),
        nn.ReLU(),
        nn.Upsample(scale_factor=2, mode="bilinear"),
        nn.Conv2d(8, 3, 3, padding=1, padding_mode="replicate"),
    )


def _small_network(torch, F, checks, close):
    """Three SGD steps of `_network` under an MSE loss on both."""
    torch.manual_seed(71)
    cpu = _network(torch)
    npu = _network(torch).npu()
    npu.load_state_dict(cpu.state_dict())
    batches = [(torch.randn(2, 3, 6, 5), torch.randn(2, 3, 12, 10)) for _ in range(3)]
    run = {}
    for tag, model, dev in (("cpu", cpu, "cpu"), ("npu", npu, "npu")):
        opt = torch.optim.SGD(model.parameters(), lr=0.05, momentum=0.9, foreach=False)
        steps = []
        for x, y in batches:
            opt.zero_grad()
            loss = F.mse_loss(model(x.to(dev)), y.to(dev))
            loss.backward()
            opt.step()
            steps.append(loss.item())
        run[tag] = steps
    checks["network_losses"] = all(abs(a - b) < 1e-4 for a, b in zip(run["cpu"], run["npu"]))
    for (name, p), (_, q) in zip(cpu.named_parameters(), npu.named_parameters()):
        close(f"network_{name}_after_steps", q, p, 1e-4)
    x = torch.randn(2, 3, 6, 5)
    with torch.no_grad():
        close("network_eval_output", npu(x.npu()), cpu(x), 1e-4)
    return run
