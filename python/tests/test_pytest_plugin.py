"""The pytest plugin (``pytest -p aclmem.pytest``) on a small suite of its
own: each test in its own process on its own emulated machine, pytest's
outcomes, selection, ``-x``, junit XML and exit codes kept, a crash
reported as that test's failure without taking the others down."""

import os
import subprocess
import sys
import textwrap
import xml.etree.ElementTree as ET

import pytest

SUITE = '''
import json
import os
import pathlib

import pytest

OUT = pathlib.Path(os.environ["PLUGIN_OUT"])


def note(name):
    (OUT / name).write_text(json.dumps({
        "pid": os.getpid(),
        "machine": os.environ.get("ACLMEM_EMU_MACHINE"),
        "devices": os.environ.get("ACLMEM_EMU_DEVICES"),
        "ops": os.environ.get("ACLMEM_EMU_OPS"),
        "home": os.environ.get("ASCEND_HOME_PATH"),
    }))


def test_passes():
    note("passes")


def test_fails():
    note("fails")
    assert 1 + 1 == 3


@pytest.mark.skip(reason="skipped on purpose")
def test_skipped():
    pass


def test_crashes():
    note("crashes")
    os.abort()


@pytest.mark.aclmem(devices=3, soc="Ascend910B1", ops="plan")
def test_marker_configures_the_machine():
    note("marker")
    assert os.environ["ACLMEM_EMU_DEVICES"] == "3"
    assert os.environ["ACLMEM_EMU_SOC"] == "Ascend910B1"
    assert os.environ["ACLMEM_EMU_OPS"] == "plan"


def test_after_the_crash():
    note("after")
'''


def run_suite(tmp_path, *args):
    tmp_path.mkdir(parents=True, exist_ok=True)
    suite = tmp_path / "suite"
    suite.mkdir(exist_ok=True)
    (suite / "test_suite.py").write_text(textwrap.dedent(SUITE))
    out = tmp_path / "out"
    out.mkdir(exist_ok=True)
    junit = tmp_path / "junit.xml"
    env = dict(os.environ, PLUGIN_OUT=str(out))
    proc = subprocess.run(
        [sys.executable, "-m", "pytest", "-p", "aclmem.pytest", "-p", "no:cacheprovider",
         f"--junitxml={junit}", "--aclmem-devices=2", *args, str(suite)],
        capture_output=True, text=True, timeout=300, env=env, cwd=str(tmp_path),
    )
    return proc, out, junit


def notes(out):
    import json

    return {p.name: json.loads(p.read_text()) for p in out.iterdir()}


def test_each_test_runs_alone_and_pytest_reports_it(tmp_path):
    proc, out, junit = run_suite(tmp_path)
    assert proc.returncode == 1, proc.stdout + proc.stderr
    suite = ET.parse(junit).getroot().find("testsuite")
    counts = {k: int(suite.get(k)) for k in ("tests", "failures", "errors", "skipped")}
    assert counts == {"tests": 6, "failures": 2, "errors": 0, "skipped": 1}, proc.stdout
    failed = {c.get("name") for c in suite.iter("testcase") if c.find("failure") is not None}
    assert failed == {"test_fails", "test_crashes"}
    assert "killed by signal 6 (SIGABRT)" in proc.stdout
    seen = notes(out)
    # The crash did not stop the test after it, and every test had its
    # own process and machine, with the options' and the marker's devices.
    assert set(seen) == {"passes", "fails", "crashes", "marker", "after"}
    assert len({n["pid"] for n in seen.values()}) == 5
    assert len({n["machine"] for n in seen.values()}) == 5
    assert seen["passes"]["devices"] == "2" and seen["marker"]["devices"] == "3"
    # ops="plan" is the marked test's alone.
    assert seen["passes"]["ops"] is None and seen["marker"]["ops"] == "plan"
    # Under `aclmem run`: an installation to find.
    home = seen["passes"]["home"]
    assert home and os.path.isdir(os.path.join(home, "lib64"))


def test_selection_and_exit_codes_are_pytests(tmp_path):
    proc, out, _ = run_suite(tmp_path, "-k", "passes or marker")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert set(notes(out)) == {"passes", "marker"}
    proc, out, _ = run_suite(tmp_path / "stop", "-x")
    assert proc.returncode == 1
    assert "fails" in notes(out) and "crashes" not in notes(out), "-x stops at the first failure"


def test_spawn_runs_each_test_in_a_new_interpreter(tmp_path):
    proc, out, junit = run_suite(tmp_path, "--aclmem-isolation=spawn", "-k", "passes or crashes or marker")
    assert proc.returncode == 1, proc.stdout + proc.stderr
    suite = ET.parse(junit).getroot().find("testsuite")
    assert (int(suite.get("tests")), int(suite.get("failures"))) == (3, 1), proc.stdout
    seen = notes(out)
    assert seen["marker"]["devices"] == "3"
    assert len({n["pid"] for n in seen.values()}) == 3


def test_a_bad_marker_is_a_usage_error(tmp_path):
    suite = tmp_path / "bad"
    suite.mkdir()
    (suite / "test_bad.py").write_text(
        "import pytest\n\n@pytest.mark.aclmem(gpus=2)\ndef test_x():\n    pass\n"
    )
    proc = subprocess.run(
        [sys.executable, "-m", "pytest", "-p", "aclmem.pytest", "-p", "no:cacheprovider", str(suite)],
        capture_output=True, text=True, timeout=120, cwd=str(tmp_path),
    )
    assert proc.returncode != 0
    assert "gpus" in proc.stdout + proc.stderr


def test_a_mode_other_than_compute_or_plan_is_a_usage_error(tmp_path):
    suite = tmp_path / "bad"
    suite.mkdir()
    (suite / "test_bad.py").write_text(
        "import pytest\n\n@pytest.mark.aclmem(ops='dry')\ndef test_x():\n    pass\n"
    )
    proc = subprocess.run(
        [sys.executable, "-m", "pytest", "-p", "aclmem.pytest", "-p", "no:cacheprovider", str(suite)],
        capture_output=True, text=True, timeout=120, cwd=str(tmp_path),
    )
    assert proc.returncode != 0
    assert "compute or plan" in proc.stdout + proc.stderr


@pytest.mark.skipif(sys.platform != "linux", reason="the emulator runs on Linux")
def test_without_the_plugin_nothing_changes(tmp_path):
    (tmp_path / "test_plain.py").write_text(
        "import os\n\ndef test_plain():\n    assert 'ACLMEM_PYTEST_SESSION' not in os.environ\n"
    )
    proc = subprocess.run(
        [sys.executable, "-m", "pytest", "-p", "no:cacheprovider", str(tmp_path)],
        capture_output=True, text=True, timeout=120, cwd=str(tmp_path),
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr


#: A conftest that needs the CANN libraries when it is imported, as a suite's
#: does when it imports torch and with it torch_npu (which loads
#: libascendcl.so and finds its installation at import).
CONFTEST = '''
import ctypes
import os

HOME = os.environ.get("ASCEND_HOME_PATH")
assert HOME, "imported before aclmem run laid an installation out"
LIB = ctypes.CDLL("libascendcl.so")
assert LIB.aclrtGetSocName, "the emulated library"
'''


def run_conftest_suite(tmp_path, how):
    suite = tmp_path / "suite"
    suite.mkdir(parents=True)
    (suite / "conftest.py").write_text(textwrap.dedent(CONFTEST))
    (suite / "test_uses_it.py").write_text(
        "import conftest\n\n\ndef test_the_library_is_there():\n    assert conftest.LIB\n"
    )
    env = dict(os.environ)
    env.pop("LD_LIBRARY_PATH", None)
    env.pop("ASCEND_HOME_PATH", None)
    args = [sys.executable, "-m", "pytest", "-p", "no:cacheprovider", str(suite)]
    if how == "-p":
        args[3:3] = ["-p", "aclmem.pytest"]
    else:
        env["PYTEST_PLUGINS"] = "aclmem.pytest"
    return subprocess.run(args, capture_output=True, text=True, timeout=300, env=env,
                          cwd=str(tmp_path))


@pytest.mark.parametrize("how", ["-p", "PYTEST_PLUGINS"])
def test_a_conftest_that_needs_the_libraries_at_import_runs(tmp_path, how):
    # Without the plugin the conftest cannot even be imported: the check has
    # teeth.
    bare = subprocess.run(
        [sys.executable, "-c", "import ctypes; ctypes.CDLL('libascendcl.so')"],
        capture_output=True, text=True, timeout=60,
        env={k: v for k, v in os.environ.items() if k != "LD_LIBRARY_PATH"},
    )
    assert bare.returncode != 0, "libascendcl.so is found without aclmem run"
    proc = run_conftest_suite(tmp_path, how)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "1 passed" in proc.stdout
