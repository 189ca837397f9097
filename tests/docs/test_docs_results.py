"""The PSPLIB runs kept in docs/results/ hold what the benchmark asserts, and the docs quote them.

The j120 runs are measured a stratified selection at a time, over several sessions
(``benchmarks/test_solver_j120.py`` with ``PEAKOPT_BENCH_LOG``), and only the file is published:
so every run in it is checked against the best known bounds again here, both models must have run
every instance in it, and the figures the docs print must be the file's.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from frontier import BUDGET, SETS, confirmed_infeasible, reversed_instance
from paths import ROOT
from psplib_sets import Figures, PsplibSet, figures, read_runs

RESULTS_DIR = ROOT / "docs" / "results"
RESULTS = sorted(RESULTS_DIR.glob("j120-*.jsonl"))


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


def _kept(limit: float) -> tuple[list[str], Figures, Figures]:
    """The instances of the kept j120 runs at ``limit``, and peakopt's and the textbook's figures on them."""
    j120 = PsplibSet("j120")
    runs = read_runs(j120, RESULTS_DIR / f"j120-{limit:g}s.jsonl")
    names = j120.ordered(runs[("j120", "peakopt", limit)])
    mine = figures(j120, runs[("j120", "peakopt", limit)], names)
    return names, mine, figures(j120, runs[("j120", "textbook", limit)], names)


def _quoted(mine: Figures, plain: Figures) -> tuple[str, str]:
    """How the README quotes two deviations, and the README with its whitespace folded."""
    readme = " ".join((ROOT / "README.md").read_text(encoding="utf-8").split())
    return f"{mine.deviation:.2f} % against {plain.deviation:.2f} %", readme


def _solver_row(start: str) -> str:
    """The first row of the solver page's results table that starts with ``start``."""
    solver = (ROOT / "docs" / "solver.md").read_text(encoding="utf-8")
    return next(line for line in solver.splitlines() if line.startswith(start))


def test_the_docs_quote_the_10s_figures_of_the_kept_runs() -> None:
    """The 10 s run covers all of j120, and the row's verdict on the half target is the file's."""
    names, mine, plain = _kept(10.0)
    assert len(names) == len(PsplibSet("j120").best())
    quoted, readme = _quoted(mine, plain)
    assert quoted in readme
    row = _solver_row("| PSPLIB j120")
    assert f"**all {len(names)}** at 10 s" in row
    assert f"**{mine.deviation:.2f} %**" in row and f"**{plain.deviation:.2f} %**" in row
    ratio = mine.deviation / plain.deviation
    assert f"ratio **{ratio:.2f}**, {ratio:.3f}" in row
    assert f"{mine.proven} proven optimal against {plain.proven}" in row
    verdict = row.split(" | ")[2]
    assert verdict.startswith("**met") == (ratio <= 0.5) and verdict.startswith("**not met") == (ratio > 0.5)


def test_the_docs_quote_the_60s_figures_of_the_kept_runs() -> None:
    """The 60 s run is a stratified sample measured in parts: the docs quote all of the file."""
    names, mine, plain = _kept(60.0)
    j120 = PsplibSet("j120")
    assert set(names) <= set(j120.sample(j120.ordered(j120.best()), 2))
    quoted, readme = _quoted(mine, plain)
    assert f"on a stratified sample of {len(names)} j120 instances: {quoted}" in readme
    row = _solver_row("| PSPLIB j120 at **60 s**")
    assert f"**{len(names)}** of the 120-instance stratified sample" in row
    assert f"**{mine.deviation:.2f} %**" in row and f"**{plain.deviation:.2f} %**" in row
    assert f"(ratio {mine.deviation / plain.deviation:.2f}" in row
    assert f"{mine.proven} proven optimal against {plain.proven}" in row


def test_the_frontier_run_asked_every_open_instance_once_and_the_docs_quote_it() -> None:
    """``docs/results/frontier.jsonl``, the new-bound attempt of ``benchmarks/test_psplib_frontier.py``."""
    rows = [
        json.loads(line) for line in (RESULTS_DIR / "frontier.jsonl").read_text(encoding="utf-8").splitlines()
    ]
    for name, psplib in SETS.items():
        best = psplib.best()
        asked = [r for r in rows if r["set"] == name]
        assert sorted(r["instance"] for r in asked) == sorted(n for n, b in best.items() if not b.closed)
        for r in asked:
            assert r["target"] == best[r["instance"]].lower and r["limit"] == BUDGET[name]
            assert r["answer"] in ("infeasible", "feasible", "unknown")
            assert (r["confirmed"] is None) == (r["answer"] == "unknown")
    for r in rows:
        b = SETS[r["set"]].best()[r["instance"]]
        if r["answer"] == "infeasible":
            climbed = [target for target, answer, _, _ in r["climb"]]
            assert climbed == list(range(r["target"] + 1, r["target"] + 1 + len(climbed)))
            proven = [r["target"], *(target for target, answer, _, _ in r["climb"] if answer == "infeasible")]
            assert r["bound"] == max(proven) + 1 and b.lower < r["bound"] <= b.upper
        else:
            assert r["bound"] is None and r["climb"] == []
    new = [r for r in rows if r["confirmed"]]
    # the makespan side, as the docs say: no kept j120 run found a makespan below the best known one
    j120 = SETS["j120"].best()
    for path in RESULTS:
        runs = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]
        assert all(r["makespan"] >= j120[r["instance"]].upper for r in runs), path.name
    solver = (ROOT / "docs" / "solver.md").read_text(encoding="utf-8")
    row = next(line for line in solver.splitlines() if line.startswith("| New best known bounds"))
    assert f"{len(rows)} open instances" in row
    assert f"**{len(new)} new best known bound{'' if len(new) == 1 else 's'}**" in row


def _new_bounds() -> list[dict[str, object]]:
    rows = (RESULTS_DIR / "frontier.jsonl").read_text(encoding="utf-8").splitlines()
    return [r for r in map(json.loads, rows) if r["answer"] == "infeasible" and r["confirmed"]]


@pytest.mark.slow
@pytest.mark.parametrize("row", _new_bounds(), ids=lambda r: f"{r['instance']}>={r['bound']}")
def test_every_new_lower_bound_is_proven_again_by_the_textbook_model(row: dict[str, Any]) -> None:
    """The textbook model, not peakopt's, finds no schedule ending one below each new bound."""
    workflow, machine = SETS[row["set"]].instance(row["instance"])
    instance = reversed_instance(workflow) if row["confirmed"] == "textbook-reversed" else workflow
    assert confirmed_infeasible(instance, machine, row["bound"] - 1, 120.0, 2) == "textbook"


@pytest.mark.parametrize("name", ["j120", "j90"])
def test_the_docs_quote_the_provers_beside_the_genetic_algorithm(name: str) -> None:
    """``docs/results/provers-*.jsonl``, ``benchmarks/test_genetic_prover.py``'s runs: safe, and quoted."""
    psplib = PsplibSet(name)
    path = RESULTS_DIR / f"provers-{name}-10s.jsonl"
    best = psplib.best()
    runs = read_runs(psplib, path)
    solvers = {solver for _, solver, _ in runs}
    assert "peakopt" in solvers and len(solvers) >= 2
    table = (ROOT / "docs" / "solver.md").read_text(encoding="utf-8")
    everyone = set(runs[(name, "peakopt", 10.0)])
    for (_, solver, _), chosen in runs.items():
        assert set(chosen) == everyone, f"{solver} ran other instances than the default"
        for instance, run in chosen.items():
            assert run.makespan is not None and run.makespan >= best[instance].lower, (solver, instance)
            assert run.bound is not None and run.bound <= best[instance].upper, (solver, instance)
        names = psplib.ordered(chosen)
        figures_of = [
            figures(psplib, chosen, [n for n in names if half is None or psplib.half(n) == half])
            for half in (None, "tune", "report")
        ]
        every, tune, report = figures_of
        prover = "forward" if solver == "peakopt" else solver.removeprefix("peakopt-")
        row = (
            f"| {name} | `{prover}` "
            f"| {every.deviation:.2f} % ({tune.deviation:.2f} / {report.deviation:.2f}) "
            f"| {every.below:.2f} % ({tune.below:.2f} / {report.below:.2f}) | {every.proven} |"
        )
        assert row in table, row
