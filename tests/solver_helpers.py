"""Helpers for the solver tests: tiny random instances and the oracle's verdict on results."""

from __future__ import annotations

import random
from typing import Any

from hypothesis import strategies as st

from peakopt.models import Machine, SolveResult, Task, Workflow
from peakopt.oracle import evaluate
from peakopt.solver.backends import Limits, Outcome
from peakopt.solver.conflicts import conflict_structure
from peakopt.solver.cpsat import CpsatOptions
from peakopt.solver.feasibility import serial
from peakopt.solver.milp import solve_milp
from peakopt.solver.scaling import IntegerProblem
from peakopt.solver.search import search

TINY_RESOURCES = ("cpu", "mem")


@st.composite
def tiny_instances(draw: st.DrawFn, max_tasks: int = 5, halves: bool = False) -> tuple[Workflow, Machine]:
    """2–``max_tasks`` tasks, short durations (whole or half seconds), piecewise, over capacity.

    Capacities are small against the demands, so many pairs conflict and some
    steps exceed a capacity on their own (clamped by the solver).
    """
    step = 0.5 if halves else 1.0
    count = draw(st.integers(2, max_tasks))
    tasks = []
    for i in range(count):
        preds = [f"t{j}" for j in range(i) if draw(st.integers(0, 3)) == 0]
        segments = [
            {
                "duration": draw(st.integers(0, 3)) * step,
                "demand": {r: draw(st.integers(0, 6)) * step for r in TINY_RESOURCES if draw(st.booleans())},
            }
            for _ in range(draw(st.integers(1, 2)))
        ]
        fields: dict[str, Any] = {"id": f"t{i}", "depends_on": preds}
        if len(segments) == 1:
            fields.update(segments[0])
        else:
            fields["profile"] = segments
        tasks.append(Task(**fields))
    capacity = {r: draw(st.integers(2, 5)) * step for r in TINY_RESOURCES if draw(st.integers(0, 3))}
    if not capacity:
        capacity = {"cpu": 3 * step}
    return Workflow(id="w", tasks=draw(st.permutations(tasks))), Machine(name="m", capacity=capacity)


def both_searches(problem: IntegerProblem) -> tuple[Outcome, Outcome]:
    """CP-SAT's and the MILP's proven optima, each from the serial schedule and a zero bound.

    Neither can stop before solving (``solve()`` would return a schedule that meets a bound).
    """
    initial = serial(problem, problem.order)
    limits = Limits(time_limit=60, workers=1, seed=0)
    found = conflict_structure(problem)
    exact = search(problem, initial=initial, lower=0, found=found, limits=limits, options=CpsatOptions())
    return exact, solve_milp(problem, initial=initial, lower=0, limits=limits)


def generated(size: int, seed: int = 0) -> tuple[Workflow, Machine]:
    """A random layered workflow on two resources, half-second durations, dense in conflicts."""
    rng = random.Random(seed)
    tasks = tuple(
        Task(
            id=f"t{i}",
            depends_on=tuple(
                sorted({f"t{j}" for j in rng.sample(range(max(0, i - 8), i), min(i, rng.randint(0, 2)))})
            ),
            duration=rng.randint(1, 12) / 2,
            demand={"cpu": rng.randint(1, 4), "mem": rng.randint(0, 6)},
        )
        for i in range(size)
    )
    return Workflow(id=f"g{size}", tasks=tasks), Machine(name="m", capacity={"cpu": 6, "mem": 8})


def assert_safe(result: SolveResult, workflow: Workflow, machine: Machine) -> None:
    """The oracle accepts the result's schedule, its makespan is right and the bound below it."""
    assert result.status in ("optimal", "feasible"), result.message
    schedule = result.schedule
    assert schedule is not None
    score = evaluate(workflow, machine, schedule)
    assert score.valid, score.reasons
    assert score.safe, score.avoidable_cva
    assert result.makespan is not None and result.lower_bound is not None
    assert abs(score.makespan - result.makespan) <= 1e-9 * max(1.0, score.makespan)
    assert result.lower_bound <= result.makespan + 1e-9
    if result.status == "optimal":
        assert abs(result.lower_bound - result.makespan) <= 1e-9 * max(1.0, result.makespan)


def _decimal(draw: st.DrawFn, low: int, high: int) -> float:
    """A positive decimal of up to six significant digits, from 10**low up to 10**high."""
    return float(f"{draw(st.integers(1, 999999))}e{draw(st.integers(low, high - 6))}")


@st.composite
def magnitude_instances(draw: st.DrawFn, max_tasks: int = 6) -> tuple[Workflow, Machine]:
    """Mixed magnitudes in one instance: 1e-9 s beside 1e10 s, demands from 1e-6 to 1e9.

    Some steps are piecewise, some over a capacity on their own; many such
    instances cannot be scaled exactly, which is what they are for.
    """
    count = draw(st.integers(2, max_tasks))
    tasks = []
    for i in range(count):
        preds = [f"t{j}" for j in range(i) if draw(st.integers(0, 3)) == 0]
        segments = [
            {
                "duration": _decimal(draw, -9, 10),
                "demand": {r: _decimal(draw, -6, 9) for r in TINY_RESOURCES if draw(st.booleans())},
            }
            for _ in range(draw(st.integers(1, 2)))
        ]
        tasks.append(Task(id=f"t{i}", depends_on=preds, profile=segments))
    capacity = {r: _decimal(draw, -3, 9) for r in TINY_RESOURCES if draw(st.integers(0, 3))}
    return Workflow(id="w", tasks=tasks), Machine(name="m", capacity=capacity or {"cpu": 1.0})


def assert_agree(mine: SolveResult, other: SolveResult, workflow: Workflow, machine: Machine) -> None:
    """Two solves of one instance, oracle-checked: proven optima equal, neither below the other's bound."""
    assert_safe(mine, workflow, machine)
    assert_safe(other, workflow, machine)
    assert mine.makespan is not None and other.makespan is not None
    assert mine.lower_bound is not None and other.lower_bound is not None
    assert mine.makespan >= other.lower_bound - 1e-9 and other.makespan >= mine.lower_bound - 1e-9
    if mine.status == other.status == "optimal":
        assert abs(mine.makespan - other.makespan) <= 1e-9 * max(1.0, other.makespan)


# the instances that each layer of the quick optimum (and the hindsight bound on it) settles
MACHINE = Machine(name="m", capacity={"cpu": 4})
FIVE = Machine(name="five", capacity={"cpu": 5})


def flow(*tasks: tuple[str, float, float, list[str]]) -> Workflow:
    """Tasks as (id, duration, cpu, predecessors)."""
    return Workflow(
        id="w",
        tasks=[Task(id=i, duration=d, demand={"cpu": c}, depends_on=p) for i, d, c, p in tasks],
    )


#: A chain: the heuristic meets the critical path.
CHAIN = flow(("a", 1, 1, []), ("b", 2, 1, ["a"]))
#: Two steps of 3 cores on 4 never overlap: only the clique bound (2) meets the heuristic.
PAIR = flow(("a", 1, 3, []), ("b", 1, 3, []), ("c", 1, 0.5, []))
#: On 5 cores any two overlap, never all three: the bounds say 3, only CP-SAT proves the optimum 4.
TRIPLE = flow(("a", 3, 1, []), ("b", 2, 1, []), ("c", 2, 4, []))
#: Each layer of the quick optimum, the instance it is the cheapest to settle, and its optimum.
LAYER_INSTANCES = {
    "shortcut": (CHAIN, MACHINE, 3.0),
    "cliques": (PAIR, MACHINE, 2.0),
    "cpsat": (TRIPLE, FIVE, 4.0),
}
