"""Every kind of bad input: one Error: line naming the file, the item and the rule; exit 1."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import pytest
from click.testing import CliRunner
from paths import J30, PATTERSON

from peakopt.cli.main import cli
from peakopt.instances import InputError, load


def workflow(**task_b: object) -> str:
    task = {"id": "b", "duration": 1, "depends_on": ["a"], **task_b}
    return json.dumps({"id": "w", "tasks": [{"id": "a", "duration": 2, "demand": {"cpu": 1}}, task]})


def truncated_sm(path: Path) -> None:
    text = (J30 / "j301_1.sm").read_text()
    path.write_text(text[: len(text) // 2])


def patterson_wrong_count(path: Path, count: int) -> None:
    lines = (PATTERSON / "pat1.rcp").read_text().splitlines()
    lines[0] = lines[0].replace("14", str(count), 1)
    path.write_text("\n".join(lines) + "\n")


Writer = Callable[[Path], object]

# name, file name, how to write it, expected item, expected rule
CASES: list[tuple[str, str, Writer | None, str, str]] = [
    ("missing file", "absent.json", None, "", "no such file"),
    ("directory", "adir", lambda p: p.mkdir(), "", "is a directory"),
    ("empty file", "empty.json", lambda p: p.write_text(""), "", "file is empty"),
    ("blank file", "blank.json", lambda p: p.write_text("  \n\n"), "", "file is empty"),
    ("not JSON", "bad.json", lambda p: p.write_text("{'id': w,"), "", "not valid JSON"),
    (
        "binary garbage",
        "blob.json",
        lambda p: p.write_bytes(b"\x89PNG\r\n\x1a\n\x00\xff\xfe"),
        "",
        "not UTF-8",
    ),
    ("wrong shape", "shape.json", lambda p: p.write_text('{"hello": 1}'), "", "JSON of the wrong shape"),
    ("scalar JSON", "num.json", lambda p: p.write_text("42"), "", "JSON of the wrong shape"),
    (
        "unknown key",
        "key.json",
        lambda p: p.write_text(workflow(durration=3)),
        "task 'b'",
        "unknown key 'durration'",
    ),
    (
        "duplicate id",
        "dup.json",
        lambda p: p.write_text(workflow(id="a", depends_on=[])),
        "",
        "duplicate task id 'a'",
    ),
    (
        "unknown dependency",
        "dep.json",
        lambda p: p.write_text(workflow(depends_on=["zz"])),
        "",
        "task 'b' depends on unknown task 'zz'",
    ),
    (
        "cycle",
        "cycle.json",
        lambda p: p.write_text(
            json.dumps(
                {
                    "id": "w",
                    "tasks": [
                        {"id": "a", "duration": 1, "depends_on": ["c"]},
                        {"id": "b", "duration": 1, "depends_on": ["a"]},
                        {"id": "c", "duration": 1, "depends_on": ["b"]},
                    ],
                }
            )
        ),
        "workflow 'w'",
        "dependency cycle a -> b -> c -> a",
    ),
    (
        "negative duration",
        "neg.json",
        lambda p: p.write_text(workflow(duration=-1)),
        "task 'b' duration",
        ">= 0",
    ),
    (
        "NaN duration",
        "nan.json",
        lambda p: p.write_text(workflow(duration=float("nan"))),
        "task 'b' duration",
        "finite",
    ),
    (
        "infinite duration",
        "inf.json",
        lambda p: p.write_text(workflow(duration=1e999)),
        "task 'b' duration",
        "finite",
    ),
    (
        "negative demand",
        "negd.json",
        lambda p: p.write_text(workflow(demand={"cpu": -2})),
        "task 'b' demand cpu",
        ">= 0",
    ),
    (
        "NaN demand",
        "nand.json",
        lambda p: p.write_text(workflow(demand={"cpu": float("nan")})),
        "task 'b' demand cpu",
        "finite",
    ),
    (
        "zero capacity",
        "cap0.json",
        lambda p: p.write_text(
            json.dumps(
                {"machines": [{"name": "m", "capacity": {"cpu": 0}}], "workflows": [json.loads(workflow())]}
            )
        ),
        "machine 'm' capacity cpu",
        "> 0",
    ),
    (
        "negative capacity",
        "capn.json",
        lambda p: p.write_text(
            json.dumps(
                {"machines": [{"name": "m", "capacity": {"cpu": -4}}], "workflows": [json.loads(workflow())]}
            )
        ),
        "machine 'm' capacity cpu",
        "> 0",
    ),
    ("no tasks", "none.json", lambda p: p.write_text('{"id": "w", "tasks": []}'), "tasks", "at least 1 item"),
    ("truncated PSPLIB", "trunc.sm", truncated_sm, "", "truncated or malformed PSPLIB file"),
    ("Patterson, too many jobs", "more.rcp", lambda p: patterson_wrong_count(p, 15), "jobs", "declared jobs"),
    (
        "Patterson, too few jobs",
        "less.rcp",
        lambda p: patterson_wrong_count(p, 12),
        "jobs",
        "header declares 12 jobs",
    ),
    (
        "JSON Lines, bad line",
        "bad.jsonl",
        lambda p: p.write_text(workflow() + "\n" + workflow(duration=-1).replace('"w"', '"w2"') + "\n"),
        "line 2 workflow 'w2' task 'b' duration",
        ">= 0",
    ),
    (
        "PeakBench context without costs",
        "ctx.json",
        lambda p: p.write_text(json.dumps({"steps": ["a"], "resource_costs": {"steps": {}}, "machine": {}})),
        "step 'a'",
        "no entry in resource_costs.steps",
    ),
]


def _friendly(rule: str) -> str:
    return rule.replace(">= 0", "greater than or equal to 0").replace("> 0", "greater than 0")


@pytest.mark.parametrize(("name", "filename", "write", "item", "rule"), CASES, ids=[c[0] for c in CASES])
def test_library_raises_input_error(
    tmp_path: Path, name: str, filename: str, write: Writer | None, item: str, rule: str
) -> None:
    path = tmp_path / filename
    if write is not None:
        write(path)
    with pytest.raises(InputError) as caught:
        load(path)
    error = caught.value
    assert error.source == str(path)
    assert item in error.item
    assert _friendly(rule) in error.rule
    assert "\n" not in str(error)


@pytest.mark.parametrize(("name", "filename", "write", "item", "rule"), CASES, ids=[c[0] for c in CASES])
@pytest.mark.parametrize("command", ["validate", "convert"])
def test_cli_prints_one_error_line(
    tmp_path: Path, name: str, filename: str, write: Writer | None, item: str, rule: str, command: str
) -> None:
    path = tmp_path / filename
    if write is not None:
        write(path)
    out = tmp_path / "out.json"
    out.write_text("precious")
    args = [command, str(path)] + (["-o", str(out)] if command == "convert" else [])
    result = CliRunner().invoke(cli, args)
    assert result.exit_code == 1, result.output
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1, result.stderr
    assert lines[0].startswith(f"Error: {path}")
    assert _friendly(rule) in lines[0]
    assert "Traceback" not in result.output
    assert out.read_text() == "precious"  # nothing already written is lost


# --- files that `score`, `report` and the other commands read beside the inputs ---

SAFE_STARTS = {"lookup_order": 0, "fraud_score": 0, "history_scan": 4.8, "policy_search": 0, "decide": 8.0}


def reference(**update: object) -> str:
    line = {"workflow": "refund", "machine": "worker", "status": "optimal", "makespan": 8.6}
    return json.dumps(line | {"lower_bound": 8.6, "starts": SAFE_STARTS} | update) + "\n"


def plan_row(path: Path) -> None:
    path.write_text(json.dumps({"workflow": "refund", "valid": True, "edge_f1": 1.0, "ged": 0}) + "\n")


# name, command (the bad file is its last argument), how to write it, the line, the rule
SIDE_CASES: list[tuple[str, list[str], Writer, int, str]] = [
    ("reference not a result", ["score", "-r"], lambda p: p.write_text('{"status": 1}\n'), 1, "workflow"),
    ("bound above makespan", ["score", "-r"], lambda p: p.write_text(reference(lower_bound=9)), 1, "above"),
    (
        "optimal without a proof",
        ["score", "-r"],
        lambda p: p.write_text(reference() + reference(lower_bound=8.0)),
        2,
        "status 'optimal' but lower_bound 8 is not the makespan 8.6",
    ),
    (
        "makespan its starts do not give",
        ["score", "-r"],
        lambda p: p.write_text(reference(makespan=8.0, lower_bound=8.0)),
        1,
        "makespan 8, but its starts give 8.6",
    ),
    (
        "reference of another workflow under the same id",
        ["plot", "--optimal", "--output", "x.png", "--reference"],
        lambda p: p.write_text(reference(workflow_hash="0" * 32)),
        1,
        "solved for a different workflow under the same name",
    ),
    (
        "a task without a start",
        ["stress", "-m", "serial", "--db", "r.sqlite", "-r"],
        lambda p: p.write_text(reference(starts={"decide": 8.0})),
        1,
        "task 'lookup_order' has no start",
    ),
    ("plan-score file given to report", ["report"], plan_row, 1, "is a planning score"),
]


@pytest.mark.parametrize(
    ("name", "command", "write", "line", "rule"), SIDE_CASES, ids=[c[0] for c in SIDE_CASES]
)
def test_side_files_give_one_error_line(
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    name: str,
    command: list[str],
    write: Writer,
    line: int,
    rule: str,
) -> None:
    monkeypatch.chdir(tmp_path)
    path = tmp_path / "side.jsonl"
    write(path)
    answers = tmp_path / "answers.jsonl"
    answers.write_text(json.dumps({"workflow": "refund", "starts": SAFE_STARTS}) + "\n")
    inputs = [] if command == ["report"] else ["bundled:refund", "--machine", "worker"]
    if command[0] == "score":
        inputs = ["bundled:refund", "-s", str(answers)]
    result = CliRunner().invoke(cli, [command[0], *inputs, *command[1:], str(path)])
    assert result.exit_code == 1, result.output
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and "Traceback" not in result.output, result.stderr
    assert lines[0].startswith(f"Error: {path}: line {line}")
    assert rule in lines[0]
