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
160 minutes of a quiet 2-core machine; ``every:12`` for every twelfth; ``none``;
or a comma-separated list) and ``PEAKOPT_J90_OPEN`` (``all`` 66 at 60 s, the
default, ``none``, ``every:K`` or a list); ``PEAKOPT_BENCH_LOG`` keeps every run as JSON Lines.
"""

from __future__ import annotations

import csv
import json
import os
from collections import defaultdict
from dataclasses import dataclass
from pathlib import Path

import pytest
from paths import SHARED, select_names
from pytest_benchmark.fixture import BenchmarkFixture
from solver_baselines import Run, textbook
from solver_helpers import assert_safe

from peakopt.instances import load
from peakopt.models import Machine, Workflow
from peakopt.solver import solve

J90 = SHARED / "psplib" / "j90"
SHORT, LONG, WORKERS = 10.0, 60.0, 2
SOLVERS = ("peakopt", "textbook")
RUNS: dict[tuple[str, float], dict[str, Run]] = defaultdict(dict)


@dataclass(frozen=True)
class Best:
    """An instance's best known bounds."""

    lower: int
    upper: int

    @property
    def closed(self) -> bool:
        return self.lower == self.upper


def best_bounds() -> dict[str, Best]:
    """Instance name (``j901_1``) -> its best known bounds."""
    with (J90 / "derived_best_bounds.csv").open(newline="", encoding="utf-8") as rows:
        return {
            r["instance"].removesuffix(".sm"): Best(int(r["best_lb"]), int(r["best_ub"]))
            for r in csv.DictReader(rows)
        }


def _ordered(names: list[str]) -> list[str]:
    """PSPLIB's order: parameter set, then instance."""
    return sorted(names, key=lambda n: tuple(int(x) for x in n.removeprefix("j90").split("_")))


def j90_names() -> list[str]:
    return select_names("PEAKOPT_J90", _ordered(list(best_bounds())))


def open_names() -> list[str]:
    return select_names("PEAKOPT_J90_OPEN", _ordered([n for n, b in best_bounds().items() if not b.closed]))


def instance(name: str) -> tuple[Workflow, Machine]:
    suite = load(J90 / f"{name}.sm")
    return suite.workflows[0], suite.machines[0]


def peakopt(workflow: Workflow, machine: Machine, time_limit: float, workers: int) -> Run:
    result = solve(workflow, machine, time_limit=time_limit, workers=workers)
    assert_safe(result, workflow, machine)
    return Run(result.status, result.makespan, result.lower_bound, result.seconds)


BASELINES = {"peakopt": peakopt, "textbook": textbook}


def _run(benchmark: BenchmarkFixture, name: str, solver: str, limit: float) -> None:
    workflow, machine = instance(name)
    best = best_bounds()[name]
    run = benchmark.pedantic(BASELINES[solver], args=(workflow, machine, limit, WORKERS), rounds=1)
    RUNS[solver, limit][name] = run
    path = os.environ.get("PEAKOPT_BENCH_LOG")
    if path:
        with Path(path).open("a", encoding="utf-8") as log:
            log.write(json.dumps({"instance": name, "solver": solver, "limit": limit, **run.__dict__}) + "\n")
    assert run.makespan is not None, f"{solver} found no schedule of {name} in {limit} s"
    assert run.bound is None or run.bound <= best.upper + 1e-6
    assert run.makespan >= best.lower - 1e-6


@pytest.mark.parametrize(("name", "solver"), [(n, s) for n in j90_names() for s in SOLVERS])
def test_j90(benchmark: BenchmarkFixture, name: str, solver: str) -> None:
    _run(benchmark, name, solver, SHORT)


@pytest.mark.parametrize(("name", "solver"), [(n, s) for n in open_names() for s in SOLVERS])
def test_j90_open(benchmark: BenchmarkFixture, name: str, solver: str) -> None:
    _run(benchmark, name, solver, LONG)


def _deviation(runs: list[Run], names: list[str], lower: bool = False) -> float:
    """Mean relative deviation (%) of the makespans (or the lower bounds) from the best known."""
    best = best_bounds()
    if lower:
        parts = [(best[n].lower - (r.bound or 0)) / best[n].lower for n, r in zip(names, runs, strict=True)]
    else:
        parts = [
            ((r.makespan or 0) - best[n].upper) / best[n].upper for n, r in zip(names, runs, strict=True)
        ]
    return 100 * sum(parts) / len(parts)


def _table(limit: float) -> dict[str, float]:
    names = [n for n in RUNS["peakopt", limit] if all(n in RUNS[s, limit] for s in SOLVERS)]
    deviations = {}
    for solver in SOLVERS:
        runs = [RUNS[solver, limit][n] for n in names]
        deviations[solver] = _deviation(runs, names)
        proven = sum(r.status == "optimal" for r in runs)
        below = _deviation(runs, names, lower=True)
        print(
            f"j90 at {limit:g} s, {solver}: {len(runs)} instances, mean deviation from the best known "
            f"makespan {deviations[solver]:.2f} %, lower bound {below:.2f} % below the best known, "
            f"{proven} proven optimal, total {sum(r.seconds for r in runs):.0f} s"
        )
    return deviations


def test_j90_totals() -> None:
    """Runs last: the tables, and on the full set the ratio to the textbook model."""
    if RUNS["peakopt", SHORT]:
        deviations = _table(SHORT)
        if len(RUNS["peakopt", SHORT]) == len(best_bounds()):
            assert deviations["peakopt"] <= deviations["textbook"] / 2
    if RUNS["peakopt", LONG]:
        _table(LONG)
