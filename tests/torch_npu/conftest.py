"""Runs torch_npu scenarios on the emulated CANN libraries.

Every test runs a scenario of `scenarios.py` in a fresh Python process (a
scenario sets the allocator configuration before torch_npu initialises,
and a process initialises it once), on a machine of its own, and checks
what the scenario printed. The whole suite runs under `aclmem run`, which
lays out aclmem's CANN libraries and points the loader at them; see
README.md.
"""

import json
import os
import pathlib
import re
import subprocess
import sys

import pytest

HERE = pathlib.Path(__file__).resolve().parent


@pytest.fixture
def machine(request):
    """A machine name of this test's own."""
    name = re.sub(r"[^A-Za-z0-9._-]", "-", request.node.name)
    return f"torch-{os.getpid()}-{name}"[:60]


def run_scenario(name, machine, env=None, timeout=300, check=True):
    """Runs `scenarios.py name` and returns (its JSON result, stderr)."""
    full = dict(os.environ, ACLMEM_EMU_MACHINE=machine, **(env or {}))
    out = subprocess.run(
        [sys.executable, str(HERE / "scenarios.py"), name],
        capture_output=True,
        text=True,
        timeout=timeout,
        env=full,
    )
    if check:
        assert out.returncode == 0, f"{name} failed ({out.returncode}):\n{out.stdout}\n{out.stderr[-6000:]}"
    lines = [l for l in out.stdout.splitlines() if l.startswith("{")]
    result = json.loads(lines[-1]) if lines else None
    return result, out.stderr, out.returncode


def sanitize_scenario(name, machine, tmp_path, env=None, timeout=300, args=()):
    """Runs `scenarios.py name` under `aclmem sanitize` (preloaded and
    auditing the bindings); returns (result, findings, trace records, exit
    code)."""
    aclmem = os.environ["ACLMEM_CLI"]
    log, trace = tmp_path / "findings.jsonl", tmp_path / "trace.jsonl"
    full = dict(os.environ, ACLMEM_EMU_MACHINE=machine, **(env or {}))
    out = subprocess.run(
        [aclmem, "sanitize", "--log", str(log), "--trace", str(trace), *args, "--",
         sys.executable, str(HERE / "scenarios.py"), name],
        capture_output=True, text=True, timeout=timeout, env=full,
    )
    lines = [l for l in out.stdout.splitlines() if l.startswith("{")]
    result = json.loads(lines[-1]) if lines else None
    read = lambda p: [json.loads(l) for l in p.read_text().splitlines()] if p.exists() else []
    sanitize_scenario.stderr = out.stderr
    return result, read(log), read(trace), out.returncode
