"""The cost of ``solve --robust`` against ``solve``: time and makespan at nominal durations (issue 15).

Both solve every workflow × machine of two suites side by side in one session (one process,
one CP-SAT worker per solve, as ``peakopt solve`` runs each of its jobs): the bundled default
suite, whose calls all have constant profiles (the robust optimum is then the optimum itself:
every step's peak is its demand), and the same suite generated with every spiky call drawn as
a piecewise profile (``peakopt generate --piecewise 1``), where a start-up spike must be
reserved for the whole call. After the timed calls the oracle's verdicts are asserted: every
plain reference safe and proven, every robust one proven, a partial-order schedule that
:func:`~peakopt.oracle.uncertain.flows.pos_safe` accepts, its starts the earliest its edges allow, safe
as a timetable, and never shorter than the plain optimum (equal on constant profiles).
"""

from __future__ import annotations

import time

import pytest
from paths import J30, j30_optima
from pytest_benchmark.fixture import BenchmarkFixture
from solver_helpers import assert_safe

from peakopt.instances import SuiteSpec, generate_suite, load
from peakopt.models import Machine, SolveResult, Suite, Workflow
from peakopt.oracle.uncertain.flows import pos_earliest_starts, pos_safe
from peakopt.oracle.uncertain.scenarios import Noise
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


def test_expected_and_the_overflow_left(benchmark: BenchmarkFixture) -> None:
    """``--robust expected`` under ±25 % durations, and ``--robust`` under ±25 % demands too.

    On the piecewise suite: how often the best candidate by mean makespan differs from the nominal
    reference and by how much it is shorter on average (on the further scenarios), at what nominal
    cost; then the share of scenarios in which the nominal reference overflows once demands vary.
    """
    suite = SUITES["piecewise"]()

    def run_both() -> tuple[list[SolveResult], float, list[SolveResult], float]:
        began = time.perf_counter()
        expected = [
            solve_robust(w, m, robust="expected", noise=Noise(0.25), time_limit=60, workers=1)
            for w, m in pairs(suite)
        ]
        middle = time.perf_counter()
        demand = [
            solve_robust(w, m, noise=Noise(0.25, 0.25), time_limit=60, workers=1) for w, m in pairs(suite)
        ]
        return expected, middle - began, demand, time.perf_counter() - middle

    expected, expected_seconds, demand, demand_seconds = benchmark.pedantic(run_both, rounds=1)
    gains, dearer = [], 0
    for (workflow, machine), result, nominal in zip(pairs(suite), expected, demand, strict=True):
        assert_safe(result, workflow, machine)
        assert pos_safe(workflow, machine, result.edges)
        assert result.params["overflow_probability"] == 0
        assert nominal.makespan is not None and result.makespan is not None
        assert result.makespan >= nominal.makespan - 1e-9
        dearer += result.makespan > nominal.makespan + 1e-9
        gains.append(result.params["expected_makespan"] / result.params["nominal_expected_makespan"] - 1)
    changed = [g for g in gains if abs(g) > 1e-9]
    shares = [r.params["overflow_probability"] for r in demand]
    FIGURES["expected"] = (
        f"expected (±25 % durations, 100 + 100 scenarios): {expected_seconds:.1f} s; {len(changed)} of "
        f"{len(gains)} pairs get another POS, mean expected makespan {100 * sum(gains) / len(gains):+.3f} % "
        f"(best {100 * min(gains):+.1f} %), {dearer} longer at nominal durations; ±25 % demands too: "
        f"{demand_seconds:.1f} s, {sum(s > 0 for s in shares)} pairs overflow in some scenario, "
        f"mean share {100 * sum(shares) / len(shares):.1f} %, max {100 * max(shares):.0f} %"
    )
    print(FIGURES["expected"])
    assert sum(gains) <= 0  # choosing on some scenarios does not lose on the others, on average


def test_expected_on_j30(benchmark: BenchmarkFixture) -> None:
    """``--robust expected`` under ±25 % durations on one j30 instance per parameter class (48)."""
    flows = [load(J30 / f"j30{k}_1.sm") for k in range(1, 49)]
    instances = [(s.workflows[0], s.machines[0]) for s in flows]

    def run_all() -> tuple[list[SolveResult], float]:
        began = time.perf_counter()
        found = [
            solve_robust(w, m, robust="expected", noise=Noise(0.25), time_limit=20, workers=1)
            for w, m in instances
        ]
        return found, time.perf_counter() - began

    results, seconds = benchmark.pedantic(run_all, rounds=1)
    optima = j30_optima()
    gains, dearer = [], 0
    for (workflow, machine), result in zip(instances, results, strict=True):
        assert_safe(result, workflow, machine)
        assert pos_safe(workflow, machine, result.edges)
        assert result.lower_bound is not None and result.makespan is not None
        assert result.lower_bound <= optima[workflow.id] <= result.makespan  # constant profiles: OPT
        dearer += result.status == "feasible"
        gains.append(result.params["expected_makespan"] / result.params["nominal_expected_makespan"] - 1)
    changed = [g for g in gains if abs(g) > 1e-9]
    FIGURES["j30"] = (
        f"j30 expected (±25 % durations): {seconds:.1f} s for {len(results)}; {len(changed)} get a POS "
        f"of another mean, mean {100 * sum(gains) / len(gains):+.2f} % (best {100 * min(gains):+.1f} %), "
        f"{dearer} feasible (not proven optimal at nominal durations)"
    )
    print(FIGURES["j30"])
    assert sum(gains) <= 0
