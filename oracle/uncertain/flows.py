"""Partial-order schedules: the resource-flow edges that make a schedule one, and their safety check.

A *partial-order schedule* (POS) is the workflow's dependencies plus extra edges ``(a, b)``:
``b`` starts only after ``a`` ends. Run as soon as those edges allow (the ``pos`` execution
policy), it stays safe whatever the durations turn out to be — with demands fixed — exactly when
no set of steps that the order leaves unordered (an *antichain*) needs more than a capacity at
their clamped peaks (:mod:`peakopt.oracle.judge.peaks`): the steps running at any one instant are
unordered, so they form an antichain, and any antichain can be made to meet at its peaks by
stretching and shrinking durations.

- :func:`resource_flow_edges` builds such edges from a schedule that is resource-feasible with
  every step holding its clamped peak for its whole run: a resource flow in the manner of
  Artigues, Michelon & Reusser (2003). Steps, in start order, pull the units they need from steps
  that have ended and from the machine (the source); each pull from a step not already before it
  is an edge. Pulls that add no edge go first (the machine, steps already ordered before it), then
  the ended step with the most units to give, so that few edges are added (or the one that ended
  first, for slack); edges implied by the others are dropped at the end (a transitive reduction
  of the added edges).
- :func:`pos_safe` and :func:`pos_overflow` check a POS independently of how it was built: the
  maximum-weight antichain per resource, from a minimum cut (Dilworth's theorem as a min-flow).

Everything is exact: times on the oracle's decimal time grid, amounts on each resource's grid.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Literal

from peakopt.models import Edge, Machine, Workflow
from peakopt.models.workflow import longest_chains, topological_order
from peakopt.oracle.base.exact import close, to_float
from peakopt.oracle.judge.peaks import Peaks, clamped_peaks
from peakopt.oracle.judge.sweep import time_grid
from peakopt.oracle.uncertain.antichains import heaviest_antichain
from peakopt.oracle.uncertain.simulate import with_edges


def pos_earliest_starts(workflow: Workflow, edges: Iterable[Edge] = ()) -> dict[str, float]:
    """The earliest start of every step under the dependencies plus ``edges``, at nominal durations.

    This is the partial-order schedule's timetable when every step takes its nominal length
    (the ``pos`` policy without noise): longest paths, computed exactly.

    Raises
    ------
    peakopt.oracle.SimulationError
        When an edge names a step the workflow does not have, or the edges close a cycle.
    """
    order, preds = with_edges(workflow, tuple(edges))
    grid = time_grid(workflow, {})
    lengths = [bounds[-1] for bounds in grid.bounds]
    heads, _ = longest_chains(order, preds, lengths, 0)
    return {t.id: to_float(h, grid.exponent) for t, h in zip(workflow.tasks, heads, strict=True)}


#: Which ended step a step links to when it must (see :func:`resource_flow_edges`).
Prefer = Literal["most", "slack"]
PREFER: tuple[Prefer, ...] = ("most", "slack")


class _Flow:
    """The flow of one resource while steps are taken in start order (see :func:`resource_flow_edges`)."""

    def __init__(self, peaks: Peaks, finish: list[int], prefer: Prefer) -> None:
        self.peaks = peaks
        # the most units first (fewest edges), or the earliest end first (the most slack)
        self.rank = (lambda i: self.held[i]) if prefer == "most" else (lambda i: -finish[i])
        self.source = peaks.room
        self.held: dict[int, int] = {}  # step -> units it can still hand on once ended

    def pull(self, j: int, ended: list[int], before: int, ancestors: list[int]) -> tuple[int, list[int]]:
        """Give step ``j`` its units: the steps ordered before it then, and those it was linked to.

        ``before`` is the bitset of the steps already ordered before ``j`` (``ancestors[i]``:
        before ``i``); each link adds the giver and what comes before it.
        """
        need, links = self.peaks.weight[j], []
        givers = [i for i in ended if self.held.get(i)]
        while need:
            for i in givers:
                if need and before >> i & 1 and self.held.get(i):
                    need = self._take(i, need)
            if need and self.source:
                taken = min(need, self.source)
                self.source -= taken
                need -= taken
            if not need:
                break
            others = [i for i in givers if self.held.get(i) and not before >> i & 1]
            if not others:
                raise ValueError(self._short(j))
            giver = max(others, key=self.rank)
            links.append(giver)
            before |= ancestors[giver] | 1 << giver
            need = self._take(giver, need)
        if self.peaks.weight[j]:
            self.held[j] = self.peaks.weight[j]
        return before, links

    def _take(self, i: int, need: int) -> int:
        taken = min(need, self.held[i])
        self.held[i] -= taken
        if not self.held[i]:
            del self.held[i]
        return need - taken

    def _short(self, j: int) -> str:
        return (
            f"needs {self.peaks.amount(self.peaks.weight[j]):g} {self.peaks.resource} at its start, "
            f"more than the steps running then leave of the capacity {self.peaks.capacity:g} "
            "with every step holding its peak for its whole run"
        )


def resource_flow_edges(
    workflow: Workflow, machine: Machine, starts: Mapping[str, float], *, prefer: Prefer = "most"
) -> tuple[Edge, ...]:
    """The resource-flow edges that make the schedule ``starts`` a safe partial-order schedule.

    Parameters
    ----------
    workflow, machine
        The instance (resources the machine does not list are unconstrained).
    starts
        Step id -> start in seconds: a dependency-valid schedule that stays within every
        capacity with each step holding its clamped peak for its whole run (a schedule of the
        robust problem: every safe schedule of a workflow of constant profiles is one).
    prefer
        Where a step takes the units it cannot take without an edge: from the ended step with
        the ``most`` units to give (few edges), or from the one that ended first (the edge with
        the most ``slack`` at nominal durations, which a late predecessor is least likely to
        use up). Either way the partial-order schedule is safe; they differ in flexibility.

    Returns
    -------
    tuple of Edge
        ``(a, b)`` pairs, ``a`` ending no later than ``b`` starts in ``starts``, none implied by the
        dependencies or the other edges; with them :func:`pos_safe` holds. The partial-order
        schedule's earliest starts (:func:`pos_earliest_starts`) are no later than ``starts``.

    Raises
    ------
    ValueError
        When a step has no start, the schedule breaks a dependency, or a step's peak does not
        fit beside those of the steps running when it starts (naming the step and the resource).
        A timetable the oracle calls safe is refused so only where a step too short for the
        oracle to see (under its tolerance of the makespan) overlaps another by a hair: no
        partial-order schedule is safe without delaying it.
    """
    missing = [t.id for t in workflow.tasks if t.id not in starts]
    if missing:
        raise ValueError(f"step {missing[0]!r} has no start")
    grid = time_grid(workflow, starts)
    ids = [t.id for t in workflow.tasks]
    begin = [grid.starts[i] for i in ids]
    finish = [b + bounds[-1] for b, bounds in zip(begin, grid.bounds, strict=True)]
    flows = [_Flow(p, finish, prefer) for p in clamped_peaks(workflow, machine)]
    ancestors = [0] * len(ids)
    linked: list[list[int]] = [[] for _ in ids]
    done: list[int] = []
    for j in _start_order(workflow, begin, finish, grid.scale):
        before = 0
        for p in workflow.predecessors[j]:
            if not _ended(finish[p], begin[j], grid.scale):
                raise ValueError(f"the schedule breaks dependency {ids[p]!r} -> {ids[j]!r}")
            before |= ancestors[p] | 1 << p
        ended = [i for i in done if _ended(finish[i], begin[j], grid.scale)]
        for flow in flows:
            try:
                before, links = flow.pull(j, ended, before, ancestors)
            except ValueError as exc:
                at = to_float(begin[j], grid.exponent)
                raise ValueError(f"step {ids[j]!r} at {at:g} s {exc}") from None
            linked[j].extend(links)
        ancestors[j] = before
        done.append(j)
    return tuple((ids[i], ids[j]) for j in range(len(ids)) for i in _reduced(workflow, ancestors, linked, j))


def _start_order(workflow: Workflow, begin: list[int], finish: list[int], scale: int) -> list[int]:
    """Steps by start, then end (a step that ends at once frees its units first), then position.

    Starts the oracle takes for the same instant count as one, so a step too short for the
    oracle to see, started a hair after another, goes first and hands its units on to it. Among
    those, every step after its predecessors: the dependencies may hold only within the oracle's
    tolerance (a predecessor ending a hair after its successor starts).
    """
    instant, first = [0] * len(begin), None
    for j in sorted(range(len(begin)), key=lambda j: begin[j]):
        if first is None or not close(begin[j], first, scale):
            first = begin[j]
        instant[j] = first
    by_time = sorted(range(len(begin)), key=lambda j: (instant[j], finish[j], j))
    place = {j: k for k, j in enumerate(by_time)}
    preds = [[place[i] for i in workflow.predecessors[j]] for j in by_time]
    return [by_time[k] for k in topological_order(preds)]


def _ended(finish: int, start: int, scale: int) -> bool:
    """Whether a step ending at ``finish`` has ended by ``start`` (the oracle's same instant counts)."""
    return finish <= start or close(finish, start, scale)


def _reduced(workflow: Workflow, ancestors: list[int], linked: list[list[int]], j: int) -> list[int]:
    """The steps linked to ``j`` that no other predecessor of ``j`` already follows."""
    direct = [*workflow.predecessors[j], *linked[j]]
    return [i for i in linked[j] if not any(p != i and ancestors[p] >> i & 1 for p in direct)]


@dataclass(frozen=True)
class AntichainOverflow:
    """Why a partial-order schedule is not safe for every realisation of the durations.

    Attributes
    ----------
    resource
        The resource.
    steps
        Steps that the order leaves unordered (an antichain), in workflow order.
    load
        The sum of their clamped peaks.
    capacity
        The machine's capacity of the resource.
    """

    resource: str
    steps: tuple[str, ...]
    load: float
    capacity: float

    def __str__(self) -> str:
        return (
            f"steps {', '.join(self.steps)} are unordered, so they may run at once, and need "
            f"{self.load:g} {self.resource} at their peaks, over its capacity {self.capacity:g}"
        )


def pos_overflow(workflow: Workflow, machine: Machine, edges: Iterable[Edge]) -> AntichainOverflow | None:
    """The heaviest antichain over a capacity, on the first resource that has one; None when safe.

    Each resource's heaviest antichain (the maximum total clamped peak over sets of pairwise
    unordered steps) is found from a minimum cut
    (:func:`peakopt.oracle.uncertain.antichains.heaviest_antichain`), independently of any flow.

    Raises
    ------
    peakopt.oracle.SimulationError
        When an edge names an unknown step or the edges close a cycle.
    """
    _, preds = with_edges(workflow, tuple(edges))
    for peaks in clamped_peaks(workflow, machine):
        if peaks.fits(sum(peaks.weight)):
            continue
        steps = heaviest_antichain(preds, peaks.weight)
        load = sum(peaks.weight[i] for i in steps)
        if not peaks.fits(load):
            ids = tuple(workflow.tasks[i].id for i in sorted(steps))
            return AntichainOverflow(peaks.resource, ids, peaks.amount(load), peaks.capacity)
    return None


def pos_safe(workflow: Workflow, machine: Machine, edges: Iterable[Edge]) -> bool:
    """Whether the dependencies plus ``edges`` keep every capacity under any durations (demands fixed).

    True when no antichain of the order needs more than a capacity at its clamped peaks
    (:func:`pos_overflow` says which one does).
    """
    return pos_overflow(workflow, machine, edges) is None
