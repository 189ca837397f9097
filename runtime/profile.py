"""Profiling a real command: its measured runs as one task of peakopt's format.

:func:`profile_command` runs a command ``runs`` times (:func:`~peakopt.runtime.measurement.measure_run`)
and returns a :class:`~peakopt.models.Task`:

- its **profile** is that of the median run (by wall time), merged into a few segments
  (:mod:`peakopt.runtime.segments`), with demands ``cpu`` (cores) and ``memory_mb`` (MiB);
  durations are rounded to 1 ms, cores up to 0.01 and memory up to 1 MiB;
- with two runs or more, ``varies`` holds the spread (:mod:`peakopt.models.uncertainty`): the
  duration a ``lognormal`` fitted to the runs' p10/p50/p90 wall times, and the demand a
  ``lognormal`` of the runs' multipliers (a run's highest ratio of its peak cores or memory to
  the median run's), each left out when the runs agree;
- its ``meta`` says what was run and how it was measured: ``command``, and under ``profile``
  the accounting (``cgroup v2``, ``cgroup v1`` or ``psutil``, and why not cgroups), the sampling interval,
  the number of runs, every run's wall and CPU seconds and peak memory, the average and peak
  CPU cores and the merge tolerance.

Percentiles are interpolated linearly between the sorted runs (NumPy's default).
"""

from __future__ import annotations

import shlex
from collections.abc import Sequence
from typing import Any

from peakopt.models import Segment, Task
from peakopt.models.uncertainty import Lognormal, Varies
from peakopt.runtime.measurement import (
    INTERVAL,
    Accounting,
    MeasuredRun,
    ProfileError,
    choose_accounting,
    measure_run,
)
from peakopt.runtime.reaper import Reaper
from peakopt.runtime.segments import (
    MAX_SEGMENTS,
    MERGE_TOLERANCE,
    ProfileSpan,
    ceil_to,
    merge_pieces,
    rounded_durations,
)
from peakopt.runtime.steps import KILL_GRACE


def percentile(values: Sequence[float], q: float) -> float:
    """The ``q`` quantile (0..1) of ``values``, linearly interpolated between the sorted values."""
    ordered = sorted(values)
    where = q * (len(ordered) - 1)
    low = int(where)
    high = min(low + 1, len(ordered) - 1)
    return ordered[low] + (ordered[high] - ordered[low]) * (where - low)


def spread(values: Sequence[float]) -> Lognormal | None:
    """A lognormal of the values' p10/p50/p90, or None when they agree (or one is 0)."""
    p10, p50, p90 = (percentile(values, q) for q in (0.1, 0.5, 0.9))
    if len(values) < 2 or p90 <= p10 or p10 <= 0:
        return None
    return Lognormal(kind="lognormal", p10=round(p10, 3), p50=round(p50, 3), p90=round(p90, 3))


def segments(spans: Sequence[ProfileSpan]) -> tuple[Segment, ...]:
    """Spans as profile segments (durations to 1 ms, cores up to 0.01, memory up to 1 MiB)."""
    durations = rounded_durations([s.duration for s in spans])
    return tuple(
        Segment(
            duration=d,
            demand={"cpu": ceil_to(s.mean_cores, 2), "memory_mb": ceil_to(s.memory_peak, 0)},
        )
        for d, s in zip(durations, spans, strict=True)
    )


def with_peak(profile: tuple[Segment, ...], peak_mb: float) -> tuple[Segment, ...]:
    """``profile``, its highest-memory segment raised to the run's counted peak where the samples missed it.

    The kernel's high-water mark (or the largest ``ru_maxrss``) can lie between two samples:
    a run shorter than the interval, or a brief spike. A profile is a reservation, so it may
    place the peak a little early or late, but never understate it.
    """
    if not profile:
        return profile
    peak = ceil_to(peak_mb, 0)
    highest = max(range(len(profile)), key=lambda i: profile[i].demand["memory_mb"])
    if profile[highest].demand["memory_mb"] >= peak:
        return profile
    raised = Segment(
        duration=profile[highest].duration, demand={**profile[highest].demand, "memory_mb": peak}
    )
    return (*profile[:highest], raised, *profile[highest + 1 :])


def _peaks(profile: Sequence[Segment]) -> tuple[float, float]:
    return (
        max(s.demand["cpu"] for s in profile) or 1.0,
        max(s.demand["memory_mb"] for s in profile) or 1.0,
    )


def profile_runs(
    runs: Sequence[MeasuredRun],
    task_id: str,
    command: Sequence[str],
    *,
    tolerance: float = MERGE_TOLERANCE,
    max_segments: int = MAX_SEGMENTS,
    why: str = "",
) -> Task:
    """The task of measured ``runs`` of ``command`` (see the module docstring)."""
    ordered = sorted(runs, key=lambda r: r.seconds)
    median = ordered[(len(ordered) - 1) // 2]
    profiles = [
        with_peak(segments(merge_pieces(r.pieces, tolerance=tolerance, max_segments=max_segments)), r.peak_mb)
        for r in runs
    ]
    profile = profiles[runs.index(median)]
    if not profile:
        profile = (Segment(duration=0.0, demand={"cpu": 0.0, "memory_mb": ceil_to(median.peak_mb, 0)}),)
    nominal = _peaks(profile)
    scales = [max(a / b for a, b in zip(_peaks(p) if p else nominal, nominal, strict=True)) for p in profiles]
    duration, demand = spread([r.seconds for r in runs]), spread(scales)
    varies = Varies(duration=duration, demand=demand) if duration or demand else None
    return Task(id=task_id, profile=profile, varies=varies, meta=_meta(runs, command, tolerance, why))


def _meta(runs: Sequence[MeasuredRun], command: Sequence[str], tolerance: float, why: str) -> dict[str, Any]:
    wall = sum(r.seconds for r in runs)
    peak_cores = max((p.cores for r in runs for p in r.pieces), default=0.0)
    profile: dict[str, Any] = {
        "accounting": runs[0].accounting,
        "interval": runs[0].interval,
        "runs": len(runs),
        "seconds": [round(r.seconds, 3) for r in runs],
        "cpu_seconds": [round(r.cpu_seconds, 3) for r in runs],
        "memory_peak_mb": [round(r.peak_mb, 1) for r in runs],
        "cpu_avg": round(sum(r.cpu_seconds for r in runs) / wall, 3) if wall > 0 else 0.0,
        "cpu_peak": round(peak_cores, 3),
        "tolerance": tolerance,
    }
    if not runs[0].accounting.startswith("cgroup") and why:
        profile["psutil_because"] = why
    return {"command": shlex.join(command), "profile": profile}


def profile_command(
    command: Sequence[str],
    *,
    runs: int = 1,
    task_id: str | None = None,
    interval: float = INTERVAL,
    accounting: Accounting = "auto",
    tolerance: float = MERGE_TOLERANCE,
    max_segments: int = MAX_SEGMENTS,
) -> Task:
    """Run ``command`` ``runs`` times and return its measured task (see the module docstring).

    Parameters
    ----------
    command
        The program and its arguments (no shell: give ``sh -c '...'`` for one).
    runs
        How many times to run it; the profile is the median run's, the spread that of all.
    task_id
        The task's id (default: the program's name).
    interval
        Sampling interval in seconds.
    accounting
        ``auto`` (cgroups, v2 or v1, where available, else psutil), ``cgroup`` or ``psutil``.
    tolerance, max_segments
        The segment merge (:func:`~peakopt.runtime.segments.merge_pieces`).

    Raises
    ------
    ProfileError
        When the command cannot be run or exits non-zero (naming the run).
    """
    if not command:
        raise ProfileError("no command to profile; give it after --")
    if runs < 1:
        raise ProfileError(f"needs at least 1 run, got {runs}")
    why = choose_accounting(accounting).reason
    measured = []
    # the command's processes end with this one however it ends (kill -9 too): see the reaper
    reaper = Reaper(KILL_GRACE)
    reaper.start(ready=True)
    try:
        for k in range(runs):
            run = measure_run(command, interval=interval, accounting=accounting, reaper=reaper)
            if run.exit_code != 0:
                raise ProfileError(
                    f"command {shlex.join(command)!r} exited with {run.exit_code} on run {k + 1} of "
                    f"{runs}; a failing run is not a profile"
                )
            measured.append(run)
    finally:
        reaper.close()
    name = task_id or command[0].rsplit("/", 1)[-1] or "step"
    return profile_runs(measured, name, command, tolerance=tolerance, max_segments=max_segments, why=why)
