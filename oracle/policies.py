"""Deciders of the event loop (:mod:`peakopt.oracle.dispatch`): the plan's order, and any online policy.

A decider works on task positions; :func:`online_decider` turns a user's
:class:`~peakopt.oracle.online.OnlinePolicy` (ids and mappings) into one and checks every
answer, and :func:`order_policy` turns the plan's order back into an ``OnlinePolicy`` for the
online forms of the offline heuristics.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from itertools import takewhile

from peakopt.models import Machine, Schedule, Workflow
from peakopt.oracle.dispatch import Decider, Need, SimulationError, admit, constrained, peak_needs
from peakopt.oracle.online import OnlinePolicy


def plan_sequence(workflow: Workflow, plan: Schedule) -> list[int]:
    """Task positions in the plan's order: by planned start, ties in topological order.

    Ties go by topological rank (the workflow order wherever that is topological) so that a
    zero-length step comes before a successor planned at the same instant.
    """
    starts = planned_starts(workflow, plan)
    rank = {task: r for r, task in enumerate(workflow.topological_order)}
    return sorted(range(len(starts)), key=lambda j: (starts[j], rank[j]))


def planned_starts(workflow: Workflow, plan: Schedule) -> list[float]:
    """The plan's start per task position.

    Raises
    ------
    SimulationError
        When the plan is for another workflow or leaves a step out.
    """
    if plan.workflow != workflow.id:
        raise SimulationError(f"the plan is for workflow {plan.workflow!r}, not {workflow.id!r}")
    missing = [t.id for t in workflow.tasks if t.id not in plan.starts]
    if missing:
        listed = ", ".join(repr(m) for m in missing[:5]) + (" ..." if len(missing) > 5 else "")
        raise SimulationError(f"the plan of workflow {workflow.id!r} has no start for {listed}")
    return [plan.starts[t.id] for t in workflow.tasks]


def order_decider(sequence: Sequence[int], needs: Sequence[tuple[Need, ...]], *, greedy: bool) -> Decider:
    """The ``order`` policy: ready steps in the plan's order, each when its clamped peak fits.

    ``greedy`` (a resource-based priority policy): every ready step that fits starts, later
    ones overtaking an earlier one that waits. Otherwise (the default of the simulator, an
    activity-based policy) a step starts only once every step before it in the plan's order has
    started: the head of the order blocks the rest. The decider of the strict form is stateful:
    build one per run.
    """
    if greedy:
        rank = {task: r for r, task in enumerate(sequence)}

        def by_priority(
            now: float, queue: list[int], running: dict[int, float], free: list[float]
        ) -> list[int]:
            return admit(sorted(queue, key=rank.__getitem__), needs, free, strict=False)

        return by_priority
    head = 0
    size = len(sequence)

    def in_order(now: float, queue: list[int], running: dict[int, float], free: list[float]) -> list[int]:
        nonlocal head
        ready = set(queue)
        upcoming = takewhile(ready.__contains__, (sequence[i] for i in range(head, size)))
        started = admit(upcoming, needs, free, strict=True)
        head += len(started)
        return started

    return in_order


def online_decider(
    policy: OnlinePolicy, name: str, workflow: Workflow, machine: Machine | None, resources: Sequence[str]
) -> Decider:
    """A decider that asks ``policy`` (ids, mappings) and checks what it returns.

    ``free`` holds every resource of the machine: those no task uses stay at their capacity.

    Raises
    ------
    SimulationError
        (when the decider runs) the policy raised, or returned an id that is not ready or
        returned one twice.
    """
    ids = tuple(t.id for t in workflow.tasks)
    index = workflow.index
    idle = {r: c for r, c in (machine.capacity.items() if machine is not None else ()) if r not in resources}

    def decide(now: float, queue: list[int], running: dict[int, float], free: list[float]) -> list[int]:
        current = dict(idle)
        current.update(zip(resources, free, strict=True))
        ready = [ids[j] for j in queue]
        try:
            answer: list[object] = list(policy(now, ready, {ids[j]: s for j, s in running.items()}, current))
        except SimulationError:
            raise
        except Exception as exc:
            message = " ".join(str(exc).split())
            raise SimulationError(f"{name} raised {type(exc).__name__}: {message} at time {now:g}") from exc
        return _checked(name, now, answer, index, set(queue))

    return decide


def _checked(
    name: str, now: float, answer: list[object], index: Mapping[str, int], ready: set[int]
) -> list[int]:
    chosen: list[int] = []
    for step in answer:
        j = index.get(step) if isinstance(step, str) else None
        if j is None:
            raise SimulationError(f"{name} started {step!r} at time {now:g}: not a step of the workflow")
        if j in chosen:
            raise SimulationError(f"{name} started step {step!r} twice at time {now:g}")
        if j not in ready:
            raise SimulationError(f"{name} started step {step!r} at time {now:g}, but it is not ready")
        chosen.append(j)
    return chosen


class _PlanOrder:
    """The ``order`` policy of a plan as an :class:`OnlinePolicy` (one per run: it is stateful)."""

    def __init__(self, workflow: Workflow, machine: Machine | None, plan: Schedule, *, greedy: bool) -> None:
        self.resources, capacity = constrained(workflow, machine)
        where = {r: k for k, r in enumerate(self.resources)}
        needs = [peak_needs(t, where, capacity) for t in workflow.tasks]
        self.decide = order_decider(plan_sequence(workflow, plan), needs, greedy=greedy)
        self.ids = tuple(t.id for t in workflow.tasks)
        self.index = workflow.index

    def __call__(
        self, now: float, ready: Sequence[str], running: Mapping[str, float], free: Mapping[str, float]
    ) -> Iterable[str]:
        queue = [self.index[step] for step in ready]
        placed = {self.index[step]: at for step, at in running.items()}
        started = self.decide(now, queue, placed, [free[r] for r in self.resources])
        return [self.ids[j] for j in started]


def order_policy(
    workflow: Workflow, machine: Machine | None, plan: Schedule, *, greedy: bool = False
) -> OnlinePolicy:
    """The ``order`` execution of ``plan`` as an online policy (see :func:`order_decider`).

    It decides exactly as :class:`~peakopt.oracle.simulate.Simulation` does with ``"order"``;
    it is stateful, so build one per run.
    """
    return _PlanOrder(workflow, machine, plan, greedy=greedy)
