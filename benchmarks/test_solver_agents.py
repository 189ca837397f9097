"""Agent-sized workflows (2–15 tool calls, 0.01 s data): proven optimal, 20 ms on average."""

from __future__ import annotations

import time

from pytest_benchmark.fixture import BenchmarkFixture
from solver_baselines import AGENT_MACHINES, agent_workflows
from solver_helpers import assert_safe

from peakopt.models import SolveResult
from peakopt.solver import solve

COUNT, SEED = 200, 1


def solve_all() -> tuple[list[SolveResult], float]:
    flows = agent_workflows(COUNT, SEED)
    began = time.perf_counter()
    results = [solve(w, m, time_limit=60, workers=2) for w in flows for m in AGENT_MACHINES]
    return results, time.perf_counter() - began


def test_agent_workflows(benchmark: BenchmarkFixture) -> None:
    results, seconds = benchmark.pedantic(solve_all, rounds=1)
    flows = agent_workflows(COUNT, SEED)
    pairs = [(w, m) for w in flows for m in AGENT_MACHINES]
    for result, (workflow, machine) in zip(results, pairs, strict=True):
        assert_safe(result, workflow, machine)
    proven = sum(r.status == "optimal" for r in results)
    shortcut = sum(r.params["phases"] == ["initial schedule meets the bound"] for r in results)
    mean = seconds / len(results)
    slowest = max(r.seconds for r in results)
    print(
        f"{proven}/{len(results)} optimal ({shortcut} by the heuristic meeting the bound), "
        f"mean {1000 * mean:.1f} ms, slowest {1000 * slowest:.0f} ms"
    )
    assert proven == len(results)
    assert mean <= 0.020
