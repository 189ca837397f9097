"""Measured use against declarations: warned at once, and the run's verdict judged by the measured figures."""

from __future__ import annotations

import asyncio
import json
import re
import warnings
from pathlib import Path
from typing import Any

import pytest
from cli_helpers import jsonl, run
from runtime_helpers import child

from peakopt.models import Machine, Task, Workflow
from peakopt.runtime.controller import Controller
from peakopt.runtime.governor import Governor
from peakopt.runtime.hindsight import score_trace
from peakopt.runtime.overuse import Excess, OverDeclared, excesses
from peakopt.runtime.policies import named_policy
from peakopt.runtime.steps import Step
from peakopt.runtime.verdict import judge_run, verdict_line

#: A 512 MiB machine: two steps that hold 300 MiB each overflow it together.
SMALL = Machine(name="small", capacity={"cpu": 2, "memory_mb": 512})


def flow(**declared: float) -> Workflow:
    """Independent steps, each declaring this many MiB and a core (a Python child uses at most one)."""
    tasks = [Task(id=i, duration=1.0, demand={"memory_mb": m, "cpu": 1}) for i, m in declared.items()]
    return Workflow(id="w", tasks=tuple(tasks))


@pytest.mark.parametrize(
    ("declared", "used", "resources", "found"),
    [
        ({"memory_mb": 100}, {"memory_mb": 400}, None, [Excess("memory_mb", 100, 400)]),
        ({"memory_mb": 100}, {"memory_mb": 100}, None, []),  # equal is not over
        ({"memory_mb": 100}, {"memory_mb": 99.9}, None, []),
        ({"memory_mb": 100}, {"memory_mb": 100.05}, None, [Excess("memory_mb", 100, 100.05)]),
        ({}, {"cpu": 0.2}, None, [Excess("cpu", 0.0, 0.2)]),  # nothing declared is 0 declared
        ({"cpu": 1}, {"cpu": 0.5, "memory_mb": 3}, {"cpu"}, []),  # memory not constrained: not compared
        (
            {"cpu": 0.5, "memory_mb": 100},
            {"memory_mb": 400, "cpu": 1.5},
            {"cpu", "memory_mb"},
            [Excess("cpu", 0.5, 1.5), Excess("memory_mb", 100, 400)],
        ),
        ({"gpu": 1}, {}, None, []),
    ],
)
def test_excesses_are_the_resources_used_above_their_declaration(
    declared: dict[str, float], used: dict[str, float], resources: set[str] | None, found: list[Excess]
) -> None:
    assert excesses(declared, used, resources) == found


def liars() -> tuple[Workflow, dict[str, Step]]:
    """Two steps that declare 100 MiB and hold 300 for a second: admitted together, they overflow."""
    workflow = flow(a=100, b=100)
    return workflow, {t.id: child((300, 1.0, 0)) for t in workflow.tasks}


def controlled(workflow: Workflow, steps: dict[str, Step], **options: Any) -> tuple[Any, list[str]]:
    """A measured run; the trace, and the progress and warning lines in the order they came."""
    lines: list[str] = []
    controller = Controller(
        workflow,
        SMALL,
        named_policy("admission", workflow, SMALL),
        steps,
        measure=True,
        interval=0.05,
        progress=lines.append,
        warn=lambda line: lines.append("WARNING " + line),
        **options,
    )
    return asyncio.run(controller.run()), lines


def test_a_step_over_its_declaration_is_warned_while_it_runs_and_the_verdict_is_measured() -> None:
    workflow, steps = liars()
    trace, lines = controlled(workflow, steps)
    assert trace.status == "ok"
    for step in ("a", "b"):
        told = [k for k, line in enumerate(lines) if line.startswith(f"WARNING step {step!r}")]
        assert len(told) == 1, lines  # once, however many samples saw it
        line = lines[told[0]]
        assert re.search(
            r"memory_mb [\d.]+ measured against 100 declared \(at [\d.]+ s, while it runs\)", line
        )
        measured = float(line.split("memory_mb ")[1].split()[0])
        assert measured > 100
        done = next(k for k, line in enumerate(lines) if line.endswith(f"done {step}"))
        assert told[0] < done, lines  # at once: before the step ended
    verdict = judge_run(trace)
    assert verdict.demand == "measured" and verdict.declared.safe
    assert not verdict.score.safe and verdict.score.avoidable_cva > 0
    assert set(verdict.over) == {"a", "b"}
    assert all(e.resource == "memory_mb" and e.measured > 250 for e in verdict.over["a"])
    assert verdict_line(trace).startswith("UNSAFE by measured use (2 steps over their declaration; by the ")
    row, _ = score_trace(trace, "t", demand="measured", time_limit=5)
    assert row.safe is False and row.efficiency == 0.0  # the score and the verdict agree


def test_an_honest_measured_run_warns_nothing_and_is_safe_by_measured_use() -> None:
    workflow = flow(a=350, b=350)  # never together on 512 MiB
    steps: dict[str, Step] = {t.id: child((150, 0.2, 0)) for t in workflow.tasks}
    trace, lines = controlled(workflow, steps)
    assert not [line for line in lines if line.startswith("WARNING")], lines
    verdict = judge_run(trace)
    assert verdict.demand == "measured" and verdict.score.safe and verdict.over == {}
    assert verdict_line(trace).startswith("safe by measured use: avoidable cva 0,")


def test_average_cores_over_the_declaration_are_warned_when_the_step_ends() -> None:
    workflow = Workflow(
        id="w", tasks=(Task(id="burn", duration=0.5, demand={"cpu": 0.05, "memory_mb": 400}),)
    )
    _, lines = controlled(workflow, {"burn": child((10, 0.5, 1))})
    (line,) = [line for line in lines if line.startswith("WARNING")]
    assert re.fullmatch(
        r"WARNING step 'burn' used more than it declared: cpu [\d.]+ measured against 0\.05 declared "
        r"\(at [\d.]+ s, at its end\)",
        line,
    )


def test_without_a_report_the_controller_warns_over_declared() -> None:
    workflow, steps = liars()
    controller = Controller(
        workflow, SMALL, named_policy("admission", workflow, SMALL), steps, measure=True, interval=0.05
    )
    with pytest.warns(OverDeclared) as told:
        asyncio.run(controller.run())
    assert sorted(str(w.message).split(" used more")[0] for w in told) == ["step 'a'", "step 'b'"]
    assert all("memory_mb" in str(w.message) for w in told)


def test_callable_steps_of_a_measured_run_are_judged_with_their_declarations() -> None:
    workflow = flow(a=100, b=100)

    async def tool() -> dict[str, int]:
        await asyncio.sleep(0.05)
        return {"rows": 3}

    steps: dict[str, Step] = {"a": tool, "b": child((20, 0.1, 0))}
    trace, _ = controlled(workflow, steps)
    assert trace.status == "ok" and trace.steps[0].usage is None and trace.steps[1].usage is not None
    verdict = judge_run(trace)
    assert verdict.demand == "measured" and verdict.score.safe and verdict.over == {}


def write_liars(tmp_path: Path) -> Path:
    tasks = [
        {
            "id": i,
            "duration": 1.0,
            "demand": {"memory_mb": 100, "cpu": 1},
            "meta": {"command": child((300, 1.0, 0))},
        }
        for i in ("a", "b")
    ]
    path = tmp_path / "liars.json"
    machines = [{"name": "small", "capacity": dict(SMALL.capacity)}]
    path.write_text(json.dumps({"machines": machines, "workflows": [{"id": "w", "tasks": tasks}]}))
    return path


def test_peakopt_run_measure_warns_each_liar_and_its_verdict_agrees_with_score_measured(
    tmp_path: Path,
) -> None:
    trace = tmp_path / "trace.json"
    code, _, err = run("run", str(write_liars(tmp_path)), "--machine", "small", "--measure", "-o", str(trace))
    assert code == 0, err
    lines = err.splitlines()
    for step in ("a", "b"):
        (warned,) = [
            line for line in lines if line.startswith(f"Warning: step {step!r} used more than it declared")
        ]
        assert "measured against 100 declared" in warned
    (verdict,) = [line for line in lines if "avoidable cva" in line]
    assert verdict.startswith(
        "UNSAFE by measured use (2 steps over their declaration; by the declared demands safe)"
    )
    (row,) = jsonl(run("score", str(trace), "--demand", "measured", "--json")[1])
    assert row["safe"] is False and row["efficiency"] == 0.0
    (declared,) = jsonl(run("score", str(trace), "--json")[1])
    assert declared["safe"] is True


def test_peakopt_run_quiet_still_warns(tmp_path: Path) -> None:
    code, _, err = run("run", str(write_liars(tmp_path)), "--machine", "small", "--measure", "-q")
    assert code == 0, err
    assert sum(line.startswith("Warning: step ") for line in err.splitlines()) == 2


def test_a_governor_trace_with_measured_usage_over_the_declarations_is_judged_unsafe() -> None:
    now = [0.0]
    governor = Governor(SMALL, clock=lambda: now[0])
    first = governor.acquire_blocking("embed", demand={"memory_mb": 100})
    second = governor.acquire_blocking("embed", demand={"memory_mb": 100})  # fits beside it: admitted
    assert first.admitted_at is not None and second.admitted_at is not None
    for lease in (first, second):
        now[0] += 1.0  # both ran over [0, 1) at least
        with pytest.warns(
            OverDeclared, match=rf"call {lease.id!r} used more than it declared: memory_mb 400"
        ):
            governor.release(lease, usage={"memory_mb": 400})
    trace = governor.trace()
    verdict = judge_run(trace)
    assert verdict.demand == "measured" and verdict.declared.safe and not verdict.score.safe
    assert set(verdict.over) == {"embed", "embed#2"}
    row, _ = score_trace(trace, "gov", demand="measured", time_limit=5)
    assert row.safe is False and row.efficiency == 0.0


def test_a_governor_trace_without_usage_is_judged_by_its_declarations() -> None:
    governor = Governor(SMALL)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        governor.release(governor.acquire_blocking("a", demand={"memory_mb": 100}))
    verdict = judge_run(governor.trace())
    assert verdict.demand == "declared" and verdict.score.safe
