"""Fused attention on the emulated NPU (imported by scenarios.py):
`python scenarios.py fused_attention`. torch_npu sends
`scaled_dot_product_attention` with no mask, `is_causal` or a boolean mask
to its fused kernel (`aclnnFlashAttentionScore` and its gradient), which
the emulator computes; each result is compared with CPU torch's."""

import json

__all__ = ["fused_attention"]


def report(**values):
    print(json.dumps(values), flush=True)


def _sdpa_checks(torch, checks, errors):
    """scaled_dot_product_attention forward and backward in three types,
    with no mask, causal, a boolean mask and grouped key heads."""
    F = torch.nn.functional
    for dtype, tol in [(torch.float32, 1e-4), (torch.float16, 1e-2), (torch.bfloat16, 5e-2)]:
        for case in ["plain", "causal", "bool_mask", "gqa"]:
            torch.manual_seed(1)
            b, n, s, d = 2, 4, 7, 8
            nk = 2 if case == "gqa" else n
            q = torch.randn(b, n, s, d, dtype=dtype, requires_grad=True)
            k = torch.randn(b, nk, s + 2, d, dtype=dtype, requires_grad=True)
            v = torch.randn(b, nk, s + 2, d, dtype=dtype, requires_grad=True)
            mask = None
            if case == "bool_mask":
                mask = torch.rand(s, s + 2) > 0.3
                mask[:, 0] = True
            kw = dict(is_causal=case == "causal", enable_gqa=case == "gqa")
            out = F.scaled_dot_product_attention(q, k, v, attn_mask=mask, **kw)
            g = torch.randn_like(out)
            out.backward(g)
            qn, kn, vn = (t.detach().npu().requires_grad_() for t in (q, k, v))
            mn = None if mask is None else mask.npu()
            on = F.scaled_dot_product_attention(qn, kn, vn, attn_mask=mn, **kw)
            on.backward(g.npu())
            name = f"sdpa_{case}_{str(dtype).split('.')[1]}"
            for part, cpu, npu in [("out", out, on), ("dq", q.grad, qn.grad),
                                   ("dk", k.grad, kn.grad), ("dv", v.grad, vn.grad)]:
                err = float((cpu.float() - npu.detach().cpu().float()).abs().max())
                errors[f"{name}_{part}"] = err
                checks[f"{name}_{part}"] = err <= tol


def _transformer_steps(torch, checks, losses):
    """Two encoder layers (their attention on the fused kernel: no mask,
    then causal), three AdamW steps with clip_grad_norm_, on the CPU and
    on the NPU from the same weights."""
    nn, F = torch.nn, torch.nn.functional
    vocab, d = 50, 32

    class Model(nn.Module):
        def __init__(self):
            super().__init__()
            self.emb = nn.Embedding(vocab, d)
            layer = nn.TransformerEncoderLayer(d, 4, 64, dropout=0.0, batch_first=True)
            self.enc = nn.TransformerEncoder(layer, 2, enable_nested_tensor=False)
            self.head = nn.Linear(d, vocab)

        def forward(self, x, causal):
            mask = (nn.Transformer.generate_square_subsequent_mask(x.shape[1], device=x.device)
                    if causal else None)
            return self.head(self.enc(self.emb(x), mask=mask, is_causal=causal))

    for causal in (False, True):
        torch.manual_seed(5)
        cpu, npu = Model(), Model().npu()
        npu.load_state_dict(cpu.state_dict())
        x, y = torch.randint(0, vocab, (3, 9)), torch.randint(0, vocab, (3, 9))
        run = {}
        for tag, m, dev in (("cpu", cpu, "cpu"), ("npu", npu, "npu")):
            opt = torch.optim.AdamW(m.parameters(), lr=1e-3)
            step = []
            for _ in range(3):
                opt.zero_grad()
                loss = F.cross_entropy(m(x.to(dev), causal).reshape(-1, vocab), y.to(dev).reshape(-1))
                loss.backward()
                torch.nn.utils.clip_grad_norm_(m.parameters(), 1.0)
                opt.step()
                step.append(loss.item())
            run[tag] = step
        name = "transformer_causal" if causal else "transformer"
        diff = max(float((p.detach() - q.detach().cpu()).abs().max())
                   for p, q in zip(cpu.parameters(), npu.parameters()))
        losses[name] = dict(run, max_param_diff=diff)
        checks[f"{name}_losses"] = all(abs(a - b) < 1e-5 for a, b in zip(run["cpu"], run["npu"]))
        # Adam divides by the root of the squared gradients' average, so a
        # float32 rounding difference in a near-zero gradient moves a
        # parameter by up to a fraction of the learning rate (1e-3).
        checks[f"{name}_params"] = diff < 1e-3
        checks[f"{name}_learns"] = run["npu"][2] < run["npu"][0]


def _dropout(torch, checks):
    """Attention dropout (the fused kernel's bit mask): the same seed gives
    the same output, the next call another; about p of each row dropped."""
    F = torch.nn.functional
    q = torch.randn(2, 4, 64, 8, device="npu", requires_grad=True)
    torch.npu.manual_seed(11)
    o1 = F.scaled_dot_product_attention(q, q, q, dropout_p=0.5)
    torch.npu.manual_seed(11)
    o2 = F.scaled_dot_product_attention(q, q, q, dropout_p=0.5)
    o3 = F.scaled_dot_product_attention(q, q, q, dropout_p=0.5)
    checks["dropout_seeded_repeats"] = bool(torch.equal(o1, o2))
    checks["dropout_next_call_differs"] = not torch.equal(o2, o3)
    # Equal scores weigh 256 values of 1 by 1/256 each: the output is the
    # fraction kept over keep_prob, near 1 and not exactly 1 (which is what
    # no dropout gives).
    v = torch.ones(1, 1, 256, 1, device="npu")
    k = torch.zeros(1, 1, 256, 8, device="npu")
    qz = torch.zeros(1, 1, 1, 8, device="npu")
    kept = float(F.scaled_dot_product_attention(qz, k, v, dropout_p=0.25).cpu())
    checks["dropout_keeps_about_three_quarters"] = abs(kept - 1.0) < 0.2 and kept != 1.0
    o1.sum().backward()
    checks["dropout_gradient_is_finite"] = bool(torch.isfinite(q.grad).all())


def fused_attention():
    import torch
    import torch_npu  # noqa: F401

    torch.npu.set_device(0)
    checks, errors, losses = {}, {}, {}
    _sdpa_checks(torch, checks, errors)
    _transformer_steps(torch, checks, losses)
    _dropout(torch, checks)
    report(checks=checks, errors=errors, losses=losses)
