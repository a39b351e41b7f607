"""Complex tensors on the emulated NPU (imported by scenarios.py):
`python scenarios.py complex_data`. The operator API moves complex64 and
complex128 as pairs of their parts: fill, zero and one, copies (strided
too) and casts, each compared with CPU torch; arithmetic on them is
refused with the operator API's code, not computed wrongly."""

import json

__all__ = ["complex_data"]


def report(**values):
    print(json.dumps(values), flush=True)


def complex_data():
    import torch
    import torch_npu  # noqa: F401

    torch.npu.set_device(0)
    checks = {}
    for dt, rt in [(torch.complex64, torch.float32), (torch.complex128, torch.float64)]:
        n = str(dt).split(".")[1]
        torch.manual_seed(2)
        x = torch.randn(3, 4, dtype=dt)
        xn = x.npu()
        checks[f"{n}_round_trip"] = torch.equal(xn.cpu(), x)
        checks[f"{n}_zeros"] = torch.equal(torch.zeros(3, dtype=dt, device="npu").cpu(),
                                           torch.zeros(3, dtype=dt))
        checks[f"{n}_ones"] = torch.equal(torch.ones(3, dtype=dt, device="npu").cpu(),
                                          torch.ones(3, dtype=dt))
        filled = torch.empty(5, dtype=dt, device="npu").fill_(1.5 - 2j)
        checks[f"{n}_fill"] = torch.equal(filled.cpu(), torch.full((5,), 1.5 - 2j, dtype=dt))
        checks[f"{n}_transpose"] = torch.equal(xn.t().contiguous().cpu(), x.t().contiguous())
        checks[f"{n}_slice"] = torch.equal(xn[:, 1:3].contiguous().cpu(), x[:, 1:3].contiguous())
        other = torch.complex128 if dt == torch.complex64 else torch.complex64
        checks[f"{n}_to_{str(other).split('.')[1]}"] = torch.equal(xn.to(other).cpu(), x.to(other))
        r = torch.randn(3, 4, dtype=rt)
        checks[f"{n}_from_real"] = torch.equal(r.npu().to(dt).cpu(), r.to(dt))
        import warnings
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # "casting complex values to real discards..."
            # torch_npu hands back complex128's real parts as float32
            # (its own choice of the output's type): compared as values.
            real = xn.to(rt).cpu()
            checks[f"{n}_to_real"] = torch.allclose(real.to(rt), x.to(rt), rtol=1e-6, atol=0)
        checks[f"{n}_views_as_real"] = torch.equal(torch.view_as_real(xn).cpu(), torch.view_as_real(x))
        d = torch.empty(3, 4, dtype=dt, device="npu")
        d.copy_(xn)
        checks[f"{n}_device_to_device"] = torch.equal(d.cpu(), x)
        try:
            (xn * 2).cpu()
            checks[f"{n}_arithmetic_refused"] = False
        except RuntimeError as e:
            checks[f"{n}_arithmetic_refused"] = "161002" in str(e)
    report(checks=checks)
