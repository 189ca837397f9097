"""peakopt solve --robust through the command line: records with edges, resuming never mixes kinds."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from cli_helpers import run

from peakopt.instances import load
from peakopt.models import SolveResult
from peakopt.oracle.uncertain.flows import pos_earliest_starts, pos_safe

#: A start-up spike (2 cpu for 1 s, then 1 cpu for 3 s) and a 1-cpu step on a 2-cpu machine.
SUITE = {
    "machines": [{"name": "m", "capacity": {"cpu": 2}}],
    "workflows": [
        {
            "id": "spike",
            "tasks": [
                {
                    "id": "s",
                    "profile": [{"duration": 1, "demand": {"cpu": 2}}, {"duration": 3, "demand": {"cpu": 1}}],
                },
                {"id": "t", "duration": 1, "demand": {"cpu": 1}},
            ],
        }
    ],
}


def suite(tmp_path: Path) -> Path:
    path = tmp_path / "suite.json"
    path.write_text(json.dumps(SUITE))
    return path


def records(path: Path) -> list[SolveResult]:
    return [SolveResult.model_validate_json(line) for line in path.read_text().splitlines()]


def test_robust_records_carry_their_edges_and_are_safe_partial_orders(tmp_path: Path) -> None:
    path = suite(tmp_path)
    code, out, _ = run("solve", str(path), "--robust", "--json", "-q")
    assert code == 0
    (record,) = [SolveResult.model_validate_json(line) for line in out.splitlines()]
    assert (record.status, record.makespan, record.params["robust"]) == ("optimal", 5, "nominal")
    (workflow,), machines = load(path).workflows, load(path).machines
    assert record.edges and pos_safe(workflow, machines[0], record.edges)
    assert record.starts == pos_earliest_starts(workflow, record.edges)
    code, out, _ = run("solve", str(path), "--json", "-q")
    plain = SolveResult.model_validate_json(out)
    assert (plain.makespan, plain.edges, "robust" in plain.params) == (4, (), False)


def test_resuming_never_mixes_plain_and_robust_records(tmp_path: Path) -> None:
    path, refs = suite(tmp_path), tmp_path / "refs.jsonl"
    assert run("solve", str(path), "-o", str(refs), "-q")[0] == 0
    before = refs.read_text()
    code, _, err = run("solve", str(path), "--robust", "-o", str(refs), "-q")
    assert code == 1
    assert err.count("Error:") == 1 and "Traceback" not in err
    assert f"-o {refs}: holds plain references (e.g. spike × m)" in err
    assert "writes robust (nominal) references" in err and "--fresh" in err
    assert refs.read_text() == before  # nothing written is lost
    code, _, err = run("solve", str(path), "--robust", "-o", str(refs), "--fresh", "-q")
    assert code == 0
    (record,) = records(refs)
    assert record.params["robust"] == "nominal" and record.edges
    # the same kind again resumes: nothing to solve
    code, _, err = run("solve", str(path), "--robust", "-o", str(refs))
    assert code == 0 and "0 solves to go" in err
    assert records(refs) == [record]
    code, _, err = run("solve", str(path), "-o", str(refs), "-q")
    assert code == 1 and "holds robust (nominal) references" in err and "writes plain references" in err


def test_expected_references_carry_their_estimate(tmp_path: Path) -> None:
    path = suite(tmp_path)
    code, out, _ = run(
        "solve", str(path), "--robust", "expected", "--noise", "0.2", "--samples", "20", "--json", "-q"
    )
    assert code == 0
    record = SolveResult.model_validate_json(out)
    params = record.params
    assert (params["robust"], params["samples"], params["noise"]) == ("expected", 20, [0.2, 0.0])
    assert params["expected_makespan"] > 0 and params["overflow_probability"] == 0
    assert record.makespan == 5 and record.edges


@pytest.mark.parametrize("option", [["--samples", "5"], ["--noise", "0.1"], ["--noise-demand", "0.1"]])
def test_sampling_options_without_robust_are_usage_errors(tmp_path: Path, option: list[str]) -> None:
    code, _, err = run("solve", str(suite(tmp_path)), *option)
    assert code == 2
    assert f"Error: {option[0]} needs --robust" in err
