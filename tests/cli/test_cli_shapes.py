"""Every command that reads suites, over suite shapes: 1–4 machines × 1–5 workflows, in one or
several files, with or without ``--machine`` (repeated, by name or by file).

Each command must write exactly one record per workflow × machine (× method), and every schedule
must be valid in the oracle's eyes. (``peakopt solve`` once crashed whenever a workflow had an even
number of machines: job indexes came out duplicated.)
"""

from __future__ import annotations

import json
import tempfile
from collections import Counter
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from cli_helpers import jsonl as records
from click.testing import CliRunner
from hypothesis import given, settings
from hypothesis import strategies as st

from peakopt.campaign.store import read_score_rows
from peakopt.cli.main import cli
from peakopt.instances import load
from peakopt.models import Machine, Schedule, SolveResult, Workflow
from peakopt.oracle import evaluate


@dataclass(frozen=True)
class Shape:
    """A suite spread over files, and the ``--machine`` options that pick machines from it."""

    machines: list[dict[str, Any]]
    workflows: list[dict[str, Any]]
    files: list[list[int]]  # workflow indexes per file (every file holds every machine)
    picked: list[str]  # names of the --machine options; empty: each file's own machines
    by_file: list[bool]  # each picked machine given as a machine file rather than by name

    @property
    def chosen(self) -> list[str]:
        return self.picked or [m["name"] for m in self.machines]

    def pairs(self, methods: int = 1) -> Counter[tuple[str, str]]:
        """One record per workflow × chosen machine (× method)."""
        return Counter({(w["id"], m): methods for w in self.workflows for m in self.chosen})

    def write(self, folder: Path, names_only: bool = False) -> list[str]:
        """The suite files, then the --machine options; the command-line arguments."""
        args = []
        for k, members in enumerate(self.files):
            path = folder / f"part{k}.json"
            workflows = [self.workflows[i] for i in members]
            path.write_text(json.dumps({"machines": self.machines, "workflows": workflows}))
            args.append(str(path))
        for name, as_file in zip(self.picked, self.by_file, strict=True):
            if as_file and not names_only:
                path = folder / f"{name}.machine.json"
                path.write_text(json.dumps(next(m for m in self.machines if m["name"] == name)))
                args += ["--machine", str(path)]
            else:
                args += ["--machine", name]
        return args

    def workflow(self, workflow_id: str) -> Workflow:
        return Workflow.model_validate(next(w for w in self.workflows if w["id"] == workflow_id))

    def machine(self, name: str) -> Machine:
        return Machine.model_validate(next(m for m in self.machines if m["name"] == name))


@st.composite
def tasks(draw: st.DrawFn) -> list[dict[str, Any]]:
    """One to three small steps, some depending on earlier ones."""
    count = draw(st.integers(1, 3))
    return [
        {
            "id": f"t{i}",
            "duration": draw(st.integers(0, 3)),
            "demand": {"cpu": draw(st.integers(0, 2))},
            "depends_on": [f"t{j}" for j in range(i) if draw(st.booleans())],
        }
        for i in range(count)
    ]


@st.composite
def shapes(draw: st.DrawFn) -> Shape:
    machines: list[dict[str, Any]] = [
        {"name": f"m{i}", "capacity": {"cpu": draw(st.integers(1, 4))}}
        for i in range(draw(st.integers(1, 4)))
    ]
    workflows = [{"id": f"w{i}", "tasks": draw(tasks())} for i in range(draw(st.integers(1, 5)))]
    count = draw(st.integers(1, len(workflows)))
    # each workflow goes to one file; every file gets at least one
    owners = list(range(count)) + [draw(st.integers(0, count - 1)) for _ in workflows[count:]]
    owners = draw(st.permutations(owners))
    files = [[i for i, owner in enumerate(owners) if owner == k] for k in range(count)]
    names = [m["name"] for m in machines]
    picked = draw(st.one_of(st.just([]), st.lists(st.sampled_from(names), min_size=1, unique=True)))
    by_file = [draw(st.booleans()) for _ in picked]
    return Shape(machines, workflows, files, picked, by_file)


def run(*args: str) -> tuple[int, str, str]:
    result = CliRunner().invoke(cli, list(args))
    assert result.exception is None or isinstance(result.exception, SystemExit), result.exception
    return result.exit_code, result.stdout, result.stderr


def valid(shape: Shape, record: dict[str, Any]) -> bool:
    """The oracle's verdict on a record's starts: dependencies hold, no avoidable overload."""
    schedule = Schedule(workflow=record["workflow"], machine=record["machine"], starts=record["starts"])
    score = evaluate(shape.workflow(record["workflow"]), shape.machine(record["machine"]), schedule)
    return score.valid and score.safe


@pytest.mark.slow
@settings(max_examples=12)
@given(shapes())
def test_solve_writes_one_valid_optimum_per_workflow_and_machine(shape: Shape) -> None:
    with tempfile.TemporaryDirectory() as folder:
        code, out, err = run(
            "solve", *shape.write(Path(folder)), "--json", "--time-limit", "5", "--workers", "1"
        )
    assert code == 0, err
    found = records(out)
    assert Counter((r["workflow"], r["machine"]) for r in found) == shape.pairs()
    for record in found:
        assert SolveResult.model_validate(record).status == "optimal"
        assert valid(shape, record)


@pytest.mark.slow
@settings(max_examples=25)
@given(shapes())
def test_schedule_and_score_give_one_valid_record_per_pair_and_method(shape: Shape) -> None:
    with tempfile.TemporaryDirectory() as name:
        folder = Path(name)
        args = shape.write(folder)
        code, out, err = run("schedule", *args, "-m", "serial,admission", "--json")
        assert code == 0, err
        found = records(out)
        assert Counter((r["workflow"], r["machine"]) for r in found) == shape.pairs(methods=2)
        assert all(valid(shape, r) for r in found)
        answers = folder / "answers.jsonl"
        answers.write_text(out)
        suites = [a for a in args if a.startswith(str(folder / "part"))]
        code, out, err = run("score", *suites, "-s", str(answers), "--json")
    assert code == 0, err
    rows = records(out)
    assert len(rows) == len(found) and all(row["valid"] and row["safe"] for row in rows)


@pytest.mark.slow
@settings(max_examples=6)
@given(shapes())
def test_stress_stores_one_row_per_pair_and_method(shape: Shape) -> None:
    with tempfile.TemporaryDirectory() as name:
        db = Path(name) / "r.sqlite"
        args = [*shape.write(Path(name)), "-m", "serial,admission", "--db", str(db)]
        code, _, err = run("stress", *args, "--time-limit", "5", "--jobs", "1")
        assert code == 0, err
        rows = read_score_rows(db)
    assert Counter((r.workflow, r.machine) for r in rows) == shape.pairs(methods=2)
    assert all(r.valid and r.safe for r in rows)  # a failed run is an invalid row


@pytest.mark.slow
@settings(max_examples=25)
@given(shapes())
def test_prompt_validate_and_convert_see_every_workflow_and_machine(shape: Shape) -> None:
    with tempfile.TemporaryDirectory() as name:
        folder = Path(name)
        args = shape.write(folder, names_only=True)
        suites = [a for a in args if a.startswith(str(folder / "part"))]
        code, out, err = run("prompt", *args)
        assert code == 0, err
        assert Counter((r["workflow"], r["machine"]) for r in records(out)) == shape.pairs()
        code, out, err = run("validate", *suites, "--json")
        assert code == 0, err
        assert sum(r["workflows"] for r in records(out)) == len(shape.workflows)
        if len(suites) == 1:
            target = folder / "converted.json"
            assert run("convert", suites[0], "-o", str(target))[0] == 0
            converted = load(target)
            assert sorted(w.id for w in converted.workflows) == sorted(w["id"] for w in shape.workflows)
            assert sorted(m.name for m in converted.machines) == sorted(m["name"] for m in shape.machines)


@pytest.mark.slow
@settings(max_examples=6)
@given(shapes())
def test_plot_draws_any_workflow_on_any_machine(shape: Shape) -> None:
    with tempfile.TemporaryDirectory() as name:
        folder = Path(name)
        args = [a for a in shape.write(folder) if not a.startswith("--machine")]
        suites = [a for a in args if a.startswith(str(folder / "part"))]
        target = folder / "plot.png"
        workflow, machine = shape.workflows[-1]["id"], shape.chosen[-1]
        code, _, err = run(
            "plot",
            *suites,
            "--workflow",
            workflow,
            "--machine",
            machine,
            "--method",
            "serial",
            "-o",
            str(target),
        )
        assert code == 0, err
        assert target.read_bytes().startswith(b"\x89PNG")
