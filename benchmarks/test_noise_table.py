"""PeakBench's Table 8 with a reference, and Monte Carlo throughput, on the bundled suite (issue 15).

The table: the proven optimum executed ``literal``, ``enforced`` and ``order``, the robust
reference executed as its partial-order schedule (``pos``) and the ``admission`` policy online,
at noise 0, 10, 25 and 50 % (durations uniform within ±X, demands fixed), over the 900
workflow × machine pairs × :data:`TABLE_SAMPLES` scenarios each: share of safe runs, expected
makespan and expected gap to the perfect-information bound (each scenario's own optimum), with
their 95 % bootstrap intervals over pairs. It is computed the way ``peakopt stress --noise``
computes it (the same library calls, one store), then checked: the robust reference safe in
every run, ``enforced`` never breaking a dependency, zero noise giving the deterministic scores.

The throughput: one policy (``admission``) at one noise level (25 %), 100 scenarios per pair,
90,000 runs on 2 local processes: cold (every bound solved) and warm (bounds from the store, the
rows run again). Run with ``python -m pytest benchmarks/test_noise_table.py -s``.
"""

from __future__ import annotations

import os
import time
from collections.abc import Sequence
from pathlib import Path

import pytest
from pytest_benchmark.fixture import BenchmarkFixture

from peakopt.campaign.executors import Where, open_executor
from peakopt.campaign.hindsight import Bounds
from peakopt.campaign.noise_run import OPTIMUM_ROW, ROBUST_ROW, NoiseRun
from peakopt.campaign.store import Store
from peakopt.campaign.stress import (
    Pair,
    Settings,
    auto_chunk,
    backlog,
    run_campaign,
)
from peakopt.campaign.stress_noise import NOISY, attach_bounds
from peakopt.instances import load
from peakopt.oracle import ScoreRow
from peakopt.oracle.tables.aggregate import ScoreSummary, aggregate
from peakopt.oracle.uncertain.names import Execution
from peakopt.oracle.uncertain.scenarios import Noise

LEVELS = (0.0, 0.1, 0.25, 0.5)
TABLE_SAMPLES = int(os.environ.get("PEAKOPT_TABLE_SAMPLES", "20"))
THROUGHPUT_SAMPLES = 100
JOBS = 2
#: (row of the table, the store's method, execution policy; None: online)
ROWS: tuple[tuple[str, str, Execution | None], ...] = (
    ("literal", OPTIMUM_ROW, "literal"),
    ("enforced", OPTIMUM_ROW, "enforced"),
    ("order", OPTIMUM_ROW, "order"),
    ("pos (robust)", ROBUST_ROW, None),
    ("admission", "admission", None),
)


def pairs() -> list[Pair]:
    suite = load("bundled:default")
    return [Pair(w, tuple(suite.machines)) for w in suite.workflows]


def campaign(
    db: Path, methods: Sequence[str], run: NoiseRun, redo: Sequence[str] = ()
) -> tuple[list[ScoreRow], Bounds, float]:
    """What ``peakopt stress --noise`` does: bounds first, then the Monte Carlo rows; rows and wall time."""
    began = time.perf_counter()
    settings = Settings(time_limit=10.0, seed=0, noise=run)
    store = Store(db)
    try:
        todo = backlog(pairs(), methods, settings, store, redo=redo)
        with open_executor(Where(jobs=JOBS)) as executor:
            items, bounds = attach_bounds(todo.items, store, executor, run, settings.seed)
            size = auto_chunk(len(items), executor.slots)
            for _ in run_campaign(executor, items, store, chunk=size, work=NOISY):
                pass
        rows = store.score_rows(todo.keys)
    finally:
        store.close()
    return rows, bounds, time.perf_counter() - began


def cell(summary: ScoreSummary, field: str, scale: float = 100.0, digits: int = 1) -> str:
    """A Monte Carlo mean (as a percentage by default) and its 95 % interval: ``44.0 [41.8, 46.2]``."""
    mc = summary.monte_carlo
    value = None if mc is None else getattr(mc, field)
    if value is None:
        return "-"

    def shown(x: float) -> str:
        return f"{round(scale * x, digits) + 0.0:.{digits}f}"  # never -0.0

    interval = summary.intervals.get(f"mc_{field}")
    return (
        shown(value)
        if interval is None
        else f"{shown(value)} [{shown(interval.low)}, {shown(interval.high)}]"
    )


def table(tmp: Path) -> dict[tuple[str, float], list[ScoreRow]]:
    found: dict[tuple[str, float], list[ScoreRow]] = {}
    for level in LEVELS:
        db = tmp / f"noise-{level}.sqlite"
        for name, method, execute in ROWS[:3]:  # the optimum, executed three ways
            rows, _, _ = campaign(db, [method], NoiseRun(Noise(level), TABLE_SAMPLES, execute))
            found[name, level] = rows
        rows, _, _ = campaign(db, [ROBUST_ROW, "admission"], NoiseRun(Noise(level), TABLE_SAMPLES))
        found["pos (robust)", level] = [r for r in rows if r.source == ROBUST_ROW]
        found["admission", level] = [r for r in rows if r.source == "admission"]
    return found


def test_noise_table(benchmark: BenchmarkFixture, tmp_path: Path) -> None:
    found = benchmark.pedantic(table, args=(tmp_path,), rounds=1, iterations=1)
    lines = [
        "| row | noise | safe runs (%) | dependency broken (%) | avoidable overflow (%) "
        "| expected makespan (s) | expected gap to the bound (%) |",
        "|---|---|---|---|---|---|---|",
    ]
    for name, _, _ in ROWS:
        for level in LEVELS:
            (summary,) = aggregate(found[name, level], [], intervals=True)
            figures = [
                cell(summary, "safe_rate"),
                cell(summary, "violation_rate"),
                cell(summary, "overflow_rate"),
                cell(summary, "mean_makespan", 1, 2),
                cell(summary, "gap"),
            ]
            lines.append(f"| {name} | {100 * level:g} % | " + " | ".join(figures) + " |")
    print("\n" + "\n".join(lines))
    for level in LEVELS:
        for name, _, _ in ROWS:
            assert len(found[name, level]) == 900
            assert all(
                r.monte_carlo is not None and r.monte_carlo.samples == TABLE_SAMPLES
                for r in found[name, level]
            )
        robust = [r.monte_carlo for r in found["pos (robust)", level]]
        assert all(m is not None and m.safe_rate == 1.0 for m in robust), "a POS overflowed"
        enforced = [r.monte_carlo for r in found["enforced", level]]
        assert all(m is not None and m.violation_rate == 0.0 for m in enforced)
        for rows in found.values():
            gaps = [
                r.monte_carlo.gap for r in rows if r.monte_carlo is not None and r.monte_carlo.gap is not None
            ]
            assert min(gaps, default=0.0) >= -1e-9, "a run beat its scenario's optimum"
    for name, _, _ in ROWS:  # zero noise: every run is the deterministic one
        for row in found[name, 0.0]:
            mc = row.monte_carlo
            assert mc is not None and row.makespan is not None
            assert mc.mean_makespan == pytest.approx(row.makespan)
            assert mc.safe_rate == float(row.valid and row.safe)
    for name, _, _ in ROWS[:3]:  # the optimum itself, at the bound
        gaps = [None if r.monte_carlo is None else r.monte_carlo.gap for r in found[name, 0.0]]
        assert gaps == pytest.approx([0.0] * len(gaps), abs=1e-9)


def test_monte_carlo_throughput(benchmark: BenchmarkFixture, tmp_path: Path) -> None:
    db, run = tmp_path / "throughput.sqlite", NoiseRun(Noise(0.25), THROUGHPUT_SAMPLES)
    load_before = os.getloadavg()[0]
    rows, bounds, cold = benchmark.pedantic(campaign, args=(db, ["admission"], run), rounds=1, iterations=1)
    again, cached, warm = campaign(db, ["admission"], run, redo=["admission"])
    scenarios = 900 * THROUGHPUT_SAMPLES
    rate = sum(bounds.solved.values()) / bounds.seconds
    print(
        f"\n{scenarios} runs: cold {cold:.1f} s (bounds {bounds.seconds:.1f} s, {rate:.0f} "
        f"scenarios/s; shortcut {100 * bounds.share('shortcut'):.1f} %, cliques "
        f"{100 * bounds.share('cliques'):.1f} %, CP-SAT {100 * bounds.share('cpsat'):.1f} %), "
        f"warm {warm:.1f} s (bounds {cached.seconds:.1f} s from the store); load before {load_before:.1f}"
    )
    benchmark.extra_info.update(cold=cold, warm=warm, bounds=bounds.seconds, load_before=load_before)
    assert len(rows) == len(again) == 900
    assert cached.cached == len(cached.by_key) and not cached.solved
    by_pair = {(r.workflow, r.machine): r.monte_carlo for r in rows}
    assert by_pair == {(r.workflow, r.machine): r.monte_carlo for r in again}  # the same figures, warm
    assert all(r.monte_carlo is not None and r.monte_carlo.safe_rate == 1.0 for r in rows)
    assert warm < 60.0
