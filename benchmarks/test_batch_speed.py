"""Batch scoring throughput: 15-task, 2-resource workflows (issue 3 target: >= 50,000 schedules/s, one core).

Run with ``python -m pytest benchmarks``. Each benchmark checks a sample of the
batch against the exact evaluator after the timed call.
"""

from __future__ import annotations

import random

import numpy as np
import pytest
from pytest_benchmark.fixture import BenchmarkFixture

from peakopt.models import Machine, Schedule, Task, Workflow
from peakopt.oracle import evaluate
from peakopt.oracle.vector.batch import BatchScorer

SCHEDULES = 50_000
TARGET = 50_000  # schedules per second


def workflow(seed: int, piecewise: bool) -> Workflow:
    """A random 15-task DAG using cpu and memory_mb, like an agent's tool workflow."""
    rng = random.Random(seed)
    tasks = []
    for i in range(15):
        preds = [f"t{j}" for j in range(i) if rng.random() < 0.15]
        demand = {
            "cpu": round(rng.uniform(0.1, 2.0), 2),
            "memory_mb": rng.choice([256, 512, 1024, 2048, 4096]),
        }
        if piecewise and i % 3 == 0:
            spike = {"cpu": demand["cpu"] * 2, "memory_mb": demand["memory_mb"] * 2}
            profile = [
                {"duration": 0.5, "demand": spike},
                {"duration": round(rng.uniform(0.2, 5), 2), "demand": demand},
            ]
            tasks.append(Task(id=f"t{i}", depends_on=preds, profile=profile))
        else:
            tasks.append(
                Task(id=f"t{i}", depends_on=preds, duration=round(rng.uniform(0.2, 5), 2), demand=demand)
            )
    return Workflow(id=f"w{seed}", tasks=tasks)


MACHINE = Machine(name="worker", capacity={"cpu": 4, "memory_mb": 8192})


def check_sample(flow: Workflow, starts: np.ndarray, cva: np.ndarray, mru: np.ndarray) -> None:
    for row in np.random.default_rng(0).choice(len(starts), size=50, replace=False):
        schedule = Schedule(workflow=flow.id, starts=dict(zip(flow.index, starts[row].tolist(), strict=True)))
        exact = evaluate(flow, MACHINE, schedule)
        assert cva[row] == pytest.approx(exact.cva, rel=1e-9, abs=1e-9)
        assert mru[row] == pytest.approx(exact.mru, rel=1e-9, abs=1e-9)


@pytest.mark.parametrize("piecewise", [False, True], ids=["constant", "piecewise"])
def test_batch_throughput(benchmark: BenchmarkFixture, piecewise: bool) -> None:
    flow = workflow(1, piecewise)
    scorer = BatchScorer(flow, MACHINE)
    starts = np.random.default_rng(1).uniform(0, 30, size=(SCHEDULES, len(flow.tasks)))
    scores = benchmark.pedantic(scorer.score, args=(starts,), rounds=5, iterations=1, warmup_rounds=1)
    rate = SCHEDULES / benchmark.stats["mean"]
    benchmark.extra_info["schedules_per_second"] = round(rate)
    check_sample(flow, starts, scores.cva, scores.mru)
    assert rate >= TARGET


def test_exact_throughput_for_comparison(benchmark: BenchmarkFixture) -> None:
    flow = workflow(1, False)
    starts = np.random.default_rng(2).uniform(0, 30, size=(500, len(flow.tasks)))
    schedules = [
        Schedule(workflow=flow.id, starts=dict(zip(flow.index, row.tolist(), strict=True))) for row in starts
    ]

    def run() -> list[float]:
        return [evaluate(flow, MACHINE, s).cva for s in schedules]

    cvas = benchmark.pedantic(run, rounds=3, iterations=1)
    benchmark.extra_info["schedules_per_second"] = round(len(schedules) / benchmark.stats["mean"])
    batch = BatchScorer(flow, MACHINE).score(starts)
    assert batch.cva == pytest.approx(cvas, rel=1e-9, abs=1e-9)
