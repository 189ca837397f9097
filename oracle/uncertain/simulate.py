"""The event-driven simulator: a plan or an online policy executed over realised durations.

Execution policies (``policy`` of :func:`execute` and :class:`Simulation`):

- ``literal``: the plan's starts as a timetable. A step whose predecessor runs long still
  starts on time, which is a dependency violation the oracle reports.
- ``enforced``: each step at max(planned start, its last predecessor's realised end).
- ``order``: the plan's order (planned start, ties in topological order) as priorities: at time
  0 and at every completion the ready steps start in that order when their clamped peak demands
  fit the capacity that running steps do not hold. By default a step also waits until every
  step before it in the order has started (``greedy=False``: an activity-based policy, never
  later than the plan at nominal durations); ``greedy=True`` lets a later step that fits
  overtake one that waits (a resource-based policy). An over-capacity step holds the whole
  capacity (its demand is clamped), so it runs alone on that resource; neither form deadlocks.
- ``pos``: the plan as a partial-order schedule: a step starts as soon as every predecessor
  under the dependencies plus ``plan.edges`` has ended; no resource check, the edges carry it.
- an :class:`~peakopt.oracle.uncertain.online.OnlinePolicy`, asked at time 0 and at every completion
  (or a :data:`~peakopt.oracle.uncertain.online.PolicyFactory`, for a fresh policy per run).

Admission holds each running step's *nominal* clamped peak demand: a policy never sees a
realised duration or demand before it happens, so realised demands change what the oracle
measures on the realised workflow, never when steps start. ``literal``, ``enforced`` and
``pos`` involve no admission, so their event times are computed in one topological pass
(:func:`timetable`), which is the event loop's result without the loop.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from typing import cast

from peakopt.models import Edge, Machine, Schedule, Workflow
from peakopt.models.workflow import topological_order
from peakopt.oracle.uncertain.dispatch import Decider, SimulationError, constrained, dispatch, peak_needs
from peakopt.oracle.uncertain.names import EXECUTIONS, Execution
from peakopt.oracle.uncertain.online import OnlinePolicy, PolicyFactory
from peakopt.oracle.uncertain.policies import (
    Positional,
    online_decider,
    order_decider,
    plan_sequence,
    planned_starts,
)

#: ``request(position, ready) -> requested start`` (None: the step does not run).
StartRequest = Callable[[int, float], float | None]


def timetable(
    order: Sequence[int],
    preds: Sequence[Sequence[int]],
    lengths: Sequence[float],
    request: StartRequest,
    *,
    enforce: bool,
) -> list[float | None]:
    """Starts in one pass over a topological ``order``: requested, or not before the predecessors end.

    Parameters
    ----------
    order
        Positions, every predecessor first.
    preds
        Predecessor positions per task.
    lengths
        Realised run time per task.
    request
        The requested start of a task, given when its predecessors (that run) end
        (``ready``, 0 without any); None leaves the step out.
    enforce
        Start at max(requested, ready) (``enforced``, ``pos``, replay's ``runtime``); otherwise
        as requested (a timetable).

    Returns
    -------
    list
        Start per position; None for the steps left out.
    """
    starts: list[float | None] = [None] * len(lengths)
    for j in order:
        ready = 0.0
        for p in preds[j]:
            begun = starts[p]
            if begun is not None and begun + lengths[p] > ready:
                ready = begun + lengths[p]
        wanted = request(j, ready)
        if wanted is not None and enforce and wanted < ready:
            wanted = ready
        starts[j] = wanted
    return starts


def with_edges(workflow: Workflow, edges: Sequence[Edge]) -> tuple[tuple[int, ...], list[list[int]]]:
    """A topological order and the predecessors of the dependencies plus ``edges`` (positions).

    Raises
    ------
    SimulationError
        An edge naming an unknown step, or edges that close a cycle with the dependencies.
    """
    index = workflow.index
    preds = [list(p) for p in workflow.predecessors]
    for a, b in edges:
        for step in (a, b):
            if step not in index:
                raise SimulationError(f"resource-flow edge ({a!r}, {b!r}): unknown step {step!r}")
        preds[index[b]].append(index[a])
    order = topological_order(preds)
    if len(order) < len(preds):
        placed = set(order)
        stuck = [t.id for j, t in enumerate(workflow.tasks) if j not in placed]
        listed = ", ".join(repr(s) for s in stuck[:5]) + (" ..." if len(stuck) > 5 else "")
        raise SimulationError(f"the plan's edges and the dependencies form a cycle through {listed}")
    return order, preds


class Simulation:
    """One policy compiled once on the nominal workflow, then run on many realisations.

    Parameters
    ----------
    workflow
        The nominal workflow: what the policy decides from (task ids, dependencies, demands).
    machine
        Its capacities (None: nothing constrained).
    policy
        An :data:`Execution` name (needs ``plan``) or an online policy (reused across runs).
    plan
        The schedule to execute: its starts (``literal``, ``enforced``, ``order``) or its
        edges (``pos``).
    factory
        Instead of ``policy``: builds a fresh online policy for every run.
    greedy
        The ``order`` policy's admission (see the module docstring).
    name
        How errors name the policy (default: the execution's or the callable's name).

    Raises
    ------
    SimulationError
        A missing or unusable plan, an unknown execution name.
    """

    def __init__(
        self,
        workflow: Workflow,
        machine: Machine | None,
        policy: Execution | OnlinePolicy | None = None,
        plan: Schedule | None = None,
        *,
        factory: PolicyFactory | None = None,
        greedy: bool = False,
        name: str | None = None,
    ) -> None:
        if (policy is None) == (factory is None):
            raise SimulationError("give an execution policy or a policy factory, not both or neither")
        self.workflow, self.machine, self.greedy = workflow, machine, greedy
        self.size = len(workflow.tasks)
        self.preds = workflow.predecessors
        succs: list[list[int]] = [[] for _ in workflow.tasks]
        for j, ps in enumerate(self.preds):
            for p in ps:
                succs[p].append(j)
        self.succs = succs
        self.resources, self.capacity = constrained(workflow, machine)
        where = {r: k for k, r in enumerate(self.resources)}
        self.needs = [peak_needs(t, where, self.capacity) for t in workflow.tasks]
        self.ids = tuple(t.id for t in workflow.tasks)
        self.online: OnlinePolicy | None = None
        self.factory = factory
        if isinstance(policy, str):
            self._compile_plan(policy, plan)
            self.name = name or f"execution {policy!r}"
        else:
            self.kind = "online"
            self.online = policy
            self.name = name or f"policy {_callable_name(policy if policy is not None else factory)!r}"

    def _compile_plan(self, policy: str, plan: Schedule | None) -> None:
        if policy not in EXECUTIONS:
            raise SimulationError(f"unknown execution {policy!r}; choose from {', '.join(EXECUTIONS)}")
        if plan is None:
            raise SimulationError(f"execution {policy!r} needs a plan")
        self.kind = policy
        self.planned = planned_starts(self.workflow, plan)
        self.order: Sequence[int] = self.workflow.topological_order
        self.graph: Sequence[Sequence[int]] = self.preds
        if policy == "pos":
            self.order, self.graph = with_edges(self.workflow, plan.edges)
        # pos requests -inf: a step starts when its predecessors allow, whatever the plan says
        wanted = self.planned if policy == "enforced" else [-math.inf] * self.size
        self.request: StartRequest = lambda j, _: wanted[j]
        if policy == "order":
            self.sequence = plan_sequence(self.workflow, plan)

    def run(self, lengths: Sequence[float], scales: Sequence[float] | None = None) -> list[float]:
        """Realised start per task position for one realisation.

        Parameters
        ----------
        lengths
            Realised total run time per task position.
        scales
            Realised demand multipliers (checked for length only: no policy sees a realised
            demand, so they change what the oracle measures, not the starts).
        """
        if len(lengths) != self.size or (scales is not None and len(scales) != self.size):
            raise SimulationError(f"a realisation needs one value per task ({self.size})")
        if self.kind == "literal":
            return list(self.planned)
        if self.kind in ("enforced", "pos"):
            return cast(list[float], timetable(self.order, self.graph, lengths, self.request, enforce=True))
        return dispatch(
            lengths, self.preds, self.succs, self.needs, self.capacity, self._decider(), self.ids, self.name
        )

    def _decider(self) -> Decider:
        if self.kind == "order":
            return order_decider(self.sequence, self.needs, greedy=self.greedy)
        policy = self.online if self.factory is None else self.factory(self.workflow, self.machine)
        assert policy is not None
        if isinstance(policy, Positional) and policy.ids == self.ids and policy.resources == self.resources:
            return policy.positions
        return online_decider(policy, self.name, self.workflow, self.machine, self.resources)

    def schedule(self, starts: Sequence[float], source: str | None = None) -> Schedule:
        """The starts of :meth:`run` as a :class:`~peakopt.models.Schedule` to score."""
        return Schedule(
            workflow=self.workflow.id,
            machine=self.machine.name if self.machine is not None else None,
            starts=dict(zip(self.ids, starts, strict=True)),
            source=source,
            meta={"execution": self.kind if self.kind != "online" else self.name},
        )


def _callable_name(thing: object) -> str:
    return str(getattr(thing, "__name__", None) or type(thing).__name__)


def execute(
    workflow: Workflow,
    machine: Machine | None,
    policy: Execution | OnlinePolicy | None = None,
    plan: Schedule | None = None,
    *,
    factory: PolicyFactory | None = None,
    nominal: Workflow | None = None,
    greedy: bool = False,
) -> Schedule:
    """Run ``policy`` over the realised ``workflow`` and return the realised schedule.

    Parameters
    ----------
    workflow
        The realised workflow (its durations are what happens); score the result on it.
    machine, policy, plan, factory, greedy
        As for :class:`Simulation`.
    nominal
        What the policy decides from (its demands and, for a factory, its data), when it
        differs from the realisation; the same tasks in the same order. By default
        ``workflow`` itself.

    Returns
    -------
    Schedule
        Realised starts, ``source`` the plan's, ``meta["execution"]`` the policy.
    """
    base = nominal if nominal is not None else workflow
    if [t.id for t in base.tasks] != [t.id for t in workflow.tasks]:
        raise SimulationError("the nominal and realised workflows must have the same tasks in the same order")
    simulation = Simulation(base, machine, policy, plan, factory=factory, greedy=greedy)
    starts = simulation.run([t.length for t in workflow.tasks])
    return simulation.schedule(starts, plan.source if plan is not None else simulation.name)
