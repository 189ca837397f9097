"""The genetic algorithm: its operators keep lists feasible, its schedules pass the oracle, solve uses it."""

from __future__ import annotations

import random
import time

from hypothesis import given, settings
from hypothesis import strategies as st
from solver_helpers import assert_agree, assert_safe, generated, tiny_instances

from peakopt.models import Machine, Workflow
from peakopt.oracle import evaluate
from peakopt.solver import solve
from peakopt.solver.cpsat import CpsatOptions
from peakopt.solver.heuristics.arrays import Problem, compile_problem
from peakopt.solver.heuristics.genetic import crossover, evolve, swap_neighbours
from peakopt.solver.heuristics.portfolio import to_schedule
from peakopt.solver.heuristics.rules import latest_finish
from peakopt.solver.heuristics.sampling import biased_order

#: The genetic algorithm on every problem, and never.
ALWAYS, NEVER = CpsatOptions(genetic_from=0), CpsatOptions(genetic_from=10**9)


def _feasible_list(problem: Problem, order: list[int]) -> bool:
    """A permutation of the tasks with every predecessor before its successor (checked from the edges)."""
    place = {task: k for k, task in enumerate(order)}
    return sorted(order) == list(range(problem.size)) and all(
        place[p] < place[j] for j, preds in enumerate(problem.preds) for p in preds
    )


def _lists(problem: Problem, seed: int) -> tuple[list[int], list[int]]:
    """Two random precedence-feasible lists (near-uniform draws)."""
    rng = random.Random(seed)
    keys = [0.0] * problem.size
    return biased_order(problem, keys, 1.0, rng), biased_order(problem, keys, 1.0, rng)


@settings(max_examples=120, deadline=None, derandomize=True)
@given(tiny_instances(max_tasks=9), st.integers(0, 2**32), st.integers(0, 2**32))
def test_crossover_and_mutation_keep_every_predecessor_first(
    instance: tuple[Workflow, Machine], seed: int, draw: int
) -> None:
    problem = compile_problem(*instance)
    mother, father = _lists(problem, seed)
    rng = random.Random(draw)
    child = crossover(mother, father, rng)
    assert _feasible_list(problem, child)
    for _ in range(20):  # many swaps, so that related neighbours are met
        swap_neighbours(child, [frozenset(p) for p in problem.preds], rng)
    assert _feasible_list(problem, child)


def judged_span(workflow: Workflow, machine: Machine, problem: Problem, start: list[float]) -> float:
    """The oracle's makespan of a schedule it finds valid and safe."""
    score = evaluate(workflow, machine, to_schedule(problem, start, "genetic"))
    assert score.valid and score.safe, score.reasons
    return score.makespan


@settings(max_examples=60, deadline=None, derandomize=True)
@given(tiny_instances(max_tasks=8, halves=True), st.integers(0, 2**16), st.integers(1, 60))
def test_every_schedule_it_offers_is_safe_and_shorter_than_the_last(
    instance: tuple[Workflow, Machine], seed: int, children: int
) -> None:
    """Judged by the oracle on the real workflow: valid, safe, the makespan it says, each better."""
    workflow, machine = instance
    problem = compile_problem(workflow, machine)
    offered: list[tuple[list[float], float]] = []
    polls = iter(range(children))
    start, span = evolve(
        problem,
        latest_finish(problem),
        time.monotonic() + 60,
        random.Random(seed),
        offer=lambda s, m: offered.append((s, m)),
        stop=lambda: next(polls, None) is None,
        population=8,
    )
    assert offered and offered[-1] == (start, span)
    spans = [m for _, m in offered]
    assert spans == sorted(spans, reverse=True) and len(set(spans)) == len(spans)
    for starts, made in offered:
        assert abs(judged_span(workflow, machine, problem, starts) - made) <= 1e-9 * max(1.0, made)


def test_it_stops_at_the_lower_bound() -> None:
    """One task meets its critical path at once: no child is built, whatever the deadline."""
    workflow, machine = generated(1)
    problem = compile_problem(workflow, machine)
    began = time.monotonic()
    _, span = evolve(problem, latest_finish(problem), began + 30, random.Random(0))
    assert span == problem.lower_bound
    assert time.monotonic() - began < 5


@settings(max_examples=30, deadline=None, derandomize=True)
@given(tiny_instances(max_tasks=8))
def test_solve_agrees_with_and_without_the_genetic_algorithm(instance: tuple[Workflow, Machine]) -> None:
    """Both oracle-checked; proven optima equal; neither's schedule below the other's bound."""
    workflow, machine = instance
    mine = solve(workflow, machine, time_limit=2, workers=2, options=ALWAYS)
    plain = solve(workflow, machine, time_limit=2, workers=2, options=NEVER)
    assert_agree(mine, plain, workflow, machine)


def test_solve_runs_it_beside_the_prover_on_a_mid_sized_workflow() -> None:
    workflow, machine = generated(90)
    result = solve(workflow, machine, time_limit=3, workers=2)
    assert_safe(result, workflow, machine)
    assert "genetic" in result.params["phases"] or result.status == "optimal"


def test_it_keeps_out_of_re_planning() -> None:
    """It knows no pins: with fixed starts the prover runs alone, and the pins hold."""
    workflow, machine = generated(70)
    first = solve(workflow, machine, time_limit=2, workers=2, options=ALWAYS)
    assert first.starts is not None
    early = sorted(first.starts, key=first.starts.__getitem__)[:5]
    kept = {tid: first.starts[tid] for tid in early if set(workflow.task(tid).depends_on) <= set(early)}
    result = solve(workflow, machine, time_limit=2, workers=2, options=ALWAYS, fixed=kept)
    assert_safe(result, workflow, machine)
    assert result.starts is not None
    assert all(result.starts[tid] == at for tid, at in kept.items())
    assert "genetic" not in result.params["phases"]


def test_a_better_schedule_from_elsewhere_joins_the_population() -> None:
    """What CP-SAT finds is adopted: the run ends no worse than it, the adopted span polled once."""
    workflow, machine = generated(40)
    problem = compile_problem(workflow, machine)
    reference = solve(workflow, machine, time_limit=5, workers=2, options=NEVER)
    assert reference.starts is not None and reference.makespan is not None
    elsewhere = [reference.starts[tid] for tid in problem.ids]
    polled: list[float] = []

    def adopt(span: float) -> list[float] | None:
        polled.append(span)
        return elsewhere if span > reference.makespan + 1e-9 else None

    polls = iter(range(5))
    start, span = evolve(
        problem,
        latest_finish(problem),
        time.monotonic() + 60,
        random.Random(0),
        stop=lambda: next(polls, None) is None,
        population=4,
        adopt=adopt,
    )
    assert span <= reference.makespan + 1e-9
    assert judged_span(workflow, machine, problem, start) == span
    assert sum(s > reference.makespan + 1e-9 for s in polled) <= 1
