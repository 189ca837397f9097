"""cgroup accounting (peakopt.runtime.cgroups, cgroup_v1): detection from fake files, and REAL v1 cgroups.

The real tests run wherever this process may create cgroup v1 children (a v1 machine as root:
this one and CI); elsewhere they are skipped with the reason :func:`detect_v1` gives.
Tolerances are those of tests/runtime/test_profile.py (a shared 2-core machine).
"""

from __future__ import annotations

import itertools
import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import psutil
import pytest
from runtime_helpers import child, shell

from peakopt.models import Machine
from peakopt.runtime.cgroup_v1 import (
    CgroupV1,
    detect_v1,
    file_cache,
    own_folders,
    remove_cgroup,
    v1_mounts,
    v1_paths,
)
from peakopt.runtime.cgroups import Cgroup, detect, detect_v2, memory_limit, within_limit
from peakopt.runtime.measurement import measure_run
from peakopt.runtime.trace import load_trace
from peakopt.runtime.tree import MIB

#: What the Python interpreter itself holds, MiB (a margin: measured 10-25 here).
INTERPRETER = 40

V1, WHY_NOT_V1 = detect_v1()
real_v1 = pytest.mark.skipif(not V1, reason=f"no cgroup v1 accounting here: {WHY_NOT_V1}")


def mountinfo(*mounts: tuple[str, str, str]) -> str:
    """mountinfo lines of (root, mount point, super options) cgroup v1 mounts."""
    return "".join(
        f"{30 + k} 23 0:{30 + k} {root} {point} rw,relatime shared:9 - cgroup cgroup rw,{options}\n"
        for k, (root, point, options) in enumerate(mounts)
    )


def fake_v1(tmp_path: Path, cgroup: str, *mounts: tuple[str, str, str]) -> Path:
    proc = tmp_path / "proc"
    proc.mkdir(parents=True)
    (proc / "cgroup").write_text(cgroup)
    (proc / "mountinfo").write_text("25 1 0:22 / / rw - ext4 /dev/vda rw\n" + mountinfo(*mounts))
    return proc


def test_v1_files_are_parsed() -> None:
    text = mountinfo(("/", "/sys/fs/cgroup/memory", "memory"), ("/", "/c/cpu,cpuacct", "cpu,cpuacct"))
    text += "41 31 0:38 / /sys/fs/cgroup/unified rw,relatime - cgroup2 cgroup2 rw\n"
    mounts = v1_mounts(text)
    assert mounts["memory"] == (Path("/sys/fs/cgroup/memory"), "/")
    assert mounts["cpuacct"] == mounts["cpu"] == (Path("/c/cpu,cpuacct"), "/")
    assert "rw" in mounts and "cgroup2" not in mounts  # an option that is no controller does no harm
    paths = v1_paths("12:cpu,cpuacct:/docker/a\n4:memory:/docker/a\n1:name=systemd:/x\n0::/\n")
    assert paths["cpuacct"] == paths["memory"] == "/docker/a"
    assert file_cache("cache 9\nrss 5\ntotal_cache 9\ntotal_active_file 3\ntotal_inactive_file 4\n") == 7
    assert file_cache("rss 5\n") == 0


def test_v1_folders_follow_the_mount_root() -> None:
    text = mountinfo(
        ("/docker/a", "/sys/fs/cgroup/memory", "memory"), ("/", "/sys/fs/cgroup/cpuacct", "cpuacct")
    )
    folders, why = own_folders(text, "4:memory:/docker/a/b\n2:cpuacct:/\n")
    assert why == "" and folders == {
        "memory": Path("/sys/fs/cgroup/memory/b"),
        "cpuacct": Path("/sys/fs/cgroup/cpuacct"),
    }
    _, outside = own_folders(text, "4:memory:/other\n2:cpuacct:/\n")
    assert "is not under its mount" in outside
    _, none = own_folders(mountinfo(("/", "/m", "memory")), "4:memory:/\n")
    assert none == "no cgroup v1 cpuacct hierarchy is mounted"


def test_detect_picks_v1_where_v2_has_no_controllers(tmp_path: Path) -> None:
    memory, cpu = tmp_path / "memory", tmp_path / "cpu,cpuacct"
    (memory / "job").mkdir(parents=True)
    cpu.mkdir()
    (memory / "job" / "memory.max_usage_in_bytes").write_text("0\n")
    (cpu / "cpuacct.usage").write_text("0\n")
    proc = fake_v1(
        tmp_path,
        "4:memory:/job\n3:cpu,cpuacct:/\n0::/\n",
        ("/", str(memory), "memory"),
        ("/", str(cpu), "cpu,cpuacct"),
    )
    found = detect(proc)
    assert found.reason == "cgroup v1" and found.parent == memory / "job"
    assert dict(found.v1) == {"memory": memory / "job", "cpuacct": cpu}
    assert isinstance(found.group(), CgroupV1)
    (cpu / "cpuacct.usage").unlink()
    missing = detect(proc)
    assert missing.parent is None and missing.group() is None
    assert "no cgroup v2 hierarchy is mounted" in missing.reason and "has no cpuacct.usage" in missing.reason


def test_v2_samples_leave_the_file_cache_out_too(tmp_path: Path) -> None:
    group = Cgroup(tmp_path)
    with group:
        (group.path / "memory.current").write_text(f"{300 * MIB}\n")
        (group.path / "memory.stat").write_text(
            f"anon {90 * MIB}\nfile {210 * MIB}\nactive_file {MIB}\n"
            f"inactive_file {199 * MIB}\nshmem {10 * MIB}\n"
        )
        (group.path / "cpu.stat").write_text("usage_usec 1500000\n")
        (group.path / "cgroup.procs").write_text("12\n34\n")
        assert group.memory_current() == 100 * MIB  # shared memory (in file) stays counted
        assert group.memory_peak() is None and group.usage_usec() == 1500000 and group.pids() == [12, 34]
        for name in ("memory.current", "memory.stat", "cpu.stat", "cgroup.procs"):
            (group.path / name).unlink()


def test_co_mounted_controllers_share_one_cgroup(tmp_path: Path) -> None:
    group = CgroupV1({"memory": tmp_path, "cpuacct": tmp_path})
    assert group.folders == [group.memory] and group.memory == group.cpuacct
    with group:
        assert group.memory.is_dir()
    assert not group.memory.exists()


# --- real cgroup v1 -----------------------------------------------------------------------


def leftovers() -> list[Path]:
    """This process's measured cgroups still present in the v1 hierarchies."""
    return [p for parent in set(V1.values()) for p in parent.glob(f"peakopt-{os.getpid()}-*")]


@real_v1
def test_detect_picks_v1_here() -> None:
    found = detect()
    if detect_v2().parent is None:  # v2 comes first where it delegates memory and cpu (not here)
        assert found.reason == "cgroup v1" and dict(found.v1) == V1 and found.parent == V1["memory"]
        assert isinstance(found.group(), CgroupV1)


@real_v1
def test_the_kernel_peak_is_at_least_every_sample() -> None:
    with CgroupV1(V1) as group:
        proc = subprocess.Popen(child((120, 0.4, 0)), preexec_fn=group.join)
        samples = []
        while proc.poll() is None:
            samples.append(group.memory_current())
            time.sleep(0.02)
        assert proc.pid not in group.pids()
        peak = group.memory_peak()
        assert peak >= max(samples) and peak >= 120 * MIB
        assert group.usage_usec() > 0
    assert leftovers() == []


@real_v1
def test_a_short_spike_between_samples_is_in_the_exact_peak() -> None:
    # 200 MiB for 0.05 s, sampled every 2 s: the samples see little of it, the kernel all of it
    run = measure_run(child((200, 0.05, 0)), interval=2.0, accounting="cgroup")
    assert run.accounting == "cgroup v1"
    assert 200 <= run.peak_mb <= 200 + INTERPRETER, run
    assert leftovers() == []


@real_v1
def test_page_cache_is_in_the_peak_but_not_in_the_samples(tmp_path: Path) -> None:
    # holds 50 MiB, writes a 300 MiB file in 1 MiB blocks (no more resident), then waits
    program = (
        "import sys, time\n"
        "held = bytearray(50 * 2**20); held[::4096] = b'x' * len(range(0, len(held), 4096))\n"
        "with open(sys.argv[1], 'wb') as f:\n"
        "    for _ in range(300): f.write(bytes(2**20))\n"
        "time.sleep(0.6)\n"
    )
    run = measure_run(
        [sys.executable, "-c", program, str(tmp_path / "out")], interval=0.05, accounting="cgroup"
    )
    sampled = max(p.memory_mb for p in run.pieces)
    assert 50 <= sampled <= 50 + INTERPRETER, run.pieces  # the file's cache is not what the command holds
    # the kernel's peak counts the cache it charged (some may be reclaimed under pressure)
    assert run.peak_mb >= sampled + 150, run.peak_mb


@real_v1
def test_a_descendant_that_outlives_the_command_leaves_the_cgroup(tmp_path: Path) -> None:
    pid_file = tmp_path / "pid"
    run = measure_run(["sh", "-c", f"sleep 30 & echo $! > {pid_file}"], accounting="cgroup")
    assert run.exit_code == 0 and leftovers() == []
    straggler = psutil.Process(int(pid_file.read_text()))
    try:
        assert straggler.is_running()  # not measured any more, but not killed either
        ours = v1_paths(Path("/proc/self/cgroup").read_text())
        assert v1_paths(Path(f"/proc/{straggler.pid}/cgroup").read_text())["memory"] == ours["memory"]
    finally:
        straggler.kill()


INTERRUPTED = """
import signal, sys
signal.signal(signal.SIGINT, signal.default_int_handler)
from peakopt.runtime.measurement import measure_run
try:
    measure_run(["sh", "-c", "sleep 60 & sleep 60"], accounting="cgroup")
except KeyboardInterrupt:
    sys.exit(130)
"""


@pytest.mark.slow
@real_v1
def test_an_interrupted_run_leaves_no_cgroup_and_no_process() -> None:
    runner = subprocess.Popen([sys.executable, "-c", INTERRUPTED])
    try:
        parent = V1["memory"]
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline:
            made = list(parent.glob(f"peakopt-{runner.pid}-*"))
            if made and len((made[0] / "cgroup.procs").read_text().split()) >= 3:
                break  # sh and both sleeps are in it
            time.sleep(0.05)
        else:
            pytest.fail("the measured cgroup never filled")
        members = [int(p) for p in (made[0] / "cgroup.procs").read_text().split()]
        runner.send_signal(signal.SIGINT)
        assert runner.wait(timeout=30) == 130
    finally:
        runner.kill()
    assert [p for q in set(V1.values()) for p in q.glob(f"peakopt-{runner.pid}-*")] == []
    assert not any(
        psutil.pid_exists(pid) and psutil.Process(pid).status() != psutil.STATUS_ZOMBIE for pid in members
    )


# --- a machine's memory capacity from the cgroup limit --------------------------------------


def test_the_memory_limit_is_the_lowest_of_the_cgroup_and_its_ancestors(tmp_path: Path) -> None:
    root = tmp_path / "cgroup2"
    (root / "a" / "b").mkdir(parents=True)
    (root / "memory.max").write_text("max\n")  # no limit at the root
    (root / "a" / "memory.max").write_text(f"{512 * MIB}\n")
    (root / "a" / "b" / "memory.max").write_text("max\n")
    proc = tmp_path / "proc"
    proc.mkdir()
    (proc / "cgroup").write_text("0::/a/b\n")
    (proc / "mountinfo").write_text(f"41 31 0:38 / {root} rw - cgroup2 cgroup2 rw\n")
    assert memory_limit(proc) == 512 * MIB
    (root / "a" / "memory.max").write_text("max\n")
    assert memory_limit(proc) is None
    memory = tmp_path / "memory"
    (memory / "job").mkdir(parents=True)
    (memory / "job" / "memory.stat").write_text(f"rss 1\nhierarchical_memory_limit {256 * MIB}\n")
    (memory / "job" / "memory.limit_in_bytes").write_text("9223372036854771712\n")
    v1 = fake_v1(tmp_path / "v1", "4:memory:/job\n", ("/", str(memory), "memory"))
    assert memory_limit(v1) == 256 * MIB  # an ancestor's limit, through hierarchical_memory_limit
    assert memory_limit(tmp_path / "nowhere") is None


def test_a_machine_within_the_limit() -> None:
    box = Machine(name="box", capacity={"cpu": 2, "memory_mb": 1000}, soft=("cpu",))
    lowered, how = within_limit(box, 384 * MIB)
    assert lowered.capacity == {"cpu": 2, "memory_mb": 384} and lowered.soft == ("cpu",)
    assert how == "memory_mb 384 MiB: this process's cgroup memory limit (declared 1000 MiB)"
    assert within_limit(box, 2000 * MIB)[0] is box and within_limit(box, None)[0] is box
    assert within_limit(Machine(name="m", capacity={"cpu": 1}), MIB)[0].capacity["memory_mb"] == 1


@pytest.mark.slow
@real_v1
def test_run_under_a_cgroup_limit_admits_what_fits_the_limit(tmp_path: Path) -> None:
    # three steps holding 100 MiB each (declared 250): the declared 1000 MiB would run them together,
    # the cgroup's 384 MiB one at a time
    tasks = [
        {"id": n, "duration": 0.3, "demand": {"memory_mb": 250}, "meta": {"command": shell((100, 0.3, 0))}}
        for n in "abc"
    ]
    machines = [{"name": "box", "capacity": {"cpu": 2, "memory_mb": 1000}}]
    workflow = tmp_path / "wf.json"
    workflow.write_text(json.dumps({"machines": machines, "workflows": [{"id": "w", "tasks": tasks}]}))
    limited = V1["memory"] / f"peakopt-test-{os.getpid()}-limit"
    limited.mkdir()
    try:
        (limited / "memory.limit_in_bytes").write_text(str(384 * MIB))
        done = subprocess.run(
            [
                str(Path(sys.executable).with_name("peakopt")),
                "run",
                str(workflow),
                "--policy",
                "asap",
                "--cgroup-memory",
                "-o",
                str(tmp_path / "trace.json"),
            ],
            preexec_fn=lambda: (limited / "cgroup.procs").write_text(str(os.getpid())),
            capture_output=True,
            text=True,
            timeout=120,
        )
    finally:
        remove_cgroup(limited)
    assert done.returncode == 0, done.stderr
    assert "memory_mb 384 MiB: this process's cgroup memory limit (declared 1000 MiB)" in done.stderr
    trace = load_trace(tmp_path / "trace.json")
    assert trace.machine.capacity["memory_mb"] == 384 and trace.status == "ok"
    spans = sorted((s.start or 0.0, s.end or 0.0) for s in trace.steps)
    assert all(b[0] >= a[1] for a, b in itertools.pairwise(spans)), spans  # one at a time
    assert not limited.exists()
