"""The context ablation: what each prompt setting's context holds, and the setting carried to the scores."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from cli_helpers import jsonl
from click.testing import CliRunner
from hypothesis import given
from hypothesis import strategies as st
from strategies import machines, workflows

from peakopt.cli.main import cli
from peakopt.instances import load, to_context
from peakopt.instances.contexts import SETTING_CONTEXTS, context, shown_machine
from peakopt.instances.prompts import prompt_record
from peakopt.models import Machine, Workflow
from peakopt.oracle.tables.aggregate import aggregate, aggregate_plans
from peakopt.oracle.tables.rows import PlanRow, ScoreRow
from peakopt.oracle.tables.score_rows import score_prediction, score_record

RESOURCES = ("cpu", "memory_mb", "gpu")
CPU = {"cpu_avg_cores", "cpu_peak_cores"}
#: Per setting: the cost fields a step has, the machine's fields (None: no resource_costs block).
EXPECTED: dict[str, tuple[set[str] | None, set[str]]] = {
    "rasc": (
        {"duration_s", *CPU, "memory_mb", "other_demand"},
        {"cpu_capacity", "memory_mb_capacity", "other_capacity"},
    ),
    "durations": ({"duration_s"}, set()),
    "cpu": (CPU, {"cpu_capacity"}),
    "memory": ({"memory_mb"}, {"memory_mb_capacity"}),
    "cpu-memory": ({*CPU, "memory_mb"}, {"cpu_capacity", "memory_mb_capacity"}),
    "no-profile": (None, set()),
}


def test_every_setting_is_specified_here() -> None:
    assert list(SETTING_CONTEXTS) == list(EXPECTED)


@given(workflows(resources=RESOURCES), machines(resources=RESOURCES), st.sampled_from(list(EXPECTED)))
def test_a_settings_context_holds_what_it_should_and_nothing_else(
    workflow: Workflow, machine: Machine, setting: str
) -> None:
    full = to_context(workflow, machine)
    found = context(workflow, machine, setting)
    costs, capacities = EXPECTED[setting]
    # the structure is in every setting, as the RASC gives it
    assert found["steps"] == full["steps"] and found["dependency_structure"] == full["dependency_structure"]
    assert found["machine"]["name"] == machine.name
    assert set(found["machine"]) - {"name"} == capacities & set(full["machine"])
    assert all(found["machine"][k] == full["machine"][k] for k in found["machine"])
    if costs is None:
        assert "resource_costs" not in found
        return
    for step, cost in found["resource_costs"]["steps"].items():
        whole = full["resource_costs"]["steps"][step]
        assert set(cost) == costs & set(whole)
        assert all(cost[k] == whole[k] for k in cost)  # the RASC's figures, never others


@pytest.mark.parametrize("setting", list(EXPECTED))
def test_a_settings_prompt_names_what_it_gives_and_hides_the_rest(setting: str) -> None:
    suite = load("bundled:refund")
    record = prompt_record(suite.workflows[0], suite.machines[0], setting)
    assert record["setting"] == setting and record["task"] == "schedule"
    shown = record["prompt"].split("Context:\n")[1].split("\n\n")[0]
    assert json.loads(shown) == record["context"]
    costs, capacities = EXPECTED[setting]
    fields = {"duration_s", *CPU, "memory_mb", "cpu_capacity", "memory_mb_capacity"}
    for field in fields:
        given = field in (costs or set()) | capacities
        assert (f'"{field}"' in shown) == given, field
    intro = record["prompt"].split("\n\nRules:")[0]
    for field in (costs or set()) - {"other_demand"}:
        assert field in intro  # the prompt says what each figure it gives means


def test_unknown_setting() -> None:
    suite = load("bundled:refund")
    with pytest.raises(ValueError, match="setting must be one of"):
        context(suite.workflows[0], suite.machines[0], "vibes")


# --- the setting carried from the answer into every row and table -------------------------------

SAFE = {"lookup_order": 0, "fraud_score": 0, "history_scan": 4.8, "policy_search": 0, "decide": 8.0}


def answer(setting: str | None, **extra: Any) -> dict[str, Any]:
    record = {"workflow": "refund", "machine": "worker", "source": "m", "starts": SAFE, **extra}
    return record if setting is None else {**record, "setting": setting}


def test_rows_carry_the_setting_and_group_by_it() -> None:
    suite = load("bundled:refund")
    rows = [score_record(answer(s), suite) for s in ("rasc", "cpu", "cpu", None)]
    assert [r.setting for r in rows] == ["rasc", "cpu", "cpu", None]
    assert ScoreRow.model_validate(rows[1].model_dump(mode="json")) == rows[1]  # a score file keeps it
    groups = {s.group["setting"]: s.records for s in aggregate(rows, ["source", "setting"])}
    assert groups == {"rasc": 1, "cpu": 2, None: 1}
    broken = score_record({"workflow": "nope", "setting": "memory"}, suite)
    assert not broken.valid and broken.setting == "memory"  # an invalid answer still counts in its setting
    plan = score_prediction({"workflow": "refund", "setting": "cpu", "edges": []}, suite)
    assert plan.setting == "cpu" and PlanRow.model_validate(plan.model_dump(mode="json")) == plan
    assert [s.group for s in aggregate_plans([plan], ["setting"])] == [{"setting": "cpu"}]


def test_cli_setting_flows_from_prompts_to_scores(tmp_path: Path) -> None:
    runner = CliRunner()
    answers = []
    for setting in ("durations", "memory"):
        result = runner.invoke(cli, ["prompt", "bundled:refund", "--setting", setting])
        assert result.exit_code == 0, result.stderr
        assert f"1 prompt ({setting})" in result.stderr
        (record,) = [json.loads(line) for line in result.stdout.splitlines()]
        assert record["setting"] == setting
        answers.append(answer(record["setting"], response=json.dumps(SAFE)))
    path = tmp_path / "answers.jsonl"
    path.write_text("".join(json.dumps(a) + "\n" for a in answers))
    scores = tmp_path / "scores.jsonl"
    result = runner.invoke(
        cli,
        ["score", "bundled:refund", "-s", str(path), "--by", "source,setting", "-o", str(scores), "--json"],
    )
    assert result.exit_code == 0, result.stderr
    assert [r["setting"] for r in jsonl(result.stdout)] == ["durations", "memory"]
    assert [json.loads(line)["setting"] for line in scores.read_text().splitlines()] == [
        "durations",
        "memory",
    ]
    assert "durations" in result.stderr and "memory" in result.stderr  # one table row per setting
    report = runner.invoke(
        cli, ["report", str(scores), "--by", "method,setting", "-o", str(tmp_path / "r.html")]
    )
    assert report.exit_code == 0, report.stderr


def test_a_shown_machine_holds_only_the_capacities_its_setting_gives() -> None:
    machine = Machine(name="m", capacity={"cpu": 4, "memory_mb": 8192, "gpu": 2}, soft=("cpu",))
    assert shown_machine(machine, "rasc") == machine
    cpu = shown_machine(machine, "cpu")
    assert cpu is not None and cpu.name == "m" and cpu.capacity == {"cpu": 4} and cpu.soft == ("cpu",)
    memory = shown_machine(machine, "memory")
    assert memory is not None and memory.capacity == {"memory_mb": 8192} and memory.soft == ()
    both = shown_machine(machine, "cpu-memory")
    assert both is not None and both.capacity == {"cpu": 4, "memory_mb": 8192}  # other_capacity left out
    assert shown_machine(machine, "durations") is None
    assert shown_machine(machine, "no-profile") is None
    with pytest.raises(ValueError, match="setting must be one of"):
        shown_machine(machine, "gpu")


def test_a_setting_says_whether_its_context_gives_the_durations() -> None:
    given = {name: setting.durations for name, setting in SETTING_CONTEXTS.items()}
    assert given == {
        "rasc": True,
        "durations": True,
        "cpu": False,
        "memory": False,
        "cpu-memory": False,
        "no-profile": False,
    }
    # the same as what the contexts hold
    workflow = load("bundled:refund").workflows[0]
    machine = load("bundled:refund").machines[0]
    for name, durations in given.items():
        steps = context(workflow, machine, name).get("resource_costs", {}).get("steps", {})
        assert any("duration_s" in cost for cost in steps.values()) is durations, name
