"""The genetic algorithm: its operators keep lists feasible, its schedules pass the oracle, solve uses it."""

from __future__ import annotations

import importlib
import math
import random
import time
from collections.abc import Callable
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from paths import SHARED
from solver_helpers import assert_agree, assert_safe, generated, tiny_instances

from peakopt.instances import load
from peakopt.models import Machine, Workflow
from peakopt.oracle import evaluate
from peakopt.solver import solve
from peakopt.solver.backends import Limits
from peakopt.solver.conflicts import ConflictStructure
from peakopt.solver.cpsat import CpsatOptions, Prover
from peakopt.solver.feasibility import end, feasible, serial
from peakopt.solver.heuristics.arrays import Block, Problem, compile_problem
from peakopt.solver.heuristics.genetic import Individual, crossover, evolve, improved_starts, swap_neighbours
from peakopt.solver.heuristics.improve import improve
from peakopt.solver.heuristics.portfolio import every_rule, to_schedule
from peakopt.solver.heuristics.rules import latest_finish
from peakopt.solver.heuristics.sampling import biased_order
from peakopt.solver.heuristics.sgs import CHECK_EVERY, Stopped, parallel_sgs, priority_order, serial_sgs
from peakopt.solver.heuristics.timeline import Timeline
from peakopt.solver.scaling import as_instance, scale
from peakopt.solver.search import SearchState, Shared

search_module = importlib.import_module("peakopt.solver.search")

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
    begun: list[float] = []  # adopt is polled once per child: it counts them

    def adopt(span: float) -> None:
        begun.append(span)

    start, span = evolve(
        problem,
        latest_finish(problem),
        time.monotonic() + 60,
        random.Random(seed),
        offer=lambda s, m: offered.append((s, m)),
        stop=lambda: len(begun) >= children,
        population=8,
        adopt=adopt,
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


@pytest.mark.parametrize("prover", ["lower", "forward"])
def test_beside_it_the_genetic_prover_asks_and_no_other(prover: Prover) -> None:
    """With 2 workers the one CP-SAT worker left runs ``genetic_prover`` (from above by default)."""
    suite = load(SHARED / "psplib" / "j120" / "j1201_1.sm")  # open: 10 s neither proves it
    workflow, machine = suite.workflows[0], suite.machines[0]
    options = CpsatOptions(genetic_prover=prover) if prover != "forward" else CpsatOptions()
    result = solve(workflow, machine, time_limit=3, workers=2, options=options)
    assert_safe(result, workflow, machine)
    asked = {note.split(":")[0] for note in result.params["phases"] if ":" in note}
    assert asked - {"optimise"} == {prover}
    assert result.lower_bound is not None and result.lower_bound <= 105  # its best known makespan


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

    start, span = evolve(
        problem,
        latest_finish(problem),
        time.monotonic() + 60,
        random.Random(0),
        stop=lambda: len(polled) >= 5,  # five children (adopt is polled once per child)
        population=4,
        adopt=adopt,
    )
    assert span <= reference.makespan + 1e-9
    assert judged_span(workflow, machine, problem, start) == span
    assert sum(s > reference.makespan + 1e-9 for s in polled) <= 1


class Work:
    """A fake clock that ticks once per task a scheme places (serial or parallel), counted on the timeline."""

    def __init__(self, monkeypatch: pytest.MonkeyPatch) -> None:
        self.placed = 0
        place, book = Timeline.place, Timeline.book

        def counted_place(timeline: Timeline, ready: float, blocks: tuple[Block, ...]) -> float:
            self.placed += 1
            return place(timeline, ready, blocks)

        def counted_book(timeline: Timeline, start: float, blocks: tuple[Block, ...]) -> None:
            self.placed += 1
            book(timeline, start, blocks)

        monkeypatch.setattr(Timeline, "place", counted_place)
        monkeypatch.setattr(Timeline, "book", counted_book)

    def __call__(self) -> float:
        return float(self.placed)


#: Tasks placed after the deadline before the run returns, at most: the polls come every
#: CHECK_EVERY tasks (a decision time of the parallel scheme may start a few more at once).
SLACK = 4 * CHECK_EVERY


@pytest.mark.parametrize("via", ["deadline", "stop"])
def test_a_large_child_in_progress_is_abandoned_at_the_deadline(
    monkeypatch: pytest.MonkeyPatch, via: str
) -> None:
    """On 1,500 tasks the run returns within a few dozen placements of the deadline, not a child later.

    The deadline (or the stop) falls in the middle of the next individual's first pass
    (one is tens of thousands of placements here); what is returned is the best
    finished individual, offered before the deadline.
    """
    workflow, machine = generated(1500)
    problem = compile_problem(workflow, machine)
    work = Work(monkeypatch)
    keys = latest_finish(problem)
    first = improve(problem, serial_sgs(problem, priority_order(problem, keys)), serial_only=True)
    per_child = work.placed
    assert per_child > 10 * problem.size  # one child is long: the test would prove nothing otherwise
    offered: list[tuple[float, float]] = []
    work.placed = 0
    deadline = per_child + problem.size // 2  # half way through the next individual's first pass
    start, span = evolve(
        problem,
        keys,
        deadline if via == "deadline" else math.inf,
        random.Random(0),
        offer=lambda s, m: offered.append((work(), m)),
        stop=(lambda: work() >= deadline) if via == "stop" else None,
        clock=work if via == "deadline" else time.monotonic,
    )
    assert deadline <= work.placed <= deadline + SLACK
    assert offered == [(per_child, first[1])]  # the abandoned child was never offered
    assert (start, span) == first


def test_the_first_individual_stops_improving_at_the_deadline(monkeypatch: pytest.MonkeyPatch) -> None:
    """Past the deadline at once: the first list's serial pass alone, its improvement cut short."""
    workflow, machine = generated(1500)
    problem = compile_problem(workflow, machine)
    work = Work(monkeypatch)
    keys = latest_finish(problem)
    start, span = evolve(problem, keys, 0.0, random.Random(0), clock=work)
    assert work.placed <= problem.size + SLACK
    assert start == serial_sgs(problem, priority_order(problem, keys))
    assert span == problem.makespan(start)


def test_the_parallel_scheme_and_the_improvement_stop_when_halted(monkeypatch: pytest.MonkeyPatch) -> None:
    """The parallel pass raises Stopped within its poll interval; improvement keeps its finished rounds."""
    workflow, machine = generated(1500)
    problem = compile_problem(workflow, machine)
    work = Work(monkeypatch)
    keys = latest_finish(problem)
    with pytest.raises(Stopped):
        parallel_sgs(problem, keys, lambda: work() >= problem.size // 2)
    assert work.placed <= problem.size // 2 + SLACK
    start = serial_sgs(problem, priority_order(problem, keys))
    work.placed = 0
    one_round = improve(problem, start, rounds=1, serial_only=True)
    per_round = work.placed
    # both rounds gain: the second one's loss would show
    assert improve(problem, start, rounds=2, serial_only=True)[1] < one_round[1] < problem.makespan(start)
    work.placed = 0
    # halted half way through the second round: the first round's schedule
    assert improve(problem, start, serial_only=True, halt=lambda: work() >= per_round * 3 // 2) == one_round
    assert work.placed <= per_round * 3 // 2 + SLACK


def test_on_a_large_workflow_the_search_hands_over_between_children(monkeypatch: pytest.MonkeyPatch) -> None:
    """1,500 tasks in the search's genetic thread: a schedule found elsewhere mid-child is adopted by
    the next child, the thread's own better schedules reach the shared outcome, and once the
    outcome is done (a proof elsewhere) the child in progress is given up within the poll interval.

    The other searches are played by the fake clock: at a count of placed tasks the test offers
    their schedule, later their proof.
    """
    workflow, machine = generated(1500)
    problem = scale(workflow, machine)
    arrays = compile_problem(*as_instance(problem))
    keys = latest_finish(arrays)
    # "CP-SAT's" schedule: the first list with the parallel passes too, better than the GA's first
    first = improve(arrays, serial_sgs(arrays, priority_order(arrays, keys)), serial_only=True)
    elsewhere = [round(s) for s in improve(arrays, first[0])[0]]
    assert feasible(problem, elsewhere) and end(problem, elsewhere) < first[1]
    initial = serial(problem, problem.order)
    outcome = Shared(list(initial), end(problem, initial), 0)
    limits = Limits(120.0, 2, 0, 0.0)
    state = SearchState(
        problem, outcome, ConflictStructure([], [], []), limits, CpsatOptions(), time.monotonic() + 120
    )
    polls: list[tuple[float, bool]] = []  # (placed, whether a schedule was adopted)
    evolve_for_real = search_module.evolve

    def spied(*args: Any, adopt: Callable[[float], list[float] | None], **kwargs: Any) -> Any:
        def adopting(span: float) -> list[float] | None:
            found = adopt(span)
            polls.append((work(), found is not None))
            return found

        # no improved fills: their first is better than "CP-SAT's" schedule, which would not be adopted
        return evolve_for_real(*args, adopt=adopting, large_from=problem.size + 1, **kwargs)

    monkeypatch.setattr(search_module, "evolve", spied)
    work = Work(monkeypatch)
    counted = Timeline.place
    began = end(problem, initial)
    moments: dict[str, int] = {}  # when the genetic thread first offered, found elsewhere, proof

    def events(timeline: Timeline, ready: float, blocks: tuple[Block, ...]) -> float:
        placed = work.placed
        if "offered" not in moments and outcome.makespan < began:
            moments["offered"] = placed
        if "found" not in moments and placed >= moments.get("offered", math.inf) + problem.size // 3:
            moments["found"] = placed  # mid-child
            outcome.offer(problem, elsewhere, None, "elsewhere")
        adopted_at = next((at for at, took in polls if took), math.inf)
        if "proof" not in moments and placed >= adopted_at + problem.size // 2:  # mid-child
            moments["proof"] = placed
            outcome.offer(problem, None, outcome.makespan, "proof")
        return counted(timeline, ready, blocks)

    monkeypatch.setattr(Timeline, "place", events)
    search_module.genetic(state)
    assert moments["offered"] < moments["found"] < moments["proof"]  # its own schedule reached the outcome
    assert moments["proof"] <= work.placed <= moments["proof"] + SLACK
    assert outcome.phases == ["elsewhere", "proof", "genetic"]
    # adopted at the first child boundary after it was found, not before
    adopted = [placed for placed, took in polls if took]
    later = [placed for placed, _ in polls if placed > moments["found"]]
    assert adopted and adopted[0] == later[0] < moments["proof"]
    assert outcome.makespan <= end(problem, elsewhere)


def test_on_large_problems_the_first_children_are_the_rules_improved_passes() -> None:
    """From ``large_from`` tasks (lowered here) the run is no worse than every rule's justified pass."""
    workflow, machine = generated(40, seed=3)
    problem = compile_problem(workflow, machine)
    keys = latest_finish(problem)
    starts = improved_starts(problem, keys, random.Random(0))
    rules = [Individual(problem, next(starts)).span for _ in every_rule()]
    polled: list[float] = []

    def adopt(span: float) -> None:
        polled.append(span)

    def run(children: int) -> float:
        """The best after ``children`` children (the next one is given up)."""
        polled.clear()
        return evolve(
            problem,
            latest_finish(problem),
            time.monotonic() + 60,
            random.Random(0),
            stop=lambda: len(polled) > children,
            adopt=adopt,
            large_from=0,
        )[1]

    assert run(len(rules)) <= min(rules) < run(0)
