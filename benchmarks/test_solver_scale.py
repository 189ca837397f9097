"""Generated 1,000- and 10,000-task, 4-resource workflows: a safe schedule and a proven bound within 60 s.

Each solve runs in a fresh process, so that its peak resident memory is its
own. Set ``PEAKOPT_PREVIOUS`` to a directory holding the previous release's
``peakopt`` package (e.g. ``git archive main | tar -x -C /tmp/prev/peakopt``)
to solve the same workflows with it in the same session, side by side.
"""

from __future__ import annotations

import os
import time

import pytest
from pytest_benchmark.fixture import BenchmarkFixture
from scale_child import solve_in_child
from solver_baselines import large_workflow
from solver_helpers import assert_safe

from peakopt.models import SolveResult

#: Search limits: with the heuristics, the bounds and building, within 60 s.
LIMITS = {1000: 50.0, 10000: 30.0}
RELEASES = ["this", "previous"] if os.environ.get("PEAKOPT_PREVIOUS") else ["this"]
#: Seconds a previous release is given before it is reported as "no result" and stopped.
PREVIOUS_WAIT = 300.0


@pytest.mark.parametrize("release", RELEASES)
@pytest.mark.parametrize("tasks", sorted(LIMITS))
def test_large_workflow(benchmark: BenchmarkFixture, tasks: int, release: str) -> None:
    source = os.environ.get("PEAKOPT_PREVIOUS") if release == "previous" else None
    wait = PREVIOUS_WAIT if source else None
    began = time.perf_counter()
    found = benchmark.pedantic(solve_in_child, args=(tasks, LIMITS[tasks], source, wait), rounds=1)
    wall = time.perf_counter() - began
    if found is None:
        print(f"\n{tasks} tasks, {release}: no result within {PREVIOUS_WAIT:g} s (stopped)")
        return
    result = SolveResult.model_validate(found["result"])
    workflow, machine = large_workflow(tasks)
    assert_safe(result, workflow, machine)
    assert result.makespan is not None and result.lower_bound is not None
    gap = (result.makespan - result.lower_bound) / result.makespan
    print(
        f"\n{tasks} tasks, {release}: {result.status}: makespan {result.makespan:g} s, bound "
        f"{result.lower_bound:g} s, gap {100 * gap:.2f} %, solve {result.seconds:.1f} s "
        f"(process {wall:.1f} s), peak memory {found['peak_mb']:.0f} MB, {result.params['phases'][-3:]}"
    )
    if release == "this":
        assert result.seconds <= 60
