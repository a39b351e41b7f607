"""Many ranks of real torch_npu on the emulated machine: `torchrun` starts
one process per rank, each on its own NPU, and torch.distributed's "hccl"
backend (torch_npu's ProcessGroupHCCL) runs every collective over the
emulated HCCL, whose data Gloo carries. Values are checked on the host by
the ranks themselves (distributed.py); here each rank's report is
asserted."""

import json
import os
import subprocess
import sys

import pytest

from conftest import HERE

TORCHRUN = [sys.executable, "-m", "torch.distributed.run", "--standalone"]


def torchrun(machine, scenario, ranks, env=None, devices=4, timeout=600):
    """Runs `distributed.py scenario` on `ranks` ranks; gives each rank's
    JSON report, by rank, and the launcher's output."""
    full = dict(os.environ, ACLMEM_EMU_MACHINE=machine, ACLMEM_EMU_DEVICES=str(devices),
                HCCL_CONNECT_TIMEOUT="120", HCCL_EXEC_TIMEOUT="120", **(env or {}))
    out = subprocess.run(
        TORCHRUN + [f"--nproc-per-node={ranks}", str(HERE / "distributed.py"), scenario],
        capture_output=True, text=True, timeout=timeout, env=full,
    )
    reports = {}
    for line in out.stdout.splitlines():
        if line.startswith("{"):
            r = json.loads(line)
            reports[r["rank"]] = r
    assert out.returncode == 0, f"torchrun failed ({out.returncode}):\n{out.stdout}\n{out.stderr[-6000:]}"
    assert sorted(reports) == list(range(ranks)), out.stdout
    return reports, out


@pytest.mark.parametrize("ranks", [2, 4])
def test_every_collective_and_type(machine, ranks):
    reports, _ = torchrun(machine, "collectives", ranks)
    for rank, r in reports.items():
        assert r["fails"] == [], f"rank {rank}"
        # 8 types x 4 reductions, then broadcast, all_gather (world + 1),
        # reduce_scatter, scatter, all_to_all (2), p2p (2), and at rank 0
        # reduce and gather (world).
        expected = 32 + 1 + (ranks + 1) + 1 + 1 + 2 + 2 + (1 + ranks if rank == 0 else 0)
        assert r["checks"] == expected, f"rank {rank}"


@pytest.mark.parametrize("allocator", ["default", "expandable_zero_copy"])
def test_weight_sync_gives_the_memory_back_every_cycle(machine, allocator):
    env = {} if allocator == "default" else {
        "PYTORCH_NPU_ALLOC_CONF": "expandable_segments:True",
        "TORCH_HCCL_ZERO_COPY": "1",
    }
    reports, _ = torchrun(machine, "weight_sync", 2, env)
    rollout = 2 * 16 * (1 << 20)
    for rank, r in reports.items():
        assert r["fails"] == [] and r["checks"] == 3, f"rank {rank}"
        for before, awake, after in r["free"]:
            assert awake <= before - rollout, f"rank {rank}: the rollout buffer took no memory"
            assert after == before, f"rank {rank}: a cycle kept memory"
        assert len({c[0] for c in r["free"]}) == 1, f"rank {rank}: memory crept across cycles"
        if allocator != "default":
            assert r["zero_copy"] == "1"


def test_grouped_coalesced_and_paired_work_completes(machine):
    """Work launched inside an HCCL group (the backend's _group_start and
    _group_end, the coalescing manager with and without a device,
    batch_isend_irecv) completes after wait(), like a plain async
    collective's, with the right values on both ranks."""
    reports, _ = torchrun(machine, "grouped", 2, devices=2)
    for rank, r in reports.items():
        assert r["fails"] == [], f"rank {rank}"
        assert r["cases"] == {"plain": 1, "group": 2, "coalesced": 1, "coalesced_device": 1,
                              "batch_isend_irecv": 1}, f"rank {rank}"
        # Two completion checks per case, then the values: 1 + 2 + 2 + 2 + 1.
        assert r["checks"] == 5 * 2 + 8, f"rank {rank}"


def test_a_dying_rank_fails_its_peer_and_its_memory_returns(machine):
    reports, out = torchrun(machine, "dying_rank", 2)
    assert reports[1]["left"] is True
    r = reports[0]
    assert r["error"] is not None and "HcclAllreduce" in r["error"], r
    assert "Connection closed by peer" in out.stderr or "Connection reset" in out.stderr
    # What rank 1 held on its device is the machine's again.
    assert r["device1_free"] == r["device1_total"]


def test_one_rank_of_a_fake_world_of_1024(machine):
    """`aclmem run --fake-world 1024`: rank 0 of 1024 on one box, its
    collectives complete at once, and its memory is a 1024-rank job's."""
    full = dict(os.environ, ACLMEM_EMU_MACHINE=machine)
    out = subprocess.run(
        [os.environ["ACLMEM_CLI"], "run", "--fake-world", "1024", "--devices", "1", "--",
         sys.executable, str(HERE / "distributed.py"), "fake_world"],
        capture_output=True, text=True, timeout=300, env=full,
    )
    assert out.returncode == 0, out.stderr[-4000:]
    r = json.loads([l for l in out.stdout.splitlines() if l.startswith("{")][-1])
    assert r["fails"] == [] and r["checks"] == 3
    assert r["world"] == 1024 and r["rank"] == 0
    assert r["gathered_bytes"] >= 1024 * 1024 * 4


def _ip(*args, check=True):
    return subprocess.run(["ip", *args], capture_output=True, text=True, check=check)


@pytest.fixture
def two_hosts():
    """Two network namespaces joined by a veth pair, 10.77.x.1 and
    10.77.x.2: two "hosts" with nothing shared but the link. Needs root
    (CI runs as root)."""
    if os.geteuid() != 0 or subprocess.run(["which", "ip"], capture_output=True).returncode != 0:
        pytest.skip("network namespaces need root and iproute2")
    tag = os.getpid() % 200 + 20
    names = [f"aclmem{tag}a", f"aclmem{tag}b"]
    veths = [f"am{tag}a", f"am{tag}b"]
    addrs = [f"10.77.{tag}.1", f"10.77.{tag}.2"]
    for n in names:
        _ip("netns", "del", n, check=False)
        _ip("netns", "add", n)
    try:
        _ip("link", "add", veths[0], "type", "veth", "peer", "name", veths[1])
        for n, v, a in zip(names, veths, addrs):
            _ip("link", "set", v, "netns", n)
            _ip("-n", n, "addr", "add", f"{a}/24", "dev", v)
            _ip("-n", n, "link", "set", v, "up")
            _ip("-n", n, "link", "set", "lo", "up")
        yield list(zip(names, addrs))
    finally:
        for n in names:
            _ip("netns", "del", n, check=False)


def test_two_hosts_in_network_namespaces(machine, two_hosts):
    """`torchrun --nnodes 2`: each host runs its own emulated machine with
    two NPUs, and the four ranks' collectives cross the veth link (HCCL
    picks each host's interface address; Gloo connects them)."""
    (ns0, master), (ns1, _) = two_hosts
    procs = []
    for node, ns in enumerate([ns0, ns1]):
        env = dict(os.environ, ACLMEM_EMU_MACHINE=f"{machine}-host{node}"[:60], ACLMEM_EMU_DEVICES="2",
                   HCCL_CONNECT_TIMEOUT="120", HCCL_EXEC_TIMEOUT="120")
        procs.append(subprocess.Popen(
            ["ip", "netns", "exec", ns, sys.executable, "-m", "torch.distributed.run", "--nnodes=2",
             f"--node-rank={node}", "--nproc-per-node=2", f"--master-addr={master}", "--master-port=29517",
             str(HERE / "distributed.py"), "collectives"],
            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env))
    reports = {}
    for p in procs:
        out, err = p.communicate(timeout=600)
        assert p.returncode == 0, f"{out}\n{err[-4000:]}"
        for line in out.splitlines():
            if line.startswith("{"):
                r = json.loads(line)
                reports[r["rank"]] = r
    assert sorted(reports) == [0, 1, 2, 3]
    for rank, r in reports.items():
        assert r["fails"] == [], f"rank {rank}"
        assert r["checks"] == 32 + 1 + 5 + 1 + 1 + 2 + 2 + (5 if rank == 0 else 0)
