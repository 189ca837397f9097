"""LNS: resource-flow chains keep schedules feasible; LNS agrees with the plain model."""

from __future__ import annotations

import random

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from ortools.sat.python import cp_model
from solver_helpers import assert_agree, assert_safe, generated, tiny_instances

from peakopt.models import Machine, Workflow
from peakopt.oracle import evaluate
from peakopt.solver import lns, solve
from peakopt.solver.cpsat import CpsatOptions
from peakopt.solver.feasibility import end, feasible, to_ticks
from peakopt.solver.flow import chains, left_shift
from peakopt.solver.heuristics.large import quick_schedule
from peakopt.solver.lns import Lns, configure, portfolio, relax_and_solve, window_and_solve
from peakopt.solver.pipeline import initial_schedule
from peakopt.solver.scaling import IntegerProblem, scale

#: LNS on every problem, and never.
ALWAYS, NEVER = CpsatOptions(lns_from=0), CpsatOptions(lns_from=10**9)


def _incumbent(workflow: Workflow, machine: Machine) -> tuple[IntegerProblem, list[int]] | None:
    problem = scale(workflow, machine)
    starts = to_ticks(problem, initial_schedule(workflow, machine, 0))
    return None if starts is None else (problem, starts)


def _earliest(problem: IntegerProblem, edges: set[tuple[object, ...]]) -> list[int]:
    """Earliest starts under the precedences and the piece chains (longest paths, by relaxation)."""
    starts = [0] * problem.size
    changed = True
    while changed:
        changed = False
        for j, preds in enumerate(problem.preds):
            for i in preds:
                if starts[j] < starts[i] + problem.length[i]:
                    starts[j], changed = starts[i] + problem.length[i], True
        for a, b in edges:
            first, second = problem.pieces[a.task][a.piece], problem.pieces[b.task][b.piece]  # type: ignore[attr-defined]
            need = starts[a.task] + first.offset + first.size - second.offset  # type: ignore[attr-defined]
            if starts[b.task] < need:  # type: ignore[attr-defined]
                starts[b.task], changed = need, True  # type: ignore[attr-defined]
    return starts


@settings(max_examples=80, deadline=None, derandomize=True)
@given(tiny_instances(max_tasks=7))
def test_every_schedule_respecting_the_chains_is_feasible(instance: tuple[Workflow, Machine]) -> None:
    """The flow argument: with every task kept, the earliest schedule of the chains fits every capacity."""
    found = _incumbent(*instance)
    if found is None:
        return
    problem, starts = found
    edges = chains(problem, starts, set(range(problem.size)))
    earliest = _earliest(problem, edges)  # type: ignore[arg-type]
    assert feasible(problem, earliest)
    assert end(problem, earliest) <= end(problem, starts)


@settings(max_examples=60, deadline=None, derandomize=True)
@given(tiny_instances(max_tasks=7))
def test_the_left_shift_is_feasible_and_no_later(instance: tuple[Workflow, Machine]) -> None:
    found = _incumbent(*instance)
    if found is None:
        return
    problem, starts = found
    shifted = left_shift(problem, starts)
    assert feasible(problem, shifted)
    assert all(a <= b for a, b in zip(shifted, starts, strict=True))


def _run(model: cp_model.CpModel, seconds: float) -> tuple[cp_model.CpSolverStatus, cp_model.CpSolver]:
    solver = cp_model.CpSolver()
    configure(solver)
    solver.parameters.num_workers = 1
    solver.parameters.max_time_in_seconds = seconds
    return solver.solve(model), solver


@settings(max_examples=40, deadline=None, derandomize=True)
@given(tiny_instances(max_tasks=7), st.integers(0, 2**16), st.booleans())
def test_a_step_never_loses_the_incumbent(
    instance: tuple[Workflow, Machine], seed: int, windowed: bool
) -> None:
    """Both kinds of step: a feasible schedule no longer than the incumbent, or none."""
    found = _incumbent(*instance)
    if found is None:
        return
    problem, starts = found
    rng = random.Random(seed)
    hood = rng.choice(portfolio())
    relaxed = hood.pick(problem, starts, rng.randint(1, problem.size), rng)
    if windowed:
        step = window_and_solve(problem, starts, relaxed, _run, 5.0, Lns(problem, seed).succs)
    else:
        step = relax_and_solve(problem, starts, relaxed, _run, 5.0, CpsatOptions())
    if step.starts is not None:
        assert feasible(problem, step.starts)
        assert end(problem, step.starts) <= end(problem, starts)


@settings(max_examples=30, deadline=None, derandomize=True)
@given(tiny_instances(max_tasks=8))
def test_lns_agrees_with_the_plain_model(instance: tuple[Workflow, Machine]) -> None:
    """Both oracle-checked; proven optima equal; neither's schedule below the other's bound."""
    workflow, machine = instance
    mine = solve(workflow, machine, time_limit=2, workers=2, options=ALWAYS)
    plain = solve(workflow, machine, time_limit=2, workers=2, options=NEVER)
    assert_agree(mine, plain, workflow, machine)


def test_windowed_lns_on_a_larger_workflow(monkeypatch: pytest.MonkeyPatch) -> None:
    """The windowed steps (made to run on 60 tasks), oracle-checked, no worse than the plain model's bound."""
    monkeypatch.setattr(lns, "WINDOWED_FROM", 10)
    workflow, machine = generated(60)
    result = solve(workflow, machine, time_limit=3, workers=2, options=ALWAYS)
    assert_safe(result, workflow, machine)
    assert any(p.startswith("lns:windowed") for p in result.params["phases"]) or result.status == "optimal"


def test_the_quick_schedule_is_safe_across_chunks() -> None:
    workflow, machine = generated(90)
    schedule = quick_schedule(workflow, machine, chunk=25)
    score = evaluate(workflow, machine, schedule)
    assert score.valid and score.safe, score.reasons
