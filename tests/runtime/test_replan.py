"""Re-planning a controlled run (peakopt.runtime.replan): an overrun re-plans, the oracle checks each plan."""

from __future__ import annotations

import asyncio
import json
import math
import re
from pathlib import Path
from typing import TypedDict

import pytest
from cli_helpers import run
from runtime_helpers import peak_loads

from peakopt.models import Machine, Schedule, Task, Workflow
from peakopt.oracle import broken_pins, evaluate
from peakopt.oracle.uncertain.dispatch import LOAD_SLACK
from peakopt.runtime.controller import run_workflow
from peakopt.runtime.policies import named_policy
from peakopt.runtime.replan import Moment, Replan, pins_at
from peakopt.runtime.steps import StepFunction
from peakopt.runtime.trace import ReplanRecord, Trace, load_trace, trace_json
from peakopt.solver.heuristics.online import online_policy

#: 10 MiB: "a" and "c" (6 each) never run together; "b" (4) fits beside either.
BOX = Machine(name="box", capacity={"memory_mb": 10})


def step(name: str, declared: float, memory: float, sleeps: float, after: tuple[str, ...] = ()) -> Task:
    """A step declared to take ``declared`` seconds whose command sleeps ``sleeps``."""
    return Task(
        id=name,
        duration=declared,
        demand={"memory_mb": memory},
        depends_on=after,
        meta={"command": f"sleep {sleeps}"},
    )


#: "a" is declared 0.2 s and sleeps 1 s: it overruns, twice (at 0.3 s and about 0.8 s).
OVERRUN = Workflow(
    id="w",
    tasks=(
        step("a", 0.2, 6, 1.0),
        step("b", 0.2, 4, 0.2),
        step("c", 0.3, 6, 0.3),
        step("d", 0.2, 4, 0.2, ("b",)),
        step("e", 0.1, 2, 0.1, ("a", "c")),
    ),
)


def ms_up(seconds: float) -> float:
    return math.ceil(round(seconds * 1000, 3)) / 1000


def check_replan(entry: ReplanRecord, trace: Trace, machine: Machine) -> None:
    """The oracle's check of one re-plan, from the trace alone.

    The plan keeps every step that had started where it started (rounded up to 1 ms), starts
    no other before the re-plan, and is valid and safe with the run times it assumed (at least
    the actual ones of the steps that had ended, at least the time so far of the others).
    """
    assert entry.status in ("optimal", "feasible"), entry.message
    assert entry.plan is not None and entry.assumed is not None and entry.makespan is not None
    records = {s.id: s for s in trace.steps}
    started = {s: r for s, r in records.items() if r.start is not None and r.start <= entry.at}
    assert set(entry.assumed) == set(started)
    fixed = {}
    for name, rec in started.items():
        assert rec.start is not None and rec.end is not None
        assert entry.plan[name] == pytest.approx(ms_up(rec.start), abs=1e-3)
        assert entry.plan[name] >= rec.start - 1e-6
        fixed[name] = entry.plan[name]
        ran = (rec.end if rec.end <= entry.at else entry.at) - rec.start
        assert entry.assumed[name] >= ran - 1e-3
    release = {s: entry.at for s in entry.plan if s not in started}
    schedule = Schedule(workflow=trace.workflow.id, starts=entry.plan)
    assert broken_pins(schedule, fixed, release) == []
    tasks = tuple(
        t.model_copy(update={"duration": entry.assumed.get(t.id, t.length)})
        for t in trace.workflow.tasks
        if t.id in entry.plan
    )
    planned = trace.workflow.model_copy(update={"tasks": tasks})
    score = evaluate(planned, machine, schedule)
    assert score.valid and score.safe, score.reasons
    assert score.makespan == pytest.approx(entry.makespan)


def within(trace: Trace, machine: Machine) -> None:
    for resource, load in peak_loads(trace, trace.workflow, machine).items():
        assert load <= machine.capacity[resource] * (1 + LOAD_SLACK), (resource, load)
    workflow, schedule = trace.realised()
    assert evaluate(workflow, machine, schedule).safe


def test_an_overrun_of_real_subprocesses_re_plans_and_each_plan_keeps_the_fixed_starts() -> None:
    policy = named_policy("optimal", OVERRUN, BOX)
    trace = run_workflow(OVERRUN, BOX, policy, name="optimal", replan=Replan(threshold=0.25))
    assert trace.status == "ok", [s.error for s in trace.steps]
    assert trace.replans
    assert any("a" in r.steps for r in trace.replans)  # (on a loaded machine, a short step may overrun too)
    for entry in trace.replans:
        check_replan(entry, trace, BOX)
    within(trace, BOX)
    # the run went on in the last plan's order: the steps not started then started in it
    last = trace.replans[-1]
    assert last.plan is not None
    records = {s.id: s for s in trace.steps}
    later = sorted((s for s in last.plan if (records[s].start or 0) > last.at), key=last.plan.__getitem__)
    starts = [records[s].start or 0.0 for s in later]
    assert starts == sorted(starts)


def sleeper(seconds: float) -> StepFunction:
    async def step() -> int | None:
        await asyncio.sleep(seconds)
        return 0

    return step


def test_async_steps_re_plan_too_and_a_step_ten_times_late_re_plans_a_few_times() -> None:
    workflow = Workflow(
        id="w",
        tasks=(
            Task(id="slow", duration=0.05, demand={"memory_mb": 6}),
            Task(id="x", duration=0.1, demand={"memory_mb": 6}),
            Task(id="y", duration=0.1, demand={"memory_mb": 2}, depends_on=("slow",)),
        ),
    )
    steps = {"slow": sleeper(0.6), "x": sleeper(0.1), "y": sleeper(0.1)}
    replan = Replan(threshold=0.0)  # the grace (0.1 s) keeps the on-time steps from counting
    trace = run_workflow(workflow, BOX, online_policy("admission", workflow, BOX), steps, replan=replan)
    assert trace.status == "ok"
    assert trace.replans is not None
    # each overrun doubles what the step is assumed to take: a few re-plans, not one per tick
    late = [r for r in trace.replans if "slow" in r.steps]
    assert 2 <= len(late) <= 6, [r.reason for r in trace.replans]
    for entry in trace.replans:
        check_replan(entry, trace, BOX)
    within(trace, BOX)


def test_a_run_without_overruns_records_no_re_plan_and_old_traces_read_as_before(tmp_path: Path) -> None:
    workflow = Workflow(id="w", tasks=(Task(id="a", duration=5.0, demand={"memory_mb": 1}),))
    steps = {"a": sleeper(0.05)}
    trace = run_workflow(workflow, BOX, online_policy("asap", workflow, BOX), steps, replan=Replan())
    assert trace.replans == ()
    assert json.loads(trace_json(trace))["replans"] == []
    plain = run_workflow(workflow, BOX, online_policy("asap", workflow, BOX), steps)
    data = json.loads(trace_json(plain))
    assert "replans" not in data and data["version"] == 1  # a run without --replan writes what it wrote
    path = tmp_path / "old.json"
    path.write_text(json.dumps(data))
    assert load_trace(path).replans is None


def test_an_unguarded_run_whose_started_steps_overflow_records_the_refused_re_plan() -> None:
    workflow = Workflow(
        id="w",
        tasks=(
            Task(id="a", duration=0.05, demand={"memory_mb": 6}),
            Task(id="b", duration=0.3, demand={"memory_mb": 6}),
        ),
    )
    steps = {"a": sleeper(0.3), "b": sleeper(0.3)}
    policy = online_policy("asap", workflow, BOX)
    trace = run_workflow(workflow, BOX, policy, steps, guard=False, replan=Replan(threshold=0, grace=0))
    assert trace.status == "ok"
    assert trace.replans
    entry = trace.replans[0]
    assert entry.status == "error" and entry.plan is None
    assert entry.message is not None and "together exceed the capacity" in entry.message


def test_the_rest_rounds_every_instant_up_to_a_millisecond() -> None:
    moment = Moment(
        now=0.5003,
        starts={"a": 0.0000004, "b": 0.2004, "c": 0.2004},
        ends={"a": 0.2004, "b": 0.3},
        lengths={"c": 0.4},
        skipped=frozenset({"d"}),
    )
    workflow = Workflow(
        id="w",
        tasks=(
            Task(id="a", duration=0.1),
            Task(id="b", duration=0.1, depends_on=("a",)),
            Task(id="c", profile=[{"duration": 0.1}, {"duration": 0.1}]),
            Task(id="d", duration=0.1, depends_on=("b",)),
            Task(id="e", duration=0.125),
        ),
    )
    rest, fixed, release = pins_at(workflow, moment)
    assert [t.id for t in rest.tasks] == ["a", "b", "c", "e"]  # d never runs
    assert fixed == {"a": 0.001, "b": 0.201, "c": 0.201}
    # a ended as b started: rounded the same way, b still starts when a ends
    assert {t.id: t.length for t in rest.tasks} == pytest.approx({"a": 0.2, "b": 0.099, "c": 0.4, "e": 0.125})
    assert [s.duration for s in rest.tasks[2].segments] == [0.2, 0.2]  # in proportion
    assert release == {"e": 0.501}


class ReplanOptions(TypedDict, total=False):
    """:class:`Replan`'s float options, as a test passes them."""

    threshold: float
    grace: float
    time_limit: float


@pytest.mark.parametrize(
    "options", [{"threshold": -0.1}, {"grace": math.inf}, {"time_limit": 0.0}, {"time_limit": math.nan}]
)
def test_replan_options_are_checked(options: ReplanOptions) -> None:
    with pytest.raises(ValueError, match="re-plan"):
        Replan(**options)


def test_peakopt_run_replan_writes_the_re_plans_into_the_trace(tmp_path: Path) -> None:
    tasks = [
        {
            "id": t.id,
            "duration": t.length,
            "demand": dict(t.segments[0].demand),
            "depends_on": list(t.depends_on),
            "meta": dict(t.meta),
        }
        for t in OVERRUN.tasks
    ]
    path = tmp_path / "wf.json"
    path.write_text(json.dumps({"machines": [BOX.model_dump()], "workflows": [{"id": "w", "tasks": tasks}]}))
    trace_path = tmp_path / "trace.json"
    code, _, err = run(
        "run", str(path), "--policy", "optimal", "--replan", "--replan-limit", "0.1", "-o", str(trace_path)
    )
    assert code == 0, err
    assert "re-plan (a overran)" in err
    assert re.fullmatch(r"\d+ re-plans?, the slowest in \d+ ms", err.strip().splitlines()[-1])
    trace = load_trace(trace_path)
    assert trace.replans
    for entry in trace.replans:
        check_replan(entry, trace, BOX)
    assert run("run", str(path), "--replan", "--replan-threshold", "-1")[0] == 2
    assert run("run", str(path), "--replan", "--replan-limit", "0")[0] == 2


def test_a_failure_re_plans_without_the_skipped_steps_so_the_plan_order_does_not_stall() -> None:
    # the optimal order puts "b" (after "a") before "d": once "a" fails, "b" never becomes ready
    workflow = Workflow(
        id="w",
        tasks=(
            Task(id="a", duration=0.1, demand={"memory_mb": 6}, meta={"command": "exit 1"}),
            Task(id="b", duration=0.1, demand={"memory_mb": 6}, depends_on=("a",), meta={"command": "true"}),
            Task(id="c", duration=0.3, demand={"memory_mb": 6}, meta={"command": "sleep 0.3"}),
            Task(id="d", duration=0.1, demand={"memory_mb": 6}, meta={"command": "true"}),
        ),
    )
    trace = run_workflow(
        workflow, BOX, named_policy("optimal", workflow, BOX), name="optimal", replan=Replan()
    )
    assert [s.status for s in trace.steps] == ["failed", "skipped", "ok", "ok"]
    assert trace.replans
    entry = trace.replans[0]
    assert entry.steps == ("a",) and entry.reason == "'a' failed"
    assert entry.plan is not None and "b" not in entry.plan
    check_replan(entry, trace, BOX)
    within(trace, BOX)
