"""One measured run of a real command: its samples over time and the kernel's totals.

:func:`measure_run` starts the command, samples it every ``interval`` seconds until it exits
(cgroup v2 or v1 counters where :func:`~peakopt.runtime.cgroups.detect` allows, else psutil over
the process tree) and turns the samples into :class:`UsagePiece` s, consecutive intervals of constant
usage whose CPU seconds add up to the run's exact total. The measurement ends when the command
exits, not at the next sample: between samples it waits for the exit itself (a pidfd where Linux
has one, else a short poll), so the run's duration is the command's whatever the interval. A
descendant that outlives it is not followed (it is killed when the run is interrupted). With a
:class:`~peakopt.runtime.reaper.Reaper` (as :func:`~peakopt.runtime.profile.profile_command`
gives), the command runs with the reaper's marker and its group made known, so its processes
end even if this process is killed by SIGKILL.

The command's standard output goes to this process's standard error (file descriptor 2), beside
its own standard error: what it prints is shown, and never mixes with what peakopt writes on
standard output (the task of ``peakopt profile``). Its standard input is ``/dev/null``.
"""

from __future__ import annotations

import contextlib
import os
import resource
import select
import signal
import subprocess
import time
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Literal

from peakopt.models import PeakoptError
from peakopt.models.extras import LazyModule
from peakopt.runtime.cgroup_v1 import CgroupV1
from peakopt.runtime.cgroups import Cgroup, Detected, detect
from peakopt.runtime.reaper import Reaper
from peakopt.runtime.tree import MIB, Sample, TreeSampler

if TYPE_CHECKING:
    import psutil
else:
    # psutil is the runtime extra: imported on first use, not by a command's --help
    psutil = LazyModule("psutil", "measuring processes (peakopt profile, peakopt run)")

#: Where the command's standard output goes: this process's standard error.
OUTPUT_FD = 2
#: Seconds between checks for the command's exit where no pidfd can wait for it.
POLL = 0.005

#: How usage is measured: ``auto`` (cgroups, v2 or v1, where available, else psutil), or one of them.
Accounting = Literal["auto", "cgroup", "psutil"]
ACCOUNTINGS: tuple[Accounting, ...] = ("auto", "cgroup", "psutil")

#: Sampling interval in seconds, by default (here, not in :mod:`peakopt.runtime.profile`: the
#: command line's default, and this module imports no model).
INTERVAL = 0.05


class ProfileError(PeakoptError):
    """A command that cannot be measured: not found, failed, or cgroups asked for and unavailable."""


@dataclass(frozen=True)
class UsagePiece:
    """An interval of a run with one usage: ``duration`` seconds at ``cores`` cores and ``memory_mb`` MiB."""

    duration: float
    cores: float
    memory_mb: float


@dataclass(frozen=True)
class MeasuredRun:
    """One measured run.

    Attributes
    ----------
    seconds
        Wall time from start to exit.
    cpu_seconds
        CPU time of the whole tree (user + system), from the kernel.
    peak_mb
        Peak memory, MiB (cgroup v2: ``memory.peak``; v1: ``memory.max_usage_in_bytes``, page
        cache included; psutil: the highest sampled sum of resident memory, or the largest single
        process's ``ru_maxrss`` if higher — counted only above this process's own ``ru_maxrss``,
        which a forked child inherits through exec).
    pieces
        Usage over time, back to back from the start (see :func:`usage_pieces`).
    exit_code
        The command's exit status (negative: killed by that signal).
    accounting, interval
        How it was measured (``cgroup v2``, ``cgroup v1`` or ``psutil``) and the sampling interval in seconds.
    """

    seconds: float
    cpu_seconds: float
    peak_mb: float
    pieces: tuple[UsagePiece, ...]
    exit_code: int
    accounting: str
    interval: float


class _CgroupSampler:
    """Samples a cgroup's memory now and CPU time (the same :class:`Sample` as psutil's)."""

    def __init__(self, group: Cgroup | CgroupV1, started: float) -> None:
        self.group, self.started = group, started
        self._last = (started, 0)

    def sample(self) -> Sample:
        now, used = time.monotonic(), self.group.usage_usec()
        then, before = self._last
        self._last = (now, used)
        cores = (used - before) / 1e6 / (now - then) if now > then else 0.0
        return Sample(now - self.started, cores, self.group.memory_current() / MIB)


def choose_accounting(accounting: Accounting) -> Detected:
    """Where to create cgroups (``parent``), or None with the reason psutil is used."""
    if accounting == "psutil":
        return Detected(None, "psutil sampling was asked for")
    found = detect()
    if accounting == "cgroup" and found.parent is None:
        raise ProfileError(f"cgroup accounting is not available here: {found.reason}")
    return found


def measure_run(
    argv: Sequence[str],
    *,
    interval: float = 0.05,
    accounting: Accounting = "auto",
    reaper: Reaper | None = None,
) -> MeasuredRun:
    """Run ``argv`` (no shell) to its end, sampled every ``interval`` seconds (``reaper``: see above).

    Raises
    ------
    ProfileError
        When the command is not found or cannot be started, or cgroups are asked for and unavailable.
    """
    found = choose_accounting(accounting)
    inherited = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss  # KiB: what a fork starts from
    with found.group() or contextlib.nullcontext() as group:
        started = time.monotonic()
        try:
            proc = subprocess.Popen(
                list(argv),
                stdin=subprocess.DEVNULL,
                stdout=OUTPUT_FD,  # never into peakopt's own standard output
                start_new_session=True,  # its own process group: an interrupt ends all of it
                preexec_fn=group.join if group else None,
                env=reaper.env if reaper is not None else None,
            )
        except (FileNotFoundError, PermissionError) as exc:
            raise ProfileError(f"command {argv[0]!r} cannot be run: {exc.strerror}") from None
        if reaper is not None:
            reaper.watch(proc.pid)
        sampler = _CgroupSampler(group, started) if group else TreeSampler(proc.pid, started)
        samples: list[Sample] = []
        try:
            status, usage = _follow(proc, sampler, samples, interval)
        except BaseException:
            kill_tree(proc.pid, [proc.pid, *(group.pids() if group else getattr(sampler, "pids", ()))])
            raise
        finally:
            if reaper is not None:
                reaper.forget(proc.pid)
        seconds = time.monotonic() - started
        if group:
            cpu = group.usage_usec() / 1e6
            peak = (group.memory_peak() or 0) / MIB
            how = group.accounting
        else:
            cpu = usage.ru_utime + usage.ru_stime
            # ru_maxrss (KiB) survives exec: at most this process's own, it may be only that
            largest = usage.ru_maxrss / 1024 if usage.ru_maxrss > inherited else 0.0
            peak = max(getattr(sampler, "peak_mb", 0.0), largest)
            how = "psutil"
    peak = max(peak, max((s.memory_mb for s in samples), default=0.0))
    return MeasuredRun(seconds, cpu, peak, usage_pieces(samples, seconds, cpu), status, how, interval)


def _follow(
    proc: subprocess.Popen[bytes],
    sampler: _CgroupSampler | TreeSampler,
    samples: list[Sample],
    interval: float,
) -> tuple[int, resource.struct_rusage]:
    """Sample until the command exits; its exit code and the kernel's resource usage of the whole tree."""
    tick = time.monotonic()
    with _exit_handle(proc.pid) as handle:
        while True:
            samples.append(sampler.sample())
            tick += interval
            reaped = _reap_within(proc.pid, max(0.0, tick - time.monotonic()), handle)
            if reaped is not None:
                status, usage = reaped
                proc.returncode = code = os.waitstatus_to_exitcode(status)  # reaped here, not by Popen
                return code, usage


@contextlib.contextmanager
def _exit_handle(pid: int) -> Iterator[int | None]:
    """A pidfd of ``pid`` (readable once it exits), or None where the system has none."""
    try:
        handle = os.pidfd_open(pid)
    except (AttributeError, OSError):  # not Linux, or a kernel before 5.3
        yield None
        return
    try:
        yield handle
    finally:
        os.close(handle)


def _reap_within(pid: int, timeout: float, handle: int | None) -> tuple[int, resource.struct_rusage] | None:
    """Wait up to ``timeout`` seconds for ``pid`` to exit: its status and usage once reaped, else None."""
    deadline = time.monotonic() + timeout
    while True:
        done, status, usage = os.wait4(pid, os.WNOHANG)
        if done:
            return status, usage
        left = deadline - time.monotonic()
        if left <= 0:
            return None
        if handle is not None:
            select.select([handle], [], [], left)
        else:
            time.sleep(min(left, POLL))


def usage_pieces(samples: Sequence[Sample], seconds: float, cpu_seconds: float) -> tuple[UsagePiece, ...]:
    """The intervals between samples (the last one up to the exit), with the tree's usage in each.

    An interval's cores are those of the sample that closes it (CPU since the previous one); its
    memory the higher of the two samples around it, so a rise is never shown late. The last
    interval gets the CPU time the samples did not see (children that came and went between
    samples, the last instants) up to the machine's cores, and what is left is spread over the run
    in proportion to each interval's room below them, so the pieces' CPU seconds add up to
    ``cpu_seconds`` and no interval shows a rate no machine of this size has.
    """
    found: list[UsagePiece] = []
    begin, memory = 0.0, 0.0
    for sample in samples:
        if sample.time > begin:
            found.append(UsagePiece(sample.time - begin, sample.cores, max(memory, sample.memory_mb)))
        begin, memory = max(begin, sample.time), sample.memory_mb
    unseen = max(0.0, cpu_seconds - sum(p.duration * p.cores for p in found))
    rest = seconds - begin
    # the exit is seen at once, so the last interval may last a few ms: it takes the unseen CPU
    # only up to the machine's cores, the rest is spread over the run where there is room
    limit = float(os.cpu_count() or 1)
    if rest > 0:
        last = min(unseen, rest * limit)
        found.append(UsagePiece(rest, last / rest, memory))
        unseen -= last
    return tuple(_spread(found, unseen, limit)) if unseen > 0 else tuple(found)


def _spread(pieces: list[UsagePiece], cpu: float, limit: float) -> list[UsagePiece]:
    """``pieces`` with ``cpu`` seconds more, each in proportion to its room below ``limit`` cores."""
    room = sum(p.duration * max(0.0, limit - p.cores) for p in pieces)
    total = sum(p.duration for p in pieces)
    if room <= 0:  # every piece at the limit already: evenly (the kernel's count is the truth)
        return [replace(p, cores=p.cores + cpu / total) for p in pieces] if total > 0 else pieces
    share = cpu / room
    return [replace(p, cores=p.cores + share * max(0.0, limit - p.cores)) for p in pieces]


def kill_tree(pid: int, known: Sequence[int] = (), *, grace: float = 2.0) -> None:
    """End a process, its process group and every descendant: SIGTERM, then SIGKILL after ``grace`` seconds.

    ``known`` are pids seen in the tree before (a descendant that left the group is still ended).
    """
    targets: dict[int, psutil.Process] = {}
    for candidate in {pid, *known}:
        with contextlib.suppress(psutil.Error):
            root = psutil.Process(candidate)
            targets[candidate] = root
            targets.update((c.pid, c) for c in root.children(recursive=True))
    with contextlib.suppress(OSError):
        os.killpg(pid, signal.SIGTERM)
    for process in targets.values():
        with contextlib.suppress(psutil.Error):
            process.terminate()
    _, alive = psutil.wait_procs(list(targets.values()), timeout=grace)
    with contextlib.suppress(OSError):
        os.killpg(pid, signal.SIGKILL)
    for process in alive:
        with contextlib.suppress(psutil.Error):
            process.kill()
    psutil.wait_procs(alive, timeout=grace)
