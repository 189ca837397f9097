"""peakopt score and plan-score through the command line."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from cli_helpers import jsonl
from click.testing import CliRunner
from score_helpers import ASAP, SAFE, ZERO, answers, references

from peakopt.cli.main import cli
from peakopt.instances.records import write_jsonl


def run(*args: str) -> tuple[int, str, str]:
    result = CliRunner().invoke(cli, list(args))
    return result.exit_code, result.stdout, result.stderr


def test_score_json_rows_and_aggregates(tmp_path: Path) -> None:
    code, out, err = run(
        "score",
        "bundled:refund",
        "--schedules",
        str(answers(tmp_path)),
        "-r",
        str(references(tmp_path)),
        "--json",
    )
    assert code == 0, err
    rows = jsonl(out)
    assert [r["line"] for r in rows] == [1, 2, 3, 4, 5, 6, 7]  # nothing dropped
    asap, serial, llm, refusal, laptop, nope, broken = rows
    assert asap["valid"] and not asap["safe"] and asap["cva"] == pytest.approx(0.55)
    # valid, unsafe: faster than the optimum by overflowing memory, so no gap at all (never -37.2%)
    assert asap["gap"] is None and asap["gap_vs_lb"] is None and asap["gap_vs_ub"] is None
    assert serial["safe"] and serial["gap"] == pytest.approx(0.0) and serial["machine"] == "worker"
    assert llm["starts"] == SAFE and llm["id"] == "q1" and llm["source"] == "llm"
    assert refusal["reason_kinds"] == ["parse"] and refusal["makespan"] is None
    assert laptop["reasons"] == ["machine 'laptop' is not in the suite"]
    assert nope["reasons"] == ["workflow 'nope' is not in the suite"]
    assert broken["reasons"][0].startswith("not valid JSON")  # the row names line 7 once, in "line"
    assert "7 records, 4 invalid (counted, not dropped)" in err
    assert "gap mean" in err and "asap" in err and "parse 1" in err
    assert "-37" not in err.replace(str(tmp_path), "")  # pytest's tmp_path may hold "-37" itself
    asap_line = next(line for line in err.splitlines() if "│ asap" in line)
    assert "unsafe" in asap_line  # its gap columns say why they are empty


def test_score_writes_json_lines_and_csv(tmp_path: Path) -> None:
    target = tmp_path / "scores.jsonl"
    code, out, err = run("score", "bundled:refund", "-s", str(answers(tmp_path)), "-o", str(target), "--csv")
    assert code == 0, err
    written = [json.loads(line) for line in target.read_text().splitlines()]
    assert len(written) == 7 and written[1]["safe"] is True
    header, *lines = out.splitlines()
    assert header.startswith("line,id,workflow,machine,source,tier,setting,valid,reasons")
    assert "peak_ratio.memory_mb" in header.split(",")
    assert len(lines) == 7
    assert "gap mean" not in err  # no reference: no gap columns


def test_score_grouping_and_replay_options(tmp_path: Path) -> None:
    path = tmp_path / "delays.jsonl"
    delays = ZERO | {"history_scan": 4.8}
    write_jsonl(path, [{"workflow": "refund", "source": "m", "starts": {"requested_delays": delays}}])
    code, out, err = run("score", "bundled:refund", "-s", str(path), "--json", "--by", "source,machine")
    assert code == 0, err
    (row,) = jsonl(out)
    assert row["requested_kind"] == "delay" and row["starts"]["decide"] == pytest.approx(8.0) and row["safe"]
    assert "m / worker" in err
    code, out, _ = run("score", "bundled:refund", "-s", str(path), "--json", "--delay-from", "zero")
    assert not jsonl(out)[0]["valid"]
    code, out, _ = run(
        "score", "bundled:refund", "-s", str(path), "--json", "--delay-from", "zero", "--replay", "runtime"
    )
    (row,) = jsonl(out)
    assert row["valid"] and row["pushed"] == 1 and row["pushed_seconds"] == pytest.approx(8.0)


def test_score_missing_asap(tmp_path: Path) -> None:
    path = tmp_path / "partial.jsonl"
    write_jsonl(path, [{"workflow": "refund", "starts": {"fraud_score": 0, "history_scan": 4.8}}])
    code, out, _ = run("score", "bundled:refund", "-s", str(path), "--json", "--missing", "asap")
    (row,) = jsonl(out)
    assert code == 0 and row["valid"] and row["filled"] == 3 and row["makespan"] == pytest.approx(8.6)


def test_score_usage_and_input_errors(tmp_path: Path) -> None:
    path = answers(tmp_path)
    code, _, err = run("score", "bundled:refund", "-s", str(path), "--json", "--csv")
    assert code == 2 and "exclusive" in err
    code, _, err = run("score", "bundled:refund", "-s", str(path), "--by", "colour")
    assert code == 2 and "unknown field colour" in err
    bad = tmp_path / "refs.jsonl"
    bad.write_text('{"workflow": "refund"}\n')
    code, _, err = run("score", "bundled:refund", "-s", str(path), "-r", str(bad))
    assert code == 1 and err.strip() == f"Error: {bad}: line 1: missing key 'status'"
    code, _, err = run("score", "bundled:refund", "-s", str(tmp_path / "none.jsonl"))
    assert code == 1 and err.startswith("Error: ") and "no such file" in err and "Traceback" not in err


def test_score_warns_once_about_unconstrained_resources(tmp_path: Path) -> None:
    suite = tmp_path / "gpu.json"
    suite.write_text(
        json.dumps(
            {
                "machines": [{"name": "a", "capacity": {"cpu": 2}}, {"name": "b", "capacity": {"cpu": 4}}],
                "workflows": [
                    {"id": "w", "tasks": [{"id": "t", "duration": 1, "demand": {"gpu": 1, "cpu": 1}}]}
                ],
            }
        )
    )
    path = tmp_path / "s.jsonl"
    write_jsonl(path, [{"workflow": "w", "machine": "a", "starts": {"t": 0}}])
    code, out, err = run("score", str(suite), "-s", str(path), "--json")
    assert code == 0
    warnings = [line for line in err.splitlines() if line.startswith("Warning:")]
    assert len(warnings) == 1 and "'a' does not limit gpu" in warnings[0] and "'b'" in warnings[0]
    assert jsonl(out)[0]["safe"]


def test_plan_score_with_correlation(tmp_path: Path) -> None:
    predictions = tmp_path / "plans.jsonl"
    decide = ["lookup_order", "fraud_score", "history_scan", "policy_search"]
    write_jsonl(
        predictions,
        [
            {"workflow": "refund", "source": "llm", "id": "q1", "dependencies": {"decide": decide}},
            {"workflow": "refund", "source": "llm", "id": "q2", "edges": [["lookup_order", "decide"]]},
            {"workflow": "refund", "source": "llm", "id": "q3", "response": "no idea"},
        ],
    )
    schedules = tmp_path / "s.jsonl"
    write_jsonl(
        schedules,
        [
            {"workflow": "refund", "source": "llm", "id": "q1", "starts": SAFE},
            {"workflow": "refund", "source": "llm", "id": "q2", "starts": ASAP},
        ],
    )
    scores = tmp_path / "scores.jsonl"
    assert run("score", "bundled:refund", "-s", str(schedules), "-o", str(scores))[0] == 0
    code, out, err = run(
        "plan-score",
        "--truth",
        "bundled:refund",
        "--predictions",
        str(predictions),
        "--scores",
        str(scores),
        "--json",
    )
    assert code == 0, err
    rows = jsonl(out)
    assert [r["edge_f1"] for r in rows] == [1.0, pytest.approx(0.4), None]
    assert rows[2]["valid"] is False
    assert "edge_f1 vs cva" in err and "-1.000" in err  # two points: F1 up, cva down
    assert "3 records, 1 invalid" in err


def test_plan_score_rejects_a_bad_scores_file(tmp_path: Path) -> None:
    predictions = tmp_path / "plans.jsonl"
    write_jsonl(predictions, [{"workflow": "refund", "edges": []}])
    bad = tmp_path / "scores.jsonl"
    bad.write_text('{"workflow": "refund"}\n')
    code, _, err = run("plan-score", "-t", "bundled:refund", "-p", str(predictions), "--scores", str(bad))
    assert code == 1 and err.startswith(f"Error: {bad}: line 1: not a score row")


@pytest.mark.parametrize("command", ["score", "plan-score"])
def test_help_has_an_example(command: str) -> None:
    code, out, _ = run(command, "--help")
    assert code == 0 and "Example: peakopt " + command in out


def test_score_output_that_cannot_be_written(tmp_path: Path) -> None:
    target = tmp_path / "no" / "such" / "dir" / "scores.jsonl"
    code, _, err = run("score", "bundled:refund", "-s", str(answers(tmp_path)), "-o", str(target))
    assert code == 1 and err.strip() == f"Error: -o {target}: the folder {target.parent} does not exist"


def test_score_reads_answers_as_the_model_meant_them(tmp_path: Path) -> None:
    safe, asap = json.dumps(SAFE), json.dumps(ASAP)
    responses = [
        f"<think>Maybe {asap}? It overflows memory.</think>\n{safe}",  # item 15
        f"Final answer: {safe}\nA counter-example: {asap} overflows.",  # item 16
        f"Either {safe} or {asap}.",  # item 16: ambiguous
        " ".join(f"[{i}]" for i in range(1, 101)) + f" {safe}",  # item 17
        safe.replace("4.8", '"4800ms"').replace("8.0", '"8 s"'),  # item 18: units
        safe[:-6],  # item 18: cut off mid-number
    ]
    path = tmp_path / "answers.jsonl"
    write_jsonl(path, [{"workflow": "refund", "source": "llm", "response": r} for r in responses])
    code, out, err = run("score", "bundled:refund", "-s", str(path), "--json")
    assert code == 0, err
    rows = jsonl(out)
    assert [r["reason_kinds"] for r in rows] == [[], [], ["ambiguous"], [], [], ["truncated"]]
    assert all(r["starts"] == SAFE for r in rows if r["valid"])
    assert "ambiguous 1" in err and "truncated 1" in err


def test_plan_score_reads_every_structure(tmp_path: Path) -> None:
    decide = ["lookup_order", "fraud_score", "history_scan", "policy_search"]
    records: list[dict[str, Any]] = [
        {"workflow": "easy-000", "source": "m", "edges": []},
        {"workflow": "easy-000", "source": "m", "response": '```json\n{"dependency_structure": {}}\n```'},
        {"workflow": "refund", "source": "m", "dependencies": {"decide": [{"id": s} for s in decide]}},
        {"workflow": "refund", "source": "m", "dependencies": {"decide": [{"note": "all four"}]}},
    ]
    path = tmp_path / "plans.jsonl"
    write_jsonl(path, records)
    code, out, err = run(
        "plan-score", "--truth", "bundled:default", "--truth", "bundled:refund", "-p", str(path), "--json"
    )
    assert code == 0, err
    rows = jsonl(out)
    assert [r["valid"] for r in rows] == [True, True, True, False]
    assert rows[0]["exact_match"] and rows[1]["exact_match"] and rows[2]["exact_match"]
    assert "step 'decide': predecessors" in rows[3]["reasons"][0]
