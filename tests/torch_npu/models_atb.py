"""ATB's paged attention on the emulated NPU (imported by scenarios.py):
`python scenarios.py atb_paged_attention`. torch_npu's
`_npu_paged_attention` goes through its ATB plugin to `libatb.so` (one more
name of the emulated library); each result is compared with a CPU
definition (gather each token's positions through its block table, then
softmax(scale·q·kᵀ)·v per head, kv heads grouped), eagerly and in a graph
captured with `auto_dispatch_capture` and updated with new context lengths
(host values) before each replay. An operation the emulator does not carry
out (`_npu_reshape_and_cache`) raises."""

import json

__all__ = ["atb_paged_attention"]


def report(**values):
    print(json.dumps(values), flush=True)


def _reference(torch, q, kc, vc, table, lens, scale):
    """The definition, in float32 on the CPU."""
    blocks, bs, nkv, d = kc.shape
    t, n, _ = q.shape
    dv = vc.shape[-1]
    out = torch.zeros(t, n, dv)
    for i in range(t):
        pos = torch.arange(int(lens[i]))
        rows = table[i][pos // bs].long() * bs + pos % bs
        k = kc.reshape(blocks * bs, nkv, d)[rows].float().repeat_interleave(n // nkv, dim=1)
        v = vc.reshape(blocks * bs, nkv, dv)[rows].float().repeat_interleave(n // nkv, dim=1)
        s = torch.einsum("nd,lnd->nl", q[i].float(), k) * scale
        out[i] = torch.einsum("nl,lnd->nd", s.softmax(-1), v)
    return out


def _inputs(torch, dtype, t, n, nkv, d, dv, blocks, bs, width, seed):
    g = torch.Generator().manual_seed(seed)
    q = torch.randn(t, n, d, generator=g).to(dtype)
    kc = torch.randn(blocks, bs, nkv, d, generator=g).to(dtype)
    vc = torch.randn(blocks, bs, nkv, dv, generator=g).to(dtype)
    table = torch.randint(0, blocks, (t, width), generator=g, dtype=torch.int32)
    lens = torch.randint(1, width * bs + 1, (t,), generator=g, dtype=torch.int32)
    return q, kc, vc, table, lens


def atb_paged_attention():
    import torch
    import torch_npu

    checks, errors = {}, {}
    t, n, nkv, d, dv, blocks, bs, width, scale = 3, 8, 2, 16, 12, 10, 4, 3, 0.3

    def run(q, kc, vc, table, lens, out):
        torch_npu._npu_paged_attention(
            query=q, key_cache=kc, value_cache=vc, num_kv_heads=nkv, num_heads=n,
            scale_value=scale, block_table=table, context_lens=lens, out=out)

    for dtype, tol in [(torch.float16, 2e-3), (torch.bfloat16, 2e-2)]:
        name = str(dtype).split(".")[-1]
        q, kc, vc, table, lens = _inputs(torch, dtype, t, n, nkv, d, dv, blocks, bs, width, 1)
        out = torch.zeros(t, n, dv, dtype=dtype).npu()
        run(q.npu(), kc.npu(), vc.npu(), table.npu(), lens, out)
        err = (out.cpu().float() - _reference(torch, q, kc, vc, table, lens, scale)).abs().max().item()
        errors[f"eager_{name}"] = err
        checks[f"eager_{name}"] = err < tol

    # Captured, then updated with new lengths (and new data copied into the
    # captured buffers) before each replay.
    dtype = torch.float16
    q, kc, vc, table, lens = _inputs(torch, dtype, t, n, nkv, d, dv, blocks, bs, width, 2)
    dq, dk, dvc, dt = q.npu(), kc.npu(), vc.npu(), table.npu()
    out = torch.zeros(t, n, dv, dtype=dtype).npu()
    graph = torch.npu.NPUGraph()
    with torch.npu.graph(graph, stream=torch.npu.Stream(), auto_dispatch_capture=True):
        run(dq, dk, dvc, dt, lens, out)
    for step, seed in enumerate([3, 4]):
        q2, kc2, vc2, table2, lens2 = _inputs(torch, dtype, t, n, nkv, d, dv, blocks, bs, width, seed)
        dq.copy_(q2.npu()); dk.copy_(kc2.npu()); dvc.copy_(vc2.npu()); dt.copy_(table2.npu())
        graph.update(cpu_update_input=[{"context_lens": lens2}])
        graph.replay()
        torch.npu.synchronize()
        err = (out.cpu().float() - _reference(torch, q2, kc2, vc2, table2, lens2, scale)).abs().max().item()
        errors[f"replay_{step}"] = err
        checks[f"replay_{step}"] = err < 2e-3

    # Not carried out: raises, nothing computed.
    try:
        k = torch.zeros(2, nkv, d, dtype=dtype).npu()
        torch_npu._npu_reshape_and_cache(k, k, dk, dk, torch.tensor([0, 1], dtype=torch.int32).npu())
        torch.npu.synchronize()
        checks["reshape_and_cache_raises"] = False
    except RuntimeError as e:
        checks["reshape_and_cache_raises"] = "CreateOperation failed" in str(e)
    report(checks=checks, errors=errors)
