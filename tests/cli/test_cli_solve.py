"""peakopt solve through the command line: records, machines, resume, interruption, usage errors."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from click.testing import CliRunner
from paths import J30, j30_optima

from peakopt.campaign import solves
from peakopt.cli import solve as solve_cli
from peakopt.cli.main import cli
from peakopt.instances import load
from peakopt.models import SolveResult
from peakopt.oracle import evaluate

EASY = [J30 / f"j301_{i}.sm" for i in range(1, 5)]


def run(*args: str) -> tuple[int, str, str]:
    result = CliRunner().invoke(cli, list(args))
    return result.exit_code, result.stdout, result.stderr


def partial(path: Path) -> Path:
    """The side file ``solve -o`` streams its records to."""
    return path.with_name(path.name + ".partial")


def records(path: Path) -> list[SolveResult]:
    return [SolveResult.model_validate_json(line) for line in path.read_text().splitlines()]


def test_solve_writes_one_checked_record_per_workflow_and_machine(tmp_path: Path) -> None:
    out = tmp_path / "refs.jsonl"
    code, _, err = run("solve", *map(str, EASY), "--jobs", "2", "--workers", "1", "-o", str(out))
    assert code == 0, err
    found = records(out)
    assert sorted(r.workflow for r in found) == [p.stem for p in EASY]
    for record in found:
        suite = load(J30 / f"{record.workflow}.sm")
        assert record.status == "optimal" and record.makespan == j30_optima()[record.workflow]
        assert record.schedule is not None
        score = evaluate(suite.workflows[0], suite.machines[0], record.schedule)
        assert score.valid and score.safe
    assert "optimal" in err and "mean gap" in err


def test_json_output_is_the_model_dump(tmp_path: Path) -> None:
    code, out, _ = run("solve", "bundled:refund", "--json")
    assert code == 0
    (line,) = out.splitlines()
    record = json.loads(line)
    assert record == SolveResult.model_validate(record).model_dump(mode="json")
    assert record["workflow"] == "refund" and record["machine"] == "worker"
    assert set(record) >= {"status", "makespan", "lower_bound", "starts", "cva_floor", "solver", "seconds"}


def test_machine_by_file_and_by_name(tmp_path: Path) -> None:
    small = tmp_path / "small.json"
    small.write_text(json.dumps({"name": "small", "capacity": {"cpu": 1, "memory_mb": 8192}}))
    code, out, err = run("solve", "bundled:refund", "--machine", str(small), "--machine", "worker", "--json")
    assert code == 0, err
    machines = [json.loads(line)["machine"] for line in out.splitlines()]
    assert sorted(machines) == ["small", "worker"]


def test_unknown_machine_name_is_a_usage_error() -> None:
    code, _, err = run("solve", "bundled:refund", "--machine", "huge")
    assert code == 2 and "'huge' is neither a machine of the inputs (they define: worker)" in err


def test_workflow_without_machine_is_an_error(tmp_path: Path) -> None:
    path = tmp_path / "w.json"
    path.write_text(json.dumps({"id": "w", "tasks": [{"id": "a", "duration": 1}]}))
    code, _, err = run("solve", str(path))
    assert code == 1
    assert err.startswith("Error: ") and "--machine" in err and len(err.splitlines()) == 1


def test_unconstrained_resource_warns_once(tmp_path: Path) -> None:
    path = tmp_path / "gpu.json"
    workflows = [
        {"id": f"w{i}", "tasks": [{"id": "a", "duration": 1, "demand": {"gpu": 2}}]} for i in range(3)
    ]
    path.write_text(json.dumps({"machines": [{"name": "m", "capacity": {"cpu": 1}}], "workflows": workflows}))
    code, out, err = run("solve", str(path), "--json")
    assert code == 0
    assert len(out.splitlines()) == 3
    assert err.count("does not limit gpu") == 1


@pytest.mark.parametrize(
    "args",
    [
        ["--time-limit", "0"],
        ["--time-limit", "-5"],
        ["--workers", "0"],
        ["--jobs", "0"],
        ["--gap-limit", "1"],
        ["--backend", "gurobi"],
        ["--resume"],
        ["--fresh"],
        ["--resume", "--fresh", "-o", "x.jsonl"],
    ],
)
def test_usage_errors_exit_2(args: list[str]) -> None:
    code, _, _ = run("solve", "bundled:refund", *args)
    assert code == 2


def test_milp_refusal_is_an_error_record(tmp_path: Path) -> None:
    out, path = tmp_path / "refs.jsonl", tmp_path / "long.json"
    tasks = [{"id": f"t{i}", "duration": 1000 + i % 2, "demand": {"cpu": 1}} for i in range(21)]
    path.write_text(
        json.dumps(
            {"machines": [{"name": "m", "capacity": {"cpu": 2}}], "workflows": [{"id": "w", "tasks": tasks}]}
        )
    )
    code, _, err = run("solve", str(path), "--backend", "milp", "-o", str(out))
    assert code == 1 and err.count("Error:") == 1 and "horizon × tasks" in err
    (record,) = records(out)
    assert record.status == "error" and record.solver == "milp"


def test_resume_skips_finished_pairs_and_drops_a_torn_line(tmp_path: Path) -> None:
    out = tmp_path / "refs.jsonl"
    code, _, _ = run("solve", *map(str, EASY[:2]), "-o", str(out))
    assert code == 0
    first = records(out)
    with out.open("a") as handle:
        handle.write('{"workflow": "j301_3", "mach')  # an interrupted write
    code, _, err = run("solve", *map(str, EASY), "-o", str(out))
    assert code == 0, err
    assert "2 records already" in err and "incomplete last record" in err
    found = records(out)
    assert found[:2] == first
    assert sorted(r.workflow for r in found) == [p.stem for p in EASY]


def test_interrupt_keeps_finished_records_and_says_how_to_resume(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    out = tmp_path / "refs.jsonl"
    write = solves.Sink.write
    calls = []

    def interrupted(self: solves.Sink, job: solves.SolveItem, result: SolveResult) -> None:
        write(self, job, result)
        calls.append(result)
        if len(calls) == 2:
            raise KeyboardInterrupt

    assert run("solve", "bundled:refund", "-o", str(out))[0] == 0
    before = out.read_bytes()
    monkeypatch.setattr(solves.Sink, "write", interrupted)
    code, _, err = run("solve", *map(str, EASY), "--workers", "1", "-o", str(out))
    assert code == 130
    assert "2 finished records kept" in err and "refs.jsonl.partial" in err
    assert "run the same command again to resume" in err
    assert len(records(partial(out))) == 3  # refund's record carried over, and the two finished
    assert out.read_bytes() == before  # replaced only by a run that ends
    monkeypatch.undo()
    code, _, err = run("solve", *map(str, EASY), "--workers", "1", "-o", str(out))
    assert code == 0 and "3 records already" in err, err  # the side file's records, and refund
    assert sorted(r.workflow for r in records(out)) == sorted([p.stem for p in EASY] + ["refund"])
    assert not partial(out).exists()


@pytest.mark.slow
def test_ctrl_c_stops_a_long_solve_promptly(tmp_path: Path) -> None:
    out = tmp_path / "refs.jsonl"
    command = [sys.executable, "-m", "peakopt.cli", "solve", str(EASY[0]), str(J30 / "j3029_3.sm")]
    command += ["--time-limit", "120", "--workers", "1", "-o", str(out)]
    process = subprocess.Popen(command, stderr=subprocess.PIPE, text=True)
    deadline = time.monotonic() + 60
    side = partial(out)
    while time.monotonic() < deadline and not (side.exists() and side.read_text().count("\n") >= 1):
        time.sleep(0.1)
    os.kill(process.pid, signal.SIGINT)
    _, err = process.communicate(timeout=20)
    assert process.returncode == 130, err
    assert "run the same command again to resume" in err and "Traceback" not in err
    assert [r.workflow for r in records(side)] == ["j301_1"]
    assert not out.exists()


def test_long_solve_shows_its_incumbent_and_bound(monkeypatch: pytest.MonkeyPatch) -> None:
    from rich.console import Console
    from rich.progress import Progress

    suite = load("bundled:refund")
    job = solves.SolveItem(0, suite.workflows[0], suite.machines[0], {})
    monkeypatch.setattr(solve_cli, "LONG_SOLVE", -1.0)
    bar = Progress(console=Console(quiet=True))
    task = bar.add_task("", total=1)
    solve_cli._show_long([(0, 12.0, 7.0), (0, 9.5, 8.1)], {0: job}, {}, bar, task)
    assert bar.tasks[0].description == "refund × worker: makespan 9.5, bound 8.1"


def test_two_machines_and_two_workflows_give_four_records(tmp_path: Path) -> None:
    # job indexes were duplicated whenever a workflow had an even number of machines (a KeyError)
    path = tmp_path / "suite.json"
    task = {"id": "a", "duration": 1, "demand": {"cpu": 1}}
    machines = [{"name": "one", "capacity": {"cpu": 1}}, {"name": "two", "capacity": {"cpu": 2}}]
    workflows = [{"id": f"w{i}", "tasks": [task]} for i in range(2)]
    path.write_text(json.dumps({"machines": machines, "workflows": workflows}))
    code, out, err = run("solve", str(path), "--json", "--time-limit", "5", "--workers", "1")
    assert code == 0, err
    pairs = sorted((r["workflow"], r["machine"]) for r in map(json.loads, out.splitlines()))
    assert pairs == [("w0", "one"), ("w0", "two"), ("w1", "one"), ("w1", "two")]


def test_one_solve_is_counted_in_the_singular_and_resuming_is_no_warning(tmp_path: Path) -> None:
    out = tmp_path / "refs.jsonl"
    code, _, err = run("solve", str(EASY[0]), "-o", str(out))
    assert code == 0, err
    assert "1 solve in " in err and "1 solves" not in err
    code, _, err = run("solve", *map(str, EASY[:2]), "-o", str(out))
    assert code == 0, err
    assert "resuming: 1 record already in" in err and ", 1 solve to go" in err
    assert "Warning" not in err
