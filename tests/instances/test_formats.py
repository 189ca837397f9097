"""Every reader on real data, and round trips between formats."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st
from paths import J30, PATTERSON, j30_files, patterson_files

from peakopt.instances import bundled, from_context, load, render, save, to_context
from peakopt.models import Suite, Workflow

_NUMERIC = re.compile(r"\d+(\.\d+)?")


@pytest.mark.slow
def test_all_j30_instances_load() -> None:
    files = j30_files()
    assert len(files) == 480
    for path in files:
        suite = load(path)
        (workflow,) = suite.workflows
        (machine,) = suite.machines
        assert workflow.id == path.stem
        assert machine.name == "psplib"
        assert len(workflow.tasks) == 30
        assert set(machine.capacity) == {"R1", "R2", "R3", "R4"}


def test_j30_hand_checked_values() -> None:
    suite = load(J30 / "j301_1.sm")
    workflow = suite.workflows[0]
    assert suite.machines[0].capacity == {"R1": 12, "R2": 13, "R3": 4, "R4": 12}
    assert workflow.task("2").duration == 8 and workflow.task("2").demand == {"R1": 4}
    assert workflow.task("4").duration == 6 and workflow.task("4").demand == {"R4": 3}
    assert workflow.task("16").duration == 10 and workflow.task("16").demand == {"R4": 5}
    # job 1 (the dummy source) is dropped: jobs 2, 3, 4 have no predecessor
    assert workflow.task("2").depends_on == ()
    assert workflow.task("6").depends_on == ("2",)


def test_dummies_kept_on_request() -> None:
    workflow = load(J30 / "j301_1.sm", keep_dummies=True).workflows[0]
    assert len(workflow.tasks) == 32
    assert workflow.task("1").duration == 0 and workflow.task("32").duration == 0
    assert workflow.task("2").depends_on == ("1",)
    assert len(workflow.task("32").depends_on) > 0


def _header_jobs(path: Path) -> int:
    return int(path.read_text().split()[0])


def test_all_patterson_instances_load() -> None:
    files = patterson_files()
    assert len(files) == 110
    for path in files:
        suite = load(path)
        workflow = suite.workflows[0]
        assert workflow.id == path.stem
        assert len(workflow.tasks) == _header_jobs(path) - 2
        assert len(load(path, keep_dummies=True).workflows[0].tasks) == _header_jobs(path)


def test_patterson_hand_checked_values() -> None:
    suite = load(PATTERSON / "pat1.rcp")
    workflow = suite.workflows[0]
    assert suite.machines[0].capacity == {"R1": 2, "R2": 1, "R3": 2}
    assert len(workflow.tasks) == 12
    assert workflow.task("2").duration == 6 and workflow.task("2").demand == {"R1": 1}
    assert workflow.task("5").duration == 1 and workflow.task("5").demand == {}
    assert workflow.task("9").depends_on == ("2",) or "2" in workflow.task("9").depends_on
    assert load(PATTERSON / "pat100.rcp").machines[0].capacity == {"R1": 10, "R2": 10, "R3": 10}


def test_psplib_converts_to_a_suite(tmp_path: Path) -> None:
    out = tmp_path / "j301_1.json"
    save(load(J30 / "j301_1.sm"), out)
    document = json.loads(out.read_text())
    assert set(document) == {"machines", "workflows"}
    assert load(out) == load(J30 / "j301_1.sm")


def test_bundled_refund_example() -> None:
    suite = load("bundled:refund")
    assert bundled("refund").is_file()
    (workflow,) = suite.workflows
    (machine,) = suite.machines
    independent = [t for t in workflow.tasks if not t.depends_on]
    assert {t.id for t in independent} == {"lookup_order", "fraud_score", "history_scan", "policy_search"}
    assert workflow.task("decide").depends_on
    # launching the four independent calls at once overflows memory
    assert sum(t.peak("memory_mb") for t in independent) > machine.capacity["memory_mb"]


def test_rasc_round_trip(tmp_path: Path) -> None:
    suite = load("bundled:refund")
    path = tmp_path / "refund.rasc.json"
    path.write_text(render(suite, "rasc"))
    document = json.loads(path.read_text())
    assert document["machine"] == {"name": "worker", "cpu_capacity": 4, "memory_mb_capacity": 8192}
    assert document["resource_costs"]["steps"]["fraud_score"]["memory_mb"] == 6144
    again = load(path)
    assert again.machines[0].capacity == suite.machines[0].capacity
    for old, new in zip(suite.workflows[0].tasks, again.workflows[0].tasks, strict=True):
        assert (old.id, old.depends_on, old.duration, old.demand) == (
            new.id,
            new.depends_on,
            new.duration,
            new.demand,
        )
    assert load(path, format="rasc") == again


def context() -> dict[str, object]:
    return {
        "steps": [{"step_id": "a", "tool": "http.get"}, "b"],
        "dependency_structure": [["a", "b"]],
        "machine": {"cpu_capacity": 2, "memory_mb_capacity": 1024},
        "resource_costs": {
            "steps": {
                "a": {"duration_s": 1.5, "cpu_avg_cores": 0.2, "cpu_peak_cores": 0.9, "memory_mb": 100},
                "b": {"duration_s": 2, "cpu_avg_cores": 1, "cpu_peak_cores": 1.5, "memory_mb": 300},
            }
        },
        "task": "a prompt field peakopt does not use",
    }


def test_rasc_cpu_choice() -> None:
    peak = from_context(context(), "ctx.json").workflows[0]
    avg = from_context(context(), "ctx.json", cpu="avg").workflows[0]
    assert peak.task("a").demand == {"cpu": 0.9, "memory_mb": 100}
    assert avg.task("a").demand == {"cpu": 0.2, "memory_mb": 100}
    assert peak.task("a").tool == "http.get"
    assert peak.task("b").depends_on == ("a",)
    assert peak.id == "ctx"
    # both CPU figures survive a round trip whichever became the demand
    costs = to_context(avg, from_context(context(), "ctx.json").machines[0])["resource_costs"]
    assert costs["steps"]["a"]["cpu_peak_cores"] == 0.9


def test_rasc_dependency_map_and_extra_resources() -> None:
    data = context()
    data["dependency_structure"] = {"b": ["a"]}
    data["machine"] = {"cpu_capacity": 2, "memory_mb_capacity": 1024, "other_capacity": {"gpu_mb": 8000}}
    steps = data["resource_costs"]["steps"]
    steps["b"]["other_demand"] = {"gpu_mb": 4000}
    suite = from_context(data, "ctx.json")
    assert suite.machines[0].capacity["gpu_mb"] == 8000
    assert suite.workflows[0].task("b").demand["gpu_mb"] == 4000
    document = to_context(suite.workflows[0], suite.machines[0])
    assert from_context(document, "x").workflows[0] == suite.workflows[0]


def test_piecewise_task_summarised_in_rasc() -> None:
    workflow = Workflow.model_validate(
        {
            "id": "w",
            "tasks": [
                {
                    "id": "load",
                    "profile": [
                        {"duration": 1, "demand": {"cpu": 2, "memory_mb": 4000}},
                        {"duration": 3, "demand": {"cpu": 1, "memory_mb": 1000}},
                    ],
                }
            ],
        }
    )
    suite = Suite(machines=[{"name": "m", "capacity": {"cpu": 4, "memory_mb": 8000}}], workflows=[workflow])
    cost = json.loads(render(suite, "rasc"))["resource_costs"]["steps"]["load"]
    assert cost == {"duration_s": 4, "cpu_avg_cores": 1.25, "cpu_peak_cores": 2, "memory_mb": 4000}


def test_jsonl_of_contexts_and_suites(tmp_path: Path) -> None:
    suite = load("bundled:refund")
    two = Suite(
        machines=[*suite.machines, {"name": "big", "capacity": {"cpu": 8, "memory_mb": 32768}}],
        workflows=suite.workflows,
    )
    with pytest.raises(Exception, match="duplicate workflow id"):
        path = tmp_path / "ctx.jsonl"
        path.write_text(render(two, "rasc"))
        load(path)
    path = tmp_path / "wfs.jsonl"
    path.write_text(render(Suite(workflows=suite.workflows), "jsonl"))
    assert load(path).workflows == suite.workflows


def test_format_detection_without_extension(tmp_path: Path) -> None:
    for source in (J30 / "j301_1.sm", PATTERSON / "pat1.rcp", bundled("refund")):
        copy = tmp_path / source.stem
        copy.write_bytes(source.read_bytes())
        assert load(copy).workflows[0].tasks == load(source).workflows[0].tasks


def test_written_files_get_the_usual_mode(tmp_path: Path) -> None:
    import os

    out = tmp_path / "w.json"
    save(load("bundled:refund"), out)
    umask = os.umask(0)
    os.umask(umask)
    assert out.stat().st_mode & 0o777 == 0o666 & ~umask


def template() -> dict[str, Any]:
    """A context as the paper's template (Appendix E) writes it."""
    return {
        "task": "Schedule the refund workflow's tool calls on the machine below.",
        "steps": {"lookup": "orders.get_order(order_id)", "fraud": "risk.fraud_score(order)", "decide": None},
        "dependency_structure": {"fraud": ["lookup"], "decide": ["lookup", "fraud"]},
        "earliest_depth": {"lookup": 0, "fraud": 1, "decide": 2},
        "machine": {"cpu_capacity": "4", "memory_mb_capacity": "8192"},
        "resource_costs": {
            "steps": {
                "lookup": {
                    "duration_s": "0.3",
                    "cpu_avg_cores": "0.1",
                    "cpu_peak_cores": "0.2",
                    "memory_mb": "256",
                },
                "fraud": {
                    "duration_s": "4.8",
                    "cpu_avg_cores": 1.2,
                    "cpu_peak_cores": 1.5,
                    "memory_mb": 6144,
                },
                "decide": {"duration_s": 1, "cpu_avg_cores": 0.5, "cpu_peak_cores": 0.5, "memory_mb": 128},
            }
        },
        "scheduling_objective": "minimise makespan without exceeding capacity",
        "relative_to_case": {"note": "..."},
        "relative_to_machine": {"note": "..."},
        "classes": {"memory_heavy": ["fraud"]},
        "required_output": {"format": "JSON", "fields": ["schedule"]},
    }


def test_context_as_the_template_writes_it() -> None:
    suite = from_context(template(), "refund.json")
    (workflow,), (machine,) = suite.workflows, suite.machines
    assert machine.capacity == {"cpu": 4, "memory_mb": 8192}
    assert machine.name == "rasc-cpu4-memory_mb8192"  # no name: named after what it is
    assert [t.id for t in workflow.tasks] == ["lookup", "fraud", "decide"]
    assert workflow.task("fraud").tool == "risk.fraud_score(order)"  # the tool call as written
    assert workflow.task("decide").depends_on == ("lookup", "fraud")
    assert workflow.task("lookup").duration == 0.3 and workflow.task("lookup").demand == {
        "cpu": 0.2,
        "memory_mb": 256,
    }
    assert workflow.task("lookup").meta == {"cpu_avg_cores": 0.1, "cpu_peak_cores": 0.2}


def test_dependency_structure_forms_agree() -> None:
    expected = from_context(template(), "w.json").workflows[0]
    forms: list[object] = [
        [["lookup", "fraud"], ["lookup", "decide"], ["fraud", "decide"]],
        [{"from": "lookup", "to": "fraud"}, {"from": "lookup", "to": "decide"}, ["fraud", "decide"]],
        {
            "fraud": "lookup",
            "decide": ["lookup", "fraud", "lookup"],
            "lookup": None,
        },  # a repeated edge adds nothing
    ]
    for form in forms:
        data = template()
        data["dependency_structure"] = form
        assert from_context(data, "w.json").workflows[0] == expected


def test_unnamed_machines_are_shared_by_their_capacities(tmp_path: Path) -> None:
    lines = []
    for n, cpu in enumerate(["4", 4, 8]):
        data = template()
        data["workflow_id"] = f"w{n}"
        data["machine"]["cpu_capacity"] = cpu
        lines.append(json.dumps(data))
    path = tmp_path / "contexts.jsonl"
    path.write_text("\n".join(lines) + "\n")
    suite = load(path)
    assert [m.name for m in suite.machines] == ["rasc-cpu4-memory_mb8192", "rasc-cpu8-memory_mb8192"]


def _spellings(value: float) -> st.SearchStrategy[object]:
    """The number itself, or a string that spells it."""
    return st.sampled_from([value, str(value), f" {value} ", f"{value:e}", repr(float(value))])


@given(st.data())
def test_quoted_numbers_in_a_context_read_as_the_numbers(data: st.DataObject) -> None:
    plain = template()

    def respell(node: Any) -> Any:
        if isinstance(node, dict):
            return {k: respell(v) for k, v in node.items()}
        if isinstance(node, str) and _NUMERIC.fullmatch(node):
            return data.draw(_spellings(float(node)))
        if isinstance(node, int | float) and not isinstance(node, bool):
            return data.draw(_spellings(node))
        return node

    quoted = {
        **plain,
        "machine": respell(plain["machine"]),
        "resource_costs": respell(plain["resource_costs"]),
    }
    assert from_context(quoted, "w.json") == from_context(plain, "w.json")
