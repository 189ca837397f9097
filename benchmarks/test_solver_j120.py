"""PSPLIB j120: peakopt against the textbook CP-SAT model, side by side per instance, at 10 s and 60 s.

Every selected instance is solved by both in turn at the same limit (2
workers), so they share the machine's load. Per run it asserts what the best
known bounds allow (``derived_best_bounds.csv``: no lower bound above a
best-known upper bound, no makespan below a best-known lower bound). The
totals print each model's mean deviation from the best known makespan, its
lower bound's deviation below the best known lower bound and the number
proven optimal, in all, per half of the tuning split (``psplib_sets``:
instances 1–5 of each parameter set tune, 6–10 report) and on the open
instances. On the full 582 at 10 s they assert peakopt's mean deviation is at
most half the textbook's; at 60 s, on whatever ran, at most 1.5 % (CP-SAT
through PyJobShop at 900 s with 8 workers) and at most 2 × OptalCP's 0.64 %.

Select with ``PEAKOPT_J120`` (the 10 s run) and ``PEAKOPT_J120_LONG`` (the
60 s run); values as in ``psplib_sets`` (``all``; ``sample:2``, the default
of both: 120 instances, two per parameter set, one from each half; ``tune``;
``report``; ``every:K``; ``none``; a list). The full 10 s run takes about
two hours of a quiet 2-core machine, the 60 s sample up to four.
``PEAKOPT_BENCH_LOG`` keeps every run as JSON Lines.
"""

from __future__ import annotations

import pytest
from psplib_sets import SOLVERS, PsplibSet, Runs, run_one, tables
from pytest_benchmark.fixture import BenchmarkFixture

J120 = PsplibSet("j120")
SHORT, LONG = 10.0, 60.0
#: Mean deviations (%) published on j120: CP-SAT via PyJobShop at 900 s, 8 workers; OptalCP, 600 s, 4.
PYJOBSHOP_900S, OPTALCP_600S = 1.50, 0.64
RUNS: Runs = {}


@pytest.mark.parametrize(
    ("name", "solver"), [(n, s) for n in J120.select("PEAKOPT_J120", "sample:2") for s in SOLVERS]
)
def test_j120(benchmark: BenchmarkFixture, name: str, solver: str) -> None:
    run_one(benchmark, RUNS, J120, name, solver, SHORT)


@pytest.mark.parametrize(
    ("name", "solver"), [(n, s) for n in J120.select("PEAKOPT_J120_LONG", "sample:2") for s in SOLVERS]
)
def test_j120_long(benchmark: BenchmarkFixture, name: str, solver: str) -> None:
    run_one(benchmark, RUNS, J120, name, solver, LONG)


def test_j120_totals() -> None:
    """Runs last: the tables, the ratio to the textbook on the full 10 s run, and the 60 s targets."""
    short = tables(J120, RUNS, SHORT)
    if short and short["peakopt"].instances == len(J120.best()):
        assert short["peakopt"].deviation <= short["textbook"].deviation / 2
    long = tables(J120, RUNS, LONG)
    if long:
        assert long["peakopt"].deviation <= min(PYJOBSHOP_900S, 2 * OPTALCP_600S)
