"""PSPLIB j90: peakopt against the textbook CP-SAT model, side by side per instance, at 10 s and 60 s.

Every instance is solved by both in turn at the same limit (2 workers), so
they share the machine's load. Per run it asserts what the best known
bounds allow (``derived_best_bounds.csv``): no lower bound above a best-known
upper bound, no makespan below a best-known lower bound. The totals print
each model's mean deviation from the best known makespan and the number
proven optimal; on the full 480 they assert peakopt's mean deviation is at
most half the textbook's. The 66 open instances are run again at 60 s, with
the mean deviation of the upper and of the lower bound from the best known.

Select with ``PEAKOPT_J90`` (``all``, the default: 480 instances, about
160 minutes of a quiet 2-core machine at most) and ``PEAKOPT_J90_OPEN``
(``all``, the default: the 66 open ones at 60 s); values as in
``psplib_sets`` (``every:K``, ``sample:K``, ``tune`` and ``report`` for the
halves of the tuning split, ``none``, a list). ``PEAKOPT_BENCH_LOG`` keeps
every run as JSON Lines. The totals print each half of the split too.
"""

from __future__ import annotations

import pytest
from psplib_sets import SOLVERS, PsplibSet, Runs, run_one, tables
from pytest_benchmark.fixture import BenchmarkFixture

J90 = PsplibSet("j90")
SHORT, LONG = 10.0, 60.0
RUNS: Runs = {}


@pytest.mark.parametrize(
    ("name", "solver"), [(n, s) for n in J90.select("PEAKOPT_J90", "all") for s in SOLVERS]
)
def test_j90(benchmark: BenchmarkFixture, name: str, solver: str) -> None:
    run_one(benchmark, RUNS, J90, name, solver, SHORT)


@pytest.mark.parametrize(
    ("name", "solver"), [(n, s) for n in J90.select("PEAKOPT_J90_OPEN", "all", closed=False) for s in SOLVERS]
)
def test_j90_open(benchmark: BenchmarkFixture, name: str, solver: str) -> None:
    run_one(benchmark, RUNS, J90, name, solver, LONG)


def test_j90_totals() -> None:
    """Runs last: the tables, and on the full set the ratio to the textbook model."""
    short = tables(J90, RUNS, SHORT)
    if short and short["peakopt"].instances == len(J90.best()):
        assert short["peakopt"].deviation <= short["textbook"].deviation / 2
    tables(J90, RUNS, LONG)
