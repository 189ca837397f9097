"""A controller trace checked as strictly as a workflow (by :func:`~peakopt.runtime.trace.load_trace`).

A trace records what a run did, so it cannot contradict itself:

- **Each step once.** Every step of the trace's workflow has exactly one record (a skipped step
  too), and no record names a step the workflow does not have.
- **Types.** Times are JSON numbers of seconds since the run started (finite, at least 0: no
  step starts before the run), ``exit_code`` and ``pid`` integers, ``status`` one of ``ok``,
  ``failed``, ``skipped``.
- **States.** A step that ran (``ok`` or ``failed``) has a start and an end, the end no earlier
  than the start; an ``ok`` step exited 0 (or was a callable: no exit code) without an error; a
  skipped step never started: no start, end, exit code, pid or usage.
- **Dependencies.** A step that ran started once every dependency had ended ``ok`` (the
  controller starts a step only then): none failed or was skipped, and none ended after it
  started. With ``on_failure: continue`` a step is skipped only after a dependency failed or
  was skipped; with ``stop``, only in a run where a step failed.
- **The run.** ``status`` is ``ok`` exactly when every step is; ``started_at`` is an ISO 8601
  time; re-plans name only the workflow's steps.
"""

from __future__ import annotations

import math
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

from peakopt.instances.errors import InputError

if TYPE_CHECKING:
    from peakopt.runtime.trace import StepRecord, Trace

STATES = ("ok", "failed", "skipped")


def check_records(data: dict[str, Any], path: str | Path) -> None:
    """The step records of a decoded trace, before the model reads them: their types, each step once.

    Raises
    ------
    InputError
        Naming the record (``step 'fetch'``, or ``step #3`` without an id) and the rule.
    """
    if "steps" not in data:
        return  # the model says the key is missing
    steps = data["steps"]
    if not isinstance(steps, list):
        raise InputError(path, "steps", "is not a list of step records")
    seen: dict[str, int] = {}
    for k, raw in enumerate(steps, start=1):
        if not isinstance(raw, dict):
            raise InputError(path, f"step #{k}", "is not an object")
        step = raw.get("id")
        if not isinstance(step, str) or not step:
            raise InputError(path, f"step #{k}", f"id is not a non-empty string ({step!r})")
        item = f"step {step!r}"
        if step in seen:
            rule = f"is recorded twice (records #{seen[step]} and #{k}): a trace records each step once"
            raise InputError(path, item, rule)
        seen[step] = k
        if raw.get("status") not in STATES:
            raise InputError(path, item, f"status must be ok, failed or skipped ({raw.get('status')!r})")
        for key in ("start", "end"):
            _seconds(raw.get(key), key, path, item)
        for key in ("exit_code", "pid"):
            value = raw.get(key)
            if value is not None and (isinstance(value, bool) or not isinstance(value, int)):
                raise InputError(path, item, f"{key} must be an integer ({value!r})")


def _seconds(value: Any, key: str, path: str | Path, item: str) -> None:
    if value is None:
        return
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise InputError(
            path, item, f"{key} must be a JSON number of seconds since the run started ({value!r})"
        )
    if not math.isfinite(value):
        raise InputError(path, item, f"{key} must be finite ({value!r})")
    if value < 0:
        raise InputError(path, item, f"{key} must be at least 0: no step starts before the run ({value!r})")


def check_trace(trace: Trace, path: str | Path) -> None:
    """Refuse a trace that contradicts itself (see the module docstring).

    Parameters
    ----------
    trace
        The trace as the model read it (its records' types already checked by :func:`check_records`).
    path
        The file, for errors.

    Raises
    ------
    InputError
        Naming the step (or the run's field) and the rule it breaks.
    """
    records = _one_each(trace, path)
    for step in trace.steps:
        _state(step, path)
    failures = any(s.status == "failed" for s in trace.steps)
    for step in trace.steps:
        before = [records[p] for p in trace.workflow.task(step.id).depends_on]
        if step.status == "skipped":
            _skipped(step, before, trace, failures, path)
        else:
            _after(step, before, path)
    _run(trace, path)


def _one_each(trace: Trace, path: str | Path) -> dict[str, StepRecord]:
    """The record of each step; every step of the workflow has one, and none names another step."""
    records = {s.id: s for s in trace.steps}
    workflow = trace.workflow
    for step in trace.steps:
        if step.id not in workflow.index:
            raise InputError(path, f"step {step.id!r}", f"is not a step of workflow {workflow.id!r}")
    for task in workflow.tasks:
        if task.id not in records:
            rule = (
                f"has no record: a trace records every step of workflow {workflow.id!r}, the skipped ones too"
            )
            raise InputError(path, f"step {task.id!r}", rule)
    return records


def _state(step: StepRecord, path: str | Path) -> None:
    item = f"step {step.id!r}"
    if step.status == "skipped":
        for key in ("start", "end", "exit_code", "pid", "usage"):
            if getattr(step, key) is not None:
                rule = (
                    f"is skipped but records its {key} ({getattr(step, key)!r}): a skipped step never started"
                )
                raise InputError(path, item, rule)
        return
    for key in ("start", "end"):
        if getattr(step, key) is None:
            rule = f"is {step.status} but has no {key}: a step that ran has a start and an end"
            raise InputError(path, item, rule)
    assert step.start is not None and step.end is not None
    if step.end < step.start:
        raise InputError(path, item, f"ends before it starts (end {step.end} s < start {step.start} s)")
    if step.status == "ok" and step.exit_code not in (None, 0):
        raise InputError(path, item, f"is ok but has exit code {step.exit_code}: an ok step exited 0")
    if step.status == "ok" and step.error is not None:
        raise InputError(path, item, f"is ok but has an error ({step.error[:80]!r})")


def _after(step: StepRecord, before: list[StepRecord], path: str | Path) -> None:
    """A step that ran started after each dependency ended ok."""
    assert step.start is not None
    for pred in before:
        if pred.status != "ok":
            done = "failed" if pred.status == "failed" else "was skipped"
            rule = (
                f"ran though its dependency {pred.id!r} {done}: a step starts once its dependencies ended ok"
            )
            raise InputError(path, f"step {step.id!r}", rule)
        if pred.end is not None and step.start < pred.end:
            rule = f"starts at {step.start} s, before its dependency {pred.id!r} ended at {pred.end} s"
            raise InputError(path, f"step {step.id!r}", rule)


def _skipped(
    step: StepRecord, before: list[StepRecord], trace: Trace, failures: bool, path: str | Path
) -> None:
    """A skipped step follows a failure: of a dependency (``continue``), or of any step (``stop``).

    A run that failed beyond its steps (``trace.error``: its policy's fault) started nothing more,
    so any step may have been skipped.
    """
    if trace.error is not None:
        return
    if trace.on_failure == "continue" and all(p.status == "ok" for p in before):
        rule = (
            "is skipped though none of its dependencies failed or was skipped "
            "(on_failure continue skips only the steps after a failure)"
        )
        raise InputError(path, f"step {step.id!r}", rule)
    if trace.on_failure == "stop" and not failures:
        rule = "is skipped though no step failed (on_failure stop skips steps only after a failure)"
        raise InputError(path, f"step {step.id!r}", rule)


def _run(trace: Trace, path: str | Path) -> None:
    """The run's own fields agree with its steps and workflow."""
    bad = next((s for s in trace.steps if s.status != "ok"), None)
    if trace.status == "ok" and bad is not None:
        raise InputError(path, "", f"status 'ok' contradicts its steps: step {bad.id!r} {bad.status}")
    if trace.status == "failed" and bad is None and trace.error is None:
        raise InputError(path, "", "status 'failed' contradicts its steps: every step ran ok (and no error)")
    if trace.error is not None and trace.status != "failed":
        raise InputError(path, "error", f"is given but the run's status is {trace.status!r}, not 'failed'")
    try:
        datetime.fromisoformat(trace.started_at)
    except ValueError:
        raise InputError(path, "started_at", f"is not an ISO 8601 time ({trace.started_at!r})") from None
    for k, replan in enumerate(trace.replans or (), start=1):
        for step in (*replan.steps, *(replan.plan or {}), *(replan.assumed or {})):
            if step not in trace.workflow.index:
                rule = f"names step {step!r}, which is not a step of workflow {trace.workflow.id!r}"
                raise InputError(path, f"replan #{k}", rule)
