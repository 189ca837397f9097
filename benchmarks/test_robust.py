"""The cost of ``solve --robust`` against ``solve``: time and makespan at nominal durations (issue 15).

Both solve every workflow × machine of two suites side by side in one session (one process,
one CP-SAT worker per solve, as ``peakopt solve`` runs each of its jobs): the bundled default
suite, whose calls all have constant profiles (the robust optimum is then the optimum itself:
every step's peak is its demand), and the same suite generated with every spiky call drawn as
a piecewise profile (``peakopt generate --piecewise 1``), where a start-up spike must be
reserved for the whole call. After the timed calls the oracle's verdicts are asserted: every
plain reference safe and proven, every robust one proven, a partial-order schedule that
:func:`~peakopt.oracle.flows.pos_safe` accepts, its starts the earliest its edges allow, safe
as a timetable, and never shorter than the plain optimum (equal on constant profiles).
"""

from __future__ import annotations

import time

import pytest
from pytest_benchmark.fixture import BenchmarkFixture
from solver_helpers import assert_safe

from peakopt.instances import SuiteSpec, generate_suite, load
from peakopt.models import Machine, SolveResult, Suite, Workflow
from peakopt.oracle.flows import pos_earliest_starts, pos_safe
from peakopt.solver import solve
from peakopt.solver.robust import solve_robust

SUITES = {
    "bundled": lambda: load("bundled:default"),
    "piecewise": lambda: generate_suite(SuiteSpec(piecewise=1.0)),
}
FIGURES: dict[str, str] = {}


def pairs(suite: Suite) -> list[tuple[Workflow, Machine]]:
    return [(w, m) for w in suite.workflows for m in suite.machines]


def solve_both(suite: Suite) -> tuple[list[SolveResult], float, list[SolveResult], float]:
    began = time.perf_counter()
    plain = [solve(w, m, time_limit=60, workers=1) for w, m in pairs(suite)]
    middle = time.perf_counter()
    robust = [solve_robust(w, m, time_limit=60, workers=1) for w, m in pairs(suite)]
    return plain, middle - began, robust, time.perf_counter() - middle


@pytest.mark.parametrize("name", list(SUITES))
def test_robust_against_solve(benchmark: BenchmarkFixture, name: str) -> None:
    suite = SUITES[name]()
    plain, plain_seconds, robust, robust_seconds = benchmark.pedantic(solve_both, args=(suite,), rounds=1)
    costs = []
    for (workflow, machine), optimum, result in zip(pairs(suite), plain, robust, strict=True):
        assert_safe(optimum, workflow, machine)
        assert_safe(result, workflow, machine)
        assert optimum.status == result.status == "optimal"
        assert pos_safe(workflow, machine, result.edges)
        assert result.starts == pos_earliest_starts(workflow, result.edges)
        assert optimum.makespan is not None and result.makespan is not None
        assert result.makespan >= optimum.makespan - 1e-9
        costs.append(result.makespan / optimum.makespan - 1 if optimum.makespan else 0.0)
    dearer = [c for c in costs if c > 1e-9]
    edges = sum(len(r.edges) for r in robust)
    FIGURES[name] = (
        f"{name}: {len(costs)} pairs; solve {plain_seconds:.1f} s, --robust {robust_seconds:.1f} s; "
        f"{len(dearer)} robust optima longer, mean +{100 * sum(costs) / len(costs):.2f} %, "
        f"max +{100 * max(costs):.1f} %; {edges} flow edges"
    )
    print(FIGURES[name])
    if name == "bundled":  # constant profiles: the peak problem is the problem
        assert not dearer
    else:
        assert dearer
