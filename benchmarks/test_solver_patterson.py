"""Patterson's 110 instances: every one optimal, matching optimum.csv."""

from __future__ import annotations

import pytest
from paths import PATTERSON, patterson_optima
from pytest_benchmark.fixture import BenchmarkFixture
from solver_helpers import assert_safe

from peakopt.instances import load
from peakopt.solver import solve


@pytest.mark.parametrize("name", sorted(patterson_optima()))
def test_patterson(benchmark: BenchmarkFixture, name: str) -> None:
    suite = load(PATTERSON / f"{name}.rcp")
    workflow, machine = suite.workflows[0], suite.machines[0]
    result = benchmark.pedantic(
        solve, args=(workflow, machine), kwargs={"time_limit": 60, "workers": 2}, rounds=1
    )
    assert_safe(result, workflow, machine)
    assert result.status == "optimal"
    assert result.makespan == patterson_optima()[name]
