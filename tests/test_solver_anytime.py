"""Anytime results: at any limit the incumbent and a proven bound; the gap limit at scale; peak memory."""

from __future__ import annotations

from paths import SHARED
from solver_helpers import assert_safe, generated

from peakopt.instances import load
from peakopt.solver import solve


def test_a_short_limit_still_gives_a_schedule_a_bound_and_the_memory() -> None:
    workflow, machine = generated(150)
    seen: list[tuple[float | None, float]] = []
    result = solve(workflow, machine, time_limit=1, workers=2, progress=lambda u, b: seen.append((u, b)))
    assert_safe(result, workflow, machine)
    assert result.params["peak_memory_mb"] > 0
    assert all(b <= result.makespan + 1e-9 for _, b in seen)  # type: ignore[operator]


def test_the_gap_limit_stops_a_j90_search() -> None:
    suite = load(SHARED / "psplib" / "j90" / "j9013_1.sm")
    workflow, machine = suite.workflows[0], suite.machines[0]
    result = solve(workflow, machine, time_limit=60, workers=2, gap_limit=0.25)
    assert_safe(result, workflow, machine)
    assert result.makespan is not None and result.lower_bound is not None
    assert (result.makespan - result.lower_bound) / result.makespan <= 0.25
    assert result.lower_bound <= 137  # the best known makespan
