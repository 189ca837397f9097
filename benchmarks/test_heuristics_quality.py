"""The issue's quality targets on all 480 PSPLIB j30 instances (about two minutes)."""

from __future__ import annotations

import pytest
from heuristics_quality import instances, measure

from peakopt.models import Machine, Workflow

Cases = list[tuple[Workflow, Machine, int]]


@pytest.fixture(scope="module")
def j30() -> Cases:
    cases = instances()
    assert len(cases) == 480
    return cases


@pytest.mark.parametrize(
    ("method", "target"),
    [("fbi:sgs:parallel:lft", 0.025), ("fbi:sampling:1000", 0.010), ("best:fast", 0.025)],
)
def test_mean_deviation_from_the_optimum(j30: Cases, method: str, target: float) -> None:
    row = measure(method, j30)  # asserts every schedule safe and no shorter than the optimum
    print(f"{method}: {100 * row.mean:.2f} % mean deviation, {row.optimal}/480 optimal")
    assert row.mean <= target
