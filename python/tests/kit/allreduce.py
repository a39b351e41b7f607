"""One rank of the wheel check's job (``torchrun --nproc-per-node 2``
under ``aclmem run --devices 2``): an ``all_reduce`` of NPU tensors over
torch_npu's "hccl" backend, whose data the wheel's Gloo engine carries.

Each rank prints one JSON line: whether the sum is right, which engine
file the process mapped, every ``libgloo`` file it mapped (none may be),
and whether the system's ``libgloo.so.0`` can be loaded at all (on the
machine the check makes, it cannot).
"""

import ctypes
import json
import os
import sys

import torch
import torch_npu  # noqa: F401  (registers the NPU and the hccl backend)
import torch.distributed as dist

RANK = int(os.environ["RANK"])
WORLD = int(os.environ["WORLD_SIZE"])
torch.npu.set_device(int(os.environ["LOCAL_RANK"]))
dist.init_process_group("hccl")

x = torch.arange(1 << 16, dtype=torch.float32).npu() + RANK
dist.all_reduce(x)
want = torch.arange(1 << 16, dtype=torch.float32) * WORLD + sum(range(WORLD))
summed = bool(torch.equal(x.cpu(), want))
dist.barrier()
dist.destroy_process_group()


def mapped(word):
    with open("/proc/self/maps") as maps:
        return sorted({line.split()[-1] for line in maps if word in line and "/" in line})


try:
    ctypes.CDLL("libgloo.so.0")
    system_gloo = True
except OSError:
    system_gloo = False

# One write of the whole line: the ranks share the pipe, and a line written
# at once (under PIPE_BUF) is never interleaved with the other rank's.
line = json.dumps({
    "rank": RANK,
    "summed": summed,
    "engine": mapped("libaclmem_gloo"),
    "libgloo": mapped("libgloo.so"),
    "system_gloo": system_gloo,
}) + "\n"
sys.stdout.flush()
os.write(1, line.encode())
