"""The trace of a controlled run: what every step did, when, and how it ended.

A trace is one JSON document (``peakopt run -o trace.json``; see ``docs/formats.md``)::

    {"format": "peakopt-trace", "version": 1, "workflow": {...}, "machine": {...},
     "policy": "admission", "guarded": true, "on_failure": "continue",
     "started_at": "2026-12-01T17:40:00.123456+00:00", "status": "ok",
     "steps": [{"id": "fetch", "status": "ok", "start": 0.0, "end": 0.31,
                "exit_code": 0, "pid": 4242, "usage": {"cpu_avg": 0.4, "cpu_peak": 0.9,
                "memory_peak_mb": 212.0}}, ...],
     "replans": [{"at": 1.5, "steps": ["fetch"], "reason": "...", "seconds": 0.012,
                  "status": "optimal", "makespan": 4.2, "plan": {"fetch": 0.0, ...},
                  "assumed": {"fetch": 3.0}}]}

Times are seconds since the run started on a monotonic clock (``started_at`` is the wall clock
then). The workflow and machine are the ones the run was controlled with, so the trace can be
scored alone: :meth:`Trace.realised` gives the workflow with every step's actual duration
(its declared demands; a profile's segments scaled in proportion, as a sampled scenario is)
and the schedule of the actual starts, which :func:`peakopt.oracle.evaluate` scores.
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Any, Literal

from pydantic import BaseModel, Field, ValidationError

from peakopt.instances.documents import decode_one
from peakopt.instances.errors import InputError, from_validation
from peakopt.models import Machine, Schedule, Task, Workflow
from peakopt.models.base import FROZEN
from peakopt.oracle.uncertain.scenarios import Scenarios
from peakopt.runtime.names import DemandKind, OnFailure
from peakopt.runtime.overuse import declared_peaks, measured_demand

#: How a step ended: ``ok`` (exit 0), ``failed`` (non-zero exit, killed by a signal, or an
#: exception), ``skipped`` (never started: a predecessor failed, or the run stopped).
StepStatus = Literal["ok", "failed", "skipped"]
#: Decimal places of trace times (1 µs): exact for the oracle's integer arithmetic.
PLACES = 6

Seconds = Annotated[float, Field(ge=0, allow_inf_nan=False)]


class StepUsage(BaseModel):
    """What a step used, measured while it ran (psutil over its process tree)."""

    model_config = FROZEN

    cpu_avg: Seconds
    cpu_peak: Seconds
    memory_peak_mb: Seconds


class StepRecord(BaseModel):
    """One step of a trace.

    Parameters
    ----------
    id
        The step's id in the workflow.
    status
        How it ended (:data:`StepStatus`).
    start, end
        Seconds since the run started; None for a step that never started.
    exit_code
        The process's exit status (negative: killed by that signal); None for an async callable
        that raised, or a step that never started.
    pid
        The process id, for a subprocess.
    usage
        Measured usage, when asked for.
    error
        Why it failed: the end of its stderr, or the exception.
    """

    model_config = FROZEN

    id: str
    status: StepStatus
    start: Seconds | None = None
    end: Seconds | None = None
    exit_code: int | None = None
    pid: int | None = None
    usage: StepUsage | None = None
    error: str | None = None


class ReplanRecord(BaseModel):
    """One re-plan of a run (``peakopt run --replan``; see :mod:`peakopt.runtime.replan`).

    Parameters
    ----------
    at
        When it began, in seconds since the run started.
    steps
        The steps whose overrun set it off.
    reason
        Why, in words: each such step's time so far against its planned duration.
    seconds
        How long it took (wall time: the rest's problem, the solve, the oracle's check).
    status
        The solve's status (``optimal``, ``feasible``), or ``error`` (the run went on in the
        order it had).
    makespan
        The new plan's makespan, in seconds since the run started.
    plan
        The new plan: every step left to run -> its start (the steps that had started at
        theirs, rounded up to the millisecond; the others from ``at`` on).
    assumed
        The run time the plan assumed for each step that had started: the actual one if it
        had ended, else at least its time so far (see :mod:`peakopt.runtime.replan`).
    message
        The solver's note, or the error.
    """

    model_config = FROZEN

    at: Seconds
    steps: tuple[str, ...]
    reason: str
    seconds: Seconds
    status: Literal["optimal", "feasible", "error"]
    makespan: Seconds | None = None
    plan: dict[str, Seconds] | None = None
    assumed: dict[str, Seconds] | None = None
    message: str | None = None


class Trace(BaseModel):
    """A controlled run (see the module docstring).

    ``replans`` is there only for a run that could re-plan (empty when no step overran):
    traces without it, from before re-planning or from a run without it, read as they did.
    ``error`` says why a run failed beyond its steps: its policy's fault (it raised, answered
    what is not a list of ready steps, or stalled), after which no step started.
    """

    model_config = FROZEN

    format: Literal["peakopt-trace"] = "peakopt-trace"
    version: Literal[1] = 1
    workflow: Workflow
    machine: Machine
    policy: str
    guarded: bool = True
    on_failure: OnFailure = "continue"
    started_at: str
    status: Literal["ok", "failed"]
    steps: tuple[StepRecord, ...]
    replans: tuple[ReplanRecord, ...] | None = None
    error: str | None = None

    @property
    def ran(self) -> tuple[StepRecord, ...]:
        """The steps that started and ended (ok or failed)."""
        return tuple(s for s in self.steps if s.start is not None and s.end is not None)

    @property
    def makespan(self) -> float:
        """The last end of a step that ran (0 when none did)."""
        return max((s.end or 0.0 for s in self.ran), default=0.0)

    def realised(
        self, demand: DemandKind = "declared", *, unmeasured: Literal["error", "declared"] = "error"
    ) -> tuple[Workflow, Schedule]:
        """The workflow as it ran (actual durations) and the schedule of actual starts.

        Steps that never started are left out (no step that ran depends on one).

        Parameters
        ----------
        demand
            ``declared``: each step keeps its declared demands (a profile's segments scaled in
            proportion to the actual duration). ``measured``: each step becomes one segment that
            demands what it was measured to use — its peak memory as ``memory_mb`` and its
            average cores as ``cpu`` (CPU is a rate, as in ``peakopt profile``'s segments); any
            other resource keeps its declared peak.
        unmeasured
            With ``measured``, what a step that ran without a measured usage (an async callable)
            is: an ``error``, or judged with its ``declared`` demands.

        Raises
        ------
        ValueError
            With ``measured``, when a step that ran has no measured usage (and ``unmeasured`` is
            ``error``).
        """
        ran = {s.id: s for s in self.ran}
        tasks = tuple(t for t in self.workflow.tasks if t.id in ran)
        nominal = self.workflow.model_copy(update={"tasks": tasks})
        starts = {i: round(s.start or 0.0, PLACES) for i, s in ran.items()}
        lengths = tuple(round(round(ran[t.id].end or 0.0, PLACES) - starts[t.id], PLACES) for t in tasks)
        scenario = Scenarios(
            nominal=nominal, lengths=(lengths,), scales=((1.0,) * len(tasks),), places=PLACES
        )
        schedule = Schedule(
            workflow=self.workflow.id,
            machine=self.machine.name,
            starts=starts,
            source=f"run:{self.policy}",
            meta={"trace": True},
        )
        workflow = scenario.workflow(0)
        if demand == "measured":
            workflow = workflow.model_copy(
                update={"tasks": tuple(_measured(t, ran[t.id], unmeasured) for t in workflow.tasks)}
            )
        return workflow, schedule


def _measured(task: Task, step: StepRecord, unmeasured: Literal["error", "declared"]) -> Task:
    """``task`` as one segment of its actual length demanding what ``step`` was measured to use."""
    if step.usage is None:
        if unmeasured == "declared":
            return task
        raise ValueError(f"step {task.id!r} has no measured usage (run it with --measure)")
    used = {**declared_peaks(task), **measured_demand(step.usage)}
    fields: dict[str, Any] = {"profile": None, "duration": task.length, "demand": used}
    return task.model_copy(update=fields)


def trace_json(trace: Trace) -> str:
    """The trace as an indented JSON document (fields left at None are left out)."""
    return trace.model_dump_json(indent=2, exclude_none=True) + "\n"


def load_trace(path: str | Path) -> Trace:
    """Read a trace written by :func:`trace_json` (``peakopt run -o``), checked as strictly as a workflow.

    Raises
    ------
    InputError
        When the file cannot be read, is not a trace (naming the field and the rule), or
        contradicts itself (naming the step and the rule; see :mod:`peakopt.runtime.trace_checks`).
    """
    from peakopt.runtime.trace_checks import check_records, check_trace

    try:
        text = Path(path).read_text(encoding="utf-8")
    except OSError as exc:
        raise InputError(path, "", f"cannot be read ({exc.strerror})") from None
    except UnicodeDecodeError as exc:
        raise InputError(path, "", f"is not UTF-8 text (byte {exc.start})") from None
    data = decode_one(text, path)  # a document nested too deeply is an error, not a RecursionError
    if not isinstance(data, dict) or data.get("format") != "peakopt-trace":
        raise InputError(path, "", 'is not a peakopt trace (no "format": "peakopt-trace")')
    check_records(data, path)
    try:
        trace = Trace.model_validate(data)
    except ValidationError as exc:
        raise from_validation(path, exc, data) from None
    check_trace(trace, path)
    return trace
