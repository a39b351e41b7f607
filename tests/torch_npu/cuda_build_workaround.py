"""TEST-ONLY WORKAROUND for the CUDA build of torch. Never part of aclmem.

torch_npu's users install torch's CPU build, which the package registry
does not carry for x86_64: there `pip install torch` is the CUDA build.
Its `libc10_cuda.so` registers, at load time, allocator-configuration keys
that `libtorch_npu.so` registers too (for example
`pinned_reserve_segment_size_mb`, `per_process_memory_fraction`); the
second registration aborts the process with "Duplicated key ... in
device-specific configuration parser hook registration" before any aclmem
code runs.

This script renames those keys inside the test environment's copy of
`libc10_cuda.so` (the last character of each key's last 16 bytes, the
chunk the compiler builds the key from, becomes `X`; lengths are kept), so
that CUDA's parser no longer claims them. CUDA is never used on these
machines. It changes nothing on aarch64 (the registry's torch is the CPU
build there) or with a CPU build of torch, and it is idempotent.

Usage: python cuda_build_workaround.py <site-packages of the test venv>
"""

import pathlib
import re
import sys


def torch_npu_keys(site: pathlib.Path) -> set:
    """The configuration keys torch_npu registers (strings of its library)."""
    lib = site / "torch_npu" / "lib" / "libtorch_npu.so"
    data = lib.read_bytes()
    return {m.group(0) for m in re.finditer(rb"[a-z][a-z_]{5,40}", data)}


def patch(site: pathlib.Path) -> int:
    cuda = site / "torch" / "lib" / "libc10_cuda.so"
    if not cuda.exists():
        print("no libc10_cuda.so: a CPU build of torch, nothing to do")
        return 0
    data = cuda.read_bytes()
    # The keys both register: the ones CUDA's allocator configuration
    # parses (they are listed in its error messages' vocabulary) that
    # torch_npu's library names too.
    cuda_keys = {
        m.group(0)
        for m in re.finditer(rb"(?:pinned|per_process|release_lock|graph_capture)[a-z_]{4,40}", data)
    }
    shared = sorted(k for k in cuda_keys & torch_npu_keys(site))
    changed = 0
    for key in shared:
        tail = key[-16:]
        renamed = tail[:-1] + b"X"
        count = data.count(tail)
        if count:
            data = data.replace(tail, renamed)
            changed += count
            print(f"renamed {key.decode()} in libc10_cuda.so ({count} places)")
    if changed:
        cuda.write_bytes(data)
    else:
        print("libc10_cuda.so already patched")
    return 0


if __name__ == "__main__":
    sys.exit(patch(pathlib.Path(sys.argv[1])))
