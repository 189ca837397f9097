"""The PSPLIB runs kept in docs/results/ hold what the benchmark asserts, and the docs quote them.

The j120 runs are measured a stratified selection at a time, over several sessions
(``benchmarks/test_solver_j120.py`` with ``PEAKOPT_BENCH_LOG``), and only the file is published:
so every run in it is checked against the best known bounds again here, both models must have run
every instance in it, and the figures the docs print must be the file's.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from paths import ROOT
from psplib_sets import PsplibSet, figures, read_runs

RESULTS = sorted((ROOT / "docs" / "results").glob("j120-*.jsonl"))


@pytest.mark.parametrize("path", RESULTS, ids=lambda p: p.name)
def test_every_kept_run_is_within_the_best_known_bounds(path: Path) -> None:
    j120 = PsplibSet("j120")
    best = j120.best()
    for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
        run = json.loads(line)
        b = best[run["instance"]]
        where = f"{path.name}:{number}"
        assert run["makespan"] is not None and run["makespan"] >= b.lower - 1e-6, where
        assert run["bound"] is None or run["bound"] <= b.upper + 1e-6, where
        assert run["status"] != "optimal" or run["bound"] == run["makespan"] == b.upper, where
    runs = read_runs(j120, path)
    assert {solver for _, solver, _ in runs} == {"peakopt", "textbook"}
    for limit in {limit for _, _, limit in runs}:
        assert set(runs[("j120", "peakopt", limit)]) == set(runs[("j120", "textbook", limit)])


def test_the_docs_quote_the_10s_figures_of_the_kept_runs() -> None:
    j120 = PsplibSet("j120")
    runs = read_runs(j120, ROOT / "docs" / "results" / "j120-10s.jsonl")
    names = j120.ordered(runs[("j120", "peakopt", 10.0)])
    mine = figures(j120, runs[("j120", "peakopt", 10.0)], names)
    plain = figures(j120, runs[("j120", "textbook", 10.0)], names)
    quoted = f"{mine.deviation:.2f} % against {plain.deviation:.2f} %"
    readme = " ".join((ROOT / "README.md").read_text(encoding="utf-8").split())
    assert quoted in readme
    solver = (ROOT / "docs" / "solver.md").read_text(encoding="utf-8")
    row = next(line for line in solver.splitlines() if line.startswith("| PSPLIB j120"))
    assert f"**{mine.deviation:.2f} %**" in row and f"**{plain.deviation:.2f} %**" in row
    assert f"ratio **{mine.deviation / plain.deviation:.2f}**" in row
    assert f"{mine.proven} proven optimal against {plain.proven}" in row
