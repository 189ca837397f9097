"""``--soft-as-hard`` on the commands that print verdicts, and the ``soft`` field in files."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from cli_helpers import jsonl, run

from peakopt.models import Schedule, SolveResult, Suite
from peakopt.oracle import evaluate
from peakopt.oracle.judge.evaluate import with_reference

SUITE = {
    "machines": [{"name": "box", "capacity": {"cpu": 3, "memory_mb": 100}, "soft": ["cpu"]}],
    "workflows": [
        {
            "id": "w",
            "tasks": [
                {"id": "a", "duration": 1, "demand": {"cpu": 3, "memory_mb": 10}},
                {"id": "b", "duration": 1, "demand": {"cpu": 3, "memory_mb": 10}},
                {"id": "c", "duration": 1, "depends_on": ["a"], "demand": {"memory_mb": 10}},
            ],
        }
    ],
}
BOTH = {"workflow": "w", "machine": "box", "source": "both", "starts": {"a": 0, "b": 0, "c": 1}}


@pytest.fixture
def files(tmp_path: Path) -> tuple[str, str]:
    suite, schedules = tmp_path / "suite.json", tmp_path / "s.jsonl"
    suite.write_text(json.dumps(SUITE))
    schedules.write_text(json.dumps(BOTH) + "\n")
    return str(suite), str(schedules)


def test_a_soft_overflow_is_safe_and_slowed_unless_soft_as_hard(files: tuple[str, str]) -> None:
    suite, schedules = files
    code, out, _ = run("score", suite, "-s", schedules, "--json")
    (row,) = jsonl(out)
    assert code == 0 and row["safe"] and row["makespan"] == 2 and row["slowed_makespan"] == 3
    assert row["avoidable_cva_soft"] == 1 and row["violation_area"] == {"cpu": 1.0, "memory_mb": 0.0}
    code, out, _ = run("score", suite, "-s", schedules, "--json", "--soft-as-hard")
    (row,) = jsonl(out)
    assert code == 0 and not row["safe"] and row["slowed_makespan"] == row["makespan"]  # nothing soft


def test_the_gap_is_figured_from_the_slowed_makespan() -> None:
    suite = Suite.model_validate(SUITE)
    workflow, machine = suite.workflows[0], suite.machines[0]
    score = evaluate(workflow, machine, Schedule(workflow="w", machine="box", starts=BOTH["starts"]))
    # a, b at 0 share the 3 cores and end at 2; c waits for a: 3 s against the optimum's 2 (b after a)
    optimum = SolveResult(workflow="w", machine="box", status="optimal", makespan=2, lower_bound=2)
    assert score.makespan == 2 and with_reference(score, optimum).gap == 0.5


def test_schedule_shows_the_slowdown_and_soft_as_hard_the_verdict(files: tuple[str, str]) -> None:
    suite, _ = files
    code, _, err = run("schedule", suite, "--method", "asap")
    assert code == 0 and "yes, slowed to 3" in err
    code, _, err = run("schedule", suite, "--method", "asap", "--soft-as-hard")
    assert code == 0 and "│ no" in err


def test_a_soft_resource_that_is_no_capacity_is_one_error_line(tmp_path: Path) -> None:
    bad = tmp_path / "bad.json"
    document = json.loads(json.dumps(SUITE))
    document["machines"][0]["soft"] = ["gpu"]
    bad.write_text(json.dumps(document))
    code, out, err = run("validate", str(bad))
    assert code == 1 and out == ""
    assert err.strip().splitlines() == [
        f"Error: {bad}: machine 'box': soft resource 'gpu' is not one of the machine's capacities"
    ]


@pytest.mark.slow
def test_stress_judges_soft_overflow_safe_unless_soft_as_hard(files: tuple[str, str], tmp_path: Path) -> None:
    suite, _ = files
    code, out, _ = run("stress", suite, "-m", "asap", "--db", str(tmp_path / "a.sqlite"), "--json")
    (summary,) = json.loads(out)
    assert code == 0 and summary["safe_rate"] == 1 and summary["gap"]["mean"] == pytest.approx(0.5)
    assert summary["efficiency"] == pytest.approx(2 / 3)
    code, out, _ = run(
        "stress", suite, "-m", "asap", "--db", str(tmp_path / "b.sqlite"), "--json", "--soft-as-hard"
    )
    (summary,) = json.loads(out)
    assert code == 0 and summary["safe_rate"] == 0 and summary["efficiency"] == 0
