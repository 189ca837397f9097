"""Deciders of the event loop (:mod:`peakopt.oracle.uncertain.dispatch`): the plan's order, any online policy.

A decider works on task positions; :func:`online_decider` turns a user's
:class:`~peakopt.oracle.uncertain.online.OnlinePolicy` (ids and mappings) into one and checks every
answer, and :func:`order_policy` turns the plan's order back into an ``OnlinePolicy`` for the
online forms of the offline heuristics.

The policies agent runtimes run (every ready step at once, at most K in flight, semaphores on
the clamped peaks) are here too, once, as deciders (:func:`slots_decider`,
:func:`admission_decider`) and as online policies (:class:`StartAll`, :class:`Slots`,
:class:`Admission`): the solver's heuristics run the deciders at nominal durations
(:mod:`peakopt.solver.heuristics.runtime`) and map method names to the policies
(:mod:`peakopt.solver.heuristics.online`).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from collections.abc import Set as AbstractSet
from copy import copy as _copy
from itertools import takewhile

from peakopt.models import Machine, Schedule, Workflow
from peakopt.models.workflow import topological_order
from peakopt.oracle.base.instants import tied
from peakopt.oracle.uncertain.dispatch import (
    Decider,
    Need,
    SimulationError,
    admitted,
    constrained,
    peak_needs,
)
from peakopt.oracle.uncertain.online import OnlinePolicy


def plan_sequence(workflow: Workflow, plan: Schedule) -> list[int]:
    """Task positions in the plan's order: by planned start, ties in topological order.

    The list is made precedence-feasible (each next step is the earliest-planned one whose
    predecessors are listed), so that a plan breaking a dependency cannot make a step wait for
    a successor; for a dependency-valid plan it is the plan sorted by start. Ties go by
    topological rank (the workflow order wherever that is topological), so a zero-length step
    comes before a successor planned at the same instant (the same for the judge:
    :func:`~peakopt.oracle.base.instants.tied`).
    """
    starts = tied(planned_starts(workflow, plan))  # starts the same instant for the judge tie
    rank = [0] * len(starts)
    for r, task in enumerate(workflow.topological_order):
        rank[task] = r
    return list(topological_order(workflow.predecessors, [(s, r) for s, r in zip(starts, rank, strict=True)]))


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


def order_decider(
    sequence: Sequence[int],
    needs: Sequence[tuple[Need, ...]],
    *,
    greedy: bool,
    gone: AbstractSet[int] = frozenset(),
) -> Decider:
    """The ``order`` policy: ready steps in the plan's order, each when its clamped peak fits.

    ``greedy`` (a resource-based priority policy): every ready step that fits starts, later
    ones overtaking an earlier one that waits. Otherwise (the default of the simulator, an
    activity-based policy) a step starts only once every step before it in the plan's order has
    started: the head of the order blocks the rest. The decider of the strict form is stateful:
    build one per run. Steps in ``gone`` (a set the caller may grow during the run: steps a
    failure skipped, which will never be ready) are passed over instead of waited for.
    """
    if greedy:
        rank = {task: r for r, task in enumerate(sequence)}

        def by_priority(
            now: float, queue: list[int], running: dict[int, float], free: list[float]
        ) -> list[int]:
            return admitted(sorted(queue, key=rank.__getitem__), needs, free, strict=False)

        return by_priority
    head = 0
    size = len(sequence)

    def in_order(now: float, queue: list[int], running: dict[int, float], free: list[float]) -> list[int]:
        nonlocal head
        ready = set(queue)
        if gone:
            while head < size and sequence[head] in gone:
                head += 1
            upcoming = takewhile(ready.__contains__, (j for j in sequence[head:] if j not in gone))
        else:  # the simulator's case: no step ever fails there
            upcoming = takewhile(ready.__contains__, (sequence[i] for i in range(head, size)))
        started = admitted(upcoming, needs, free, strict=True)
        for _ in started:  # past each started step, and the gone ones before the next
            head += 1
            while head < size and sequence[head] in gone:
                head += 1
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
            given = policy(now, ready, {ids[j]: s for j, s in running.items()}, current)
            if given is None or isinstance(given, str | bytes) or not isinstance(given, Iterable):
                # a bare id would be read as its characters
                shown = "None" if given is None else f"{type(given).__name__} {given!r}"[:80]
                raise SimulationError(f"{name} returned {shown} at time {now:g}, not an iterable of step ids")
            answer: list[object] = list(given)
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


class Positional:
    """An online policy that also decides on task positions: the simulator's fast path.

    Subclasses implement :meth:`positions` (a :data:`~peakopt.oracle.uncertain.dispatch.Decider` on the
    workflow they were built for); calling the policy with ids and mappings, as a runtime does,
    translates to it. :class:`~peakopt.oracle.uncertain.simulate.Simulation` calls :meth:`positions`
    directly when the policy was built for the same tasks and resources, skipping the
    translation and the checks of a user's answer (built-in policies start ready steps only).
    """

    def __init__(self, workflow: Workflow, machine: Machine | None) -> None:
        self.resources, self.capacity = constrained(workflow, machine)
        where = {r: k for k, r in enumerate(self.resources)}
        self.needs = [peak_needs(t, where, self.capacity) for t in workflow.tasks]
        self.ids = tuple(t.id for t in workflow.tasks)
        self.index = workflow.index

    def positions(
        self, now: float, queue: list[int], running: dict[int, float], free: list[float]
    ) -> Iterable[int]:
        """The positions among ``queue`` to start now (:data:`~peakopt.oracle.uncertain.dispatch.Decider`)."""
        raise NotImplementedError

    def fresh(self) -> Positional:
        """The same policy at the start of a run (itself when it keeps no state)."""
        return self

    def skip(self, steps: Iterable[str]) -> None:
        """Steps that will never be ready (see ``OnlinePolicy``'s ``skip``): kept nowhere."""

    def __call__(
        self, now: float, ready: Sequence[str], running: Mapping[str, float], free: Mapping[str, float]
    ) -> Iterable[str]:
        """The ready steps to start now (see :class:`~peakopt.oracle.uncertain.online.OnlinePolicy`)."""
        queue = [self.index[step] for step in ready]
        placed = {self.index[step]: at for step, at in running.items()}
        started = self.positions(now, queue, placed, [free[r] for r in self.resources])
        return [self.ids[j] for j in started]


def slots_decider(limit: int, *, first: bool = False) -> Decider:
    """At most ``limit`` steps running, resources ignored; ``first``: the ready ones in workflow order.

    Without ``first`` the steps start in ready order (an SDK's max concurrency, ``cap:K``); with
    it, by position, the topological order's tie rule (``serial`` with ``limit`` 1).
    """

    def decide(now: float, queue: list[int], running: dict[int, float], free: list[float]) -> list[int]:
        room = limit - len(running)
        if room <= 0:
            return []
        return (sorted(queue) if first else queue)[:room]

    return decide


def admission_decider(
    needs: Sequence[tuple[Need, ...]], *, strict: bool = False, keys: Sequence[float] | None = None
) -> Decider:
    """Ready steps in priority order, each when its clamped peak fits: per-resource semaphores.

    Parameters
    ----------
    needs
        Clamped peak needs per task position (:func:`~peakopt.oracle.uncertain.dispatch.peak_needs`).
    strict
        Head-of-line blocking: a ready step that does not fit stops the steps behind it; by
        default later ready steps that fit go first (:func:`~peakopt.oracle.uncertain.dispatch.admitted`).
    keys
        Priority per task position, lowest first (ties by position); default: ready order.
    """

    def decide(now: float, queue: list[int], running: dict[int, float], free: list[float]) -> list[int]:
        if keys is not None:
            queue = sorted(queue, key=lambda j: (keys[j], j))
        return admitted(queue, needs, free, strict=strict)

    return decide


class StartAll(Positional):
    """``asap`` online: every ready step now, resources ignored."""

    def positions(
        self, now: float, queue: list[int], running: dict[int, float], free: list[float]
    ) -> Iterable[int]:
        """Every ready step."""
        return queue


class Slots(Positional):
    """At most ``limit`` steps running (:func:`slots_decider`); ``serial`` is ``limit=1, first=True``."""

    def __init__(
        self, workflow: Workflow, machine: Machine | None, limit: int, *, first: bool = False
    ) -> None:
        super().__init__(workflow, machine)
        self.limit, self.first = limit, first
        self.decide = slots_decider(limit, first=first)

    def positions(
        self, now: float, queue: list[int], running: dict[int, float], free: list[float]
    ) -> Iterable[int]:
        """The first ready steps that keep at most ``limit`` running."""
        return self.decide(now, queue, running, free)


class Admission(Positional):
    """Ready steps in priority order (default: ready order), each when its clamped peak fits.

    See :func:`admission_decider`.
    """

    def __init__(
        self,
        workflow: Workflow,
        machine: Machine | None,
        *,
        strict: bool = False,
        keys: Sequence[float] | None = None,
    ) -> None:
        super().__init__(workflow, machine)
        self.strict, self.keys = strict, keys
        self.decide = admission_decider(self.needs, strict=strict, keys=keys)

    def positions(
        self, now: float, queue: list[int], running: dict[int, float], free: list[float]
    ) -> Iterable[int]:
        """The ready steps that fit, in priority order."""
        return self.decide(now, queue, running, free)


class _PlanOrder(Positional):
    """The ``order`` policy of a plan as an :class:`OnlinePolicy` (one per run: it is stateful)."""

    def __init__(self, workflow: Workflow, machine: Machine | None, plan: Schedule, *, greedy: bool) -> None:
        super().__init__(workflow, machine)
        self.sequence, self.greedy = plan_sequence(workflow, plan), greedy
        self.gone: set[int] = set()
        self.decide = order_decider(self.sequence, self.needs, greedy=greedy, gone=self.gone)

    def fresh(self) -> _PlanOrder:
        """A copy whose order starts again at its head."""
        copy = _copy(self)
        copy.gone = set()
        copy.decide = order_decider(self.sequence, self.needs, greedy=self.greedy, gone=copy.gone)
        return copy

    def skip(self, steps: Iterable[str]) -> None:
        """Pass over ``steps`` in the order instead of waiting for them (a failure skipped them)."""
        self.gone.update(self.index[step] for step in steps)

    def positions(
        self,
        now: float,
        queue: list[int],
        running: dict[int, float],
        free: list[float],
    ) -> Iterable[int]:
        """The plan's order (see :func:`order_decider`)."""
        return self.decide(now, queue, running, free)


def order_policy(
    workflow: Workflow, machine: Machine | None, plan: Schedule, *, greedy: bool = False
) -> OnlinePolicy:
    """The ``order`` execution of ``plan`` as an online policy (see :func:`order_decider`).

    It decides exactly as :class:`~peakopt.oracle.uncertain.simulate.Simulation` does with ``"order"``;
    it is stateful, so build one per run.
    """
    return _PlanOrder(workflow, machine, plan, greedy=greedy)
