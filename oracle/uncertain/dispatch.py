"""Event-driven dispatching of steps under admission: the loop every online execution runs.

A step joins the ready queue when its last predecessor finishes (steps that end at the same
instant, as the judge compares times (:func:`~peakopt.oracle.base.instants.same_instant`), are
released together, in workflow order, whatever float sums reached that instant); at time 0
and at every completion a *decider* picks which ready steps start now. A started step holds
its clamped peak demand (:func:`clamped_needs`) for its whole run, whatever its profile: that
is what a runtime's semaphore holds, and what makes an admitted step safe under any realised
duration. The runtime heuristics (``admission``, ``cap:K``) and the simulator's ``order`` and
online policies all run this one loop on plain lists.
"""

from __future__ import annotations

import heapq
from collections.abc import Callable, Iterable, Mapping, Sequence

from peakopt.models import Machine, PeakoptError, Task, Workflow
from peakopt.oracle.base.exact import TOLERANCE
from peakopt.oracle.base.instants import same_instant

#: Relative slack on capacities: a load may exceed a capacity by this fraction of it
#: (floating-point residue of the free-capacity sums only), a tenth of the oracle's tolerance.
LOAD_SLACK = TOLERANCE / 10

#: One resource need: (resource index, clamped amount, smallest free capacity that admits it).
Need = tuple[int, float, float]

#: ``decide(now, ready, running, free) -> positions to start``: ``ready`` in the order the steps
#: became ready, ``running`` position -> start, ``free`` per resource index (read-only).
Decider = Callable[[float, list[int], dict[int, float], list[float]], Iterable[int]]


class SimulationError(PeakoptError):
    """An execution that cannot go on: a policy returned a step that is not ready, or stalled."""


def clamped_needs(
    demand: Mapping[str, float], index: Mapping[str, int], capacity: Sequence[float]
) -> tuple[Need, ...]:
    """The needs of ``demand`` on the constrained resources, clamped to the capacity, by resource index."""
    needs = []
    for name, amount in demand.items():
        k = index.get(name)
        if k is not None and amount > 0:
            cap = capacity[k]
            clamped = min(amount, cap)
            needs.append((k, clamped, clamped - LOAD_SLACK * cap))
    return tuple(sorted(needs))


def peak_needs(task: Task, index: Mapping[str, int], capacity: Sequence[float]) -> tuple[Need, ...]:
    """A task's clamped peak need per constrained resource (segments of zero duration use nothing)."""
    peak: dict[int, Need] = {}
    for segment in task.segments:
        if segment.duration > 0:
            for need in clamped_needs(segment.demand, index, capacity):
                if need[1] > peak.get(need[0], (0, 0.0, 0.0))[1]:
                    peak[need[0]] = need
    return tuple(peak[k] for k in sorted(peak))


def constrained(workflow: Workflow, machine: Machine | None) -> tuple[tuple[str, ...], tuple[float, ...]]:
    """The machine's resources that some task uses (sorted), and their capacities."""
    limits = machine.capacity if machine is not None else {}
    used = sorted({r for t in workflow.tasks for s in t.segments for r in s.demand})
    resources = tuple(r for r in used if r in limits)
    return resources, tuple(limits[r] for r in resources)


def fits(need: tuple[Need, ...], free: Sequence[float]) -> bool:
    """Whether every need fits the free capacity (within :data:`LOAD_SLACK`)."""
    return all(free[k] >= threshold for k, _, threshold in need)


def admitted(
    queue: Iterable[int], needs: Sequence[tuple[Need, ...]], free: Sequence[float], *, strict: bool
) -> list[int]:
    """The steps of ``queue`` that start now, scanned in order, each taking its needs from ``free``.

    Greedy by default: a step that does not fit waits and later ones that fit go first. With
    ``strict`` (head-of-line blocking) the first step that does not fit stops the scan.
    """
    avail = list(free)
    started = []
    refused: set[tuple[Need, ...]] = set()  # the free capacity only shrinks: a need refused stays refused
    for task in queue:
        need = needs[task]
        if need in refused:
            continue
        if fits(need, avail):
            for k, amount, _ in need:
                avail[k] -= amount
            started.append(task)
        elif strict:
            break
        else:
            refused.add(need)
    return started


def dispatch(
    length: Sequence[float],
    preds: Sequence[Sequence[int]],
    succs: Sequence[Sequence[int]],
    needs: Sequence[tuple[Need, ...]],
    capacity: Sequence[float],
    decide: Decider,
    ids: Sequence[str] = (),
    name: str = "policy",
) -> list[float]:
    """Run the event loop: start what ``decide`` picks at time 0 and after every completion.

    Parameters
    ----------
    length
        Realised run time per task position.
    preds, succs
        Predecessor and successor positions.
    needs, capacity
        Clamped peak needs per task (see :func:`peak_needs`) and the capacities they hold.
    decide
        The policy on positions (see :data:`Decider`); it must return ready positions only.
    ids, name
        Task ids and the policy's name, for the "stalled" error.

    Returns
    -------
    list of float
        Start times by task position.

    Raises
    ------
    SimulationError
        When nothing runs, steps are ready and ``decide`` starts none.
    """
    left = [len(p) for p in preds]
    queue = [j for j, count in enumerate(left) if not count]
    heap: list[tuple[float, int]] = []
    running: dict[int, float] = {}
    free = list(capacity)
    start = [0.0] * len(length)
    ready = [0.0] * len(length)  # the latest end of each step's predecessors
    now = 0.0
    while queue or heap:
        chosen = list(decide(now, queue, running, free)) if queue else []
        if chosen:
            picked = set(chosen)
            queue = [j for j in queue if j not in picked]
            for task in chosen:
                for k, amount, _ in needs[task]:
                    free[k] -= amount
                # completions within the tolerance are one instant, but a step never starts
                # a hair before its last predecessor ends
                start[task] = running[task] = max(now, ready[task])
                heapq.heappush(heap, (start[task] + length[task], task))
        elif not heap:
            raise SimulationError(_stalled(name, now, [ids[j] if ids else str(j) for j in queue]))
        now = heap[0][0]
        released: list[int] = []
        while heap and (heap[0][0] <= now or same_instant(heap[0][0], now)):
            finished, task = heapq.heappop(heap)
            del running[task]
            for k, amount, _ in needs[task]:
                free[k] += amount
            for succ in succs[task]:
                ready[succ] = max(ready[succ], finished)
                left[succ] -= 1
                if not left[succ]:
                    released.append(succ)
        if not heap:
            free = list(capacity)  # nothing holds capacity: drop floating-point residue
        queue.extend(sorted(released))
    return start


def _stalled(name: str, now: float, ready: list[str]) -> str:
    listed = ", ".join(repr(step) for step in ready[:5]) + (" ..." if len(ready) > 5 else "")
    return f"{name} stalled at time {now:g}: nothing runs, steps {listed} are ready and it started none"
