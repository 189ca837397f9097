"""Planning prompts: generated calls state the dependencies, and answers read from them score F1 = 1."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest
from cli_helpers import jsonl
from click.testing import CliRunner
from hypothesis import given, settings
from hypothesis import strategies as st

from peakopt.cli.main import cli
from peakopt.instances import load
from peakopt.instances.generator import SuiteSpec, generate_suite
from peakopt.instances.native import to_jsonl
from peakopt.instances.prompts import (
    plan_output_schema,
    plan_prompt_record,
    plan_prompt_records,
)
from peakopt.models import Task, Workflow
from peakopt.oracle.tables.score_rows import score_prediction

#: Written here, not imported: the test reads the calls as a model would.
OUTPUT = re.compile(r"\$(\w+)\.output\b")

specs = st.builds(
    SuiteSpec,
    seed=st.integers(0, 2**32 - 1),
    counts=st.fixed_dictionaries(
        {"easy": st.integers(0, 2), "medium": st.integers(0, 2), "hard": st.integers(1, 2)}
    ),
    piecewise=st.sampled_from([0.0, 0.5]),
    noise=st.sampled_from([0.0, 1.0]),
)


def answer_from_calls(record: dict[str, Any]) -> dict[str, list[str]]:
    """What a perfect reader of the prompt's context answers: each step's inputs, from its call."""
    return {step["id"]: sorted(set(OUTPUT.findall(step["call"]))) for step in record["context"]["steps"]}


@settings(max_examples=25, deadline=None)
@given(specs)
def test_generated_calls_name_exactly_the_dependencies(spec: SuiteSpec) -> None:
    suite = generate_suite(spec)
    for workflow in suite.workflows:
        assert workflow.request and workflow.meta["theme"]
        for task in workflow.tasks:
            assert task.call is not None and task.call.startswith(f"{task.tool}(")
            assert set(task.consumes) == set(task.depends_on), (workflow.id, task.id)
            assert len(task.consumes) == len(task.depends_on)
            if not task.depends_on:
                assert "$" not in task.call  # a first call takes literals, not outputs


@settings(max_examples=25, deadline=None)
@given(specs)
def test_an_answer_read_from_the_calls_scores_f1_1(spec: SuiteSpec) -> None:
    suite = generate_suite(spec)
    for record in plan_prompt_records(suite):
        assert "dependency_structure" not in record["context"] and "depends_on" not in record["prompt"]
        workflow = suite.workflow(record["workflow"])
        response = (
            "Reading the calls:\n```json\n"
            + json.dumps({"dependencies": answer_from_calls(record)})
            + "\n```"
        )
        row = score_prediction({"workflow": workflow.id, "source": "reader", "response": response}, suite)
        assert row.valid and row.edge_f1 == 1.0 and row.exact_match, (workflow.id, row.reasons)
        assert row.closure_f1 == 1.0 and row.concurrency_f1 == 1.0 and row.ged == 0


def test_plan_record_fields_and_context() -> None:
    suite = load("bundled:refund")
    (record,) = plan_prompt_records(suite)
    assert list(record) == ["workflow", "task", "prompt", "context", "output_schema"]
    assert record["workflow"] == "refund" and record["task"] == "plan"
    context = record["context"]
    workflow = suite.workflows[0]
    assert context["request"] == workflow.request
    assert [s["id"] for s in context["steps"]] == [t.id for t in workflow.tasks]
    assert all(set(s) == {"id", "tool", "server", "call"} for s in context["steps"])
    assert "resource_costs" not in context and "machine" not in context  # planning is structure only
    assert json.dumps(context) in record["prompt"]
    assert json.dumps(record["output_schema"]) in record["prompt"]
    tiered = generate_suite(SuiteSpec(seed=1, counts={"easy": 1, "medium": 0, "hard": 0})).workflows[0]
    assert plan_prompt_record(tiered)["tier"] == "easy"


def test_plan_schema_asks_every_step_with_known_predecessors() -> None:
    workflow = load("bundled:refund").workflows[0]
    schema = plan_output_schema(workflow)
    ids = [t.id for t in workflow.tasks]
    dependencies = schema["properties"]["dependencies"]
    assert schema["required"] == ["dependencies"] and dependencies["required"] == ids
    assert dependencies["additionalProperties"] is False
    assert all(dependencies["properties"][i]["items"]["enum"] == ids for i in ids)


def test_a_step_without_a_call_has_no_plan_prompt() -> None:
    workflow = Workflow(id="w", tasks=(Task(id="a", duration=1, call="f()"), Task(id="b", duration=1)))
    with pytest.raises(ValueError, match="step 'b' has no tool call"):
        plan_prompt_record(workflow)


# --- the command line ---------------------------------------------------------------------------


def run(*args: str) -> tuple[int, str, str]:
    result = CliRunner().invoke(cli, list(args))
    return result.exit_code, result.stdout, result.stderr


def test_cli_plan_prompts_and_their_answers_through_plan_score(tmp_path: Path) -> None:
    prompts = tmp_path / "plan-prompts.jsonl"
    code, _, err = run("prompt", "bundled:default", "--task", "plan", "-o", str(prompts))
    assert code == 0, err
    assert "300 prompts (plan) for 300 workflows" in err
    records = [json.loads(line) for line in prompts.read_text().splitlines()]
    assert {r["task"] for r in records} == {"plan"} and all("machine" not in r for r in records)
    answers = tmp_path / "plans.jsonl"
    answers.write_text(
        to_jsonl(
            {
                "workflow": r["workflow"],
                "source": "reader",
                "response": json.dumps({"dependencies": answer_from_calls(r)}),
            }
            for r in records
        )
    )
    code, out, err = run("plan-score", "--truth", "bundled:default", "--predictions", str(answers), "--json")
    assert code == 0, err
    rows = jsonl(out)
    assert len(rows) == 300 and all(r["valid"] and r["edge_f1"] == 1.0 and r["exact_match"] for r in rows)


def test_cli_plan_refuses_schedule_options_and_workflows_without_calls(tmp_path: Path) -> None:
    code, _, err = run("prompt", "bundled:refund", "--task", "plan", "--setting", "cpu")
    assert code == 2 and "--setting and --machine apply to --task schedule" in err
    code, _, err = run("prompt", "bundled:refund", "--task", "plan", "--machine", "worker")
    assert code == 2
    bare = tmp_path / "bare.json"
    bare.write_text(json.dumps({"id": "bare", "tasks": [{"id": "a", "duration": 1}]}))
    out_file = tmp_path / "plans.jsonl"
    code, out, err = run("prompt", "bundled:refund", str(bare), "--task", "plan", "-o", str(out_file))
    assert code == 1 and out == "" and not out_file.exists()
    assert err.strip() == (
        f"Error: {bare}: workflow 'bare': step 'a' has no tool call ('call'): "
        "a planning prompt shows the calls instead of the dependencies"
    )
