"""Controller traces that contradict themselves are refused as strictly as a workflow.

Each step recorded once, times present for the steps that ran and in order, no step before its
dependencies ended, states consistent with each other and with the run's: one ``Error:`` naming
the file, the step and the rule. A table of hand-made variants, and a property that breaks one
record of random valid traces.
"""

from __future__ import annotations

import asyncio
import copy
import json
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from cli_helpers import run
from hypothesis import given, settings
from hypothesis import strategies as st
from strategies import machines, workflows

from peakopt.models import Machine, PeakoptError, Task, Workflow
from peakopt.oracle import evaluate
from peakopt.runtime.controller import run_workflow
from peakopt.runtime.names import ON_FAILURE
from peakopt.runtime.trace import StepRecord, Trace, load_trace, trace_json
from peakopt.solver.heuristics.online import online_policy

BOX = Machine(name="box", capacity={"cpu": 2, "memory_mb": 300})
WORKFLOW = Workflow(
    id="w",
    tasks=(
        Task(id="a", duration=1.0, demand={"cpu": 1}),
        Task(id="b", duration=1.0, demand={"cpu": 1}, depends_on=("a",)),
        Task(id="c", duration=1.5, demand={"cpu": 1}),
        Task(id="d", duration=1.0, demand={"cpu": 1}, depends_on=("b",)),
    ),
)
WHEN = "2026-12-01T17:40:00.123456+00:00"


def ok(step: str, start: float, end: float) -> StepRecord:
    return StepRecord(id=step, status="ok", start=start, end=end, exit_code=0, pid=4242)


def trace(*records: StepRecord, on_failure: str = "continue") -> dict[str, Any]:
    status = "ok" if all(r.status == "ok" for r in records) else "failed"
    found = Trace(
        workflow=WORKFLOW,
        machine=BOX,
        policy="asap",
        on_failure=on_failure,
        started_at=WHEN,
        status=status,
        steps=records,
    )
    return json.loads(trace_json(found))  # type: ignore[no-any-return]


def good() -> dict[str, Any]:
    return trace(ok("a", 0.0, 1.0), ok("b", 1.0, 2.0), ok("c", 0.0, 1.5), ok("d", 2.0, 3.0))


def failing(on_failure: str = "continue") -> dict[str, Any]:
    """a failed: b and d after it skipped, c ran."""
    failed = StepRecord(id="a", status="failed", start=0.0, end=1.0, exit_code=3, error="boom")
    skipped = [StepRecord(id=s, status="skipped") for s in ("b", "d")]
    return trace(failed, skipped[0], ok("c", 0.0, 1.5), skipped[1], on_failure=on_failure)


def record(data: dict[str, Any], step: str) -> dict[str, Any]:
    return next(r for r in data["steps"] if r["id"] == step)


Change = Callable[[dict[str, Any]], None]


def setting(step: str, **fields: Any) -> Change:
    """Set fields of a step's record (``...`` deletes one)."""

    def change(data: dict[str, Any]) -> None:
        found = record(data, step)
        for key, value in fields.items():
            if value is ...:
                found.pop(key, None)
            else:
                found[key] = value

    return change


def top(**fields: Any) -> Change:
    def change(data: dict[str, Any]) -> None:
        data.update(fields)

    return change


def again(step: str, **fields: Any) -> Change:
    def change(data: dict[str, Any]) -> None:
        data["steps"].append({**record(data, step), **fields})

    return change


def dropping(step: str) -> Change:
    def change(data: dict[str, Any]) -> None:
        data["steps"].remove(record(data, step))

    return change


def both(*changes: Change) -> Change:
    def change(data: dict[str, Any]) -> None:
        for one in changes:
            one(data)

    return change


GOOD: list[Any] = [
    (again("b"), "step 'b'.*recorded twice", "b", "recorded twice"),
    (again("b", start=1.5, end=2.5), "step 'b'.*recorded twice", "b", "twice, other times"),
    (again("a", status="failed"), "step 'a'.*recorded twice", "a", "twice, other status"),
    (dropping("c"), "step 'c'.*has no record", "c", "missing"),
    (setting("c", id="zz"), "step 'zz'.*is not a step of workflow 'w'", "zz", "unknown step"),
    (setting("c", id=5), "id is not", "5", "id a number"),
    (setting("c", id=...), "id is not", "#3", "id missing"),
    (top(steps={"a": {}}), "steps.*is not a list", "steps", "steps an object"),
    (top(steps=[5]), "step #1: is not an object", "#1", "record a number"),
    (setting("b", start=...), "step 'b'.*has no start", "b", "ok without start"),
    (setting("b", end=...), "step 'b'.*has no end", "b", "ok without end"),
    (setting("b", start=None), "step 'b'.*has no start", "b", "ok start null"),
    (setting("b", end=None), "step 'b'.*has no end", "b", "ok end null"),
    (setting("b", end=0.5), "step 'b'.*ends before it starts", "b", "end before start"),
    (setting("a", start=-1.0), "step 'a'.*start .*at least 0", "a", "start before the run"),
    (setting("a", end=-0.5), "step 'a'.*end .*at least 0", "a", "negative end"),
    (setting("a", start="0.5"), "step 'a'.*start .*JSON number", "a", "start a string"),
    (setting("a", start=True), "step 'a'.*start .*JSON number", "a", "start a boolean"),
    (setting("a", end=[1.0]), "step 'a'.*end .*JSON number", "a", "end a list"),
    (setting("a", end=float("nan")), "step 'a'.*end .*finite", "a", "end NaN"),
    (setting("a", end=float("inf")), "step 'a'.*end .*finite", "a", "end infinite"),
    (setting("b", start=0.5, end=1.5), "step 'b'.*before its dependency 'a' ended", "b", "before dependency"),
    (
        setting("d", start=1.5, end=2.5),
        "step 'd'.*before its dependency 'b' ended",
        "d",
        "before dependency 2",
    ),
    (setting("a", exit_code=3), "step 'a'.*ok .*exit code 3", "a", "ok with an exit code"),
    (setting("a", error="boom"), "step 'a'.*ok .*error", "a", "ok with an error"),
    (setting("a", exit_code="0"), "step 'a'.*exit_code .*integer", "a", "exit code a string"),
    (setting("a", exit_code=True), "step 'a'.*exit_code .*integer", "a", "exit code a boolean"),
    (setting("a", pid=1.5), "step 'a'.*pid .*integer", "a", "pid a float"),
    (setting("a", status="lost"), "step 'a'.*status", "a", "unknown status"),
    (
        setting("a", usage={"cpu_avg": -1, "cpu_peak": 1, "memory_peak_mb": 1}),
        "step 'a' usage cpu_avg",
        "a",
        "negative usage",
    ),
    (setting("a", extra=1), "step 'a': unknown key 'extra'", "a", "unknown key"),
    (setting("a", status=...), "step 'a'.*status", "a", "no status"),
    (setting("a", status="skipped"), "step 'a'.*skipped .*start", "a", "skipped with times"),
    (
        both(
            setting("d", status="skipped", start=..., end=..., exit_code=..., pid=...), top(status="failed")
        ),
        "step 'd'.*skipped though",
        "d",
        "skipped without cause",
    ),
    (top(status="failed"), "status 'failed' .*every step ran ok", "status", "failed run of ok steps"),
    (top(error="policy x raised"), "error: is given but the run's status is 'ok'", "error", "error, ok run"),
    (top(status="done"), "status", "status", "unknown run status"),
    (top(started_at="yesterday"), "started_at: .*ISO 8601", "started_at", "started_at not a time"),
    (top(started_at=5), "started_at", "started_at", "started_at a number"),
    (
        top(replans=[{"at": 1.0, "steps": ["zz"], "reason": "r", "seconds": 0.1, "status": "error"}]),
        "replan #1.*step 'zz'.*not a step",
        "zz",
        "replan of an unknown step",
    ),
    (
        top(
            replans=[
                {
                    "at": 1.0,
                    "steps": ["a"],
                    "reason": "r",
                    "seconds": 0.1,
                    "status": "optimal",
                    "plan": {"q": 1},
                }
            ]
        ),
        "replan #1.*step 'q'.*not a step",
        "q",
        "replan plan of an unknown step",
    ),
]
FAILING: list[Any] = [
    (
        setting("b", status="ok", start=1.0, end=2.0, exit_code=0),
        "step 'b'.*dependency 'a' failed",
        "b",
        "ran after a failure",
    ),
    (
        setting("d", status="ok", start=1.0, end=2.0, exit_code=0),
        "step 'd'.*dependency 'b' was skipped",
        "d",
        "ran after a skip",
    ),
    (setting("b", start=1.0), "step 'b'.*skipped .*start", "b", "skipped with a start"),
    (setting("b", end=1.0), "step 'b'.*skipped .*end", "b", "skipped with an end"),
    (setting("b", exit_code=0), "step 'b'.*skipped .*exit_code", "b", "skipped with an exit code"),
    (setting("b", pid=7), "step 'b'.*skipped .*pid", "b", "skipped with a pid"),
    (setting("a", start=...), "step 'a'.*has no start", "a", "failed without start"),
    (setting("a", end=...), "step 'a'.*has no end", "a", "failed without end"),
    (top(status="ok"), "status 'ok' .*step 'a' failed", "a", "ok run with a failed step"),
    (
        both(setting("c", status="skipped", start=..., end=..., exit_code=..., pid=...)),
        "step 'c'.*skipped though",
        "c",
        "skipped beside a failure (continue)",
    ),
]
CASES = [pytest.param(good, *case[:3], id=case[3]) for case in GOOD] + [
    pytest.param(failing, *case[:3], id=case[3]) for case in FAILING
]


@pytest.mark.parametrize(("make", "change", "rule", "who"), CASES)
def test_each_contradiction_is_one_error_naming_the_file_the_step_and_the_rule(
    tmp_path: Path, make: Callable[[], dict[str, Any]], change: Change, rule: str, who: str
) -> None:
    data = make()
    change(data)
    path = tmp_path / "trace.json"
    path.write_text(json.dumps(data))
    with pytest.raises(PeakoptError, match=rule) as caught:
        load_trace(path)
    assert who in str(caught.value)
    code, out, err = run("score", str(path))
    lines = err.strip().splitlines()
    assert code == 1 and out == "" and len(lines) == 1, err
    assert lines[0].startswith(f"Error: {path}: "), err


@pytest.mark.parametrize("make", [good, failing, lambda: failing("stop")])
def test_the_valid_traces_of_the_table_read(tmp_path: Path, make: Callable[[], dict[str, Any]]) -> None:
    path = tmp_path / "trace.json"
    path.write_text(json.dumps(make()))
    assert load_trace(path).model_dump() == Trace.model_validate(make()).model_dump()


def test_a_stopped_run_may_skip_steps_whose_dependencies_ran(tmp_path: Path) -> None:
    data = failing("stop")
    setting("c", status="skipped", start=..., end=..., exit_code=..., pid=...)(data)
    path = tmp_path / "trace.json"
    path.write_text(json.dumps(data))
    assert [s.status for s in load_trace(path).steps] == ["failed", "skipped", "skipped", "skipped"]
    data["steps"][0] = {"id": "a", "status": "ok", "start": 0.0, "end": 1.0}  # nothing failed now
    path.write_text(json.dumps(data))
    with pytest.raises(PeakoptError, match=r"step 'b'.*skipped though no step failed"):
        load_trace(path)


def test_a_run_its_policy_failed_may_skip_any_step_and_fail_with_every_step_ok(tmp_path: Path) -> None:
    # the controller records a policy's fault mid-run in trace.error: nothing more started, so
    # steps are skipped whose dependencies ran, and the run failed though no step did
    data = failing("continue")
    data["steps"][0] = {"id": "a", "status": "ok", "start": 0.0, "end": 1.0}
    path = tmp_path / "trace.json"
    path.write_text(json.dumps(data))
    with pytest.raises(PeakoptError, match=r"skipped though none of its dependencies failed"):
        load_trace(path)
    data["error"] = "policy m:f answered 5 (not a list of step ids)"
    path.write_text(json.dumps(data))
    trace = load_trace(path)
    assert trace.status == "failed" and trace.error is not None
    assert {s.status for s in trace.steps} == {"ok", "skipped"}


def test_a_trace_nested_too_deeply_is_one_error(tmp_path: Path) -> None:
    path = tmp_path / "trace.json"
    path.write_text('{"format": "peakopt-trace", "steps": ' + "[" * 100_000 + "]" * 100_000 + "}")
    code, _, err = run("score", str(path))
    assert code == 1 and err.count("Error:") == 1 and "Traceback" not in err and "deep" in err


def test_a_trace_that_is_not_utf8_is_one_error(tmp_path: Path) -> None:
    path = tmp_path / "trace.json"
    path.write_bytes(b'{"format": "peakopt-trace", "policy": "\xff"}')
    code, _, err = run("score", str(path))
    assert code == 1 and err.strip() == f"Error: {path}: is not UTF-8 text (byte 39)"


def sleeper(seconds: float, code: int) -> Callable[[], Any]:
    async def step() -> int:
        await asyncio.sleep(seconds)
        return code

    return step


@settings(max_examples=25, deadline=None)
@given(st.data(), st.sampled_from(ON_FAILURE), st.booleans())
def test_every_trace_the_controller_writes_passes_the_checks(
    data: st.DataObject, on_failure: str, guard: bool
) -> None:
    """Real runs (short sleeps, some failing; either on_failure, guarded or not) read back as they were."""
    workflow = data.draw(workflows(max_tasks=6, piecewise=False))
    machine = data.draw(machines())
    failing = data.draw(st.sets(st.sampled_from([t.id for t in workflow.tasks])))
    pause = data.draw(st.sampled_from([0.0, 0.001, 0.01]))
    steps = {t.id: sleeper(pause, 1 if t.id in failing else 0) for t in workflow.tasks}
    policy = online_policy("asap", workflow, machine)
    ran = run_workflow(workflow, machine, policy, steps, on_failure=on_failure, guard=guard)
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "trace.json"
        path.write_text(trace_json(ran))
        assert load_trace(path) == ran


# --- the property: one broken record of a valid trace is refused, naming the step -----------


@st.composite
def traces(draw: st.DrawFn) -> Trace:
    """A run as the controller records it: steps after their dependencies, a failure skipping what follows."""
    workflow = draw(workflows(max_tasks=6, integer=True, piecewise=False))
    records: dict[str, StepRecord] = {}
    for task in sorted(workflow.tasks, key=lambda t: int(t.id[1:])):  # edges go up in number
        before = [records[p] for p in task.depends_on]
        if any(p.status != "ok" for p in before):
            records[task.id] = StepRecord(id=task.id, status="skipped")
            continue
        start = round(max((p.end or 0.0 for p in before), default=0.0) + draw(st.integers(0, 4)) / 4, 6)
        failed = draw(st.integers(0, 4)) == 0
        records[task.id] = StepRecord(
            id=task.id,
            status="failed" if failed else "ok",
            start=start,
            end=round(start + task.length, 6),
            exit_code=1 if failed else 0,
        )
    steps = tuple(records[t.id] for t in workflow.tasks)
    return Trace(
        workflow=workflow,
        machine=draw(machines(integer=True)),
        policy="asap",
        on_failure=draw(st.sampled_from(ON_FAILURE)),
        started_at=WHEN,
        status="ok" if all(s.status == "ok" for s in steps) else "failed",
        steps=steps,
    )


def kinds(data: dict[str, Any], k: int) -> list[str]:
    """The ways record ``k`` can be broken (or, ``neutral``, rewritten the same)."""
    found = ["twice", "missing", "unknown", "type", "negative", "status", "neutral"]
    step = data["steps"][k]
    deps = {t["id"]: t.get("depends_on", []) for t in data["workflow"]["tasks"]}[step["id"]]
    states = {r["id"]: r for r in data["steps"]}
    if step["status"] == "skipped":
        found += ["timed skip", "ran anyway"]
    else:
        found += ["no time", "reversed", "exit code"]
        if any(states[p]["end"] > 0 for p in deps):
            found.append("early")
        failures = any(r["status"] == "failed" for r in data["steps"])
        if step["status"] == "ok" and (data["on_failure"] == "continue" or not failures):
            found.append("skip")
    return found


def breaking(data: dict[str, Any], k: int, kind: str, drawn: st.DataObject) -> None:
    draw = drawn.draw
    steps, step = data["steps"], data["steps"][k]
    states = {r["id"]: r for r in steps}
    deps = {t["id"]: t.get("depends_on", []) for t in data["workflow"]["tasks"]}[step["id"]]
    if kind == "twice":
        steps.append(dict(step))
    elif kind == "missing":
        del steps[k]
    elif kind == "unknown":
        step["id"] = "zz9"
    elif kind == "type":
        step[draw(st.sampled_from(["start", "end", "exit_code"]))] = draw(
            st.sampled_from(["1", True, [1], {}])
        )
    elif kind == "negative":
        step[draw(st.sampled_from(["start", "end"]))] = -draw(st.integers(1, 10)) / 4
    elif kind == "status":
        data["status"] = "failed" if data["status"] == "ok" else "ok"
    elif kind == "timed skip":
        step[draw(st.sampled_from(["start", "end", "exit_code", "pid"]))] = 1
    elif kind == "ran anyway":
        start = max((states[p].get("end") or 0.0 for p in deps), default=0.0)
        step.update(status="ok", start=start, end=start + 1, exit_code=0)
    elif kind == "no time":
        step.pop(draw(st.sampled_from(["start", "end"])))
    elif kind == "reversed":
        step["end"], step["start"] = step["start"], step["end"] + 0.5
    elif kind == "exit code" and step["status"] == "ok":
        step["exit_code"] = 2
    elif kind == "exit code":  # a failed step's exit code says nothing more: take its end
        del step["end"]
    elif kind == "early":
        latest = max(states[p]["end"] for p in deps)
        step["start"] = latest - draw(st.integers(1, 4)) / 8 * latest
        step["end"] = max(step["end"], step["start"])
    elif kind == "skip":
        steps[k] = {"id": step["id"], "status": "skipped"}
        data["status"] = "failed"


def _integral(value: Any) -> Any:
    return int(value) if isinstance(value, float) and value.is_integer() else value


def realised_score(trace: Trace) -> dict[str, Any]:
    workflow, schedule = trace.realised()
    keep = {"valid", "makespan", "cva", "avoidable_cva", "safe", "mru", "resources"}
    return evaluate(workflow, trace.machine, schedule).model_dump(include=keep)


@given(traces(), st.data())
def test_one_broken_record_of_a_valid_trace_is_refused_naming_the_step_or_changes_nothing(
    valid: Trace, data: st.DataObject
) -> None:
    original = json.loads(trace_json(valid))
    broken = copy.deepcopy(original)
    k = data.draw(st.integers(0, len(broken["steps"]) - 1))
    kind = data.draw(st.sampled_from(kinds(broken, k)))
    name = broken["steps"][k]["id"]
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "trace.json"
        if kind == "neutral":  # the same run: records in another order, whole seconds as integers
            order = data.draw(st.permutations(broken["steps"]))
            broken["steps"] = [{key: _integral(v) for key, v in r.items()} for r in order]
            path.write_text(json.dumps(broken))
            assert realised_score(load_trace(path)) == realised_score(valid)
            return
        breaking(broken, k, kind, data)
        path.write_text(json.dumps(broken))
        with pytest.raises(PeakoptError) as caught:
            load_trace(path)
        message = str(caught.value)
        assert repr(name) in message or "zz9" in message or "status" in message, (kind, message)
        code, out, err = run("score", str(path))
        lines = err.strip().splitlines()
        assert code == 1 and out == "" and len(lines) == 1, (kind, err)
        assert lines[0].startswith(f"Error: {path}: "), (kind, err)
