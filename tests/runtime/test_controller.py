"""The admission controller (peakopt.runtime.controller): real steps under declared capacities."""

from __future__ import annotations

import asyncio
import contextlib
import random
import sys
import time
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path

import psutil
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from runtime_helpers import child, overlapping, peak_loads
from strategies import machines, workflows

from peakopt.models import Machine, Task, Workflow
from peakopt.oracle import evaluate
from peakopt.oracle.uncertain.dispatch import LOAD_SLACK
from peakopt.runtime.controller import Controller, ControllerError, commands, run_workflow
from peakopt.runtime.policies import named_policy
from peakopt.runtime.steps import StepFunction
from peakopt.runtime.trace import Trace, load_trace, trace_json
from peakopt.solver.heuristics.online import online_policy

BOX = Machine(name="box", capacity={"cpu": 2, "memory_mb": 300})


def sleeper(seconds: float, code: int | None = 0) -> StepFunction:
    async def step() -> int | None:
        await asyncio.sleep(seconds)
        return code

    return step


def flat(*specs: tuple[str, float, float, tuple[str, ...]]) -> Workflow:
    """Tasks (id, seconds, memory_mb, predecessors)."""
    tasks = [
        Task(id=i, duration=d, demand={"memory_mb": m, "cpu": 0.5}, depends_on=p) for i, d, m, p in specs
    ]
    return Workflow(id="w", tasks=tuple(tasks))


#: Four 200 MiB steps on a 300 MiB box: any two together overflow it.
FOUR = flat(("a", 0.2, 200, ()), ("b", 0.2, 200, ()), ("c", 0.2, 200, ()), ("d", 0.1, 50, ("a",)))


def sleepers(workflow: Workflow, code: Mapping[str, int] | None = None) -> dict[str, StepFunction]:
    return {t.id: sleeper(t.length, (code or {}).get(t.id, 0)) for t in workflow.tasks}


def within(trace: Trace, workflow: Workflow, machine: Machine) -> None:
    loads = peak_loads(trace, workflow, machine)
    for resource, load in loads.items():
        assert load <= machine.capacity[resource] * (1 + LOAD_SLACK), (resource, load)


def test_guard_keeps_every_admitted_set_within_capacity_and_the_trace_scores_safe() -> None:
    policy = online_policy("asap", FOUR, BOX)  # the policy would start them all at once
    trace = run_workflow(FOUR, BOX, policy, sleepers(FOUR), name="asap")
    assert trace.status == "ok" and trace.guarded
    within(trace, FOUR, BOX)
    workflow, schedule = trace.realised()
    score = evaluate(workflow, BOX, schedule)
    assert score.safe and score.valid and score.avoidable_cva == 0
    assert not overlapping(trace, ["a", "b", "c"])


def test_unguarded_asap_overlaps_the_same_steps_and_is_unsafe() -> None:
    policy = online_policy("asap", FOUR, BOX)
    trace = run_workflow(FOUR, BOX, policy, sleepers(FOUR), name="asap", guard=False)
    assert overlapping(trace, ["a", "b", "c"])
    assert peak_loads(trace, FOUR, BOX)["memory_mb"] > BOX.capacity["memory_mb"]
    workflow, schedule = trace.realised()
    assert not evaluate(workflow, BOX, schedule).safe


def test_an_over_capacity_step_runs_alone() -> None:
    big = flat(("huge", 0.2, 900, ()), ("x", 0.2, 10, ()), ("y", 0.2, 10, ()))
    trace = run_workflow(big, BOX, online_policy("asap", big, BOX), sleepers(big))
    huge = next(s for s in trace.steps if s.id == "huge")
    for other in trace.steps:
        if other.id != "huge":
            assert other.end <= huge.start or other.start >= huge.end
    workflow, schedule = trace.realised()
    assert evaluate(workflow, BOX, schedule).safe  # its overload is the floor, not avoidable


def test_dependencies_hold_and_the_policy_sees_only_running_steps() -> None:
    seen: list[tuple[tuple[str, ...], tuple[str, ...]]] = []

    def spy(
        now: float, ready: Sequence[str], running: Mapping[str, float], free: Mapping[str, float]
    ) -> Iterable[str]:
        seen.append((tuple(ready), tuple(running)))
        assert set(free) == {"cpu", "memory_mb"}
        return ready

    trace = run_workflow(FOUR, BOX, spy, sleepers(FOUR))
    ends = {s.id: s.end for s in trace.steps}
    starts = {s.id: s.start for s in trace.steps}
    assert starts["d"] >= ends["a"]
    for ready, running in seen:
        assert not set(ready) & set(running)
        assert all(ends[r] is not None for r in running)
    assert seen[0][0] == ("a", "b", "c")


def test_continue_skips_what_depends_on_a_failed_step_and_runs_the_rest() -> None:
    trace = run_workflow(FOUR, BOX, online_policy("admission", FOUR, BOX), sleepers(FOUR, {"a": 3}))
    status = {s.id: s.status for s in trace.steps}
    assert status == {"a": "failed", "b": "ok", "c": "ok", "d": "skipped"}
    assert trace.status == "failed"
    assert next(s for s in trace.steps if s.id == "a").error == "returned 3"
    workflow, schedule = trace.realised()  # the steps that ran are still judged
    assert set(schedule.starts) == {"a", "b", "c"} and evaluate(workflow, BOX, schedule).safe


def test_stop_starts_nothing_after_a_failure() -> None:
    serial = flat(("a", 0.05, 200, ()), ("b", 0.05, 200, ()), ("c", 0.05, 200, ()))
    trace = run_workflow(
        serial, BOX, online_policy("serial", serial, BOX), sleepers(serial, {"a": 1}), on_failure="stop"
    )
    assert [s.status for s in trace.steps] == ["failed", "skipped", "skipped"]


def test_a_raising_callable_fails_its_step() -> None:
    async def boom() -> int:
        raise ValueError("no such order")

    one = flat(("a", 0.0, 1, ()))
    trace = run_workflow(one, BOX, online_policy("asap", one, BOX), {"a": boom})
    assert trace.steps[0].status == "failed" and trace.steps[0].error == "ValueError: no such order"


def test_a_policy_that_picks_a_step_not_ready_or_stalls_fails_the_run_with_its_trace() -> None:
    trace = run_workflow(FOUR, BOX, lambda now, ready, running, free: ["d"], sleepers(FOUR), name="bad")
    assert trace.status == "failed" and "policy 'bad' started step 'd' at time" in (trace.error or "")
    assert "not ready" in (trace.error or "")
    assert all(s.status == "skipped" for s in trace.steps)
    trace = run_workflow(FOUR, BOX, lambda now, ready, running, free: [], sleepers(FOUR), name="bad")
    assert trace.status == "failed" and "policy 'bad' stalled" in (trace.error or "")
    # the running steps finish: the first answer starts a, the second raises
    answers = iter([["a"]])
    trace = run_workflow(
        FOUR, BOX, lambda now, ready, running, free: next(answers), sleepers(FOUR), name="bad"
    )
    assert [s.status for s in trace.steps] == ["ok", "skipped", "skipped", "skipped"]
    assert "policy 'bad' raised StopIteration" in (trace.error or "")
    assert Trace.model_validate_json(trace_json(trace)).error == trace.error


def test_steps_without_a_command_are_named() -> None:
    workflow = flat(("a", 0.1, 1, ()), ("b", 0.1, 1, ()))
    with pytest.raises(ControllerError, match="steps 'a', 'b' have no command"):
        commands(workflow)
    assert commands(workflow, {"a": "true", "b": ["echo", "b"]}) == {"a": "true", "b": ("echo", "b")}
    with pytest.raises(ControllerError, match="step 'b' has no command"):
        Controller(workflow, BOX, online_policy("asap", workflow, BOX), {"a": "true"})


def test_meta_command_lists_become_argument_vectors() -> None:
    task = Task(id="a", duration=0.1, meta={"command": ["echo", "hi"]})
    assert commands(Workflow(id="w", tasks=(task,))) == {"a": ("echo", "hi")}


def test_the_trace_file_reads_back_and_is_checked(tmp_path) -> None:  # type: ignore[no-untyped-def]
    trace = run_workflow(FOUR, BOX, online_policy("admission", FOUR, BOX), sleepers(FOUR))
    path = tmp_path / "trace.json"
    path.write_text(trace_json(trace))
    assert load_trace(path) == trace
    path.write_text('{"format": "peakopt-trace", "steps": 3}')
    with pytest.raises(Exception, match=r"trace\.json: .*"):
        load_trace(path)
    path.write_text('{"steps": []}')
    with pytest.raises(Exception, match="is not a peakopt trace"):
        load_trace(path)


def test_robust_and_optimal_policies_run_their_reference_order() -> None:
    for name in ("robust", "optimal"):
        policy = named_policy(name, FOUR, BOX, time_limit=5)
        trace = run_workflow(FOUR, BOX, policy, sleepers(FOUR), name=name)
        within(trace, FOUR, BOX)
        assert trace.status == "ok"


def test_a_plans_order_goes_on_past_the_steps_a_failure_skips() -> None:
    # the plan runs a first, then its long successor b, then c and d one at a time: once a fails,
    # b never becomes ready, and the plan's strict order must not wait for it
    chain = flat(("a", 0.05, 200, ()), ("b", 2.0, 200, ("a",)), ("c", 0.05, 200, ()), ("d", 0.05, 200, ()))
    for name in ("robust", "optimal"):
        policy = named_policy(name, chain, BOX, time_limit=5)
        trace = run_workflow(chain, BOX, policy, sleepers(chain, {"a": 1}), name=name)
        status = {s.id: s.status for s in trace.steps}
        assert status == {"a": "failed", "b": "skipped", "c": "ok", "d": "ok"}, name
        within(trace, chain, BOX)


@settings(max_examples=25, deadline=None)
@given(st.data(), st.sampled_from(["robust", "optimal"]))
def test_a_plans_order_never_stalls_whichever_steps_fail(data: st.DataObject, name: str) -> None:
    workflow = data.draw(workflows(max_tasks=6, piecewise=False))
    machine = data.draw(machines())
    failing = data.draw(st.sets(st.sampled_from([t.id for t in workflow.tasks])))
    policy = named_policy(name, workflow, machine, time_limit=2)
    steps = {t.id: sleeper(0.0, 1 if t.id in failing else 0) for t in workflow.tasks}
    trace = run_workflow(workflow, machine, policy, steps, name=name)
    expected: dict[str, str] = {}
    for j in workflow.topological_order:  # a step is skipped when a step it depends on did not end well
        task = workflow.tasks[j]
        if any(expected[p] != "ok" for p in task.depends_on):
            expected[task.id] = "skipped"
        else:
            expected[task.id] = "failed" if task.id in failing else "ok"
    assert {s.id: s.status for s in trace.steps} == expected


# --- real subprocesses ----------------------------------------------------------------------


def memory_workflow(mib: float = 120, seconds: float = 0.6) -> tuple[Workflow, Machine]:
    """Three real children of ``mib`` MiB each, declared at that plus the interpreter; room for two."""
    declared = mib + 40
    tasks = tuple(
        Task(
            id=f"s{k}",
            duration=seconds,
            demand={"memory_mb": declared},
            meta={"command": child((mib, seconds, 0))},
        )
        for k in range(3)
    )
    return Workflow(id="mem", tasks=tasks), Machine(name="small", capacity={"memory_mb": 2 * declared + 10})


@pytest.mark.slow
def test_real_subprocesses_under_the_controller_never_exceed_the_capacity() -> None:
    workflow, machine = memory_workflow()
    assert sum(t.peak("memory_mb") for t in workflow.tasks) > machine.capacity["memory_mb"]
    trace = run_workflow(
        workflow, machine, online_policy("asap", workflow, machine), measure=True, interval=0.05
    )
    assert trace.status == "ok", [s.error for s in trace.steps]
    within(trace, workflow, machine)
    rw, schedule = trace.realised()
    assert evaluate(rw, machine, schedule).safe
    for step in trace.steps:  # measured: each child held its 120 MiB (sampled, so within a margin)
        assert step.usage is not None and 100 <= step.usage.memory_peak_mb <= 200, step.usage
        assert step.pid is not None and not psutil.pid_exists(step.pid)
    unguarded = run_workflow(workflow, machine, online_policy("asap", workflow, machine), guard=False)
    assert overlapping(unguarded, [t.id for t in workflow.tasks])
    assert peak_loads(unguarded, workflow, machine)["memory_mb"] > machine.capacity["memory_mb"]


def test_a_failing_command_keeps_the_end_of_its_stderr() -> None:
    task = Task(id="a", duration=0.1, meta={"command": "echo 'disk full' >&2; exit 7"})
    workflow = Workflow(id="w", tasks=(task,))
    trace = run_workflow(workflow, BOX, online_policy("asap", workflow, BOX))
    assert trace.steps[0].exit_code == 7 and trace.steps[0].error == "disk full"


def test_a_step_ends_with_its_process_even_if_a_child_keeps_its_stderr_open() -> None:
    task = Task(id="a", duration=0.1, meta={"command": "sleep 5 & echo started"})
    workflow = Workflow(id="w", tasks=(task,))
    began = time.monotonic()
    trace = run_workflow(workflow, BOX, online_policy("asap", workflow, BOX))
    assert trace.steps[0].status == "ok" and time.monotonic() - began < 4


#: Commands whose program cannot be started, as shell lines and as argument vectors: (command, exit code).
UNSTARTABLE = [
    ("no-such-program-here --flag", 127),
    (["no-such-program-here", "--flag"], 127),
    (["/no/such/directory/program"], 127),
    ([sys.executable + "/not-a-directory"], 127),  # a path through a file
    (["/"], 126),  # a directory
    (["NOT-EXECUTABLE"], 126),  # a file without its x bits (made by the test)
]


@pytest.mark.parametrize(("command", "code"), UNSTARTABLE, ids=lambda c: str(c))
def test_a_program_that_cannot_be_started_fails_its_step_and_the_run_goes_on(
    command: str | list[str], code: int, tmp_path: Path
) -> None:
    if command == ["NOT-EXECUTABLE"]:
        (tmp_path / "program").write_text("#!/bin/sh\n")
        (tmp_path / "program").chmod(0o644)
        command = [str(tmp_path / "program")]
    tasks = (
        Task(id="a", duration=0.1, meta={"command": command}),
        Task(id="b", duration=0.1, depends_on=("a",), meta={"command": "true"}),
        Task(id="c", duration=0.1, meta={"command": ["true"]}),
    )
    workflow = Workflow(id="w", tasks=tasks)
    trace = run_workflow(workflow, BOX, online_policy("serial", workflow, BOX))
    a, b, c = trace.steps
    assert a.status == "failed" and a.exit_code == code and a.start is not None and a.end is not None
    assert ("not found" if code == 127 else "") in (a.error or "") and a.error
    assert (b.status, c.status, trace.status) == ("skipped", "ok", "failed")


def test_a_process_a_step_leaves_running_ends_with_the_run() -> None:
    seconds = f"{100 + random.random():.9f}"  # finds it wherever it was reparented to
    line = f"sleep {seconds} > /dev/null 2>&1 & sleep 0.5"  # the step ends once its sleep runs
    task = Task(id="a", duration=0.5, meta={"command": line})
    workflow = Workflow(id="w", tasks=(task,))
    trace = run_workflow(workflow, BOX, online_policy("asap", workflow, BOX))
    assert trace.steps[0].status == "ok"
    left = []
    for process in psutil.process_iter():
        with contextlib.suppress(psutil.Error):
            if process.cmdline() == ["sleep", seconds] and process.status() != psutil.STATUS_ZOMBIE:
                left.append(process)
                process.kill()
    assert not left


def _tree(before: frozenset[int] = frozenset()) -> list[psutil.Process]:
    """This process's descendants, but those in ``before``.

    A test worker has children of its own beside the steps' (multiprocessing's resource tracker,
    left by an earlier test in the same worker, is a sleeping ``python``): they are not the run's;
    nor is the run's reaper.
    """
    return [p for p in psutil.Process().children(recursive=True) if p.pid not in before and not _reaper(p)]


def _reaper(process: psutil.Process) -> bool:
    """Whether ``process`` is a run's reaper (:mod:`peakopt.runtime.reaper`), not a step's."""
    with contextlib.suppress(psutil.Error):
        return "peakopt.runtime.reaper" in process.cmdline()
    return False


@pytest.mark.slow
def test_cancelling_a_run_kills_every_running_process_tree() -> None:
    # each step is a shell with two children; one of them leaves the process group (setsid)
    line = f"sleep 60 & setsid {sys.executable} -c 'import time; time.sleep(60)' & wait"
    tasks = tuple(Task(id=f"s{k}", duration=60, meta={"command": line}) for k in range(2))
    workflow = Workflow(id="w", tasks=tasks)
    machine = Machine(name="m", capacity={"cpu": 4})
    seen: list[psutil.Process] = []
    before = frozenset(p.pid for p in _tree())

    async def main() -> None:
        run = asyncio.create_task(
            Controller(workflow, machine, online_policy("asap", workflow, machine)).run()
        )
        deadline = time.monotonic() + 30
        while len(_tree(before)) < 6:  # 2 shells, each with sleep and python
            assert time.monotonic() < deadline, "steps did not start"
            await asyncio.sleep(0.05)
        seen.extend(_tree(before))
        run.cancel()
        with pytest.raises(asyncio.CancelledError):
            await run

    asyncio.run(main())
    alive = [p for p in seen if p.is_running() and p.status() != psutil.STATUS_ZOMBIE]
    assert not alive, alive
