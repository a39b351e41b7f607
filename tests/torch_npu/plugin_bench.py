"""Benchmark (not a test): what a test costs under the pytest plugin, per
isolation mode, on a suite of small torch_npu tests.

Each test of the generated suite makes a tensor on the emulated NPU and
reads it back. The suite runs through ``pytest -p aclmem.pytest`` with
``--aclmem-isolation=fork`` (children of a pytest process that imported
torch and torch_npu) and ``spawn`` (a new interpreter per test); the
difference per test is what forking saves. Needs torch, torch_npu and the
aclmem package in the running interpreter's environment; the numbers go in
docs/benchmarks.md with the command.

    python tests/torch_npu/plugin_bench.py [TESTS]
"""

import os
import subprocess
import sys
import tempfile
import time

SUITE = """
import torch
import torch_npu  # noqa: F401


def make(i):
    def test():
        x = torch.full((64,), float(i), device="npu")
        assert x.cpu().sum().item() == 64 * i
    return test


for _i in range({n}):
    globals()[f"test_{{_i}}"] = make(_i)
"""


def run(directory, isolation):
    start = time.monotonic()
    out = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-p", "aclmem.pytest",
         f"--aclmem-isolation={isolation}", directory],
        capture_output=True, text=True, check=False,
    )
    elapsed = time.monotonic() - start
    if out.returncode != 0:
        sys.exit(f"{isolation}: pytest failed ({out.returncode}):\n{out.stdout[-3000:]}\n{out.stderr[-3000:]}")
    return elapsed


def main():
    n = int(sys.argv[1]) if len(sys.argv) > 1 else 20
    with tempfile.TemporaryDirectory() as d:
        with open(os.path.join(d, "test_small.py"), "w") as f:
            f.write(SUITE.format(n=n))
        times = {mode: run(d, mode) for mode in ("fork", "spawn")}
    print(f"{n} tests: fork {times['fork']:.1f} s ({times['fork'] / n:.2f} s per test), "
          f"spawn {times['spawn']:.1f} s ({times['spawn'] / n:.2f} s per test)")


if __name__ == "__main__":
    main()
