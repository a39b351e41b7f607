"""The ``aclmem`` command of the wheel: runs the CLI binary it carries in
:func:`aclmem.lib_dir`, with the same arguments."""

import os
import sys


def main() -> None:
    from . import lib_dir

    exe = os.path.join(lib_dir(), "aclmem")
    try:
        os.execv(exe, [exe, *sys.argv[1:]])
    except OSError as e:
        sys.exit(f"aclmem: cannot run {exe}: {e}")
