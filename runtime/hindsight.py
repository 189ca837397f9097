"""Runs scored as they ran: a trace's actual starts and durations judged, and its hindsight gap.

A run record is a controller trace (``peakopt run -o``, ``"format": "peakopt-trace"``) or an
OpenTelemetry export (OTLP JSON, :mod:`peakopt.runtime.otlp`), told apart by their content.
:func:`score_trace` scores one the way ``peakopt score`` scores a schedule: the oracle judges
the actual starts of the workflow with every step's actual duration (:meth:`Trace.realised
<peakopt.runtime.trace.Trace.realised>`), and the solver gives the optimum for those same
durations — what a scheduler that knew them in advance could have done (the hindsight
optimum). The row's ``gap`` and ``efficiency`` are against it (``gap_vs_lb``/``gap_vs_ub`` when
the search did not prove it).

A run that did not do the whole workflow — a step failed, steps were skipped after it or
because the run stopped — is **invalid**, each failed and skipped step named among the reasons:
its makespan is not that of the workflow. Its figures (makespan, cva, safety of what ran) are
those of the steps that ran, it gets no gap, and its efficiency is 0, like any invalid answer's.
An unsafe run's efficiency is 0 too, whatever the optimum (proven or only feasible). A safe run
has an efficiency only against a proven optimum; :func:`why_no_efficiency` says why one has none.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Literal

from peakopt.instances.errors import InputError
from peakopt.models import Machine, SolveResult
from peakopt.oracle.judge.evaluate import evaluate, with_reference
from peakopt.oracle.judge.verdict import Violation
from peakopt.oracle.tables.rows import ScoreRow
from peakopt.oracle.tables.score_rows import with_efficiency
from peakopt.runtime.names import DemandKind
from peakopt.runtime.trace import Trace, load_trace

#: The kinds of run record: a controller trace, an OpenTelemetry export.
RunFormat = Literal["peakopt-trace", "otlp"]
#: How far into a file its kind is looked for: both formats name it in their first key.
PEEK = 4096
_TRACE = re.compile(r'^\s*\{[^{]*?"format"\s*:\s*"peakopt-trace"')
_OTLP = re.compile(r'^\s*\{\s*"resourceSpans"\s*:')


def run_format(path: str | Path) -> RunFormat | None:
    """The kind of run record a regular file holds, from its first characters; None for anything else.

    Only regular files are looked into: a pipe could be read only once, and is read as an
    input suite. A trace written by ``peakopt run`` starts with its ``format``; an OTLP export
    with ``resourceSpans``.
    """
    file = Path(path)
    if not file.is_file():
        return None
    try:
        with file.open(encoding="utf-8", errors="replace") as handle:
            head = handle.read(PEEK)
    except OSError:
        return None  # read (and refused in words) as an input suite
    if _TRACE.match(head):
        return "peakopt-trace"
    if _OTLP.match(head):
        return "otlp"
    return None


def read_run(
    path: str | Path, kind: RunFormat, *, machine: Machine | None = None, trace_id: str | None = None
) -> Trace:
    """The trace of a run record of ``kind`` (``machine`` and ``trace_id``: for OTLP exports)."""
    if kind == "peakopt-trace":
        return load_trace(path)
    from peakopt.runtime.otlp import load_otlp

    return load_otlp(path, machine=machine, trace_id=trace_id)


def _problems(trace: Trace) -> list[Violation]:
    """The failed and skipped steps, in words: why a run did not do the workflow."""
    found = []
    for step in trace.steps:
        if step.status == "failed":
            why = (
                f" ({step.error.strip().splitlines()[-1][:120]})" if step.error and step.error.strip() else ""
            )
            if step.exit_code is not None and not why:
                why = f" (exited with {step.exit_code})"
            found.append(Violation(kind="failed", message=f"step {step.id!r} failed{why}", tasks=(step.id,)))
        elif step.status == "skipped":
            message = f"step {step.id!r} never ran (skipped: the run {trace.status})"
            found.append(Violation(kind="missing", message=message, tasks=(step.id,)))
    ran = {s.id for s in trace.steps}
    found.extend(
        Violation(kind="missing", message=f"step {t.id!r} is not in the trace", tasks=(t.id,))
        for t in trace.workflow.tasks
        if t.id not in ran
    )
    return found


def score_trace(
    trace: Trace,
    name: str,
    *,
    demand: DemandKind = "declared",
    time_limit: float = 10.0,
    seed: int = 0,
) -> tuple[ScoreRow, SolveResult | None]:
    """The score row of a run, and the hindsight optimum it was compared with (None: not solved).

    Parameters
    ----------
    trace
        The run.
    name
        The file it came from: the row's ``id`` and its ``trace`` label.
    demand
        ``declared`` or ``measured`` (see :meth:`~peakopt.runtime.trace.Trace.realised`).
    time_limit, seed
        The search for the optimum of the actual durations.

    Raises
    ------
    InputError
        With ``measured``, when a step that ran has no measured usage.
    """
    if demand == "measured":
        unmeasured = [s.id for s in trace.ran if s.usage is None]
        if unmeasured:
            rule = "has no measured usage: --demand measured needs a run with --measure (or usage attributes)"
            raise InputError(name, f"step {unmeasured[0]!r}", rule)
    workflow, schedule = trace.realised(demand)
    problems = _problems(trace)
    score = evaluate(workflow, trace.machine, schedule)
    if score.slowed_makespan is not None:
        # a run's actual durations already hold whatever slowdown oversubscribing a soft resource
        # caused: slowing the timetable again would count it twice
        score = score.model_copy(update={"slowed_makespan": score.makespan})
    best = None
    if not problems and score.valid:
        from peakopt.solver import solve  # OR-Tools: only when a run is scored

        # an unsafe run gets no gap (with_reference), and its efficiency 0 is against this optimum
        best = solve(workflow, trace.machine, time_limit=time_limit, seed=seed)
        score = with_reference(score, best)
    row = ScoreRow.from_score(
        score,
        problems,
        id=name,
        labels={"trace": name, "demand": demand, "run": trace.status},
        starts=dict(schedule.starts),
        reference_status=best.status if best else None,
    )
    if best is None or not row.safe:
        # a run that did not do the workflow, or overflowed, earns nothing (the metric contract),
        # whatever the optimum to compare with: proven, only feasible, or none
        return row.model_copy(update={"efficiency": 0.0}), best
    return with_efficiency(row, best), best


def why_no_efficiency(row: ScoreRow, best: SolveResult | None) -> str | None:
    """Why a scored run has no efficiency (its hindsight optimum is not proven), or None when it has one."""
    if row.efficiency is not None:
        return None
    if best is None:
        return "no hindsight optimum"
    detail = ", ".join(filter(None, [best.status, best.message]))
    return f"the hindsight optimum is not proven ({detail}); the gap is bounded by gap_vs_lb"
