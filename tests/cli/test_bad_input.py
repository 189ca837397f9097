"""Every kind of bad input: one Error: line naming the file, the item and the rule; exit 1."""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner
from hypothesis import given
from hypothesis import strategies as st
from paths import J30, PATTERSON

from peakopt.cli.main import cli
from peakopt.instances import InputError, load, parse_text


def workflow(**task_b: object) -> str:
    task = {"id": "b", "duration": 1, "depends_on": ["a"], **task_b}
    return json.dumps({"id": "w", "tasks": [{"id": "a", "duration": 2, "demand": {"cpu": 1}}, task]})


def suite(**capacity: object) -> str:
    return json.dumps(
        {"machines": [{"name": "m", "capacity": capacity}], "workflows": [json.loads(workflow())]}
    )


def nested(depth: int) -> str:
    return "[" * depth + "]" * depth


def deep_meta(depth: int) -> str:
    return '{"id": "w", "meta": {"x": ' + nested(depth) + '}, "tasks": [{"id": "a", "duration": 1}]}'


def template_context() -> dict[str, Any]:
    """A PeakBench context as the paper's template writes it."""
    return {
        "steps": {"a": "orders.get_order(id)", "b": "risk.score(order)"},
        "dependency_structure": {"b": ["a"]},
        "machine": {"cpu_capacity": "4", "memory_mb_capacity": 8192},
        "resource_costs": {
            "steps": {
                "a": {"duration_s": "1.5", "cpu_peak_cores": 1, "memory_mb": 100},
                "b": {"duration_s": 2, "cpu_peak_cores": "0.5", "memory_mb": 200},
            }
        },
        "task": "descriptive",
    }


def context(change: Callable[[dict[str, Any]], object] | None = None) -> Writer:
    """A writer of the template context, changed by ``change``."""

    def write(path: Path) -> None:
        data = template_context()
        if change is not None:
            change(data)
        path.write_text(json.dumps(data))

    return write


def costs(step: str, **fields: object) -> Callable[[dict[str, Any]], object]:
    return lambda data: data["resource_costs"]["steps"][step].update(fields)


def machine(**fields: object) -> Callable[[dict[str, Any]], object]:
    return lambda data: data["machine"].update(fields)


def sm_changed(old: str, new: str) -> Writer:
    return lambda path: path.write_text((J30 / "j301_1.sm").read_text().replace(old, new, 1))


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
    # the commands read the input files of a directory; this one has none
    ("directory", "adir", lambda p: p.mkdir(), "", "is a directory"),
    ("symlink loop", "loop.json", lambda p: p.symlink_to(p), "", "is a symlink loop"),
    (
        "broken symlink",
        "link.json",
        lambda p: p.symlink_to(p.parent / "gone.json"),
        "",
        "is a broken symlink",
    ),
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
    ("nested too deeply", "deep.json", lambda p: p.write_text(deep_meta(150)), "", "JSON nested too deeply"),
    (
        "nested past the recursion limit",
        "deeper.json",
        lambda p: p.write_text(deep_meta(100_000)),
        "",
        "JSON nested too deeply",
    ),
    (
        "JSON Lines, a line nested too deeply",
        "deep.jsonl",
        lambda p: p.write_text(workflow() + "\n" + deep_meta(5000) + "\n"),
        "line 2",
        "JSON nested too deeply",
    ),
    (
        "concatenated documents, the second broken",
        "two.json",
        lambda p: p.write_text(json.dumps(json.loads(workflow()), indent=2) + '\n{\n  "id": "w2",\n}\n'),
        "line 20",
        "not valid JSON",
    ),
    (
        "concatenated documents, the second wrong",
        "two-bad.json",
        lambda p: p.write_text(json.dumps(json.loads(workflow()), indent=2) + workflow(duration=-1)),
        "line 19 workflow 'w' task 'b' duration",
        ">= 0",
    ),
    (
        "true as a duration",
        "true.json",
        lambda p: p.write_text(workflow(duration=True)),
        "task 'b' duration",
        "must be a JSON number, got true",
    ),
    (
        "quoted duration",
        "q.json",
        lambda p: p.write_text(workflow(duration="1.5")),
        "task 'b' duration",
        'must be a JSON number, got "1.5"',
    ),
    (
        "quoted demand",
        "qd.json",
        lambda p: p.write_text(workflow(demand={"cpu": "2"})),
        "task 'b' demand cpu",
        "must be a JSON number",
    ),
    (
        "boolean capacity",
        "qc.json",
        lambda p: p.write_text(suite(cpu=True)),
        "machine 'm' capacity cpu",
        "must be a JSON number, got true",
    ),
    (
        "quoted capacity",
        "qc2.json",
        lambda p: p.write_text(suite(cpu="4")),
        "machine 'm' capacity cpu",
        "must be a JSON number",
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
        "PSPLIB header with more resources than the data",
        "res.sm",
        sm_changed("- renewable                 :  4", "- renewable                 :  5"),
        "resources",
        "header declares 5 renewable resources but RESOURCEAVAILABILITIES gives 4 capacities",
    ),
    (
        "PSPLIB request row short of a demand",
        "row.sm",
        sm_changed("  2      1     8       4    0    0    0", "  2      1     8       4    0    0"),
        "job 2",
        "its REQUESTS/DURATIONS row has 6 values, expected 7",
    ),
    (
        "PSPLIB capacities short of a resource",
        "cap.sm",
        sm_changed("AVAILABILITIES:\n  R 1  R 2  R 3  R 4", "AVAILABILITIES:\n  R 1  R 2  R 3"),
        "resources",
        "RESOURCEAVAILABILITIES names 3 resources but gives 4 capacities",
    ),
    (
        "PSPLIB nonrenewable resource",
        "nonren.sm",
        sm_changed("- nonrenewable              :  0", "- nonrenewable              :  2"),
        "resources",
        "declares 2 nonrenewable resource(s)",
    ),
    (
        "Patterson header with fewer resources than the capacities",
        "res.rcp",
        lambda p: p.write_text((PATTERSON / "pat1.rcp").read_text().replace("14\t3", "14\t2", 1)),
        "resources",
        "header declares 2 resources but the capacity line gives 3",
    ),
    (
        "PeakBench other_demand a list",
        "od.json",
        context(costs("a", other_demand=[1, 2])),
        "resource_costs.steps 'a' other_demand",
        "must map resource names to amounts",
    ),
    (
        "PeakBench other_demand a number",
        "od2.json",
        context(costs("a", other_demand=3)),
        "resource_costs.steps 'a' other_demand",
        "must map resource names to amounts",
    ),
    (
        "PeakBench other_demand not numeric",
        "od3.json",
        context(costs("a", other_demand={"gpu_mb": "lots"})),
        "resource_costs.steps 'a' other_demand 'gpu_mb'",
        "must be a number, got 'lots'",
    ),
    (
        "PeakBench other_demand naming cpu",
        "od4.json",
        context(costs("a", other_demand={"cpu": 2})),
        "other_demand 'cpu'",
        "own fields",
    ),
    (
        "PeakBench other_capacity a list",
        "oc.json",
        context(machine(other_capacity=["gpu_mb", 8000])),
        "machine other_capacity",
        "must map resource names to amounts",
    ),
    (
        "PeakBench other_capacity not numeric",
        "oc2.json",
        context(machine(other_capacity={"gpu_mb": None})),
        "machine other_capacity 'gpu_mb'",
        "must be a number, got None",
    ),
    (
        "PeakBench quoted duration not a number",
        "dur.json",
        context(costs("a", duration_s="1.5 s")),
        "resource_costs.steps 'a' duration_s",
        "must be a number, got '1.5 s'",
    ),
    (
        "PeakBench boolean capacity",
        "capb.json",
        context(machine(cpu_capacity=True)),
        "machine cpu_capacity",
        "must be a number, got True",
    ),
    (
        "PeakBench missing cpu_capacity",
        "nocpu.json",
        context(lambda d: d["machine"].pop("cpu_capacity")),
        "machine",
        "missing 'cpu_capacity'",
    ),
    (
        "PeakBench missing memory_mb_capacity",
        "nomem.json",
        context(lambda d: d["machine"].pop("memory_mb_capacity")),
        "machine",
        "missing 'memory_mb_capacity'",
    ),
    (
        "PeakBench dependency on an unknown step",
        "pred.json",
        context(lambda d: d["dependency_structure"].update(b=["a", "ghost"])),
        "dependency_structure 'b'",
        "names unknown step 'ghost' as a predecessor",
    ),
    (
        "PeakBench dependencies of an unknown step",
        "succ.json",
        context(lambda d: d["dependency_structure"].update(ghost=["a"])),
        "dependency_structure 'ghost'",
        "names unknown step 'ghost' as a successor",
    ),
    (
        "PeakBench edge to an unknown step",
        "edge.json",
        context(lambda d: d.update(dependency_structure=[["a", "b"], ["b", "ghost"]])),
        "dependency_structure edge ['b', 'ghost']",
        "names unknown step 'ghost' as a successor",
    ),
    (
        "PeakBench costs of an unknown step",
        "ghost.json",
        context(lambda d: d["resource_costs"]["steps"].update(ghost={"duration_s": 1})),
        "resource_costs.steps",
        "gives costs for unknown step 'ghost'",
    ),
    (
        "PeakBench misspelt cost field",
        "typo.json",
        context(costs("b", memory=300)),
        "resource_costs.steps 'b'",
        "unknown key 'memory'; did you mean 'memory_mb'?",
    ),
    (
        "PeakBench unknown block",
        "block.json",
        context(lambda d: d.update(dependencies={"b": ["a"]})),
        "context",
        "unknown key 'dependencies'",
    ),
    (
        "PeakBench step without an id",
        "noid.json",
        context(lambda d: d.update(steps=[{"id": "a"}, {"tool": "risk.score"}])),
        "steps #2",
        "has no id",
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


REFUND_STARTS = {
    "lookup_order": 0,
    "fraud_score": 0.3,
    "history_scan": 5.1,
    "policy_search": 0.3,
    "decide": 8.0,
}
GOOD_SCHEDULE = json.dumps({"workflow": "refund", "source": "me", "starts": REFUND_STARTS})


def _records(tmp_path: Path, name: str, *lines: str) -> str:
    path = tmp_path / name
    path.write_text("".join(line + "\n" for line in lines))
    return str(path)


# name, the command line (built in a folder), its exit code, what its output must say
LineCase = tuple[str, Callable[[Path], list[str]], int, str]
LINE_CASES: list[LineCase] = [
    (
        "reference file, torn line",
        lambda d: [
            "score",
            "bundled:refund",
            "--schedules",
            _records(d, "s.jsonl", GOOD_SCHEDULE),
            "-r",
            _records(d, "r.jsonl", '{"workflow": "refund", "status": "optimal"}', "{oops"),
        ],
        1,
        "r.jsonl: line 2: not valid JSON",
    ),
    (
        "reference file, nested too deeply",
        lambda d: [
            "score",
            "bundled:refund",
            "--schedules",
            _records(d, "s.jsonl", GOOD_SCHEDULE),
            "-r",
            _records(d, "r.jsonl", nested(3000)),
        ],
        1,
        "r.jsonl: line 1: JSON nested too deeply",
    ),
    (
        "scores file, torn line",
        lambda d: [
            "plan-score",
            "-t",
            "bundled:refund",
            "-p",
            _records(d, "p.jsonl", json.dumps({"workflow": "refund", "edges": []})),
            "--scores",
            _records(d, "bad.jsonl", "", "", "not json"),
        ],
        1,
        "bad.jsonl: line 3: not valid JSON",
    ),
    (
        "scores file, not an object",
        lambda d: [
            "plan-score",
            "-t",
            "bundled:refund",
            "-p",
            _records(d, "p.jsonl", json.dumps({"workflow": "refund", "edges": []})),
            "--scores",
            _records(d, "bad.jsonl", "[1, 2]", "[3]"),
        ],
        1,
        "bad.jsonl: line 1: not a JSON object (list)",
    ),
    (
        "JSON Lines suite, torn line",
        lambda d: ["validate", _records(d, "w.jsonl", workflow(), '{"id": "v", "tasks": [')],
        1,
        "w.jsonl: line 2: not valid JSON",
    ),
    (
        "schedules file, torn line scored invalid",
        lambda d: [
            "score",
            "bundled:refund",
            "--json",
            "--schedules",
            _records(d, "s.jsonl", GOOD_SCHEDULE, '{"workflow": "refund", "starts": {'),
        ],
        0,
        '"reasons":["not valid JSON',  # the row says line 2 in its "line" field
    ),
]


@pytest.mark.parametrize(("name", "args", "code", "says"), LINE_CASES, ids=[c[0] for c in LINE_CASES])
def test_errors_name_a_line_once(
    tmp_path: Path, name: str, args: Callable[[Path], list[str]], code: int, says: str
) -> None:
    result = CliRunner().invoke(cli, args(tmp_path))
    assert result.exit_code == code, result.output
    assert says in result.stdout + result.stderr
    for line in (result.stdout + result.stderr).splitlines():
        assert not re.search(r"\bline (\d+)\b.*\bline \1\b", line), line
    assert "Traceback" not in result.output


JSON_VALUES = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats() | st.text(max_size=5),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=5), inner, max_size=3),
    max_leaves=12,
)
TEMPLATE_PLACES = [
    ("steps",),
    ("steps", "a"),
    ("dependency_structure",),
    ("dependency_structure", "b"),
    ("machine",),
    ("machine", "cpu_capacity"),
    ("machine", "other_capacity"),
    ("machine", "name"),
    ("resource_costs",),
    ("resource_costs", "steps"),
    ("resource_costs", "steps", "a"),
    ("resource_costs", "steps", "a", "duration_s"),
    ("resource_costs", "steps", "a", "other_demand"),
    ("workflow_id",),
]


@pytest.mark.slow
@given(st.sampled_from(TEMPLATE_PLACES), JSON_VALUES)
def test_any_value_anywhere_in_a_context_is_read_or_refused_in_words(
    place: tuple[str, ...], value: Any
) -> None:
    data = template_context()
    node = data
    for key in place[:-1]:
        node = node[key]
    node[place[-1]] = value
    try:
        parse_text(json.dumps(data), Path("ctx.json"))
    except InputError as exc:
        assert "\n" not in str(exc) and str(exc).startswith("ctx.json")


SUITE_PLACES = [
    ("workflows",),
    ("workflows", 0),
    ("workflows", 0, "id"),
    ("workflows", 0, "tasks"),
    ("workflows", 0, "tasks", 1),
    ("workflows", 0, "tasks", 1, "depends_on"),
    ("workflows", 0, "tasks", 1, "duration"),
    ("workflows", 0, "tasks", 1, "demand"),
    ("workflows", 0, "tasks", 1, "profile"),
    ("workflows", 0, "meta"),
    ("machines",),
    ("machines", 0),
    ("machines", 0, "capacity"),
    ("machines", 0, "name"),
]


@given(st.sampled_from(SUITE_PLACES), JSON_VALUES)
def test_any_value_anywhere_in_a_suite_is_read_or_refused_in_words(
    place: tuple[str | int, ...], value: Any
) -> None:
    data = json.loads(suite(cpu=4))
    node = data
    for key in place[:-1]:
        node = node[key]
    node[place[-1]] = value
    try:
        parse_text(json.dumps(data), Path("suite.json"))
    except InputError as exc:
        assert "\n" not in str(exc) and str(exc).startswith("suite.json")


@given(JSON_VALUES, st.sampled_from(["json", "jsonl", "rasc"]))
def test_any_json_document_is_read_or_refused_in_words(value: Any, fmt: str) -> None:
    try:
        parse_text(json.dumps(value), Path("doc.json"), format=fmt)
    except InputError as exc:
        assert "\n" not in str(exc) and str(exc).startswith("doc.json")


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
