"""PSPLIB sets with best known bounds (j90, j120): selection, the tuning split, side-by-side runs, tables.

A set's instances are split in two halves that are stratified by parameter
set: instances 1–5 of every parameter set are the *tuning* half and
instances 6–10 the *report* half. Whatever is tuned on a set is tuned on the
first half only; the second half is what the tables report as unseen (the
halves have the same mix of network complexity, resource factor and
strength, which a split by parameter set — 1–30 against 31–60 — would not).

Selections (an environment variable per run): ``all``; ``none``;
``every:K`` (every K-th in PSPLIB's order); ``sample:K`` (K instances of
every parameter set, alternating between the halves: with K = 2 the first
instance present of each half); ``tune`` / ``report`` (one half); or a
comma-separated list of names.
"""

from __future__ import annotations

import csv
import json
import os
from collections import defaultdict
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from functools import cache, partial
from pathlib import Path

from paths import SHARED, select_names
from pytest_benchmark.fixture import BenchmarkFixture
from solver_baselines import Run, peakopt, textbook

from peakopt.instances import load
from peakopt.models import Machine, Workflow
from peakopt.solver.cpsat import CpsatOptions, Prover

SOLVERS = ("peakopt", "textbook")
#: The provers from below measured beside the genetic algorithm against the default one.
PROVERS_FROM_BELOW: tuple[Prover, ...] = ("lower", "lower-mirrored")
WORKERS = 2
#: Instance numbers (within a parameter set) of the tuning half; the rest are the report half.
TUNING = frozenset(range(1, 6))


@dataclass(frozen=True)
class Best:
    """An instance's best known bounds."""

    lower: int
    upper: int

    @property
    def closed(self) -> bool:
        return self.lower == self.upper


@dataclass(frozen=True)
class PsplibSet:
    """One PSPLIB set under ``../shared/psplib`` (``j90``, ``j120``)."""

    name: str

    @property
    def folder(self) -> Path:
        return SHARED / "psplib" / self.name

    def parameter(self, instance: str) -> int:
        return int(instance.removeprefix(self.name).split("_")[0])

    def number(self, instance: str) -> int:
        """The instance's number within its parameter set (1–10)."""
        return int(instance.split("_")[1])

    def half(self, instance: str) -> str:
        return "tune" if self.number(instance) in TUNING else "report"

    def best(self) -> dict[str, Best]:
        return _best_bounds(self.folder)

    def ordered(self, names: Iterable[str]) -> list[str]:
        """PSPLIB's order: parameter set, then instance."""
        return sorted(names, key=lambda n: (self.parameter(n), self.number(n)))

    def select(self, variable: str, default: str, closed: bool | None = None) -> list[str]:
        """The instances ``variable`` selects (``closed``: only closed / only open ones)."""
        names = self.ordered(n for n, b in self.best().items() if closed is None or b.closed is closed)
        chosen = os.environ.get(variable, default)
        if chosen in ("tune", "report"):
            return [n for n in names if self.half(n) == chosen]
        if chosen.startswith("sample:"):
            return self.sample(names, int(chosen.removeprefix("sample:")))
        return select_names(variable, names, default)

    def sample(self, names: list[str], per_parameter: int) -> list[str]:
        """``per_parameter`` instances of every parameter set, alternately from each half, lowest first."""
        groups: dict[int, dict[str, list[str]]] = defaultdict(lambda: {"tune": [], "report": []})
        for name in names:
            groups[self.parameter(name)][self.half(name)].append(name)
        chosen = []
        for parameter in sorted(groups):
            halves = [list(groups[parameter]["tune"]), list(groups[parameter]["report"])]
            taken, turn = 0, 0
            while taken < per_parameter and any(halves):
                if halves[turn % 2]:
                    chosen.append(halves[turn % 2].pop(0))
                    taken += 1
                turn += 1
        return self.ordered(chosen)

    def instance(self, name: str) -> tuple[Workflow, Machine]:
        suite = load(self.folder / f"{name}.sm")
        return suite.workflows[0], suite.machines[0]


@cache
def _best_bounds(folder: Path) -> dict[str, Best]:
    """Instance name (``j901_1``) -> its best known bounds, from ``derived_best_bounds.csv``."""
    with (folder / "derived_best_bounds.csv").open(newline="", encoding="utf-8") as rows:
        return {
            r["instance"].removesuffix(".sm"): Best(int(r["best_lb"]), int(r["best_ub"]))
            for r in csv.DictReader(rows)
        }


BASELINES: dict[str, Callable[[Workflow, Machine, float, int], Run]] = {
    "peakopt": peakopt,
    "textbook": textbook,
    # peakopt with another prover beside the genetic algorithm (benchmarks/test_genetic_prover.py)
    **{
        f"peakopt-{prover}": partial(peakopt, options=CpsatOptions(genetic_prover=prover))
        for prover in PROVERS_FROM_BELOW
    },
}

#: (set, solver, limit) -> instance -> run, filled by :func:`run_one` and read by :func:`tables`.
Runs = dict[tuple[str, str, float], dict[str, Run]]


def run_one(
    benchmark: BenchmarkFixture, runs: Runs, psplib: PsplibSet, name: str, solver: str, limit: float
) -> None:
    """One timed solve, asserted within the best known bounds, kept (and logged to ``PEAKOPT_BENCH_LOG``)."""
    workflow, machine = psplib.instance(name)
    best = psplib.best()[name]
    run = benchmark.pedantic(BASELINES[solver], args=(workflow, machine, limit, WORKERS), rounds=1)
    runs.setdefault((psplib.name, solver, limit), {})[name] = run
    path = os.environ.get("PEAKOPT_BENCH_LOG")
    if path:
        with Path(path).open("a", encoding="utf-8") as log:
            log.write(json.dumps({"instance": name, "solver": solver, "limit": limit, **run.__dict__}) + "\n")
    assert run.makespan is not None, f"{solver} found no schedule of {name} in {limit} s"
    assert run.bound is None or run.bound <= best.upper + 1e-6, (
        f"{solver}'s bound of {name} above the best known"
    )
    assert run.makespan >= best.lower - 1e-6, f"{solver}'s makespan of {name} below the best known bound"


def read_runs(psplib: PsplibSet, path: Path) -> Runs:
    """The runs a ``PEAKOPT_BENCH_LOG`` file of ``psplib`` holds (a later run of the same one wins)."""
    runs: Runs = {}
    with path.open(encoding="utf-8") as lines:
        for line in lines:
            r = json.loads(line)
            run = Run(r["status"], r["makespan"], r["bound"], r["seconds"])
            runs.setdefault((psplib.name, r["solver"], float(r["limit"])), {})[r["instance"]] = run
    return runs


@dataclass(frozen=True)
class Figures:
    """One solver's figures on a group of instances."""

    instances: int
    deviation: float
    """Mean relative deviation (%) of the makespan from the best known makespan."""
    below: float
    """Mean relative deviation (%) of the lower bound below the best known lower bound."""
    proven: int
    seconds: float


def figures(psplib: PsplibSet, runs: dict[str, Run], names: list[str]) -> Figures:
    best = psplib.best()
    chosen = [(best[n], runs[n]) for n in names]
    deviation = sum(((r.makespan or 0) - b.upper) / b.upper for b, r in chosen)
    below = sum((b.lower - (r.bound or 0)) / b.lower for b, r in chosen)
    return Figures(
        len(chosen),
        100 * deviation / max(1, len(chosen)),
        100 * below / max(1, len(chosen)),
        sum(r.status == "optimal" for _, r in chosen),
        sum(r.seconds for _, r in chosen),
    )


def tables(
    psplib: PsplibSet, runs: Runs, limit: float, solvers: tuple[str, ...] = SOLVERS
) -> dict[str, Figures]:
    """Print each solver's figures at ``limit`` on the instances all solvers ran, in all and per half.

    Returns the figures on all of them, by solver.
    """
    keys = [(psplib.name, s, limit) for s in solvers]
    names = psplib.ordered(n for n in runs.get(keys[0], {}) if all(n in runs.get(k, {}) for k in keys))
    groups = {
        "all": names,
        "tuning half": [n for n in names if psplib.half(n) == "tune"],
        "report half": [n for n in names if psplib.half(n) == "report"],
        "open": [n for n in names if not psplib.best()[n].closed],
    }
    totals = {}
    for solver, key in zip(solvers, keys, strict=True):
        for group, chosen in groups.items():
            if not chosen:
                continue
            f = figures(psplib, runs[key], chosen)
            if group == "all":
                totals[solver] = f
            print(
                f"{psplib.name} at {limit:g} s, {solver}, {group}: {f.instances} instances, mean deviation "
                f"from the best known makespan {f.deviation:.2f} %, lower bound {f.below:.2f} % below the "
                f"best known, {f.proven} proven optimal, total {f.seconds:.0f} s"
            )
    return totals
