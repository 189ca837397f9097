"""Helpers of the runtime tests: child programs with known usage, and checks of a trace against capacities."""

from __future__ import annotations

import itertools
import shlex
import sys
from collections.abc import Iterable

from peakopt.models import Machine, Workflow
from peakopt.runtime.trace import Trace

#: A Python child: ``phases`` of (MiB held, seconds, processes burning CPU); each phase's memory is
#: allocated (and touched) on top of the previous phases', and each burning process spends the
#: phase's seconds of *CPU time* (thread_time), so the CPU seconds are known however loaded the machine is.
#: With ``CHILD_CPU_FILE`` set, the child writes there the CPU seconds the kernel gave it and its
#: processes (``getrusage``, user and system) just before it exits: start-up and page faults included.
CHILD = """
import multiprocessing as mp, os, resource, sys, time
def burn(seconds):
    end = time.thread_time() + seconds
    while time.thread_time() < end:
        pass
if __name__ == "__main__":
    held = []
    for spec in sys.argv[1:]:
        mib, seconds, burners = (float(x) for x in spec.split(":"))
        block = bytearray(int(mib * 2**20))
        block[::4096] = b"\\x01" * len(range(0, len(block), 4096))
        held.append(block)
        if burners:
            workers = [mp.Process(target=burn, args=(seconds,)) for _ in range(int(burners) - 1)]
            for w in workers:
                w.start()
            burn(seconds)
            for w in workers:
                w.join()
        else:
            time.sleep(seconds)
    if os.environ.get("CHILD_CPU_FILE"):
        used = [resource.getrusage(who) for who in (resource.RUSAGE_SELF, resource.RUSAGE_CHILDREN)]
        with open(os.environ["CHILD_CPU_FILE"], "w") as out:
            out.write(str(sum(u.ru_utime + u.ru_stime for u in used)))
"""


def child(*phases: tuple[float, float, int]) -> list[str]:
    """The argument vector of a :data:`CHILD` with these phases."""
    return [sys.executable, "-c", CHILD, *(f"{m}:{s}:{b}" for m, s, b in phases)]


def shell(*phases: tuple[float, float, int]) -> str:
    """The same child as one shell line."""
    return shlex.join(child(*phases))


def peak_loads(trace: Trace, workflow: Workflow, machine: Machine) -> dict[str, float]:
    """Per resource, the highest sum of the declared peak demands (clamped) of steps running together."""
    found = {}
    ran = [s for s in trace.steps if s.start is not None and s.end is not None]
    tasks = {t.id: t for t in workflow.tasks}
    for resource, capacity in machine.capacity.items():
        events: list[tuple[float, int, float]] = []
        for step in ran:
            need = min(tasks[step.id].peak(resource), capacity)
            assert step.start is not None and step.end is not None
            if need > 0 and step.end > step.start:
                events += [(step.start, 1, need), (step.end, 0, -need)]  # an end before a start at one time
        load, peak = 0.0, 0.0
        for _, _, delta in sorted(events):
            load += delta
            peak = max(peak, load)
        found[resource] = peak
    return found


def overlapping(trace: Trace, ids: Iterable[str]) -> bool:
    """Whether some two of the steps ``ids`` ran at the same time."""
    spans = sorted((s.start, s.end) for s in trace.steps if s.id in set(ids) and s.start is not None)
    return any(b[0] < a[1] for a, b in itertools.pairwise(spans) if a[1] is not None and b[0] is not None)
