"""``peakopt score TRACE``: real runs of small subprocess workflows (peakopt run), scored as they ran."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from cli_helpers import jsonl, run

from peakopt.models import Machine, Schedule, Task, Workflow
from peakopt.oracle import evaluate
from peakopt.solver import solve

BOX = {"cpu": 2, "memory_mb": 300}


def suite(tmp_path: Path, tasks: list[dict[str, Any]]) -> Path:
    path = tmp_path / "wf.json"
    machines = [{"name": "box", "capacity": BOX}]
    path.write_text(json.dumps({"machines": machines, "workflows": [{"id": "w", "tasks": tasks}]}))
    return path


def step(name: str, seconds: float, memory: float, after: tuple[str, ...] = ()) -> dict[str, Any]:
    return {
        "id": name,
        "duration": seconds,
        "demand": {"memory_mb": memory, "cpu": 0.5},
        "depends_on": list(after),
        "meta": {"command": f"sleep {seconds}"},
    }


#: a and b cannot run together (400 of 300 MiB); c, after b, fits beside a: b first is best.
TASKS = [step("a", 0.3, 200), step("b", 0.1, 200), step("c", 0.3, 100, ("b",))]


def ran(tmp_path: Path, *options: str, name: str = "trace.json", tasks: list[dict[str, Any]] = TASKS) -> Path:
    """The trace of a real ``peakopt run`` of ``tasks`` on the box."""
    trace = tmp_path / name
    _, _, err = run("run", str(suite(tmp_path, tasks)), "--machine", "box", "-o", str(trace), *options)
    assert trace.exists(), err
    return trace


def as_ran(path: Path, measured: bool = False) -> tuple[Workflow, Machine, Schedule]:
    """The run read straight from the trace's JSON: each step's actual duration, its actual start."""
    data = json.loads(path.read_text())
    declared = {t["id"]: t for t in data["workflow"]["tasks"]}
    tasks, starts = [], {}
    for record in data["steps"]:
        if record.get("start") is None:
            continue
        start, end = round(record["start"], 6), round(record["end"], 6)
        demand = dict(declared[record["id"]]["demand"])
        if measured:
            demand.update(cpu=record["usage"]["cpu_avg"], memory_mb=record["usage"]["memory_peak_mb"])
        depends = declared[record["id"]].get("depends_on", [])
        tasks.append(Task(id=record["id"], duration=round(end - start, 6), demand=demand, depends_on=depends))
        starts[record["id"]] = start
    machine = Machine.model_validate(data["machine"])
    return Workflow(id="w", tasks=tasks), machine, Schedule(workflow="w", machine=machine.name, starts=starts)


def scored(*args: str) -> list[dict[str, Any]]:
    code, out, err = run("score", *args, "--json")
    assert code == 0, err
    return jsonl(out)


def test_a_run_is_scored_with_its_actual_durations_against_the_optimum_for_them(tmp_path: Path) -> None:
    trace = ran(tmp_path, "--policy", "asap")  # guarded ASAP: a and b race, a first
    (row,) = scored(str(trace))
    workflow, machine, schedule = as_ran(trace)
    mine = evaluate(workflow, machine, schedule)
    best = solve(workflow, machine, time_limit=10)  # the hindsight optimum, solved here on its own
    assert best.status == "optimal" and row["reference_status"] == "optimal"
    assert row["valid"] and row["safe"] and mine.safe
    assert row["makespan"] == pytest.approx(mine.makespan) and row["starts"] == schedule.starts
    assert row["gap"] == pytest.approx((mine.makespan - best.makespan) / best.makespan)
    assert row["efficiency"] == pytest.approx(best.makespan / mine.makespan)
    assert row["source"] == "run:asap" and row["labels"] == {
        "trace": str(trace),
        "demand": "declared",
        "run": "ok",
    }
    assert row["peak_ratio"]["memory_mb"] == pytest.approx(mine.resources["memory_mb"].peak_ratio)


def test_an_unguarded_run_that_overflows_is_unsafe_and_earns_nothing(tmp_path: Path) -> None:
    (row,) = scored(str(ran(tmp_path, "--policy", "asap", "--no-guard")))
    assert row["valid"] and not row["safe"] and row["avoidable_cva"] > 0
    assert row["gap"] is None and row["efficiency"] == 0.0 and row["reference_status"] == "optimal"


def test_measured_demands_replace_the_declared_ones(tmp_path: Path) -> None:
    trace = ran(tmp_path, "--measure")
    (declared,) = scored(str(trace))
    (row,) = scored(str(trace), "--demand", "measured")
    workflow, machine, schedule = as_ran(trace, measured=True)
    mine = evaluate(workflow, machine, schedule)
    best = solve(workflow, machine, time_limit=10)
    assert row["labels"]["demand"] == "measured" and declared["labels"]["demand"] == "declared"
    assert row["peak_ratio"]["memory_mb"] == pytest.approx(mine.resources["memory_mb"].peak_ratio)
    assert row["peak_ratio"]["cpu"] == pytest.approx(mine.resources["cpu"].peak_ratio)
    assert row["peak_ratio"] != declared["peak_ratio"]  # a sleep uses neither 200 MiB nor half a core
    assert row["gap"] == pytest.approx((mine.makespan - best.makespan) / best.makespan)


def test_measured_demands_need_a_measured_run(tmp_path: Path) -> None:
    trace = ran(tmp_path)
    code, out, err = run("score", str(trace), "--demand", "measured")
    assert code == 1 and out == ""
    assert err.strip().splitlines() == [
        f"Error: {trace}: step 'a': has no measured usage: --demand measured needs a run with "
        "--measure (or usage attributes)"
    ]


def test_a_failed_run_is_invalid_with_its_failed_and_skipped_steps_named(tmp_path: Path) -> None:
    tasks = [step("a", 0.1, 100), step("b", 0.1, 100, ("a",)), step("c", 0.1, 100)]
    tasks[0]["meta"]["command"] = "exit 3"
    (row,) = scored(str(ran(tmp_path, tasks=tasks)))
    assert not row["valid"] and row["efficiency"] == 0.0 and row["gap"] is None
    assert row["reasons"] == [
        "step 'a' failed (exited with 3)",
        "step 'b' never ran (skipped: the run failed)",
    ]
    assert row["reason_kinds"] == ["failed", "missing"] and row["labels"]["run"] == "failed"
    assert set(row["starts"]) == {"a", "c"}  # what ran is still measured


def test_several_runs_and_schedules_score_in_one_table_and_report(tmp_path: Path) -> None:
    first = ran(tmp_path, "--policy", "asap", name="asap.json")
    second = ran(tmp_path, "--policy", "robust", name="robust.json")
    answers = tmp_path / "answers.jsonl"
    answers.write_text(
        json.dumps(
            {"workflow": "w", "machine": "box", "source": "me", "starts": {"b": 0, "a": 0.1, "c": 0.1}}
        )
        + "\n"
    )
    scores = tmp_path / "scores.jsonl"
    code, _, err = run(
        "score",
        str(tmp_path / "wf.json"),
        str(first),
        str(second),
        "-s",
        str(answers),
        "-o",
        str(scores),
        "--by",
        "source",
    )
    assert code == 0, err
    rows = jsonl(scores.read_text())
    assert [r["source"] for r in rows] == ["me", "run:asap", "run:robust"]
    assert "2 runs scored as they ran: actual starts and durations, declared demands" in err
    assert "run:robust" in err and "3 records, 0 invalid" in err
    code, _, err = run("report", str(scores))
    assert code == 0, err


def test_bad_trace_files_are_one_error_naming_the_file_and_the_rule(tmp_path: Path) -> None:
    good = json.loads(ran(tmp_path).read_text())
    broken = tmp_path / "broken.json"
    broken.write_text(json.dumps({**good, "steps": [{"id": "a", "status": "lost"}]}))
    code, _, err = run("score", str(broken))
    assert code == 1 and err.count("Error:") == 1 and err.startswith(f"Error: {broken}: ") and "status" in err
    unversioned = tmp_path / "v2.json"
    unversioned.write_text(json.dumps({**good, "version": 2}))
    code, _, err = run("score", str(unversioned))
    assert code == 1 and err.startswith(f"Error: {unversioned}: ") and "version" in err


@pytest.mark.parametrize(
    ("options", "message"),
    [
        ((), "give --schedules, or traces"),
        (("--trace-id", "x"), "--trace-id is for OpenTelemetry exports"),
        (("--samples", "5"), "--samples is for the plans of --schedules"),
    ],
)
def test_usage_errors_of_traces(tmp_path: Path, options: tuple[str, ...], message: str) -> None:
    inputs = [str(suite(tmp_path, TASKS))] if not options else [str(ran(tmp_path))]
    code, _, err = run("score", *inputs, *options)
    assert code == 2 and message in err


def test_other_commands_say_a_trace_is_for_score(tmp_path: Path) -> None:
    trace = ran(tmp_path)
    code, _, err = run("solve", str(trace))
    assert code == 1 and err.strip() == (
        f"Error: {trace}: is a peakopt trace (peakopt run -o), not a workflow or a suite: "
        "score it with peakopt score"
    )
