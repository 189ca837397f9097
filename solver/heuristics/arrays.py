"""A workflow × machine as plain tuples, built once and read by every heuristic.

Pydantic stays out of the inner loops: the schedulers index tasks by integer
position and read durations, predecessors and per-segment resource needs from
the tuples here.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from functools import cached_property

from peakopt.models import Machine, Task, Workflow
from peakopt.models.workflow import longest_chains
from peakopt.oracle import TOLERANCE
from peakopt.oracle.uncertain.dispatch import LOAD_SLACK, Need, clamped_needs, constrained, peak_needs

__all__ = ["LOAD_SLACK", "TIME_SLACK", "Block", "Need", "Problem", "compile_problem"]

#: Relative slack on times: overlaps shorter than this fraction of the
#: makespan's lower bound are rounding artefacts, not overlaps. The bound is
#: at most any schedule's makespan, so such overlaps stay within the oracle's
#: tolerance (relative to the schedule's time scale) whatever the unit.
TIME_SLACK = TOLERANCE

#: A segment that uses constrained resources: (offset from the task's start,
#: duration, needs).
Block = tuple[float, float, tuple[Need, ...]]


@dataclass(frozen=True, eq=False)
class Problem:
    """The arrays of one workflow on one machine (tasks by position).

    Demands are clamped to the capacity (``min(r, C)``), so a step over a
    capacity on its own runs with no other step that uses that resource: the
    schedules built on these arrays reach the oracle's ``cva_floor``.

    Attributes
    ----------
    workflow, machine
        Workflow id and machine name (None when resource-blind).
    ids
        Task ids.
    length
        Task run times (sum of the segment durations, as the oracle adds them).
    preds, succs
        Predecessor and successor positions.
    topo
        A topological order, ties broken by input position.
    resources, capacity
        The machine's resources that some task uses, and their capacities.
    blocks
        Per task, its segments that use a constrained resource, with offsets.
    peak
        Per task, its clamped peak need per constrained resource.
    eps
        Time tolerance for this instance.
    """

    workflow: str
    machine: str | None
    ids: tuple[str, ...]
    length: tuple[float, ...]
    preds: tuple[tuple[int, ...], ...]
    succs: tuple[tuple[int, ...], ...]
    topo: tuple[int, ...]
    resources: tuple[str, ...]
    capacity: tuple[float, ...]
    blocks: tuple[tuple[Block, ...], ...]
    peak: tuple[tuple[Need, ...], ...]
    eps: float

    @property
    def size(self) -> int:
        """Number of tasks."""
        return len(self.ids)

    @cached_property
    def rank(self) -> tuple[int, ...]:
        """Position of each task in :attr:`topo`."""
        rank = [0] * self.size
        for position, task in enumerate(self.topo):
            rank[task] = position
        return tuple(rank)

    @cached_property
    def _chains(self) -> tuple[list[float], list[float]]:
        return longest_chains(self.topo, self.preds, self.length, 0.0)

    @cached_property
    def early(self) -> tuple[float, ...]:
        """Earliest start per task, precedence only (every task as soon as ready)."""
        return tuple(self._chains[0])

    @cached_property
    def tail(self) -> tuple[float, ...]:
        """Longest path from each task's start to the end, its own run included."""
        return tuple(d + t for d, t in zip(self.length, self._chains[1], strict=True))

    @cached_property
    def critical_path(self) -> float:
        """Length of the longest path (the precedence-only makespan)."""
        return max((e + t for e, t in zip(self.early, self.tail, strict=True)), default=0.0)

    @cached_property
    def lower_bound(self) -> float:
        """Critical-path and resource-energy bound on the makespan (clamped demands)."""
        path = self.critical_path
        energy = [0.0] * len(self.capacity)
        for blocks in self.blocks:
            for _, duration, needs in blocks:
                for k, amount, _ in needs:
                    energy[k] += duration * amount
        return max([path] + [e / c for e, c in zip(energy, self.capacity, strict=True)])

    @cached_property
    def reverse(self) -> Problem:
        """The time-reversed instance: edges turned round, profiles played backwards.

        A schedule of the reverse read backwards in time is a schedule of
        this instance, which is what backward (right-justifying) passes use.
        """
        blocks = tuple(
            tuple(
                (max(0.0, length - offset - duration), duration, needs)
                for offset, duration, needs in reversed(bs)
            )
            for length, bs in zip(self.length, self.blocks, strict=True)
        )
        return Problem(
            workflow=self.workflow,
            machine=self.machine,
            ids=self.ids,
            length=self.length,
            preds=self.succs,
            succs=self.preds,
            topo=self.topo[::-1],
            resources=self.resources,
            capacity=self.capacity,
            blocks=blocks,
            peak=self.peak,
            eps=self.eps,
        )

    def makespan(self, starts: list[float]) -> float:
        """Latest finish of ``starts`` (0 for no task)."""
        return max((s + d for s, d in zip(starts, self.length, strict=True)), default=0.0)


def _blocks(
    task: Task, index: dict[str, int], capacity: tuple[float, ...]
) -> tuple[tuple[Block, ...], tuple[Need, ...]]:
    blocks: list[Block] = []
    offset = 0.0
    for segment in task.segments:
        duration = segment.duration
        needs = clamped_needs(segment.demand, index, capacity)
        if needs and duration > 0:
            blocks.append((offset, duration, needs))
        offset += duration
    return tuple(blocks), peak_needs(task, index, capacity)


def compile_problem(workflow: Workflow, machine: Machine | None) -> Problem:
    """Build the arrays of ``workflow`` on ``machine`` (None: no resource limits).

    Parameters
    ----------
    workflow
        A valid workflow (acyclic, predecessors known).
    machine
        Its capacities; resources it does not list are unconstrained.

    Returns
    -------
    Problem
        Plain tuples; cheap to build (no graph library, no pydantic objects).
    """
    tasks = workflow.tasks
    resources, capacity = constrained(workflow, machine)
    index = {r: k for k, r in enumerate(resources)}
    preds = workflow.predecessors
    succs: list[list[int]] = [[] for _ in tasks]
    for j, ps in enumerate(preds):
        for p in ps:
            succs[p].append(j)
    lengths = tuple(t.length for t in tasks)
    built = [_blocks(t, index, capacity) for t in tasks]
    problem = Problem(
        workflow=workflow.id,
        machine=machine.name if machine is not None else None,
        ids=tuple(t.id for t in tasks),
        length=lengths,
        preds=preds,
        succs=tuple(tuple(s) for s in succs),
        topo=workflow.topological_order,
        resources=resources,
        capacity=capacity,
        blocks=tuple(b for b, _ in built),
        peak=tuple(p for _, p in built),
        eps=0.0,
    )
    return replace(problem, eps=TIME_SLACK * problem.lower_bound)
