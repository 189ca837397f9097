"""Adversarial search: mutate instances to make a method as far from the optimum as it gets.

An elitist evolutionary search. Start from a population of instances (the
method's worst cases of a campaign); each generation draws a fixed number of
children, each a parent picked by tournament with one to three seeded
mutations — scale a step's duration, change a demand, add a precedence edge
(along a topological order, so no cycle appears) or drop one — then solves
each child to its optimum and runs the method on it, in parallel. The
population keeps the worst instances found so far, so the worst gap never
goes down.

The fitness is the gap to a *proven* optimum, ``(makespan − OPT) / OPT``; a
child whose optimum is not proven in the time limit, or whose schedule is
unsafe or fails, has none and is never kept. Everything random is drawn in
the parent from one seeded generator and children are judged in a fixed
order, so a seed gives the same search on any executor (with one solver
thread per solve).
"""

from __future__ import annotations

import math
import random
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from peakopt.campaign.executors import Executor
from peakopt.campaign.runner import run_work
from peakopt.campaign.store import content_hash
from peakopt.campaign.stress import CAMPAIGN, Done, Item, Settings, auto_chunk
from peakopt.instances.native import dump
from peakopt.models import Machine, SolveResult, Workflow
from peakopt.oracle import ScoreRow

#: Spread (log scale) of the factor a duration or demand is multiplied by.
SPREAD = 0.7
#: A mutated demand stays below this multiple of the capacity.
MAX_OVERLOAD = 1.5
MUTATIONS = ("duration", "demand", "add_edge", "drop_edge")


@dataclass(frozen=True)
class Candidate:
    """An instance the search judged.

    Attributes
    ----------
    workflow, machine
        The instance.
    gap
        The method's gap to the proven optimum; None when there is none.
    row, reference
        The oracle's row of the method's schedule, and the reference result.
    evaluation
        0 for a starting instance, else its number in the search (from 1).
    mutations
        What was done to its parent, e.g. ``duration fetch x2.31``.
    """

    workflow: Workflow
    machine: Machine
    gap: float | None
    row: ScoreRow | None = None
    reference: SolveResult | None = None
    evaluation: int = 0
    mutations: tuple[str, ...] = ()

    @property
    def fitness(self) -> float:
        """The gap, or minus infinity without one."""
        return -math.inf if self.gap is None else self.gap


@dataclass(frozen=True)
class AdversarialSpec:
    """What to search for and how long.

    Parameters
    ----------
    method
        The method whose gap to maximise.
    evaluations
        Children to judge in total.
    seed
        Seed of the mutations (the solver and method use ``settings.seed``).
    population
        Instances kept between generations (the worst so far).
    batch
        Children per generation (fixed, so that the search does not depend on the executor).
    settings
        Solver time limit and threads, method limit.
    """

    method: str
    evaluations: int
    seed: int = 0
    population: int = 8
    batch: int = 16
    settings: Settings = field(default_factory=Settings)


@dataclass
class AdversarialResult:
    """The worst instances found (worst first) and the worst gap after each generation."""

    worst: list[Candidate]
    history: list[float]


def _factor(rng: random.Random) -> float:
    return math.exp(rng.gauss(0.0, SPREAD))


def _segments(task: dict[str, Any]) -> list[dict[str, Any]]:
    """The task's segments as dicts (a constant task is its own one segment)."""
    segments: list[dict[str, Any]] = task.get("profile", [task])
    return segments


def _scale_duration(tasks: list[dict[str, Any]], rng: random.Random, machine: Machine) -> str:
    task = rng.choice(tasks)
    segment = rng.choice(_segments(task))
    factor = _factor(rng)
    segment["duration"] = round(max(0.01, segment.get("duration", 0.0) * factor), 2)
    return f"duration {task['id']} x{factor:.2f}"


def _change_demand(tasks: list[dict[str, Any]], rng: random.Random, machine: Machine) -> str:
    task = rng.choice(tasks)
    segment = rng.choice(_segments(task))
    resource = rng.choice(sorted(machine.capacity))
    capacity = machine.capacity[resource]
    demand = segment.setdefault("demand", {})
    old = demand.get(resource, 0.0)
    new = old * _factor(rng) if old > 0 else capacity * rng.uniform(0.1, 0.9)
    demand[resource] = round(min(new, MAX_OVERLOAD * capacity), 2)
    return f"demand {task['id']} {resource} {old:g}->{demand[resource]:g}"


def _add_edge(tasks: list[dict[str, Any]], rng: random.Random, machine: Machine) -> str:
    order = Workflow.model_validate({"id": "mutated", "tasks": tasks}).topological_order
    pairs = [
        (a, b)
        for i, a in enumerate(order)
        for b in order[i + 1 :]
        if tasks[a]["id"] not in tasks[b].get("depends_on", [])
    ]
    if not pairs:
        return _drop_edge(tasks, rng, machine)
    a, b = rng.choice(pairs)
    tasks[b]["depends_on"] = [*tasks[b].get("depends_on", []), tasks[a]["id"]]
    return f"edge {tasks[a]['id']} -> {tasks[b]['id']}"


def _drop_edge(tasks: list[dict[str, Any]], rng: random.Random, machine: Machine) -> str:
    edges = [(t, p) for t in tasks for p in t.get("depends_on", [])]
    if not edges:
        return _scale_duration(tasks, rng, machine)
    task, pred = rng.choice(edges)
    task["depends_on"] = [p for p in task["depends_on"] if p != pred]
    task.pop("call", None)  # its call may name the dropped input's output, which it no longer waits for
    return f"drop {pred} -> {task['id']}"


_OPERATORS: dict[str, Callable[[list[dict[str, Any]], random.Random, Machine], str]] = {
    "duration": _scale_duration,
    "demand": _change_demand,
    "add_edge": _add_edge,
    "drop_edge": _drop_edge,
}


def mutate(
    workflow: Workflow, machine: Machine, rng: random.Random, new_id: str
) -> tuple[Workflow, tuple[str, ...]]:
    """A copy of ``workflow`` called ``new_id`` with one to three random mutations."""
    document = dump(workflow)
    tasks = document["tasks"]
    done = [_OPERATORS[rng.choice(MUTATIONS)](tasks, rng, machine) for _ in range(rng.randint(1, 3))]
    document["id"] = new_id
    document["meta"] = {**document.get("meta", {}), "mutations": done}
    return Workflow.model_validate(document), tuple(done)


def _item(workflow: Workflow, machine: Machine, spec: AdversarialSpec) -> Item:
    return Item(
        content_hash(workflow), content_hash(machine), workflow, machine, (spec.method,), spec.settings
    )


def _judge(item: Item, done: Done, evaluation: int, mutations: tuple[str, ...]) -> Candidate:
    """The child as its one row says: a failed or lost run is an invalid row, without a gap."""
    (result,) = done.results
    row = result.row
    gap = row.gap if row.safe and row.gap is not None else None
    return Candidate(item.workflow, item.machine, gap, row, done.reference, evaluation, mutations)


def _run(executor: Executor, items: list[Item], chunk: int) -> dict[int, Done]:
    """What each child gives, by the id of the parent's item (a worker's ``Done`` holds a copy)."""
    found: dict[int, Done] = {}

    def keep(item: Item, done: Done) -> None:
        found[id(item)] = done

    for _ in run_work(executor, CAMPAIGN, items, keep, chunk=chunk):
        pass
    return found


def _tournament(population: Sequence[Candidate], rng: random.Random) -> Candidate:
    first, second = rng.choice(population), rng.choice(population)
    return first if first.fitness >= second.fitness else second


def _base(workflow_id: str) -> str:
    return workflow_id.split("~", 1)[0]


def adversarial_search(
    executor: Executor,
    start: Sequence[Candidate],
    spec: AdversarialSpec,
    progress: Callable[[int, float], None] | None = None,
) -> AdversarialResult:
    """Search for instances on which ``spec.method`` is farthest from the optimum.

    Parameters
    ----------
    executor
        Where children are solved and judged.
    start
        The starting population (with their gaps, e.g. from a campaign), at least one.
    spec
        Method, number of evaluations, seed, population and batch sizes.
    progress
        Called with (children judged so far, worst gap so far) after each generation.

    Returns
    -------
    AdversarialResult
        The final population, worst first, and the worst gap after each generation.
    """
    if not start:
        raise ValueError("the search needs at least one starting instance")
    rng = random.Random(spec.seed)
    population = _select(list(start), spec.population)
    history = [population[0].fitness]
    judged = 0
    while judged < spec.evaluations:
        children = []
        for k in range(min(spec.batch, spec.evaluations - judged)):
            parent = _tournament(population, rng)
            number = judged + k + 1
            child, done = mutate(
                parent.workflow, parent.machine, rng, f"{_base(parent.workflow.id)}~{number}"
            )
            children.append((_item(child, parent.machine, spec), number, done))
        items = [item for item, _, _ in children]
        chunk = auto_chunk(len(items), executor.slots)
        found = _run(executor, items, chunk)
        population = _select(
            population + [_judge(item, found[id(item)], n, d) for item, n, d in children],
            spec.population,
        )
        judged += len(children)
        history.append(population[0].fitness)
        if progress is not None:
            progress(judged, population[0].fitness)
    return AdversarialResult(population, history)


def _select(candidates: list[Candidate], size: int) -> list[Candidate]:
    """The ``size`` worst (highest gap); ties go to the earlier evaluation, so the order is stable."""
    return sorted(candidates, key=lambda c: (-c.fitness, c.evaluation))[:size]
