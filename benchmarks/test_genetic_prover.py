"""The prover beside the genetic algorithm: from above (the default) against the provers from below.

Where the genetic algorithm runs (60–1,999 tasks) it takes one of 2 workers, and the other runs
``CpsatOptions.genetic_prover``: ``"forward"`` asks "a schedule ending by UB − 1?", ``"lower"``
and ``"lower-mirrored"`` ask "a schedule ending by LB?" (forwards, time-mirrored). Every selected
instance is solved with each at 10 s, 2 workers, side by side (so they share the machine's load);
every run is oracle-checked and asserted within the best known bounds, and the totals print each
one's mean deviation from the best known makespan and its bound's below the best known lower
bound, in all and per half of the tuning split. The figures are in ``docs/solver.md`` ("The
prover beside the genetic algorithm") and the runs in ``docs/results/provers-*.jsonl``.

Select the set with ``PEAKOPT_PROVERS_SET`` (``j120``, the default, or ``j90``) and its instances
with ``PEAKOPT_PROVERS`` (as in ``psplib_sets``; default ``sample:2``, 120 instances of j120, 96 of
j90; about 35 minutes for j120); ``PEAKOPT_BENCH_LOG`` keeps every run as JSON Lines.
"""

from __future__ import annotations

import os

import pytest
from psplib_sets import PROVERS_FROM_BELOW, PsplibSet, Runs, run_one, tables
from pytest_benchmark.fixture import BenchmarkFixture

PSPLIB = PsplibSet(os.environ.get("PEAKOPT_PROVERS_SET", "j120"))
LIMIT = 10.0
SOLVERS = ("peakopt", *(f"peakopt-{prover}" for prover in PROVERS_FROM_BELOW))
RUNS: Runs = {}


@pytest.mark.parametrize(
    ("name", "solver"), [(n, s) for n in PSPLIB.select("PEAKOPT_PROVERS", "sample:2") for s in SOLVERS]
)
def test_genetic_prover(benchmark: BenchmarkFixture, name: str, solver: str) -> None:
    run_one(benchmark, RUNS, PSPLIB, name, solver, LIMIT)


def test_genetic_prover_totals() -> None:
    """Runs last: each prover's figures on the instances all of them ran."""
    assert all((PSPLIB.name, s, LIMIT) in RUNS for s in SOLVERS), "run the whole module first"
    totals = tables(PSPLIB, RUNS, LIMIT, SOLVERS)
    assert set(totals) == set(SOLVERS)
