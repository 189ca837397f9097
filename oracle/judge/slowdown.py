"""The slowed makespan: how long a schedule takes when it oversubscribes a soft resource.

A soft resource (CPU cores) does not fail the steps that overflow it: they share it and run
slower. peakopt models this as *processor sharing*, event by event:

- each step starts at its planned start or when its last predecessor has really ended,
  whichever is later (the ``enforced`` execution policy: a slowed step delays its successors,
  never breaks a dependency);
- while the load ``L_m`` of a soft resource ``m`` exceeds its capacity ``C_m``, every step that
  uses ``m`` progresses at rate ``C_m / L_m`` (a step using several overloaded soft resources, at
  the slowest of their rates); otherwise at rate 1; a piecewise step's segments are consumed in
  order, each at the demand of the segment it is in;
- a demand counts clamped to the capacity, ``min(r, C_m)``, as in the optimum: a step over a
  capacity on its own is not slowed alone (no schedule avoids its overload, and its duration is
  the one the reference uses), only beside others. So a schedule slows down exactly when it has
  avoidable soft overflow, and its slowed makespan is its makespan otherwise.

Hard resources do not change the rates (their overflow is the unsafety itself). Times on the
oracle's integer grid and rates ``C/L`` are rational, so :func:`slowed_end` is exact
(:class:`~fractions.Fraction`); :func:`processor_sharing` takes floats as well (the Monte Carlo
path). Since no rate exceeds 1 and no start moves earlier, every step ends no earlier than planned: the slowed
makespan is at least the makespan.
"""

from __future__ import annotations

import heapq
import itertools
from collections.abc import Callable, Sequence
from fractions import Fraction
from typing import TypeVar

from peakopt.models import Workflow
from peakopt.oracle.base.exact import over
from peakopt.oracle.judge.metrics import Measured

N = TypeVar("N", float, Fraction)
#: Per task, its segments: (duration, clamped demand per soft resource).
Segments = Sequence[Sequence[tuple[N, Sequence[N]]]]


def processor_sharing(
    starts: Sequence[N | None],
    segments: Segments[N],
    preds: Sequence[Sequence[int]],
    capacity: Sequence[N],
    overloaded: Callable[[N, N], bool],
) -> list[N | None]:
    """Per task, its end under processor sharing (None for a task without a start).

    Parameters
    ----------
    starts
        Planned starts (None: not placed; its successors wait for nothing from it).
    segments
        Per task, ``(duration, demands)`` per segment, the demands clamped to ``capacity``, one
        per soft resource.
    preds
        Per task, its predecessors' positions.
    capacity
        Per soft resource, its capacity (at least one resource).
    overloaded
        ``overloaded(load, capacity)``: whether a load slows its steps down (the oracle's tolerance).
    """
    one = capacity[0] / capacity[0]  # 1 in the numbers' own type
    waiting = [sum(starts[p] is not None for p in before) for before in preds]
    succs: list[list[int]] = [[] for _ in starts]
    for j, before in enumerate(preds):
        for i in before:
            succs[i].append(j)
    latest: dict[int, N] = {}  # per task, its latest predecessor end so far
    released = [(start, j) for j, start in enumerate(starts) if start is not None and not waiting[j]]
    heapq.heapify(released)
    ends: list[N | None] = [None] * len(starts)
    running: dict[int, tuple[int, N]] = {}  # task -> (segment, work left in it)

    def advance(task: int, segment: int, now: N) -> None:
        """Put ``task`` in its first non-empty segment from ``segment`` on, or end it at ``now``."""
        while segment < len(segments[task]) and not segments[task][segment][0] > 0:
            segment += 1
        if segment < len(segments[task]):
            running[task] = (segment, segments[task][segment][0])
            return
        running.pop(task, None)
        ends[task] = now
        for succ in succs[task]:
            latest[succ] = max(latest.get(succ, now), now)
            waiting[succ] -= 1
            planned = starts[succ]
            if not waiting[succ] and planned is not None:
                heapq.heappush(released, (max(planned, latest[succ]), succ))

    now = released[0][0] if released else one
    while released or running:
        if not running:
            now = max(now, released[0][0])
        while released and not released[0][0] > now:
            advance(heapq.heappop(released)[1], 0, now)
        if not running:
            continue
        rates = _rates(running, segments, capacity, overloaded, one)
        finish = {task: left / rates[task] for task, (_, left) in running.items()}
        step = min(finish.values())
        if released and released[0][0] - now < step:
            step = released[0][0] - now
        now = now + step
        for task, (segment, left) in list(running.items()):
            if finish[task] <= step:  # exactly, in floats too: no sliver of work is left behind
                advance(task, segment + 1, now)
            else:
                # never below 0: in floats, a product may round past what is left
                running[task] = (segment, max(left - rates[task] * step, left - left))
    return ends


def _rates(
    running: dict[int, tuple[int, N]],
    segments: Segments[N],
    capacity: Sequence[N],
    overloaded: Callable[[N, N], bool],
    one: N,
) -> dict[int, N]:
    """Per running task, its progress rate: the slowest ``C / L`` of the overloaded soft resources it uses."""
    ratio: list[N | None] = []
    for m, cap in enumerate(capacity):
        load = sum((segments[t][k][1][m] for t, (k, _) in running.items()), start=cap - cap)
        ratio.append(cap / load if overloaded(load, cap) else None)
    rates = {}
    for task, (segment, _) in running.items():
        used = segments[task][segment][1]
        slow = [r for r, amount in zip(ratio, used, strict=True) if r is not None and amount > 0]
        rates[task] = min(slow) if slow else one
    return rates


def slowed_end(workflow: Workflow, measured: Measured) -> Fraction | int:
    """The latest end under processor sharing on the time grid, exactly (``measured.end`` if not slowed).

    The schedule must be valid (every task placed); a schedule with no avoidable soft overflow
    is returned unchanged, so its slowed makespan is its makespan to the last digit.
    """
    soft = [r for r in measured.usage if r in measured.soft and measured.usage[r].swept.avoidable]
    if not soft:
        return measured.end
    usages = [measured.usage[r] for r in soft]
    grid = measured.grid
    segments = [
        [
            (
                Fraction(end - begin),
                [Fraction(min(u.demands.demand[i][k], u.demands.capacity)) for u in usages],
            )
            for k, (begin, end) in enumerate(itertools.pairwise(bounds))
        ]
        for i, bounds in enumerate(grid.bounds)
    ]
    starts = [None if t.id not in grid.starts else Fraction(grid.starts[t.id]) for t in workflow.tasks]
    capacity = [Fraction(u.demands.capacity) for u in usages]
    ends = processor_sharing(starts, segments, workflow.predecessors, capacity, _over)
    return max((e for e in ends if e is not None), default=Fraction(measured.end))


def _over(load: Fraction, capacity: Fraction) -> bool:
    """The oracle's :func:`~peakopt.oracle.base.exact.over` on loads that are sums of grid integers."""
    return over(int(load), int(capacity))


def slowed_makespan(workflow: Workflow, measured: Measured) -> float:
    """:func:`slowed_end` in seconds: the makespan the schedule takes when soft overflow slows it."""
    return measured.seconds(slowed_end(workflow, measured))
