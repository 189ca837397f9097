"""Prompt export, and answers coming back in the records peakopt score reads."""

from __future__ import annotations

import json
import re
from functools import cache
from pathlib import Path
from typing import Any

import pytest

from peakopt.instances import from_context, load, to_context
from peakopt.instances.generator import SuiteSpec, generate_suite
from peakopt.instances.native import to_jsonl
from peakopt.instances.prompts import output_schema, prompt_record, prompt_records, structure_context
from peakopt.models import Schedule, Suite, Workflow
from peakopt.oracle import evaluate


@cache
def small_suite() -> Suite:
    return generate_suite(SuiteSpec(seed=11, counts={"easy": 3, "medium": 2, "hard": 1}, piecewise=0.5))


def test_one_record_per_workflow_and_machine() -> None:
    suite = small_suite()
    records = list(prompt_records(suite))
    assert [(r["workflow"], r["machine"]) for r in records] == [
        (w.id, m.name) for w in suite.workflows for m in suite.machines
    ]
    for record in records:
        assert set(record) == {
            *("workflow", "machine", "task", "setting", "tier", "prompt", "context", "output_schema")
        }
        assert record["task"] == "schedule"
        assert record["tier"] == suite.workflow(record["workflow"]).meta["tier"]
    only = list(prompt_records(suite, machines=["large"]))
    assert {r["machine"] for r in only} == {"large"} and len(only) == len(suite.workflows)


def test_rasc_context_is_peakbenchs_and_reads_back() -> None:
    suite = small_suite()
    workflow, machine = suite.workflows[-1], suite.machines[0]
    record = prompt_record(workflow, machine, "rasc")
    assert record["context"] == to_context(workflow, machine)
    back = from_context(record["context"], "<prompt>")
    assert back.machines[0].capacity == machine.capacity
    assert back.workflows[0].edges == workflow.edges
    assert [t.length for t in back.workflows[0].tasks] == pytest.approx([t.length for t in workflow.tasks])
    assert json.dumps(record["context"]) in record["prompt"]


def test_no_profile_context_hides_costs_and_capacities() -> None:
    suite = small_suite()
    workflow, machine = suite.workflows[0], suite.machines[0]
    record = prompt_record(workflow, machine, "no-profile")
    context = record["context"]
    assert context == structure_context(workflow, machine)
    assert "resource_costs" not in context and context["machine"] == {"name": machine.name}
    assert context["dependency_structure"] == {t.id: list(t.depends_on) for t in workflow.tasks}
    assert "duration_s" not in record["prompt"].split("Context:")[1]


def test_schema_names_every_step() -> None:
    workflow = small_suite().workflows[0]
    schema = output_schema(workflow)
    item = schema["properties"]["schedule"]["items"]
    assert item["properties"]["step"]["enum"] == [t.id for t in workflow.tasks]
    assert schema["required"] == ["schedule"] and item["required"] == ["step", "start"]


def test_unknown_setting() -> None:
    suite = small_suite()
    with pytest.raises(ValueError, match="setting"):
        prompt_record(suite.workflows[0], suite.machines[0], "vibes")


# --- the round trip: prompts out, canned answers back ----------------------------------------


def one_at_a_time(workflow: Workflow) -> dict[str, float]:
    """A canned answer: the steps back to back in file order (topological here)."""
    starts, now = {}, 0.0
    for task in workflow.tasks:
        starts[task.id] = round(now, 2)
        now += task.length
    return starts


def canned_answer(record: dict[str, Any], suite: Suite) -> dict[str, Any]:
    starts = one_at_a_time(suite.workflow(record["workflow"]))
    body = json.dumps({"schedule": [{"step": s, "start": t} for s, t in starts.items()]})
    response = f"Here is the schedule:\n```json\n{body}\n```"
    return {
        "workflow": record["workflow"],
        "machine": record["machine"],
        "source": "canned",
        "response": response,
    }


def matches_schema(answer: Any, schema: dict[str, Any]) -> bool:
    """The few JSON Schema rules output_schema uses."""
    item = schema["properties"]["schedule"]["items"]
    steps = item["properties"]["step"]["enum"]
    return (
        set(answer) == {"schedule"}
        and all(set(e) == {"step", "start"} for e in answer["schedule"])
        and all(
            e["step"] in steps and isinstance(e["start"], int | float) and e["start"] >= 0
            for e in answer["schedule"]
        )
    )


@pytest.mark.parametrize("setting", ["rasc", "no-profile"])
def test_round_trip_with_canned_answers(tmp_path: Path, setting: str) -> None:
    suite = small_suite()
    prompts = tmp_path / "prompts.jsonl"
    prompts.write_text(to_jsonl(prompt_records(suite, setting)))
    answers = tmp_path / "answers.jsonl"
    records = [json.loads(line) for line in prompts.read_text().splitlines()]
    answers.write_text(to_jsonl(canned_answer(r, suite) for r in records))

    by_key = {(r["workflow"], r["machine"]): r for r in records}
    back = [json.loads(line) for line in answers.read_text().splitlines()]
    assert len(back) == len(suite.workflows) * len(suite.machines)
    for answer in back:
        assert set(answer) == {"workflow", "machine", "source", "response"}
        record = by_key[(answer["workflow"], answer["machine"])]
        fenced = re.search(r"```json\n(.*)\n```", answer["response"], flags=re.DOTALL)
        assert fenced is not None
        parsed = json.loads(fenced.group(1))
        assert matches_schema(parsed, record["output_schema"])
        starts = {e["step"]: e["start"] for e in parsed["schedule"]}
        workflow, machine = suite.workflow(answer["workflow"]), suite.machine(answer["machine"])
        score = evaluate(
            workflow, machine, Schedule(workflow=workflow.id, machine=machine.name, starts=starts)
        )
        assert score.valid and score.dependency_violations == 0
        assert score.safe  # one at a time reaches the unavoidable floor


def test_a_canned_answer_missing_a_step_is_invalid_for_the_oracle() -> None:
    suite = small_suite()
    workflow, machine = suite.workflows[-1], suite.machines[0]
    starts = one_at_a_time(workflow)
    starts.pop(workflow.tasks[0].id)
    assert not matches_schema({"schedule": [{"step": "nope", "start": 1}]}, output_schema(workflow))
    score = evaluate(workflow, machine, Schedule(workflow=workflow.id, machine=machine.name, starts=starts))
    assert not score.valid and any("has no start" in r for r in score.reasons)


def test_bundled_refund_prompt() -> None:
    suite = load("bundled:refund")
    (record,) = prompt_records(suite)
    assert record["workflow"] == "refund" and record["machine"] == "worker" and "tier" not in record
    assert '"memory_mb": 6144' in record["prompt"]
