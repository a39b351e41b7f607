"""A small transformer's training step on the emulated NPU (imported by
scenarios.py): `python scenarios.py transformer`."""

import json

__all__ = ["transformer"]


def report(**values):
    print(json.dumps(values), flush=True)


def _compare(checks, torch):
    """A check recorder: NPU values against CPU ones, within a tolerance
    (as scenarios.py's)."""

    def close(name, npu, cpu, tol):
        npu, cpu = npu.detach().cpu().float(), cpu.detach().float()
        checks[name] = npu.shape == cpu.shape and bool(torch.allclose(npu, cpu, rtol=tol, atol=tol))

    return close


def _transformer_model(torch, dropout):
    """Token embedding, one encoder layer (causal), a linear head. The
    causal mask is a float `src_mask` (Triu on the device): attention's
    math path in torch_npu (bmm, softmax, dropout, where); with
    `is_causal=True` (and no padding mask) the mask is dropped and
    torch_npu takes its fused attention (aclnnFlashAttentionScore)."""

    class Tiny(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.emb = torch.nn.Embedding(20, 32)
            self.enc = torch.nn.TransformerEncoderLayer(
                d_model=32, nhead=4, dim_feedforward=64, batch_first=True, dropout=dropout)
            self.head = torch.nn.Linear(32, 20)

        def forward(self, tokens, padding=None, fused=False):
            n = tokens.shape[1]
            causal = torch.nn.Transformer.generate_square_subsequent_mask(n, device=tokens.device)
            h = self.enc(self.emb(tokens), src_mask=causal, src_key_padding_mask=padding, is_causal=fused)
            return self.head(h)

    return Tiny()


def transformer():
    """A transformer's training step on the emulated NPU against the CPU:
    (a) embedding, a causal TransformerEncoderLayer (dropout 0), a linear
    head, cross-entropy, three AdamW steps with clip_grad_norm_, losses
    and parameters compared: with a float causal mask and a key padding
    mask (attention's math path), then with is_causal (the fused kernel);
    (b) dropout in training mode (StatelessDropOutGenMask,
    DropOutDoMask): reproducible from the seed, about p dropped, the kept
    scaled by 1/(1-p), the gradient zero exactly where the output was
    dropped; the transformer with dropout 0.1 trains and, in eval mode,
    matches the CPU; (c) where, masked_fill, triu, argmax, cumsum, topk
    and sort against the CPU in the types torch_npu passes."""
    import torch
    import torch.nn.functional as F
    import torch_npu  # noqa: F401

    torch.npu.set_device(0)
    checks = {}
    close = _compare(checks, torch)

    # (a) Three AdamW steps, CPU and NPU from the same weights: attention's
    # math path (a float causal mask and a key padding mask), then the
    # fused one (is_causal).
    padding = torch.zeros(3, 7, dtype=torch.bool)
    padding[2, 5:] = True
    losses = {}
    for variant, fused in (("transformer", False), ("transformer_fused", True)):
        torch.manual_seed(41)
        batches = [(torch.randint(0, 20, (3, 7)), torch.randint(0, 20, (3 * 7,)))] * 3
        cpu = _transformer_model(torch, 0.0)
        npu = _transformer_model(torch, 0.0).npu()
        npu.load_state_dict(cpu.state_dict())
        runs = {}
        for tag, model, dev in (("cpu", cpu, "cpu"), ("npu", npu, "npu")):
            # eps 1e-6, not 1e-8: AdamW's step g / (|g| + eps) turns the
            # rounding of a gradient element near eps into a difference of
            # up to the whole step (lr), on any two devices that sum in
            # another order; 1e-6 keeps the elements that rounding decides
            # far below the gradients.
            opt = torch.optim.AdamW(model.parameters(), lr=1e-2, weight_decay=1e-2, eps=1e-6)
            run = []
            for tokens, labels in batches:
                opt.zero_grad()
                pad = None if fused else padding.to(dev)
                out = model(tokens.to(dev), pad, fused=fused)
                loss = F.cross_entropy(out.reshape(-1, 20), labels.to(dev))
                loss.backward()
                norm = torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
                opt.step()
                run.append((loss.item(), norm.item()))
            runs[tag] = run
        checks[f"{variant}_losses"] = all(abs(a[0] - b[0]) < 1e-4 for a, b in zip(runs["cpu"], runs["npu"]))
        checks[f"{variant}_clip_norms"] = all(abs(a[1] - b[1]) < 1e-4 * (1 + b[1])
                                              for a, b in zip(runs["cpu"], runs["npu"]))
        checks[f"{variant}_learns"] = runs["npu"][2][0] < runs["npu"][0][0]
        # (The key bias's gradient is 0 but for rounding: softmax ignores
        # a number added to every score of a row. eps keeps its steps
        # small.)
        diffs = {name: float((q.detach().cpu() - p.detach()).abs().max())
                 for (name, p), (_, q) in zip(cpu.named_parameters(), npu.named_parameters())}
        runs["param_diffs"] = diffs
        runs["max_param_diff"] = max(diffs.values())
        checks[f"{variant}_params"] = runs["max_param_diff"] < 1e-4
        if fused:
            losses["fused"] = runs
        else:
            losses.update(runs)

    # (b) Dropout in training mode.
    x = torch.randn(64, 128)
    g = torch.randn(64, 128)
    p = 0.3
    for dtype, tol in ((torch.float32, 1e-6), (torch.float16, 1e-3), (torch.bfloat16, 1e-2)):
        kind = str(dtype).split(".")[1]
        xn = x.to(dtype).npu().requires_grad_()
        outs = []
        for seed in (5, 5, 6):
            torch.npu.manual_seed(seed)
            outs.append(F.dropout(xn, p, training=True))
        y = outs[0]
        checks[f"dropout_same_seed_same_output_{kind}"] = bool(torch.equal(outs[0].cpu(), outs[1].cpu()))
        checks[f"dropout_other_seed_other_mask_{kind}"] = not torch.equal(outs[0].cpu() == 0, outs[2].cpu() == 0)
        torch.npu.manual_seed(5)
        again = F.dropout(xn, p, training=True)
        following = F.dropout(xn, p, training=True)
        checks[f"dropout_next_call_other_mask_{kind}"] = not torch.equal(again.cpu() == 0, following.cpu() == 0)
        dropped = (y == 0).cpu()
        frac = dropped.float().mean().item()
        # 8192 draws: the fraction's standard deviation is about 0.005.
        checks[f"dropout_fraction_{kind}"] = abs(frac - p) < 0.03
        kept = ~dropped
        want = x.to(dtype).float()[kept] / (1 - p)
        close(f"dropout_kept_scaled_{kind}", y.detach().cpu().float()[kept], want, tol)
        y.backward(g.to(dtype).npu())
        grad = xn.grad.cpu().float()
        checks[f"dropout_grad_zero_where_dropped_{kind}"] = bool((grad[dropped] == 0).all())
        close(f"dropout_grad_kept_{kind}", grad[kept], g.to(dtype).float()[kept] / (1 - p), tol)
    eval_x = torch.randn(8, 8).npu()
    checks["dropout_eval_is_identity"] = bool(torch.equal(F.dropout(eval_x, p, training=False).cpu(), eval_x.cpu()))

    # The transformer with dropout 0.1: trains, and in eval mode matches the CPU.
    torch.manual_seed(43)
    cpu = _transformer_model(torch, 0.1)
    npu = _transformer_model(torch, 0.1).npu()
    npu.load_state_dict(cpu.state_dict())
    opt = torch.optim.AdamW(npu.parameters(), lr=1e-2)
    tokens, labels = batches[0]
    dropout_losses = []
    for _ in range(3):
        opt.zero_grad()
        loss = F.cross_entropy(npu(tokens.npu()).reshape(-1, 20), labels.npu())
        loss.backward()
        opt.step()
        dropout_losses.append(loss.item())
    losses["dropout_training"] = dropout_losses
    checks["dropout_transformer_trains"] = dropout_losses[-1] < dropout_losses[0]
    cpu.load_state_dict({k: v.cpu() for k, v in npu.state_dict().items()})
    cpu.eval()
    npu.eval()
    close("dropout_transformer_eval_matches_cpu", npu(tokens.npu()), cpu(tokens), 1e-4)

    # (c) The selections, scans and sorts, per type.
    torch.manual_seed(47)
    # Distinct values (exact in every type), so that the order is one.
    a = (torch.randperm(24).reshape(4, 6) - 12).float() * 1.5
    b = torch.randn(4, 6) * 4
    cond = torch.randn(4, 1) > 0
    types = {"float32": torch.float32, "float16": torch.float16, "bfloat16": torch.bfloat16,
             "int32": torch.int32, "int64": torch.int64}
    for kind, dtype in types.items():
        at, bt = a.to(dtype), b.to(dtype)
        an, bn, cn = at.npu(), bt.npu(), cond.npu()
        close(f"where_{kind}", torch.where(cn, an, bn), torch.where(cond, at, bt), 0)
        close(f"where_scalar_{kind}", torch.where(an > 0, an, 0), torch.where(at > 0, at, 0), 0)
        close(f"masked_fill_{kind}", an.masked_fill(cn, 3), at.masked_fill(cond, 3), 0)
        value = torch.tensor(-5, dtype=dtype)
        close(f"masked_fill_device_value_{kind}", an.masked_fill(cn, value.npu()), at.masked_fill(cond, value), 0)
        close(f"masked_fill_inplace_{kind}", an.clone().masked_fill_(an > 1, -2),
              at.clone().masked_fill_(at > 1, -2), 0)
        close(f"triu_{kind}", torch.triu(an, 1), torch.triu(at, 1), 0)
        close(f"tril_{kind}", torch.tril(an, -1), torch.tril(at, -1), 0)
        close(f"argmax_{kind}", torch.argmax(an, dim=1), torch.argmax(at, dim=1), 0)
        close(f"argmax_keepdim_{kind}", torch.argmax(an, dim=0, keepdim=True),
              torch.argmax(at, dim=0, keepdim=True), 0)
        close(f"argmax_flat_{kind}", torch.argmax(an), torch.argmax(at), 0)
        ctol = {"float16": 1e-2, "bfloat16": 5e-2}.get(kind, 1e-5)
        close(f"cumsum_{kind}", torch.cumsum(an, dim=1), torch.cumsum(at, dim=1), ctol)
        close(f"cumsum_dim0_{kind}", torch.cumsum(an, dim=0), torch.cumsum(at, dim=0), ctol)
        for largest in (True, False):
            vn, i_n = torch.topk(an, 3, dim=1, largest=largest)
            vc, ic = torch.topk(at, 3, dim=1, largest=largest)
            close(f"topk_{'largest' if largest else 'smallest'}_{kind}", vn, vc, 0)
            close(f"topk_{'largest' if largest else 'smallest'}_indices_{kind}", i_n, ic, 0)
        vn, i_n = torch.topk(an, 2, dim=0)
        vc, ic = torch.topk(at, 2, dim=0)
        close(f"topk_dim0_{kind}", vn, vc, 0)
        close(f"topk_dim0_indices_{kind}", i_n, ic, 0)
        for descending in (False, True):
            # (stable=True is sort.stable, an aclnn-only operator.)
            vn, i_n = torch.sort(an, dim=-1, descending=descending)
            vc, ic = torch.sort(at, dim=-1, descending=descending)
            tag = "descending" if descending else "ascending"
            close(f"sort_{tag}_{kind}", vn, vc, 0)
            close(f"sort_{tag}_indices_{kind}", i_n, ic, 0)
        close(f"sort_dim0_{kind}", torch.sort(an, dim=0)[0], torch.sort(at, dim=0)[0], 0)
        close(f"argsort_{kind}", torch.argsort(an, dim=1), torch.argsort(at, dim=1), 0)
    # cumsum of a bool mask counts (int64), as a position index is made.
    mask = torch.randn(3, 8) > 0
    close("cumsum_bool", torch.cumsum(mask.npu(), dim=1), torch.cumsum(mask, dim=1), 0)
    # The gradients through where, masked_fill, cumsum, topk and sort.
    x = torch.randn(4, 6)
    fns = {
        "where": lambda t: torch.where(t > 0, t * 2, t),
        "masked_fill": lambda t: t.masked_fill(t < -0.5, 0.0),
        "cumsum": lambda t: torch.cumsum(t, dim=1),
        "topk": lambda t: torch.topk(t, 2, dim=1)[0],
        "sort": lambda t: torch.sort(t, dim=1)[0],
    }
    for name, fn in fns.items():
        xn = x.npu().requires_grad_()
        xc = x.clone().requires_grad_()
        fn(xn).sum().backward()
        fn(xc).sum().backward()
        close(f"{name}_grad", xn.grad, xc.grad, 1e-6)
    report(checks=checks, losses=losses)
