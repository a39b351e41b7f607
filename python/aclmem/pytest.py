"""A pytest plugin that runs a test suite on aclmem's emulated NPU.

Use it with ``pytest -p aclmem.pytest`` (or ``PYTEST_PLUGINS=aclmem.pytest``;
``--aclmem`` then turns it on where a conftest loads it). Each test then
runs:

* **on a fresh emulated machine**: its own machine name, so memory, devices
  and shared handles never leak from one test into the next;
* **in a fresh process**: torch_npu refuses to fork once it has initialised
  the NPU, and a crash (a segfault, an abort) in one test must not take the
  others down. With ``--aclmem-isolation=fork`` (the default) the pytest
  process, which has imported the test modules (and so torch) but never
  initialised the NPU, forks one child per test: a test costs the test, not
  the interpreter's start and torch's import. ``spawn`` starts a new
  interpreter per test instead (slower; for code that cannot be forked at
  all).

The machine is configured by options (``--aclmem-soc``, ``--aclmem-devices``,
``--aclmem-hbm``, ``--aclmem-cann``) and, per test, by a marker::

    @pytest.mark.aclmem(devices=2, soc="Ascend910B1", hbm="64GiB")
    def test_two_devices(): ...

``ops="plan"`` (``--aclmem-ops plan``) runs a test in plan mode: every
operator is checked and accepted without computing and copies move no data,
so a model larger than the host runs its real allocations (its values are
not results).

Before pytest imports anything of the suite (its first ``conftest.py``, which
for most suites imports torch and with it torch_npu), the plugin restarts
pytest once under ``aclmem run`` (the command this package carries), which
puts the emulated CANN libraries on the dynamic loader's path and lays out an
installation for the program to find, so torch_npu loads them. The restart
happens in ``pytest_load_initial_conftests``, the first hook after pytest has
read its options and loaded the plugins named with ``-p`` or
``PYTEST_PLUGINS``, and before it loads a conftest. Reports, ``-k``, ``-x``, ``--junitxml`` and the exit
code are pytest's own: each child sends its reports back to the pytest
process, which logs them as if the test had run there.

What it cannot isolate: state created at collection time, in the pytest
process, before any test (module-level code) is shared by every test's child,
as it was computed: a device count read at import reflects the options, not
a marker's ``devices``.
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
from typing import Any, Dict, List, Optional

import pytest

#: The variable that marks a pytest process already restarted under
#: ``aclmem run``; its value is the directory of the session's machines.
_REEXEC = "ACLMEM_PYTEST_SESSION"
#: Set in a child that ``spawn`` started: run the one test given, in process.
_CHILD = "ACLMEM_PYTEST_CHILD"

#: Marker keyword -> the emulator's variable.
_SETTINGS = {
    "soc": "ACLMEM_EMU_SOC",
    "devices": "ACLMEM_EMU_DEVICES",
    "hbm": "ACLMEM_EMU_HBM",
    "host": "ACLMEM_EMU_HOST",
    "cann": "ACLMEM_EMU_CANN",
    "run_mode": "ACLMEM_EMU_RUN_MODE",
    "ops": "ACLMEM_EMU_OPS",
}

#: What ``ops`` (``--aclmem-ops``, ``ACLMEM_EMU_OPS``) takes: ``compute``
#: computes the operators that have a kernel; ``plan`` checks every operator
#: and computes none, and copies move no data (docs/torch-npu.md, "Plan
#: mode").
_OPS = ("compute", "plan")


def pytest_addoption(parser: Any) -> None:
    group = parser.getgroup("aclmem", "aclmem: the emulated NPU")
    group.addoption(
        "--aclmem",
        action="store_true",
        default=False,
        help="run each test on a fresh emulated NPU machine in its own process "
        "(implied by -p aclmem.pytest)",
    )
    group.addoption(
        "--aclmem-isolation",
        choices=("fork", "spawn"),
        default="fork",
        help="fork: one child of the pytest process per test (default); spawn: a new interpreter per test",
    )
    for key, var in _SETTINGS.items():
        group.addoption(
            f"--aclmem-{key.replace('_', '-')}",
            dest=f"aclmem_{key}",
            default=None,
            help=f"the emulated machine's {key} (${var})",
        )
    group.addoption(
        "--aclmem-timeout",
        type=float,
        default=None,
        help="seconds a test may run before its process is killed and the test fails (default: none)",
    )


def _active(config: Any) -> bool:
    """Whether the plugin was asked for: ``-p aclmem.pytest`` or ``--aclmem``."""
    options = getattr(config, "known_args_namespace", None) or config.option
    if getattr(options, "aclmem", False):
        return True
    early = getattr(config, "_aclmem_named", None)
    if early is None:
        args = list(config.invocation_params.args)
        named = any(str(a).endswith("aclmem.pytest") for a in args) or (
            "aclmem.pytest" in os.environ.get("PYTEST_PLUGINS", "")
        )
        early = named or os.environ.get(_REEXEC) is not None
        config._aclmem_named = early
    return bool(early)


def _settings(options: Any) -> Dict[str, str]:
    """The machine's variables from the options (a config's ``option`` or its
    early ``known_args_namespace``)."""
    out = {}
    for key, var in _SETTINGS.items():
        value = getattr(options, f"aclmem_{key}", None)
        if value is not None:
            out[var] = str(value)
    return out


def _original_argv() -> List[str]:
    argv = getattr(sys, "orig_argv", None)
    if argv:
        return [sys.executable, *argv[1:]]
    return [sys.executable, "-m", "pytest", *sys.argv[1:]]


@pytest.hookimpl(tryfirst=True)
def pytest_load_initial_conftests(early_config: Any, parser: Any, args: List[str]) -> None:
    """Restarts pytest under ``aclmem run`` before the first conftest is
    imported (never returns when it restarts)."""
    if not _active(early_config) or os.environ.get(_CHILD):
        return
    if os.environ.get(_REEXEC) is None:
        # pytest's capture already holds the output descriptors here (it
        # captures what a conftest prints at import): give them back, or
        # the restarted pytest would write into the capture's files.
        capman = early_config.pluginmanager.getplugin("capturemanager")
        if capman is not None:
            capman.stop_global_capturing()
        _restart_under_aclmem(early_config.known_args_namespace)


def pytest_configure(config: Any) -> None:
    config.addinivalue_line(
        "markers",
        "aclmem(devices=, soc=, hbm=, host=, cann=, run_mode=, ops=): the emulated machine this test runs on "
        "(ops='plan': operators checked, not computed; copies move no data)",
    )
    if not _active(config) or os.environ.get(_CHILD):
        return
    if os.environ.get(_REEXEC) is None:
        # Turned on by ``--aclmem`` in a conftest's ``addopts`` (or a
        # plugin loaded after the conftests): too late for the first
        # restart, so restart here, as before.
        _restart_under_aclmem(config.option)
    config._aclmem_session = os.environ[_REEXEC]


def _restart_under_aclmem(options: Any) -> None:
    """Starts this pytest again under ``aclmem run`` (never returns)."""
    from . import lib_dir

    exe = os.path.join(lib_dir(), "aclmem")
    session = tempfile.mkdtemp(prefix="aclmem-pytest-")
    env = dict(os.environ)
    env[_REEXEC] = session
    # Machines of this session live in its own directory, removed at the end.
    env["ACLMEM_EMU_DIR"] = session
    env.setdefault("ACLMEM_EMU_QUIET", "1")
    env.update(_settings(options))
    argv = [exe, "run", "--", *_original_argv()]
    sys.stdout.flush()
    sys.stderr.flush()
    try:
        os.execve(exe, argv, env)
    except OSError as e:
        shutil.rmtree(session, ignore_errors=True)
        raise pytest.UsageError(f"aclmem: cannot run {exe}: {e}") from e


def pytest_unconfigure(config: Any) -> None:
    session = getattr(config, "_aclmem_session", None)
    if session and os.path.basename(session).startswith("aclmem-pytest-"):
        shutil.rmtree(session, ignore_errors=True)


def _machine_env(item: Any, n: int) -> Dict[str, str]:
    """The environment a test's process runs with: a machine of its own,
    configured by the options and then by the test's marker."""
    env = {"ACLMEM_EMU_MACHINE": f"pytest-{os.getpid()}-{n}"}
    marker = item.get_closest_marker("aclmem")
    if marker is not None:
        unknown = set(marker.kwargs) - set(_SETTINGS)
        if unknown or marker.args:
            raise pytest.UsageError(
                f"{item.nodeid}: @pytest.mark.aclmem takes keywords {sorted(_SETTINGS)}, "
                f"not {sorted(unknown) or list(marker.args)}"
            )
        for key, value in marker.kwargs.items():
            if key == "ops" and str(value) not in _OPS:
                raise pytest.UsageError(
                    f"{item.nodeid}: @pytest.mark.aclmem(ops=...) takes {' or '.join(_OPS)}, not {value!r}"
                )
            env[_SETTINGS[key]] = str(value)
    return env


_COUNTER = [0]


@pytest.hookimpl(tryfirst=True)
def pytest_runtest_protocol(item: Any, nextitem: Any) -> Optional[bool]:
    config = item.config
    if not getattr(config, "_aclmem_session", None) or os.environ.get(_CHILD):
        return None
    _COUNTER[0] += 1
    env = _machine_env(item, _COUNTER[0])
    item.ihook.pytest_runtest_logstart(nodeid=item.nodeid, location=item.location)
    if config.getoption("aclmem_isolation") == "spawn":
        reports = _run_spawned(item, env)
    else:
        reports = _run_forked(item, env)
    for report in reports:
        item.ihook.pytest_runtest_logreport(report=report)
    item.ihook.pytest_runtest_logfinish(nodeid=item.nodeid, location=item.location)
    return True


def _serialize(item: Any, reports: List[Any]) -> str:
    hook = item.config.hook
    return json.dumps([hook.pytest_report_to_serializable(config=item.config, report=r) for r in reports])


def _deserialize(item: Any, text: str) -> List[Any]:
    hook = item.config.hook
    reports = []
    for data in json.loads(text):
        # JSON has no tuples: a skip's (file, line, reason) comes back as a
        # list, and pytest's reporters want the tuple.
        if isinstance(data.get("longrepr"), list):
            data["longrepr"] = tuple(data["longrepr"])
        reports.append(hook.pytest_report_from_serializable(config=item.config, data=data))
    return reports


def _run_forked(item: Any, env: Dict[str, str]) -> List[Any]:
    from _pytest.runner import runtestprotocol

    read_fd, write_fd = os.pipe()
    sys.stdout.flush()
    sys.stderr.flush()
    pid = os.fork()
    if pid == 0:  # the test's process
        code = 0
        try:
            os.close(read_fd)
            os.environ.update(env)
            reports = runtestprotocol(item, log=False, nextitem=None)
            data = _serialize(item, reports).encode()
            with os.fdopen(write_fd, "wb") as out:
                out.write(data)
        except BaseException:  # noqa: BLE001 - nothing may escape a forked child
            code = 70
        finally:
            sys.stdout.flush()
            sys.stderr.flush()
            os._exit(code)
    os.close(write_fd)
    with os.fdopen(read_fd, "rb") as pipe:
        data, status = _wait(item, pid, pipe)
    if data:
        try:
            return _deserialize(item, data.decode())
        except (ValueError, KeyError):
            pass
    return [_crash_report(item, status, "")]


def _wait(item: Any, pid: int, pipe: Any) -> Any:
    """The child's output and wait status; a child past the timeout is
    killed (its status says so)."""
    import selectors

    timeout = item.config.getoption("aclmem_timeout")
    chunks = []
    with selectors.DefaultSelector() as sel:
        sel.register(pipe, selectors.EVENT_READ)
        import time

        deadline = None if timeout is None else time.monotonic() + timeout
        while True:
            left = None if deadline is None else max(0.0, deadline - time.monotonic())
            if left == 0.0:
                os.kill(pid, signal.SIGKILL)
                os.waitpid(pid, 0)
                return b"", ("timeout", timeout)
            if sel.select(left):
                chunk = os.read(pipe.fileno(), 1 << 16)
                if not chunk:
                    break
                chunks.append(chunk)
    _, status = os.waitpid(pid, 0)
    return b"".join(chunks), status


def _describe(status: Any) -> str:
    if isinstance(status, tuple):
        return f"its process was killed after the {status[1]} s timeout (--aclmem-timeout)"
    if os.WIFSIGNALED(status):
        sig = os.WTERMSIG(status)
        try:
            name = signal.Signals(sig).name
        except ValueError:
            name = str(sig)
        return f"its process was killed by signal {sig} ({name})"
    return f"its process exited with code {os.WEXITSTATUS(status)} before reporting"


def _crash_report(item: Any, status: Any, output: str) -> Any:
    from _pytest.reports import TestReport

    message = f"aclmem: {item.nodeid} crashed: {_describe(status)}"
    sections = [("Captured output", output)] if output else []
    return TestReport(
        nodeid=item.nodeid,
        location=item.location,
        keywords={k: 1 for k in item.keywords},
        outcome="failed",
        longrepr=message,
        when="call",
        sections=sections,
        duration=0.0,
        user_properties=[],
    )


def _run_spawned(item: Any, env: Dict[str, str]) -> List[Any]:
    """Runs the one test in a new interpreter (pytest again, on its node id,
    with the same options), reading its reports from a file."""
    fd, path = tempfile.mkstemp(prefix="aclmem-report-", suffix=".json")
    os.close(fd)
    child_env = dict(os.environ)
    child_env.update(env)
    child_env[_CHILD] = path
    cmd = [
        sys.executable,
        "-m",
        "pytest",
        "-p",
        "aclmem.pytest",
        "-q",
        "-p",
        "no:cacheprovider",
        "--rootdir",
        str(item.config.rootpath),
        item.nodeid,
    ]
    timeout = item.config.getoption("aclmem_timeout")
    output = ""
    try:
        proc = subprocess.run(
            cmd,
            env=child_env,
            cwd=str(item.config.invocation_params.dir),
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            timeout=timeout,
            check=False,
        )
        output = proc.stdout.decode(errors="replace")
        # As a wait status: a signal in the low bits, else the exit code above them.
        status: Any = -proc.returncode if proc.returncode < 0 else proc.returncode << 8
        with open(path, encoding="utf-8") as f:
            text = f.read()
        if text:
            return _deserialize(item, text)
    except subprocess.TimeoutExpired:
        status = ("timeout", timeout)
    finally:
        try:
            os.unlink(path)
        except OSError:
            pass
    return [_crash_report(item, status, output)]


def pytest_collection_modifyitems(session: Any, config: Any, items: List[Any]) -> None:
    """In a spawned child, the reports of its one test are written to the
    file the parent named."""
    path = os.environ.get(_CHILD)
    if not path:
        return
    collected: List[Any] = []
    config._aclmem_child_reports = collected

    class _Collect:
        @staticmethod
        def pytest_runtest_logreport(report: Any) -> None:
            collected.append(report)

        @staticmethod
        def pytest_sessionfinish(session: Any) -> None:
            hook = session.config.hook
            data = [hook.pytest_report_to_serializable(config=session.config, report=r) for r in collected]
            with open(path, "w", encoding="utf-8") as f:
                json.dump(data, f)

    config.pluginmanager.register(_Collect(), "aclmem-child-reports")
