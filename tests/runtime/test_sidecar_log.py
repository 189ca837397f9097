"""Reading the sidecar's event log back: loads from clamped demands, ends, order, waits."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from peakopt.runtime.sidecar_log import check_run, read_runs

START = {"event": "start", "t": 0.0, "machine": {"name": "m", "capacity": {"memory_mb": 100, "cpu": 2}}}


def line(kind: str, lease: str, t: float, **demand: float) -> dict[str, Any]:
    return {"event": kind, "id": lease, "t": t, "demand": demand}


def check(*lines: dict[str, Any]) -> Any:
    return check_run([START, *lines])


def test_a_clean_run_has_no_violation_and_clamps_an_over_capacity_lease() -> None:
    found = check(
        line("requested", "big", 0.0, memory_mb=500),  # over the capacity alone: clamped to 100
        line("admitted", "big", 0.0, memory_mb=500),
        line("requested", "small", 0.5, memory_mb=10),
        line("expired", "big", 2.0, memory_mb=500),
        line("admitted", "small", 2.0, memory_mb=10),
        line("released", "small", 3.0, memory_mb=10),
        {"event": "stop", "t": 4.0},
    )
    assert found.over == [] and found.unended == [] and found.out_of_order == []
    assert found.peak == {"cpu": 0.0, "memory_mb": 100.0}
    assert found.waits == {"big": 0.0, "small": 1.5}
    assert found.free_on_arrival == {"big"} and found.stopped
    assert found.counts == {"start": 1, "requested": 2, "admitted": 2, "expired": 1, "released": 1, "stop": 1}


@pytest.mark.parametrize(
    ("lines", "over", "unended", "disorder"),
    [
        (
            [
                line("requested", "a", 0, memory_mb=60),
                line("admitted", "a", 0, memory_mb=60),
                line("requested", "b", 0, memory_mb=60),
                line("admitted", "b", 1, memory_mb=60),
            ],
            [(1, "memory_mb", 120.0)],
            ["a", "b"],
            [],
        ),
        (
            [
                line("requested", "a", 0, cpu=5),
                line("admitted", "a", 0, cpu=5),
                line("requested", "b", 0, cpu=0.5),
                line("admitted", "b", 0, cpu=0.5),
            ],
            [(0, "cpu", 2.5)],
            ["a", "b"],
            [],
        ),
        ([line("requested", "a", 0, cpu=1)], [], ["a"], []),
        ([line("admitted", "a", 0, cpu=1)], [], ["a"], ["a admitted while unknown"]),
        (
            [
                line("requested", "a", 0, cpu=1),
                line("withdrawn", "a", 1, cpu=1),
                line("released", "a", 2, cpu=1),
            ],
            [],
            [],
            ["a released while ended"],
        ),
        (
            [
                line("requested", "a", 0, cpu=1),
                line("admitted", "a", 0, cpu=1),
                line("withdrawn", "a", 1, cpu=1),
            ],
            [],
            [],
            ["a withdrawn while running"],
        ),
        (
            [line("requested", "a", 0, cpu=1), line("requested", "a", 0, cpu=1)],
            [],
            ["a"],
            ["a requested twice"],
        ),
    ],
    ids=[
        "memory-over",
        "cpu-over-with-a-clamped-one",
        "never-answered",
        "admitted-unasked",
        "ended-twice",
        "withdrawn-while-running",
        "asked-twice",
    ],
)
def test_violations_are_found(
    lines: list[dict[str, Any]], over: list[Any], unended: list[str], disorder: list[str]
) -> None:
    found = check(*lines)
    assert found.over == over and found.unended == unended and found.out_of_order == disorder
    assert not found.stopped


def test_a_log_splits_into_runs_at_each_start(tmp_path: Path) -> None:
    path = tmp_path / "log.jsonl"
    rows = [line("requested", "x", 0), START, line("requested", "a", 0), {"event": "stop", "t": 1}, START]
    path.write_text("".join(json.dumps(r) + "\n" for r in rows) + "\n")
    runs = read_runs(path)
    assert [[r["event"] for r in run] for run in runs] == [["start", "requested", "stop"], ["start"]]
