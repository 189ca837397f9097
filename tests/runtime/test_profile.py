"""Profiling real commands (peakopt.runtime: measurement, segments, profile, cgroups).

Tolerances: the machine is shared (2 cores, several test runs at once), so a sampled figure is
checked within a margin that is stated with it; CPU seconds come from the kernel and are
checked tightly; peak cores depend on what else runs, so only their upper bound is checked.
"""

from __future__ import annotations

import math
import os
import sys
import time
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st
from runtime_helpers import child

from peakopt.models import Workflow
from peakopt.runtime.cgroups import detect, own_cgroup, read_usage_usec, v2_mount
from peakopt.runtime.measurement import (
    Accounting,
    MeasuredRun,
    ProfileError,
    UsagePiece,
    measure_run,
    usage_pieces,
)
from peakopt.runtime.profile import percentile, profile_command, profile_runs
from peakopt.runtime.segments import merge_pieces, rounded_durations
from peakopt.runtime.tree import Sample

#: What the Python interpreter itself holds, MiB (a margin: measured 10-25 here).
INTERPRETER = 40

pieces_strategy = st.lists(
    st.builds(
        UsagePiece,
        duration=st.floats(0, 5, allow_nan=False),
        cores=st.floats(0, 8, allow_nan=False),
        memory_mb=st.floats(0, 4096, allow_nan=False),
    ),
    max_size=60,
)


@given(pieces_strategy, st.floats(0, 1), st.integers(1, 10))
def test_merge_keeps_time_cpu_seconds_and_the_memory_peak(
    pieces: list[UsagePiece], tolerance: float, most: int
) -> None:
    spans = merge_pieces(pieces, tolerance=tolerance, max_segments=most)
    kept = [p for p in pieces if p.duration > 0]
    assert len(spans) <= most
    assert math.isclose(sum(s.duration for s in spans), sum(p.duration for p in kept), abs_tol=1e-9)
    cpu = sum(p.duration * p.cores for p in kept)
    assert math.isclose(sum(s.cpu_seconds for s in spans), cpu, rel_tol=1e-9, abs_tol=1e-9)
    if kept:
        assert max(s.memory_peak for s in spans) == max(p.memory_mb for p in kept)


def test_merge_finds_the_phases_of_noisy_samples() -> None:
    noisy = [UsagePiece(0.05, 1.0 + 0.08 * (-1) ** k, 100 + k % 3) for k in range(20)]
    noisy += [UsagePiece(0.05, 0.02, 400 + k % 5) for k in range(20)]
    spans = merge_pieces(noisy)
    assert len(spans) == 2
    assert spans[0].memory_peak == 102 and spans[1].memory_peak == 404
    assert math.isclose(spans[0].duration, 1.0) and math.isclose(spans[0].mean_cores, 1.0)


def test_the_pairwise_pass_merges_short_blips_first() -> None:
    pieces = [
        UsagePiece(1.0, 1, 100),
        UsagePiece(0.01, 1, 900),
        UsagePiece(1.0, 1, 100),
        UsagePiece(1.0, 1, 500),
    ]
    spans = merge_pieces(pieces, max_segments=2)
    assert [round(s.duration, 2) for s in spans] == [2.01, 1.0]
    assert spans[0].memory_peak == 900  # the blip's memory is kept in the segment it joined


def test_usage_pieces_add_up_to_the_run_and_its_cpu_seconds() -> None:
    samples = [Sample(0.1, 1.0, 50), Sample(0.2, 2.0, 80), Sample(0.3, 0.0, 20)]
    pieces = usage_pieces(samples, seconds=0.5, cpu_seconds=0.6)
    assert math.isclose(sum(p.duration for p in pieces), 0.5)
    assert math.isclose(sum(p.duration * p.cores for p in pieces), 0.6)
    assert [p.memory_mb for p in pieces] == [50, 80, 80, 20]  # a rise shows from the interval before


@given(
    st.lists(st.tuples(st.floats(0.001, 0.2), st.floats(0, 2)), min_size=1, max_size=20),
    st.floats(0.0, 0.05),
    st.floats(0.0, 1.0),
)
def test_the_cpu_the_samples_missed_never_makes_a_rate_no_machine_has(
    gaps: list[tuple[float, float]], tail: float, unseen_share: float
) -> None:
    # the exit is seen at once (a pidfd), so the interval after the last sample can be a few ms;
    # the CPU the samples missed (short-lived children, the last instants) once landed there
    # whole: 25 cores for 3 ms of a 2-core run. Spread over the run as needed, never above the
    # machine's cores, and the pieces still add up to the kernel's CPU seconds.
    cores = float(os.cpu_count() or 1)
    samples, now = [], 0.0
    for gap, rate in gaps:
        now += gap
        samples.append(Sample(now, min(rate, cores), 10))
    seconds = now + tail
    seen = sum(gap * min(rate, cores) for gap, rate in gaps)
    cpu_seconds = seen + unseen_share * (seconds * cores - seen)
    pieces = usage_pieces(samples, seconds=seconds, cpu_seconds=cpu_seconds)
    assert math.isclose(sum(p.duration for p in pieces), seconds, rel_tol=1e-9, abs_tol=1e-12)
    assert math.isclose(sum(p.duration * p.cores for p in pieces), cpu_seconds, rel_tol=1e-9, abs_tol=1e-9)
    assert max(p.cores for p in pieces) <= cores * (1 + 1e-9)


def test_the_issues_run_of_two_burning_workers_keeps_its_peak_below_two_cores() -> None:
    # measured: the last sample 3 ms before the exit, 0.19 CPU-s unseen (25.5 cores there)
    samples = [Sample(0.05 * (k + 1), 2.0 if 2 <= k <= 11 else 0.2, 50) for k in range(14)]
    pieces = usage_pieces(samples, seconds=0.703, cpu_seconds=1.28)
    assert max(p.cores for p in pieces) <= float(os.cpu_count() or 1) + 1e-9
    assert math.isclose(sum(p.duration * p.cores for p in pieces), 1.28)


@given(st.lists(st.floats(0, 100, allow_nan=False), min_size=1, max_size=30))
def test_rounded_durations_add_up_to_the_rounded_total(durations: list[float]) -> None:
    rounded = rounded_durations(durations)
    assert all(d >= 0 for d in rounded)
    assert math.isclose(sum(rounded), round(math.fsum(durations), 3), abs_tol=1e-6 * len(durations))


def test_percentiles_interpolate_between_sorted_runs() -> None:
    assert percentile([3, 1, 2], 0.5) == 2
    assert math.isclose(percentile([1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11], 0.1), 2)
    assert math.isclose(percentile([1.0, 2.0], 0.9), 1.9)


def run(seconds: float, cpu: float, peak: float, *pieces: UsagePiece) -> MeasuredRun:
    return MeasuredRun(seconds, cpu, peak, pieces, 0, "psutil", 0.05)


def test_profile_of_runs_is_the_median_run_with_the_spread_in_varies() -> None:
    runs = [
        run(s, s / 2, 100 * f, UsagePiece(s, 0.5, 100 * f)) for s, f in ((2.0, 1.0), (3.0, 1.2), (2.5, 1.1))
    ]
    task = profile_runs(runs, "step", ["prog", "--x"])
    assert task.id == "step" and task.length == 2.5  # the median run's profile
    assert task.segments[0].demand == {"cpu": 0.5, "memory_mb": 110.0}
    assert task.varies is not None and task.varies.duration is not None and task.varies.demand is not None
    assert (task.varies.duration.p10, task.varies.duration.p50, task.varies.duration.p90) == (2.1, 2.5, 2.9)
    assert task.varies.demand.p50 == 1.0
    meta = task.meta["profile"]
    assert task.meta["command"] == "prog --x" and meta["runs"] == 3 and meta["accounting"] == "psutil"
    assert meta["interval"] == 0.05 and meta["seconds"] == [2.0, 3.0, 2.5]
    one = profile_runs(runs[:1], "step", ["prog"])
    assert one.varies is None


def test_a_profile_never_shows_less_memory_than_the_run_peaked_at() -> None:
    # a short run between samples: the kernel counted a 51 MiB peak the samples never saw
    runs = [run(0.064, 0.05, 51.2, UsagePiece(0.03, 0.2, 1.0), UsagePiece(0.034, 0.9, 6.0)) for _ in range(2)]
    task = profile_runs(runs, "embed", ["python", "-c", "..."])
    assert max(s.demand["memory_mb"] for s in task.segments) == 52.0  # up to 1 MiB
    assert task.segments[0].demand["memory_mb"] == 1.0  # the rest of the curve as sampled
    assert task.varies is None or task.varies.demand is None or task.varies.demand.p50 == 1.0


# --- cgroups: detection from the files the kernel shows -----------------------------------


def fake_proc(tmp_path: Path, controllers: str, delegated: str) -> Path:
    root = tmp_path / "cgroup2"
    group = root / "user.slice" / "me"
    group.mkdir(parents=True)
    (group / "cgroup.controllers").write_text(controllers + "\n")
    (group / "cgroup.subtree_control").write_text(delegated + "\n")
    proc = tmp_path / "proc"
    proc.mkdir()
    (proc / "cgroup").write_text("0::/user.slice/me\n")
    (proc / "mountinfo").write_text(f"41 31 0:38 / {root} rw,relatime - cgroup2 cgroup2 rw\n")
    return proc


def test_cgroup_v2_is_used_only_where_memory_and_cpu_are_delegated(tmp_path: Path) -> None:
    found = detect(fake_proc(tmp_path / "a", "cpuset cpu io memory pids", "cpu memory"))
    assert found.parent is not None and found.parent.name == "me"
    hybrid = detect(fake_proc(tmp_path / "b", "hugetlb", ""))
    assert hybrid.parent is None and "does not delegate memory, cpu" in hybrid.reason


def test_cgroup_files_are_parsed() -> None:
    hybrid = "4:memory:/x\n1:cpu:/\n0::/\n"
    assert own_cgroup(hybrid) == "/" and own_cgroup("4:memory:/x\n") is None
    assert v2_mount("25 30 0:22 / /sys/fs/cgroup rw - cgroup2 cgroup2 rw\n") == Path("/sys/fs/cgroup")
    assert v2_mount("25 30 0:22 / /sys/fs/cgroup/memory rw - cgroup cgroup rw,memory\n") is None
    assert read_usage_usec("usage_usec 1500000\nuser_usec 1000000\n") == 1500000
    with pytest.raises(ValueError, match="usage_usec"):
        read_usage_usec("user_usec 1\n")


def test_this_machine_says_which_accounting_it_uses() -> None:
    found = detect()
    assert (found.parent is None) == (found.reason not in ("cgroup v2", "cgroup v1"))
    if found.parent is None:
        with pytest.raises(ProfileError, match="cgroup accounting is not available here"):
            measure_run(["true"], accounting="cgroup")


# --- real commands ------------------------------------------------------------------------


#: Both accountings, each measured for real (cgroups skipped only where this process cannot create them).
ACCOUNTING = [
    pytest.param(
        "cgroup", marks=pytest.mark.skipif(detect().parent is None, reason=f"no cgroups: {detect().reason}")
    ),
    "psutil",
]


@pytest.mark.parametrize("accounting", ACCOUNTING)
def test_a_child_in_phases_is_measured_within_tolerance(
    accounting: Accounting, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    own = tmp_path / "cpu"
    monkeypatch.setenv("CHILD_CPU_FILE", str(own))
    # 80 MiB for 0.8 s of CPU on one process, then 200 MiB more, asleep for 0.8 s
    task = profile_command(
        child((80, 0.8, 1), (200, 0.8, 0)), task_id="phases", interval=0.05, accounting=accounting
    )
    meta = task.meta["profile"]
    assert meta["accounting"] == (detect().reason if accounting == "cgroup" else "psutil")
    assert ("psutil_because" in meta) == (accounting == "psutil")
    peak = max(s.demand["memory_mb"] for s in task.segments)
    assert 280 <= peak <= 280 + INTERPRETER, peak  # the peak: both phases' memory plus the interpreter
    # the first phase: segments nearer 80 MiB (+ interpreter) than 280, lasting most of its 0.8 s;
    # to keep at most 8 segments the merge may fold the first sample of the 200 MiB allocation
    # into it, and a segment holds its highest memory (measured: 132 MiB over 0.55 s)
    first = [s for s in task.segments if 80 <= s.demand["memory_mb"] < (80 + INTERPRETER + 280) / 2]
    # (0.8 s of CPU takes longer on a loaded machine; the merge may fold its edges into a neighbour)
    assert sum(s.duration for s in first) >= 0.25, task.segments
    last = [s for s in task.segments if s.demand["memory_mb"] >= 280]
    assert sum(s.duration for s in last) >= 0.5, task.segments  # the second phase, asleep
    asleep = sum(s.duration * s.demand["cpu"] for s in last) / sum(s.duration for s in last)
    assert asleep <= 0.3, task.segments  # mostly asleep (allocating 200 MiB takes some CPU)
    # the kernel's count: the burn plus start-up and page faults, which a loaded machine makes dearer
    # (1.302 s seen in CI), so checked against the child's own count; after it wrote that, the
    # child only frees its memory and exits (0.04-0.07 s measured here)
    counted = float(own.read_text())
    assert 0.8 <= counted <= meta["cpu_seconds"][0] <= counted + 0.25, (counted, meta["cpu_seconds"])
    assert task.length >= 1.6 and meta["runs"] == 1 and meta["interval"] == 0.05
    assert 280 <= meta["memory_peak_mb"][0] <= 280 + INTERPRETER  # the run's peak (cgroups: the kernel's)


@pytest.mark.slow
@pytest.mark.parametrize("accounting", ACCOUNTING)
def test_cpu_of_several_processes_and_the_spread_of_runs(accounting: Accounting) -> None:
    # two processes, each 0.6 s of CPU, holding 50 MiB: measured three times
    task = profile_command(child((50, 0.6, 2)), runs=3, task_id="two", interval=0.05, accounting=accounting)
    meta = task.meta["profile"]
    for cpu in meta["cpu_seconds"]:
        assert 1.2 <= cpu <= 1.2 + 0.8, meta  # two workers' 0.6 s, plus the interpreters' start-up
    assert meta["cpu_peak"] <= 2.5, meta  # never above the two burning processes (and sampling noise)
    assert len(meta["seconds"]) == 3
    assert any(math.isclose(task.length, seconds, abs_tol=1e-6) for seconds in meta["seconds"])
    if task.varies is not None and task.varies.duration is not None:
        low, high = min(meta["seconds"]), max(meta["seconds"])
        assert low <= task.varies.duration.p10 <= task.varies.duration.p90 <= high


def test_a_failing_or_missing_command_is_an_error() -> None:
    with pytest.raises(ProfileError, match="exited with 3 on run 1 of 1"):
        profile_command([sys.executable, "-c", "raise SystemExit(3)"])
    with pytest.raises(ProfileError, match="'no-such-program-x' cannot be run"):
        profile_command(["no-such-program-x"])


def test_the_profiled_task_fits_a_workflow() -> None:
    task = profile_command([sys.executable, "-c", "pass"], task_id="noop")
    Workflow(id="w", tasks=(task,))
    assert set(task.segments[0].demand) == {"cpu", "memory_mb"}


def test_the_psutil_peak_is_not_the_measuring_process_s(tmp_path: Path) -> None:
    # a child forked from a large process inherits its high-water mark (ru_maxrss survives exec)
    held = bytearray(300 * 2**20)
    held[::4096] = b"\x01" * len(range(0, len(held), 4096))
    run = measure_run(child((10, 0.3, 0)), accounting="psutil")
    assert 10 <= run.peak_mb <= 10 + INTERPRETER, run.peak_mb
    del held


#: Sampling intervals × command durations (s): the wait must end when the command does, whatever the
#: interval (an interval far above the duration slept past the exit: ``--interval 10 -- sleep 0.2``
#: reported a 10 s run and took 10 s).
INTERVALS, DURATIONS = (0.05, 0.5, 2.0, 10.0), (0.0, 0.2)


@pytest.mark.parametrize("accounting", ACCOUNTING)
@pytest.mark.parametrize("seconds", DURATIONS)
@pytest.mark.parametrize("interval", INTERVALS)
def test_the_run_lasts_as_long_as_the_command_whatever_the_interval(
    interval: float, seconds: float, accounting: Accounting
) -> None:
    began = time.monotonic()
    run = measure_run(["sleep", f"{seconds:g}"], interval=interval, accounting=accounting)
    took = time.monotonic() - began
    assert seconds <= run.seconds <= took, (run.seconds, took)
    assert math.isclose(sum(p.duration for p in run.pieces), run.seconds, rel_tol=1e-9, abs_tol=1e-9)
    # a bound, not a timing: within 1.5 s of the command however loaded the machine, so below an
    # interval of 2 or 10 s
    assert took < seconds + 1.5, (interval, seconds, took)
