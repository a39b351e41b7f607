"""The package as a newcomer meets it: clean module namespaces, and the
README examples run as written."""

import os
import pathlib
import re
import subprocess
import sys

import pytest

import aclmem
import aclmem.acl
import aclmem.rt

ROOT = pathlib.Path(__file__).resolve().parents[2]


@pytest.mark.parametrize("module", [aclmem, aclmem.acl, aclmem.acl.rt, aclmem.acl.util, aclmem.rt], ids=lambda m: m.__name__)
def test_a_module_shows_its_api_and_nothing_else(module):
    public = {n for n in dir(module) if not n.startswith("_")}
    assert public == set(module.__all__)
    for name in module.__all__:
        assert getattr(module, name) is not None


def _python_blocks(path):
    text = path.read_text()
    return re.findall(r"```python\n(.*?)```", text, flags=re.S)


EXAMPLES = [
    (path, i, code)
    for path in (ROOT / "python" / "README.md", ROOT / "README.md")
    for i, code in enumerate(_python_blocks(path))
]


def test_the_readmes_have_python_examples():
    assert len(EXAMPLES) >= 3


def _run(code, name):
    """Runs an example in a fresh interpreter on a machine of its own, in
    the tests' directory (so that it imports the installed package, not the
    source tree)."""
    env = dict(os.environ, ACLMEM_EMU_MACHINE=f"pytest-readme-{os.getpid()}-{name}")
    return subprocess.run(
        [sys.executable, "-c", code],
        capture_output=True,
        text=True,
        timeout=120,
        env=env,
        cwd=pathlib.Path(__file__).parent,
    )


@pytest.mark.parametrize("path, i, code", EXAMPLES, ids=lambda v: str(v) if isinstance(v, int) else None)
def test_a_readme_example_runs(path, i, code):
    p = _run(code, f"{path.parent.name}-{i}")
    assert p.returncode == 0, f"{path.name} example {i}:\n{code}\n{p.stderr}"


def test_the_readme_reads_device_memory_through_a_host_copy():
    (code,) = [c for p, _, c in EXAMPLES if p.parent.name == "python" and "malloc_physical" in c]
    assert "ptr_to_bytes(va" not in code
    p = _run(code, "copy")
    assert p.stdout.strip() == "b'hello, device'", p.stderr
