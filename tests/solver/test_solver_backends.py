"""The backend seam: backends registered by name, one signature, every result checked by the oracle."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from peakopt.instances import load
from peakopt.models import Schedule
from peakopt.oracle import evaluate
from peakopt.solver import BACKENDS, register, solve
from peakopt.solver.backends import REGISTRY, Outcome, Request, backend_named
from peakopt.solver.feasibility import end, serial

SUITE = load("bundled:refund")
REFUND, WORKER = SUITE.workflows[0], SUITE.machine("worker")

#: One step after another, in input order: valid and safe, and far from the optimum.
BACK_TO_BACK = Schedule(
    workflow=REFUND.id,
    machine=WORKER.name,
    starts={t.id: sum(u.length for u in REFUND.tasks[:i]) for i, t in enumerate(REFUND.tasks)},
)

asked: list[Request] = []


def serial_backend(request: Request) -> Outcome:
    """Schedules the steps one at a time in a topological order; proves nothing beyond what it is given."""
    asked.append(request)
    starts = serial(request.problem, request.problem.order)
    return Outcome(starts, end(request.problem, starts), request.lower, ["serial"])


def all_at_once(request: Request) -> Outcome:
    """Claims every step starts at 0, and that this is optimal: the oracle must refuse it."""
    starts = [0] * request.problem.size
    return Outcome(starts, end(request.problem, starts), end(request.problem, starts), ["lies"])


@pytest.fixture
def registered() -> Iterator[None]:
    before = dict(REGISTRY)
    register("serial", serial_backend)
    register("lies", all_at_once, relaxation=False)
    asked.clear()
    yield
    REGISTRY.clear()
    REGISTRY.update(before)


def test_the_built_in_backends_are_registered() -> None:
    assert BACKENDS == ("cpsat", "milp"), "the `backend` parameter (tests/conftest.py) lists them too"
    assert backend_named("cpsat").relaxation and not backend_named("milp").relaxation


def test_the_backend_parameter_is_a_built_in_exact_backend(backend: str) -> None:
    assert backend in BACKENDS
    assert backend_named(backend).name == backend


def test_a_registered_backend_is_solved_with_and_checked_by_the_oracle(registered: None) -> None:
    result = solve(REFUND, WORKER, backend="serial", time_limit=5, workers=1, hint=BACK_TO_BACK)
    (request,) = asked
    assert request.initial and request.lower == round(result.lower_bound / result.tick)
    assert result.solver == "serial" and result.status == "feasible" and result.params["phases"] == ["serial"]
    assert result.schedule is not None
    score = evaluate(REFUND, WORKER, result.schedule)
    assert score.valid and score.safe and score.makespan == pytest.approx(result.makespan)
    assert result.makespan == pytest.approx(sum(t.length for t in REFUND.tasks))  # serial, as asked
    assert result.lower_bound is not None and result.lower_bound < result.makespan
    optimum = solve(REFUND, WORKER, time_limit=5, workers=1)
    # the bound is solve()'s, whichever backend; the serial backend's schedule is the longer
    assert optimum.solver == "cpsat" and optimum.lower_bound == result.lower_bound
    assert optimum.makespan is not None and optimum.makespan < result.makespan


def test_an_unsafe_answer_is_an_error_never_a_reference(registered: None) -> None:
    result = solve(REFUND, WORKER, backend="lies", time_limit=5, workers=1, hint=BACK_TO_BACK)
    assert result.status == "error" and "the oracle rejects the schedule" in (result.message or "")


def test_a_start_that_meets_the_bound_asks_no_backend(registered: None) -> None:
    optimum = solve(REFUND, WORKER, time_limit=5, workers=1)
    assert optimum.schedule is not None
    result = solve(REFUND, WORKER, backend="serial", time_limit=5, workers=1, hint=optimum.schedule)
    assert asked == [] and result.status == "optimal" and result.makespan == optimum.makespan


def test_an_unknown_backend_is_refused() -> None:
    with pytest.raises(ValueError, match=r"backend must be one of \('cpsat', 'milp'\), got 'gurobi'"):
        solve(REFUND, WORKER, backend="gurobi")
