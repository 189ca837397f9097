"""peakopt/plan end to end with Inspect's mockllm (offline): the log's scores are peakopt plan-score's."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest
from cli_helpers import jsonl
from evals_helpers import TRUE, run_cli, same, write_suite
from inspect_ai import eval as inspect_eval
from inspect_ai.log import EvalLog
from inspect_ai.model import ChatMessage, GenerateConfig, ModelOutput, ModelUsage, get_model

from peakopt.evals.plan import plan
from peakopt.evals.values import PLAN_KEYS
from peakopt.instances.records import write_jsonl

#: Workflow id -> the canned planning answer.
PLANS: dict[str, str] = {
    "exact": json.dumps({"dependencies": TRUE}),
    # decide needs two of its four inputs, and the lookups are chained: some edges right, some wrong
    "partial": json.dumps(
        {"dependencies": {**TRUE, "fraud_score": ["lookup_order"], "decide": ["lookup_order", "fraud_score"]}}
    ),
    "cyclic": json.dumps({"dependencies": {**TRUE, "lookup_order": ["decide"]}}),
    "garbage": "The steps depend on each other somehow.",
}


def canned(messages: list[ChatMessage], tools: Any, choice: Any, config: GenerateConfig) -> ModelOutput:
    found = re.search(r'"workflow_id": "([^"]+)"', messages[-1].text)
    assert found
    output = ModelOutput.from_content(model="mock", content=PLANS[found.group(1)])
    output.usage = ModelUsage(input_tokens=1, output_tokens=1, total_tokens=2)  # no token counting (offline)
    return output


def run_plan(suite: Path, tmp_path: Path, **args: Any) -> EvalLog:
    (log,) = inspect_eval(
        plan(suite=str(suite), **args),
        model=get_model("mockllm/model", custom_outputs=canned),
        log_dir=str(tmp_path / "logs"),
        display="none",
    )
    assert log.status == "success", log.error
    return log


def test_the_plan_scores_in_the_log_equal_plan_score(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("INSPECT_LOG_DIR", str(tmp_path / "logs"))
    suite = write_suite(tmp_path / "suite.json", tuple(PLANS))
    log = run_plan(suite, tmp_path)
    values: dict[str, dict[str, Any]] = {}  # each sample's plan score: figure -> value
    for sample in log.samples or []:
        value = next(iter(sample.scores.values())).value
        assert isinstance(value, dict), value
        values[sample.metadata["workflow"]] = value
    assert values["exact"] == values["exact"] | {"edge_f1": 1.0, "exact_match": 1.0, "ged": 0.0, "valid": 1.0}
    assert 0 < values["partial"]["edge_f1"] < 1 and values["partial"]["exact_match"] == 0.0
    assert values["cyclic"]["valid"] == 1.0 and values["garbage"]["valid"] == 0.0
    # plan-score on the log, and on the same answers as JSON Lines
    code, out, err = run_cli("plan-score", "--truth", str(suite), "-p", log.location, "--json")
    assert code == 0, err
    from_log = {row["workflow"]: row for row in jsonl(out)}
    answers = tmp_path / "plans.jsonl"
    write_jsonl(
        answers, [{"workflow": w, "source": "mockllm/model", "response": a} for w, a in PLANS.items()]
    )
    code, out, err = run_cli("plan-score", "--truth", str(suite), "-p", str(answers), "--json")
    assert code == 0, err
    from_answers = {row["workflow"]: row for row in jsonl(out)}
    for workflow, value in values.items():
        row = from_log[workflow]
        assert row["source"] == "mockllm/model"
        for key in PLAN_KEYS:
            assert same(value[key], row[key]), (workflow, key)
        drop = ("line", "id")
        assert {k: v for k, v in row.items() if k not in drop} == {
            k: v for k, v in from_answers[workflow].items() if k not in drop
        }
    means = {s.name: s.metrics["mean"].value for s in log.results.scores} if log.results else {}
    assert means["edge_f1"] == pytest.approx(
        sum(r["edge_f1"] for r in from_log.values() if r["valid"])
        / sum(r["valid"] for r in from_log.values())
    )
    # report reads scheduling scores only: a planning log says what it is
    code, _, err = run_cli("report", log.location)
    assert code == 1 and "is a planning log (peakopt/plan), not a scheduling one" in err


def test_structured_plans_carry_the_schema_and_tiers_choose(tmp_path: Path) -> None:
    suite = write_suite(tmp_path / "suite.json", tuple(PLANS))
    log = run_plan(suite, tmp_path, tiers="e,p", structured=True)
    assert sorted(s.id for s in log.samples or []) == ["exact", "partial"]
    schema = (log.samples or [])[0].metadata["output_schema"]
    assert schema["required"] == ["dependencies"]


def test_a_workflow_without_tool_calls_cannot_be_planned(tmp_path: Path) -> None:
    suite = tmp_path / "bare.json"
    refund = json.loads(Path(write_suite(tmp_path / "s.json", ("bare",))).read_text())
    for step in refund["workflows"][0]["tasks"]:
        step.pop("call", None)
    suite.write_text(json.dumps(refund))
    with pytest.raises(ValueError, match="step 'lookup_order' has no tool call"):
        plan(suite=str(suite))
