"""A generated 1,000-task, 4-resource workflow: a safe schedule and a proven bound within 60 s."""

from __future__ import annotations

import multiprocessing
import resource

from pytest_benchmark.fixture import BenchmarkFixture
from solver_baselines import large_workflow
from solver_helpers import assert_safe

from peakopt.models import SolveResult
from peakopt.solver import solve


def _solve(queue: multiprocessing.Queue[str]) -> None:
    workflow, machine = large_workflow(1000)
    # 50 s of search leaves room for the heuristics, the bounds and building within 60 s
    queue.put(solve(workflow, machine, time_limit=50, workers=2).model_dump_json())


def solve_in_child() -> tuple[SolveResult, float]:
    """Solve in a fresh process, so that its peak resident memory is the solve's alone (MB)."""
    context = multiprocessing.get_context("spawn")
    queue: multiprocessing.Queue[str] = context.Queue()
    child = context.Process(target=_solve, args=(queue,))
    child.start()
    result = SolveResult.model_validate_json(queue.get())
    child.join()
    return result, resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024


def test_thousand_tasks(benchmark: BenchmarkFixture) -> None:
    result, peak_mb = benchmark.pedantic(solve_in_child, rounds=1)
    workflow, machine = large_workflow(1000)
    assert_safe(result, workflow, machine)
    assert result.makespan is not None and result.lower_bound is not None
    gap = (result.makespan - result.lower_bound) / result.makespan
    phases = result.params["phases"]
    print(
        f"{result.status}: makespan {result.makespan:g} s, bound {result.lower_bound:g} s, "
        f"gap {100 * gap:.2f} %, {result.seconds:.1f} s, peak memory {peak_mb:.0f} MB, {phases}"
    )
    assert result.seconds <= 60
