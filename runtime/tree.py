"""Sampling a process tree with psutil: resident memory and CPU cores of a process and all its descendants.

What a sample counts:

- **memory**: the sum of the resident set sizes (RSS) of the live processes of the tree, in MiB.
  Pages shared between processes (a forked child's copy-on-write pages, shared libraries) are
  counted once per process, so the sum can overstate what the tree holds; it never understates
  it, which is the safe side for an admission budget.
- **cores**: CPU seconds (user + system) the tree used since the previous sample, divided by the
  wall time between them. A process that appears and ends between two samples is not seen; a
  process that ends keeps the CPU time it had at its last sample. The run's total CPU time comes
  from the kernel instead (``wait4``'s resource usage, every reaped descendant included), so the
  average is exact whatever the interval.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import TYPE_CHECKING

from peakopt.models.extras import LazyModule

if TYPE_CHECKING:
    import psutil
else:
    # psutil is the runtime extra: imported on first use, not by a command's --help
    psutil = LazyModule("psutil", "measuring processes (peakopt profile, peakopt run)")

#: Bytes per MiB: memory demands are in MiB (``memory_mb``, as the bundled machines).
MIB = 1024 * 1024


@dataclass(frozen=True)
class Sample:
    """One observation of a process tree.

    Attributes
    ----------
    time
        Seconds since the tree's root was started.
    cores
        CPU cores busy on average since the previous sample.
    memory_mb
        Resident memory of the tree now, MiB.
    """

    time: float
    cores: float
    memory_mb: float


class TreeSampler:
    """Samples the tree under ``pid`` (the root included) each time :meth:`sample` is called.

    Parameters
    ----------
    pid
        The root process.
    started
        ``time.monotonic()`` when the root was started: sample times count from it.
    """

    def __init__(self, pid: int, started: float) -> None:
        self.started = started
        self._cpu: dict[int, float] = {}  # pid -> CPU seconds at its last sample
        self._gone = 0.0  # CPU seconds of the processes that ended since they were seen
        self._last = (started, 0.0)
        self.peak_mb = 0.0
        self.pids: set[int] = set()
        try:
            self.root: psutil.Process | None = psutil.Process(pid)
        except psutil.NoSuchProcess:
            self.root = None

    def members(self) -> list[psutil.Process]:
        """The live processes of the tree now (none once the root has ended)."""
        if self.root is None:
            return []
        try:
            return [self.root, *self.root.children(recursive=True)]
        except psutil.NoSuchProcess:
            return []

    def track(self) -> None:
        """Note which processes are in the tree now (:attr:`pids`), measuring nothing."""
        self.pids.update(p.pid for p in self.members())

    def sample(self) -> Sample:
        """Observe the tree now (a root that has ended gives an empty tree)."""
        now = time.monotonic()
        memory, cpu = 0, {}
        for process in self.members():
            try:
                with process.oneshot():
                    times = process.cpu_times()
                    memory += process.memory_info().rss
                cpu[process.pid] = times.user + times.system
            except (psutil.NoSuchProcess, psutil.ZombieProcess, psutil.AccessDenied):
                continue
        self._gone += sum(seconds for pid, seconds in self._cpu.items() if pid not in cpu)
        self._cpu = cpu
        self.pids.update(cpu)
        total = self._gone + sum(cpu.values())
        then, before = self._last
        self._last = (now, total)
        cores = max(0.0, total - before) / (now - then) if now > then else 0.0
        self.peak_mb = max(self.peak_mb, memory / MIB)
        return Sample(time=now - self.started, cores=cores, memory_mb=memory / MIB)

    @property
    def cpu_seconds(self) -> float:
        """CPU seconds of the tree seen up to the last sample."""
        return self._last[1]
