"""JSON Lines files of references, schedules, responses and predictions."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from peakopt.instances import InputError
from peakopt.instances.records import (
    Record,
    append_jsonl,
    read_records,
    read_references,
    reference_lines,
    reference_record,
    response_record,
    schedule_record,
    write_jsonl,
    write_references,
)
from peakopt.models import Schedule, SolveResult

RESULT = SolveResult(
    workflow="refund",
    machine="worker",
    status="optimal",
    makespan=8.6,
    lower_bound=8.6,
    starts={"lookup_order": 0.0, "decide": 8.0},
    solver="cpsat",
    params={"workers": 2},
    seconds=0.25,
    tick=0.1,
)


def test_reference_round_trip(tmp_path: Path) -> None:
    path = tmp_path / "refs.jsonl"
    write_references(path, [RESULT, RESULT.model_copy(update={"machine": "big", "status": "feasible"})])
    lines = path.read_text().splitlines()
    assert json.loads(lines[0]) == RESULT.model_dump(mode="json") == reference_record(RESULT)
    assert set(json.loads(lines[0])) == {
        "workflow",
        "machine",
        "status",
        "makespan",
        "lower_bound",
        "starts",
        "cva_floor",
        "solver",
        "params",
        "seconds",
        "exact",
        "tick",
        "message",
        "workflow_hash",
        "machine_hash",
        "edges",
    }
    assert read_references(path)[0] == RESULT
    assert read_references(path)[1].status == "feasible"


def test_bad_reference_line_names_the_line(tmp_path: Path) -> None:
    path = tmp_path / "refs.jsonl"
    path.write_text(json.dumps(reference_record(RESULT)) + "\n\n" + '{"workflow": "w", "status": "great"}\n')
    with pytest.raises(InputError, match=r"refs.jsonl: line 3 status: input should be"):
        read_references(path)
    path.write_text("{oops\n")
    with pytest.raises(InputError, match="line 1: not valid JSON"):
        read_references(path)
    with pytest.raises(InputError, match="no such file"):
        read_references(tmp_path / "missing.jsonl")


def test_reference_lines_carry_their_numbers(tmp_path: Path) -> None:
    path = tmp_path / "refs.jsonl"
    path.write_text(
        "\n" + json.dumps(reference_record(RESULT)) + "\n\n" + json.dumps(reference_record(RESULT))
    )
    assert [n for n, _ in reference_lines(path)] == [2, 4]


def test_an_old_reference_without_hashes_is_read() -> None:
    old = {k: v for k, v in reference_record(RESULT).items() if not k.endswith("_hash")}
    result = SolveResult.model_validate(old)
    assert result.workflow_hash is None and result.machine_hash is None


def test_records_keep_bad_lines(tmp_path: Path) -> None:
    path = tmp_path / "answers.jsonl"
    path.write_text('{"workflow": "w", "starts": {}}\n\nnot json\n[1, 2]\n{"workflow": "v"}\n')
    records = read_records(path)
    assert [r.line for r in records] == [1, 3, 4, 5]
    assert records[0] == Record(1, {"workflow": "w", "starts": {}})
    assert records[1].data is None and records[1].error is not None
    # the record carries its line; the error does not repeat it
    assert records[1].error.startswith("not valid JSON")
    assert records[2].error == "not a JSON object (list)"


def test_records_from_a_json_array(tmp_path: Path) -> None:
    path = tmp_path / "answers.json"
    path.write_text('[{"workflow": "w"}, 3]')
    first, second = read_records(path)
    assert first == Record(1, {"workflow": "w"})
    assert second.error == "not a JSON object (int)"


def test_empty_records_file_is_an_error(tmp_path: Path) -> None:
    path = tmp_path / "empty.jsonl"
    path.write_text("\n")
    with pytest.raises(InputError, match="file is empty"):
        read_records(path)


def test_writers(tmp_path: Path) -> None:
    path = tmp_path / "out.jsonl"
    schedule = Schedule(workflow="w", machine="m", starts={"a": 1.0}, source="asap")
    write_jsonl(path, [schedule_record(schedule)])
    append_jsonl(path, response_record("w", "m", "gpt", "{}"))
    first, second = (json.loads(line) for line in path.read_text().splitlines())
    assert first == {"workflow": "w", "machine": "m", "source": "asap", "starts": {"a": 1.0}}
    assert second == {"workflow": "w", "machine": "m", "source": "gpt", "response": "{}"}


def test_deeply_nested_line_is_a_bad_record(tmp_path: Path) -> None:
    path = tmp_path / "deep.jsonl"
    path.write_text("[" * 100_000 + "]" * 100_000 + "\n")
    (record,) = read_records(path)
    assert record.error == "JSON nested too deeply (more than 100 levels)"


def test_pretty_printed_records_are_read_in_turn(tmp_path: Path) -> None:
    first = {"workflow": "w", "starts": {"a": 0, "b": 2}}
    second = {"workflow": "w", "response": "a at 0\nb at 2"}
    path = tmp_path / "answers.jsonl"
    path.write_text(json.dumps(first, indent=2) + "\n" + json.dumps(second, indent=2) + "\n")
    assert read_records(path) == [Record(1, first), Record(8, second)]


def test_references_name_the_line_once(tmp_path: Path) -> None:
    path = tmp_path / "refs.jsonl"
    good = json.dumps(reference_record(RESULT))
    for bad, rule in (("{oops", "not valid JSON"), ("[" * 50_000 + "]" * 50_000, "JSON nested too deeply")):
        path.write_text(good + "\n" + bad + "\n")
        with pytest.raises(InputError) as caught:
            read_references(path)
        assert str(caught.value).startswith(f"{path}: line 2: {rule}")
        assert len(re.findall(r"\bline \d", str(caught.value))) == 1
