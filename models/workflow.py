"""Workflows (a DAG of tool calls), machines and suites."""

from __future__ import annotations

import heapq
from collections.abc import Sequence
from fractions import Fraction
from functools import cached_property
from typing import TYPE_CHECKING, Annotated, Any, TypeVar

from pydantic import BaseModel, Field, model_validator

from peakopt.models.task import FROZEN, Cached, Task

if TYPE_CHECKING:
    import networkx as nx

Name = Annotated[str, Field(min_length=1)]
#: A finite capacity above 0; strict like :data:`~peakopt.models.task.NonNegative`.
Positive = Annotated[float, Field(gt=0, allow_inf_nan=False, strict=True)]

#: Run times in seconds (float), in solver ticks (int) or exact (Fraction).
Length = TypeVar("Length", int, float, Fraction)


def topological_order(preds: Sequence[Sequence[int]], keys: Sequence[Any] | None = None) -> tuple[int, ...]:
    """Positions, every predecessor before its successors (Kahn's algorithm).

    Among the tasks ready at once the one with the lowest key goes first (ties,
    and every choice without ``keys``, to the first in input order), so the
    order is the input order whenever that is already topological. With keys it
    is a priority list made precedence-feasible (the serial SGS's activity list).
    """
    left = [len(p) for p in preds]
    succs: list[list[int]] = [[] for _ in preds]
    for j, before in enumerate(preds):
        for i in before:
            succs[i].append(j)
    # ascending positions are already a heap; with keys, (key, position) pairs are heapified
    ready: list[Any] = [j for j, count in enumerate(left) if count == 0]
    if keys is not None:
        ready = [(keys[j], j) for j in ready]
        heapq.heapify(ready)
    order = []
    while ready:
        task = heapq.heappop(ready)
        if keys is not None:
            task = task[1]
        order.append(task)
        for succ in succs[task]:
            left[succ] -= 1
            if not left[succ]:
                heapq.heappush(ready, succ if keys is None else (keys[succ], succ))
    return tuple(order)


def longest_chains(
    order: Sequence[int], preds: Sequence[Sequence[int]], length: Sequence[Length], zero: Length
) -> tuple[list[Length], list[Length]]:
    """The critical-path method's passes over a topological ``order``, in ``length``'s numbers.

    Returns ``(heads, tails)``: per task, the longest chain of runs that must
    come before its start (its earliest start, precedences alone) and after
    its end. The critical path is ``max(head + length)``; ``zero`` is the
    number type's 0, so that ticks stay integers and exact lengths exact.
    """
    heads, tails = [zero] * len(length), [zero] * len(length)
    for j in order:
        for i in preds[j]:
            heads[j] = max(heads[j], heads[i] + length[i])
    for j in reversed(order):
        for i in preds[j]:
            tails[i] = max(tails[i], length[j] + tails[j])
    return heads, tails


class Workflow(Cached):
    """A set of tasks with precedence constraints (a DAG).

    Parameters
    ----------
    id
        Name of the workflow.
    request
        What the user asked the agent to do (the task text a planning prompt
        starts from).
    tasks
        At least one task; ids unique, predecessors known, no cycle; a step
        a task's ``call`` names (``$id.output``) is among its predecessors.
    meta
        Anything else, e.g. ``tier`` and ``source``.
    """

    model_config = FROZEN

    id: Name
    request: str | None = None
    tasks: tuple[Task, ...] = Field(min_length=1)
    meta: dict[str, Any] = Field(default_factory=dict)

    @model_validator(mode="after")
    def _dag(self) -> Workflow:
        ids: set[str] = set()
        for task in self.tasks:
            if task.id in ids:
                raise ValueError(f"duplicate task id {task.id!r}")
            ids.add(task.id)
        for task in self.tasks:
            for pred in task.depends_on:
                if pred not in ids:
                    raise ValueError(f"task {task.id!r} depends on unknown task {pred!r}")
            # an output used before its step has run would make the call's text lie about the order
            for used in task.consumes:
                if used not in task.depends_on:
                    raise ValueError(
                        f"task {task.id!r}: its call uses ${used}.output "
                        f"but {used!r} is not in its depends_on"
                    )
        # Kahn's order reaches every task exactly when there is no cycle (linear, and no networkx
        # import, which costs a third of a second); find_cycle re-walks edges and takes seconds on
        # 10,000-task DAGs, so ask it only to name a cycle
        if len(topological_order(self.predecessors)) == len(self.tasks):
            return self
        import networkx as nx

        cycle = nx.find_cycle(self.graph)
        path = [edge[0] for edge in cycle] + [cycle[0][0]]
        raise ValueError("dependency cycle " + " -> ".join(path))

    @cached_property
    def graph(self) -> nx.DiGraph:
        """Precedence graph: an edge ``a -> b`` when ``b`` depends on ``a``."""
        import networkx as nx  # only here: importing it costs a third of a second

        graph = nx.DiGraph()
        graph.add_nodes_from(t.id for t in self.tasks)
        graph.add_edges_from((p, t.id) for t in self.tasks for p in t.depends_on)
        return graph

    @cached_property
    def index(self) -> dict[str, int]:
        """Task id -> position in ``tasks``."""
        return {t.id: i for i, t in enumerate(self.tasks)}

    @cached_property
    def predecessors(self) -> tuple[tuple[int, ...], ...]:
        """Per task, its predecessors' positions in ``tasks``."""
        index = self.index
        return tuple(tuple(index[p] for p in t.depends_on) for t in self.tasks)

    @cached_property
    def topological_order(self) -> tuple[int, ...]:
        """Task positions, every predecessor first; ties in task order (see :func:`topological_order`)."""
        return topological_order(self.predecessors)

    @cached_property
    def earliest_starts(self) -> tuple[float, ...]:
        """Per task, its earliest start in seconds from precedences alone (see :func:`longest_chains`)."""
        lengths = [t.length for t in self.tasks]
        heads, _ = longest_chains(self.topological_order, self.predecessors, lengths, 0.0)
        return tuple(heads)

    @cached_property
    def critical_path(self) -> float:
        """Length in seconds of the longest precedence chain: the makespan with unlimited resources.

        Float sums along the chain, as the heuristics add them; the solver's
        proven bounds redo the pass in exact decimals
        (:func:`peakopt.solver.bounds.real_lower_bound`).
        """
        return max(h + t.length for h, t in zip(self.earliest_starts, self.tasks, strict=True))

    def task(self, task_id: str) -> Task:
        """The task with id ``task_id`` (KeyError if unknown)."""
        return self.tasks[self.index[task_id]]

    @property
    def edges(self) -> list[tuple[str, str]]:
        """Precedence edges ``(predecessor, successor)`` in task order."""
        return [(p, t.id) for t in self.tasks for p in t.depends_on]

    @property
    def resources(self) -> frozenset[str]:
        """Every resource some task uses."""
        return frozenset(r for t in self.tasks for r in t.resources)


class Machine(BaseModel):
    """Capacities of the machine the workflow runs on.

    A resource that tasks use but the machine does not list is unconstrained.

    A resource is *hard* unless ``soft`` names it: overflowing a hard resource
    (memory, GPU memory, connection slots) kills or fails steps, overflowing a
    soft one (CPU cores) only slows the steps that use it down. Safety is judged
    on the hard resources; a soft overflow costs time instead
    (:mod:`peakopt.oracle.judge.slowdown`). The optimum is the same either way: the
    best schedule that overflows nothing.

    Parameters
    ----------
    name
        Profile name, e.g. ``small`` or ``psplib``.
    capacity
        Resource -> positive capacity.
    soft
        The resources among ``capacity`` whose oversubscription slows steps
        down instead of failing them (each at most once); empty by default, so
        every resource is hard.
    meta
        Anything else.
    """

    model_config = FROZEN

    name: Name
    capacity: dict[Name, Positive]
    soft: tuple[Name, ...] = ()
    meta: dict[str, Any] = Field(default_factory=dict)

    @model_validator(mode="after")
    def _soft_known(self) -> Machine:
        seen: set[str] = set()
        for resource in self.soft:
            if resource not in self.capacity:
                raise ValueError(f"soft resource {resource!r} is not one of the machine's capacities")
            if resource in seen:
                raise ValueError(f"soft resource {resource!r} is listed twice")
            seen.add(resource)
        return self

    @property
    def hard(self) -> tuple[str, ...]:
        """The resources whose overflow makes a schedule unsafe (every one ``soft`` does not name)."""
        return tuple(r for r in self.capacity if r not in self.soft)

    def as_hard(self) -> Machine:
        """The machine with every resource hard (``--soft-as-hard``): soft overflow is unsafe too."""
        return self if not self.soft else self.model_copy(update={"soft": ()})


class Suite(BaseModel):
    """Workflows and the machine profiles to run each of them on.

    Parameters
    ----------
    machines
        Machine profiles with unique names (may be empty).
    workflows
        At least one workflow; ids unique.
    meta
        Anything else, e.g. the generator's seed.
    """

    model_config = FROZEN

    machines: tuple[Machine, ...] = ()
    workflows: tuple[Workflow, ...] = Field(min_length=1)
    meta: dict[str, Any] = Field(default_factory=dict)

    @model_validator(mode="after")
    def _unique(self) -> Suite:
        for kind, names in (
            ("machine name", [m.name for m in self.machines]),
            ("workflow id", [w.id for w in self.workflows]),
        ):
            seen: set[str] = set()
            for name in names:
                if name in seen:
                    raise ValueError(f"duplicate {kind} {name!r}")
                seen.add(name)
        return self

    def machine(self, name: str) -> Machine:
        """The machine called ``name`` (KeyError if unknown)."""
        for machine in self.machines:
            if machine.name == name:
                return machine
        raise KeyError(name)

    def workflow(self, workflow_id: str) -> Workflow:
        """The workflow with id ``workflow_id`` (KeyError if unknown)."""
        for workflow in self.workflows:
            if workflow.id == workflow_id:
                return workflow
        raise KeyError(workflow_id)
