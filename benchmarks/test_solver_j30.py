"""PSPLIB j30: peakopt against the textbook CP-SAT model and PyJobShop, side by side per instance.

Every instance is solved by the three in turn, so they share the machine's
load. peakopt must prove the optimum of ``j30opt.sm`` on every instance within
60 s and take at most half the textbook model's total time. Select instances
with ``PEAKOPT_J30=hard`` or ``PEAKOPT_J30=j3029_3,j301_1``; set
``PEAKOPT_BENCH_LOG`` to keep every run as JSON Lines.
"""

from __future__ import annotations

import json
import os
from collections import defaultdict
from collections.abc import Callable
from pathlib import Path

import pytest
from paths import j30_optima
from pytest_benchmark.fixture import BenchmarkFixture
from solver_baselines import Run, j30_instance, j30_names, peakopt, pyjobshop, textbook

from peakopt.models import Machine, Workflow

LIMIT, WORKERS = 60.0, 2
SOLVERS = ("peakopt", "textbook", "pyjobshop")
RUNS: dict[str, dict[str, Run]] = defaultdict(dict)


BASELINES: dict[str, Callable[[Workflow, Machine, float, int], Run]] = {
    "peakopt": peakopt,
    "textbook": textbook,
    "pyjobshop": pyjobshop,
}


def _log(name: str, solver: str, run: Run) -> None:
    path = os.environ.get("PEAKOPT_BENCH_LOG")
    if path:
        with Path(path).open("a", encoding="utf-8") as log:
            log.write(json.dumps({"instance": name, "solver": solver, **run.__dict__}) + "\n")


@pytest.mark.parametrize(("name", "solver"), [(n, s) for n in j30_names() for s in SOLVERS])
def test_j30(benchmark: BenchmarkFixture, name: str, solver: str) -> None:
    if solver == "pyjobshop":
        pytest.importorskip("pyjobshop", reason="PyJobShop is the optional 'bench' extra")
    workflow, machine = j30_instance(name)
    optimum = j30_optima()[name]
    run = benchmark.pedantic(BASELINES[solver], args=(workflow, machine, LIMIT, WORKERS), rounds=1)
    RUNS[solver][name] = run
    _log(name, solver, run)
    assert run.bound is None or run.bound <= optimum + 1e-6
    assert run.makespan is None or run.makespan >= optimum - 1e-6
    if solver == "peakopt":
        assert run.status == "optimal" and run.makespan == optimum


def test_j30_totals() -> None:
    """Runs last: proven counts, total times and the ratio to the textbook model."""
    names = [n for n in j30_names() if n in RUNS["peakopt"] and n in RUNS["textbook"]]
    assert names, "run the whole module: the per-instance tests fill the table"
    for solver in SOLVERS:
        runs = [RUNS[solver][n] for n in names if n in RUNS[solver]]
        proven = sum(r.status == "optimal" for r in runs)
        total = sum(r.seconds for r in runs)
        slowest = max((r.seconds for r in runs), default=0.0)
        print(f"{solver}: {proven}/{len(runs)} proven, total {total:.1f} s, slowest {slowest:.1f} s")
    mine = sum(RUNS["peakopt"][n].seconds for n in names)
    plain = sum(RUNS["textbook"][n].seconds for n in names)
    print(f"peakopt / textbook total time: {mine / plain:.3f}")
    if len(RUNS["pyjobshop"]) == len(names):
        theirs = sum(RUNS["pyjobshop"][n].seconds for n in names)
        print(f"peakopt / pyjobshop total time: {mine / theirs:.3f}")
    assert mine <= plain / 2
